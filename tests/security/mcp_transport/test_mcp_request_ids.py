"""An MCP client's request ids, over real stdio to ``dsh-search mcp``: JSON-RPC 2.0 names one
request by an id until it is answered, and an id is a string or an integer. The SDK files each
request under its id and overwrote a reused one's entry: a ``where_is`` sent under the id of a
``web_search`` still waiting on its provider ran and was answered under that id, and a
``notifications/cancelled`` for the id then reached only the ``where_is``. A request whose id is
null, a fraction, a list, an object or a bool was read as a notification: it was never
answered. The transport refuses both with ``-32600`` and runs neither; an id is free again once
its request is answered or cancelled."""

from __future__ import annotations

import fcntl
import json
import queue
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.mcpline import McpLine
from support.mockprovider import MockProvider, Reply
from support.routers import ROUTES, router_block
from support.sidecar import forked, home_env
from support.waiting import HANG_S, wait_until

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

IN_USE = {"code": -32600, "message": "Invalid Request: the id is in use by a request still in flight"}
BAD_ID = {"code": -32600, "message": "Invalid Request: id must be a number or a string"}
HANG = Reply(200, {"content-type": "application/json"}, b'{"results": []}', hang_s=30.0)
SEARCH = {"name": "web_search", "arguments": {"query": "bike chain cleaning"}}
WHERE_IS = {"name": "where_is", "arguments": {"query": "__version__"}}
#: Pause between two tries of a reuse the server refused while the id was still held, seconds.
RETRY_S = 0.05


class Client(McpLine):
    """The MCP server with the loopback provider as its one search provider."""

    def __init__(
        self, tmp_path: Path, workspace: Path, mock: MockProvider, router: dict[str, Any] | None = None
    ) -> None:
        block = {**router_block(mock, ["searxng"]), **(router or {})}
        super().__init__(tmp_path, workspace, {"router": block, "suggester": {"enabled": True}})

    def call(self, rid: Any, params: dict[str, Any]) -> None:
        self.send({"id": rid, "method": "tools/call", "params": params})

    def nothing_more(self) -> None:
        """Nothing was answered beyond what the test read: a ``ping`` sent now is answered next
        (its answer follows any the refused requests would have written before it), and nothing
        is left after it. A sync point instead of a guessed quiet period."""
        self.send({"id": "sync", "method": "ping"})
        assert self.reply() == {"jsonrpc": "2.0", "id": "sync", "result": {}}
        assert self.replies.empty()


@pytest.fixture
def client(tmp_path: Path, workspace: Path, mock_provider: MockProvider):
    mock_provider.route(*ROUTES["searxng"], HANG)
    c = Client(tmp_path, workspace, mock_provider)
    yield c
    c.close()


def test_a_request_under_an_id_in_flight_is_refused_and_the_first_stays_cancellable(client, mock_provider) -> None:
    client.call(6, SEARCH)
    wait_until(lambda: len(mock_provider.requests) == 1, what="the search at its provider")
    client.call(6, WHERE_IS)
    client.call("6", WHERE_IS)  # the same id to the SDK, which correlates "6" as 6
    assert client.reply() == {"jsonrpc": "2.0", "id": 6, "error": IN_USE}
    assert client.reply() == {"jsonrpc": "2.0", "id": "6", "error": IN_USE}
    client.send({"method": "notifications/cancelled", "params": {"requestId": 6}})
    # the cancel reached the search: its provider request was abandoned, long before its hang ends
    wait_until(lambda: len(mock_provider.closed_early) == 1, what="the search cancelled")
    got = reuse_once_settled(client, 6)  # the id is free once the server has ended the cancelled search
    assert got["id"] == 6 and "intent" in got["result"]["structuredContent"]
    with pytest.raises(queue.Empty):  # the cancelled search is never answered
        client.reply(timeout=0.5)


def reuse_once_settled(client: Client, rid: int) -> dict[str, Any]:
    """The reply to a ``where_is`` under ``rid`` once the request it named before is settled: a
    reuse before that is refused (IN_USE) and runs nothing, so the client may send it again.
    Tried until :data:`HANG_S` has passed (a count of tries ran out at load before the cancelled
    search had ended), :data:`RETRY_S` apart."""
    deadline = time.monotonic() + HANG_S
    tries = 0
    while time.monotonic() < deadline:
        client.call(rid, WHERE_IS)
        got = client.reply()
        tries += 1
        if got.get("error") != IN_USE:
            return got
        time.sleep(RETRY_S)
    raise AssertionError(f"id {rid} still in use after {HANG_S:g} s ({tries} tries)")


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("notifications/initialized", None),
        ("notifications/cancelled", {"requestId": 6}),
        ("notifications/progress", {"progressToken": 6, "progress": 1}),
        ("notifications/roots/list_changed", None),
        # a method under notifications/ the SDK does not know is a notification all the same:
        # the SDK answered it -32601 "Method not found", as it had the known ones
        ("notifications/dsh/unknown", {"a": 1}),
        ("notifications/", None),
    ],
)
def test_a_notification_method_sent_with_an_id_is_refused_with_the_lsp_text(
    client, mock_provider, method, params
) -> None:
    # JSON-RPC: a message with an id is a request, and is answered. The SDK answered these
    # -32601 "Method not found"; the LSP transport answers -32600 naming the notification.
    client.call(6, SEARCH)
    wait_until(lambda: len(mock_provider.requests) == 1, what="the search at its provider")
    client.send({"id": 8, "method": method, **({"params": params} if params else {})})
    assert client.reply() == {
        "jsonrpc": "2.0",
        "id": 8,
        "error": {"code": -32600, "message": f"Invalid Request: {method} is a notification: it is sent without an id"},
    }
    assert mock_provider.closed_early == []  # a cancel under an id cancelled nothing
    client.send({"method": "notifications/cancelled", "params": {"requestId": 6}})
    wait_until(lambda: len(mock_provider.closed_early) == 1, what="the search cancelled")
    client.call(8, WHERE_IS)  # id 8 was never held, and the session serves on
    got = client.reply()
    assert got["id"] == 8 and "result" in got


def test_an_id_is_free_again_once_its_request_is_answered(client) -> None:
    for _ in range(3):
        client.call(4, WHERE_IS)
        got = client.reply()
        assert got["id"] == 4 and "result" in got


@pytest.mark.parametrize("rid", [None, 1.5, 2.0, [1], {"a": 1}, True])
def test_a_request_whose_id_is_not_a_string_or_an_integer_is_answered_under_id_null(client, rid) -> None:
    client.call(rid, WHERE_IS)
    assert client.reply() == {"jsonrpc": "2.0", "id": None, "error": BAD_ID}
    client.send({"id": rid, "method": "tools/list", "params": "not an object"})  # unparseable as well
    assert client.reply() == {"jsonrpc": "2.0", "id": None, "error": BAD_ID}
    client.call(9, WHERE_IS)  # the refused ran nothing; the session serves on
    got = client.reply()
    assert got["id"] == 9 and "result" in got
    client.nothing_more()


@pytest.mark.parametrize("key", [r"\u0069d", r"i\u0064"])
def test_a_bad_id_whose_member_name_is_written_with_json_escapes_is_answered_too(client, key) -> None:
    # ``"\u0069d"`` is the member ``id`` to every JSON parser, the SDK's included: a null id so
    # spelled must be refused like ``"id": null``, not run as a notification, unanswered.
    assert client.proc.stdin is not None
    body = json.dumps({"method": "tools/call", "params": WHERE_IS})[1:]
    client.proc.stdin.write(f'{{"jsonrpc": "2.0", "{key}": null, {body}\n'.encode())
    client.proc.stdin.flush()
    assert client.reply(timeout=10) == {"jsonrpc": "2.0", "id": None, "error": BAD_ID}
    client.call(9, WHERE_IS)
    got = client.reply()
    assert got["id"] == 9 and "result" in got
    client.nothing_more()


def test_a_client_that_never_reads_its_answers_is_read_no_further_and_loses_none(
    tmp_path: Path, workspace: Path, mock_provider: MockProvider
) -> None:
    # Each request's answer waited on the full pipe while the transport read on: 200,000 lines
    # grew the server past 1.5 GB. Past MAX_IN_FLIGHT (1024) held requests it reads no more, so
    # the pipe fills and the client's writes wait; once it reads, every request is answered.
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps({"router": router_block(mock_provider, ["searxng"])}))
    script = str(Path(sys.executable).parent / "dsh-search")
    proc = subprocess.Popen(
        forked([script, "mcp", "--config", str(cfg), "--workspace", str(workspace)]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=home_env(tmp_path / "home"),
    )
    assert proc.stdin is not None and proc.stdout is not None
    init = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}
    proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init}).encode() + b"\n")
    proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
    proc.stdin.flush()
    assert json.loads(proc.stdout.readline())["id"] == 0
    total, sent = 20_000, [0]

    def write() -> None:
        assert proc.stdin is not None
        for rid in range(1, total + 1):
            proc.stdin.write(f'{{"jsonrpc":"2.0","id":{rid},"method":"ping"}}\n'.encode())
            proc.stdin.flush()
            sent[0] = rid

    writer = threading.Thread(target=write, daemon=True)
    try:
        writer.start()
        # the server reads no more: the pipe to it fills and the client's write waits (a fixed
        # 20 s wait before looking; a loaded machine fills it later, an idle one in a moment)
        wait_until(lambda: pipe_full(proc), "the client's writes waiting on a full pipe")
        # 1,024 held, the rest in the transport's read buffer and the pipe (a few thousand lines)
        assert writer.is_alive() and sent[0] < 10_000
        answered = [json.loads(proc.stdout.readline()) for _ in range(total)]
        writer.join(timeout=HANG_S)
        assert sorted(a["id"] for a in answered) == list(range(1, total + 1))
        assert all(a["result"] == {} for a in answered)
    finally:
        proc.kill()
        proc.wait()


def pipe_full(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the pipe to ``proc``'s stdin is full (a page or less free): its reader reads no
    more, and a writer waits. ``FIONREAD`` gives the unread bytes, ``F_GETPIPE_SZ`` the size."""
    assert proc.stdin is not None
    fd = proc.stdin.fileno()
    buf = bytearray(4)
    fcntl.ioctl(fd, termios.FIONREAD, buf)
    return int.from_bytes(buf, "little") >= fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ) - 4096
