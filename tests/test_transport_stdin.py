"""``dsh-search serve`` works whatever stdin is (issue 16, item 8): a pipe, a regular file,
``/dev/null`` or a terminal (a pty). Each case spawns the real server."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time

from conftest import clean_env
from rawrpc import frame

SERVE = [sys.executable, "-m", "dsh_sidecar", "serve"]


def session(log_messages: str | None = None) -> bytes:
    options = {} if log_messages is None else {"logMessages": log_messages}
    return b"".join(
        frame(m)
        for m in (
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"processId": None, "capabilities": {}, "rootUri": None, "initializationOptions": options},
            },
            {"jsonrpc": "2.0", "method": "initialized", "params": {}},
            {"jsonrpc": "2.0", "id": 2, "method": "dsh/status", "params": {}},
            {"jsonrpc": "2.0", "id": 3, "method": "shutdown"},
            {"jsonrpc": "2.0", "method": "exit"},
        )
    )


def replies(stdout: bytes) -> list[dict]:
    out, rest = [], stdout
    while rest:
        head, sep, rest = rest.partition(b"\r\n\r\n")
        if not sep:
            break
        length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
        out.append(json.loads(rest[:length]))
        rest = rest[length:]
    return out


def ids(messages: list[dict]) -> list:
    return [m["id"] for m in messages if "id" in m]


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
