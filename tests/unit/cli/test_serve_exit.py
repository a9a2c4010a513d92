"""How ``dsh-search serve`` leaves after serving (cli.serving._exit_now): the exit code kept, the
non-daemon threads joined and the atexit flushes run — then ``os._exit``, so daemon threads still
running background work (graph, content index) are not unwound by finalization, which aborted
the process with SIGABRT when one of them was in a C/C++ frame."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHILD = r"""
import atexit, sys, threading
from dsh_sidecar.cli.serving import _exit_now

atexit.register(lambda: print("atexit ran", flush=True))
exiting = threading.Event()
shutdown = threading._shutdown
def _shutdown():  # the exit has begun: the non-daemon thread writes only now, so it is joined
    exiting.set()
    shutdown()
threading._shutdown = _shutdown
def late_writer():
    exiting.wait()
    print("non-daemon thread finished", flush=True)
def busy():
    while True:  # a daemon thread that keeps taking the GIL, as background indexing does
        sum(range(1000))
threading.Thread(target=late_writer).start()
threading.Thread(target=busy, daemon=True).start()
sys.stdout.write("buffered, not yet flushed\n")
_exit_now(3)
print("not reached")
"""


@pytest.mark.slow  # a fresh interpreter
def test_exit_keeps_the_code_joins_threads_runs_atexit_and_flushes():
    p = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert p.returncode == 3, p.stderr
    assert p.stdout.splitlines() == ["buffered, not yet flushed", "non-daemon thread finished", "atexit ran"]
    assert p.stderr == ""
