"""``dsh-search serve`` works whatever stdin is: a pipe, a regular file,
``/dev/null`` or a terminal (a pty). Each case spawns the real server."""

from __future__ import annotations

import os
import pty
import select
import subprocess
import sys
import time

from support.rawrpc import ids, replies, session
from support.sidecar import clean_env

SERVE = [sys.executable, "-m", "dsh_sidecar", "serve"]


def test_stdin_from_a_regular_file(tmp_path, dsh_home):
    path = tmp_path / "session.bin"
    path.write_bytes(session())
    with path.open("rb") as stdin:
        proc = subprocess.run(SERVE, stdin=stdin, capture_output=True, timeout=60, env=clean_env(dsh_home))
    assert proc.returncode == 0, proc.stderr
    assert ids(replies(proc.stdout)) == [1, 2, 3]
    assert b"Traceback" not in proc.stderr


def test_stdin_from_dev_null_ends_cleanly(dsh_home):
    with open(os.devnull, "rb") as stdin:
        proc = subprocess.run(SERVE, stdin=stdin, capture_output=True, timeout=60, env=clean_env(dsh_home))
    assert proc.returncode == 0 and proc.stdout == b"" and b"Traceback" not in proc.stderr


def test_stdin_from_a_pipe(dsh_home):
    proc = subprocess.run(SERVE, input=session(), capture_output=True, timeout=60, env=clean_env(dsh_home))
    assert proc.returncode == 0 and ids(replies(proc.stdout)) == [1, 2, 3]


def test_stdin_from_a_terminal(dsh_home):
    """A pty in raw mode (no line discipline editing the bytes) as stdin; stdout a pipe."""
    import tty

    master, slave = pty.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen(SERVE, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=clean_env(dsh_home))
    os.close(slave)
    try:
        os.write(master, session())
        out = b""
        deadline = time.monotonic() + 60
        while len(ids(replies(out))) < 3 and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 1.0)
            if ready:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
        assert ids(replies(out)) == [1, 2, 3]
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(master)
        proc.stdout.close()
        proc.stderr.close()
