"""``dsh-search serve`` asked to ``shutdown`` while the sidecar is still being built (its build
held for good in the server process): ``shutdown`` is answered at once, the ``exit`` after it
ends the process with status 0 without the build, and the suggester's ledger says so in one
line, ``abstained not-ready`` (``SidecarServer.end_before_start``). Before, ``shutdown`` awaited
the whole build (off the loop), so neither its reply nor the exit came until the build ended."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from dsh_protocol.stdio_client import encode_frame, read_frame
from support.heldbuild import HELD_BUILD
from support.sidecar import home_env
from support.waiting import wait_until

#: How long a reply or the exit is waited for: a bound on a hang, not a figure.
BOUND_S = 120.0


def frames(proc: subprocess.Popen[bytes]) -> queue.Queue[dict[str, Any] | None]:
    """The server's messages as they arrive (``None`` at the end of its stdout)."""
    out: queue.Queue[dict[str, Any] | None] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        while (body := read_frame(proc.stdout)) is not None:
            out.put(json.loads(body))
        out.put(None)

    threading.Thread(target=read, daemon=True).start()
    return out


def reply(messages: queue.Queue[dict[str, Any] | None], msg_id: int) -> dict[str, Any]:
    while True:
        message = messages.get(timeout=BOUND_S)
        assert message is not None, f"the server ended before answering {msg_id}"
        if message.get("id") == msg_id:
            return message


def test_shutdown_during_the_build_is_answered_at_once_and_exit_ends_without_it(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.log"
    marker = tmp_path / "building"
    options = {"suggester": {"enabled": True, "logFile": str(ledger)}}
    proc = subprocess.Popen(
        [sys.executable, "-c", HELD_BUILD, str(marker), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "stderr.log").open("wb"),
        env={**os.environ, **home_env(tmp_path / "home")},
    )
    assert proc.stdin is not None
    messages = frames(proc)

    def send(message: dict[str, Any]) -> None:
        assert proc.stdin is not None
        proc.stdin.write(encode_frame({"jsonrpc": "2.0", **message}))
        proc.stdin.flush()

    try:
        init = {"processId": None, "capabilities": {}, "rootUri": None, "initializationOptions": options}
        send({"id": 1, "method": "initialize", "params": init})
        assert "result" in reply(messages, 1)
        send({"method": "initialized", "params": {}})
        wait_until(marker.exists, "the build started", BOUND_S)
        send({"id": 2, "method": "shutdown"})
        assert reply(messages, 2) == {"jsonrpc": "2.0", "id": 2, "result": None}  # the build still held
        send({"method": "exit"})
        assert proc.wait(timeout=BOUND_S) == 0
    finally:
        proc.kill()
        proc.wait()
    lines = [line.split("] ", 1)[1] for line in ledger.read_text().splitlines()]
    assert lines == ["abstained not-ready"]
