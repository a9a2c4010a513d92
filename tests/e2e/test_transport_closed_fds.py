"""``dsh-search serve`` with a standard descriptor *closed* by the harness.

A closed stdin (``<&-``) made ``serve`` die with ``AttributeError: 'NoneType' object has no
attribute 'buffer'`` (Python sets ``sys.stdin`` to ``None``); a closed stdout or stderr crashed
the same way before serving. Now: a closed stdin is read as EOF (exit 0), a closed stderr only
drops the logs, a closed stdout is refused with one line on stderr (exit 1), never a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from support.rawrpc import ids, replies, session
from support.sidecar import clean_env

SERVE = [sys.executable, "-m", "dsh_sidecar", "serve"]


def _closing(*fds: int):
    def close() -> None:
        for fd in fds:
            os.close(fd)

    return close


def test_closed_stdin_is_eof(dsh_home):
    proc = subprocess.run(
        SERVE,
        capture_output=True,
        preexec_fn=_closing(0),
        timeout=60,
        env=clean_env(dsh_home),
    )
    assert proc.returncode == 0, proc.stderr
    assert b"Traceback" not in proc.stderr
    assert proc.stdout == b""


def test_closed_stderr_still_serves(tmp_path, dsh_home):
    path = tmp_path / "session.bin"
    path.write_bytes(session())
    with path.open("rb") as stdin:
        proc = subprocess.run(
            SERVE, stdin=stdin, stdout=subprocess.PIPE, preexec_fn=_closing(2), timeout=60, env=clean_env(dsh_home)
        )
    assert proc.returncode == 0
    assert ids(replies(proc.stdout)) == [1, 2, 3]


@pytest.mark.parametrize("also_stdin", [False, True])
def test_closed_stdout_is_refused_in_one_line(dsh_home, also_stdin):
    proc = subprocess.run(
        SERVE,
        stdin=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_closing(1, 0) if also_stdin else _closing(1),
        timeout=60,
        env=clean_env(dsh_home),
    )
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr
    assert b"stdout (fd 1) is closed: there is no JSON-RPC channel to answer on" in proc.stderr
