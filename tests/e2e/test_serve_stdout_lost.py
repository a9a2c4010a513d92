"""``dsh-search serve`` whose reader closes stdout while it serves: the first failed write
(``EPIPE``) stops it as SIGHUP does — one log line, no traceback, the state flushed (the bandit's
posteriors of a search answered before), exit code 1 (nothing could be answered) — instead of
logging a traceback for every later reply and serving on."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from dsh_sidecar.lsp.transport import FdWriter
from support.mockprovider import case_reply
from support.rawrpc import frame, replies
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


def test_a_write_after_close_reaches_no_file_opened_since(tmp_path: Path):
    """pygls' ``exit`` closes the writer before the replies of cancelled requests are sent; the
    channel's descriptor number is then the lowest free one, which the state flush's next
    ``open`` takes: a late frame must be dropped, never written into that file."""
    read_fd, write_fd = os.pipe()
    writer = FdWriter(write_fd)
    writer.close()
    state = tmp_path / "posteriors.json"
    fd = os.open(state, os.O_WRONLY | os.O_CREAT, 0o600)
    if fd != write_fd:  # the number reused, as the next open would (usually it is already)
        os.dup2(fd, write_fd)
        os.close(fd)
    try:
        writer.write(frame({"jsonrpc": "2.0", "id": 3, "error": {"code": -32800, "message": "cancelled"}}))
    finally:
        os.close(write_fd)
        os.close(read_fd)
    assert state.read_bytes() == b""


def test_a_search_pipelined_before_shutdown_and_exit_ends_cleanly(tmp_path: Path):
    """``initialize``, a search, ``shutdown`` and ``exit`` in one write: exit code 0, every frame
    on stdout well-formed, and no write to the closed channel (it logged ``[Errno 9] Bad file
    descriptor`` as an internal error)."""
    options = {"router": {"order": ["searxng"], "providers": {"searxng": {"baseUrl": "http://127.0.0.1:9"}}}}
    init = {"processId": None, "capabilities": {}, "rootUri": None, "initializationOptions": options}
    msgs = [
        {"id": 1, "method": "initialize", "params": init},
        {"method": "initialized", "params": {}},
        {"id": 2, "method": "dsh/search", "params": {"query": "bike chain cleaning"}},
        {"id": 3, "method": "shutdown"},
        {"method": "exit"},
    ]
    proc = subprocess.run(
        server_command(),
        input=b"".join(frame({"jsonrpc": "2.0", **m}) for m in msgs),
        capture_output=True,
        env=clean_env(tmp_path / "home"),
        timeout=60,
    )
    err = proc.stderr.decode("utf-8", "replace")
    assert proc.returncode == 0, err
    ids = [m.get("id") for m in replies(proc.stdout) if "id" in m]
    assert ids[0] == 1 and 3 in ids, ids
    assert "Bad file descriptor" not in err and "ERROR" not in err, err
