"""``dsh-search serve`` whose reader closes stdout while it serves: the first failed write
(``EPIPE``) stops it as SIGHUP does — one log line, no traceback, the state flushed (the bandit's
posteriors of a search answered before), exit code 1 (nothing could be answered) — instead of
logging a traceback for every later reply and serving on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from support.mockprovider import case_reply
from support.rawrpc import frame
from support.routers import ROUTES, router_block
from support.sidecar import clean_env, server_command


def read_reply(fd: int, buf: bytearray, msg_id: int) -> dict:
    """Read frames from ``fd`` (appending to ``buf``) until the response with ``msg_id``."""
    while True:
        head, sep, rest = bytes(buf).partition(b"\r\n\r\n")
        if sep:
            length = int(head.split(b"Content-Length:")[1].split(b"\r\n")[0])
            if len(rest) >= length:
                msg = json.loads(rest[:length])
                del buf[: len(head) + 4 + length]
                if msg.get("id") == msg_id:
                    return msg
                continue
        chunk = os.read(fd, 65536)
        assert chunk, "stdout ended before the reply"
        buf.extend(chunk)


def test_a_reader_closing_stdout_stops_the_server_flushing_state(tmp_path: Path, mock_provider):
    reply, _ = case_reply("searxng", "ok")
    mock_provider.route(*ROUTES["searxng"], reply)
    home = tmp_path / "home"
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        server_command(), stdin=subprocess.PIPE, stdout=write_fd, stderr=subprocess.PIPE, env=clean_env(home)
    )
    os.close(write_fd)
    assert proc.stdin is not None and proc.stderr is not None
    options = {"router": router_block(mock_provider, "searxng", cache=False)}
    init = {"processId": None, "capabilities": {}, "rootUri": None, "initializationOptions": options}

    def send(msg: dict) -> None:
        assert proc.stdin is not None
        proc.stdin.write(frame({"jsonrpc": "2.0", **msg}))
        proc.stdin.flush()

    buf = bytearray()
    try:
        send({"id": 1, "method": "initialize", "params": init})
        assert "result" in read_reply(read_fd, buf, 1)
        send({"id": 2, "method": "dsh/search", "params": {"query": "bike chain cleaning", "strategy": "quick"}})
        assert read_reply(read_fd, buf, 2)["result"]["strategy"] == "quick"
        os.close(read_fd)  # the reader goes away; stdin stays open
        for i in range(3, 6):
            send({"id": i, "method": "dsh/status", "params": {}})
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    err = proc.stderr.read().decode("utf-8", "replace")
    assert code == 1, err
    assert "Traceback" not in err, err
    assert err.count("stopping: the reader closed stdout (fd 1)") == 1, err
    doc = json.loads((home / "bandit" / "posteriors.json").read_text())
    assert doc["updates"] == {"quick": 1, "thorough": 0}, doc
