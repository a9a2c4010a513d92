"""Class 12: protocol edges (docs/SECURITY.md).

A second ``initialize`` is refused (-32600) and changes nothing; a ``method`` that is not a
string gets -32600 with the request's id; an internal error reply carries no traceback and no
raw exception text (it is logged, redacted, to stderr); temp files a ``kill -9`` left in the
state folder are removed at the next start.
"""

from __future__ import annotations

import sys

import pytest
from dsh_sidecar.lsp.app import INTERNAL_ERROR_MESSAGE, SidecarServer
from support.rawrpc import RawServer
from support.trees import copy_fixture


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One sidecar for the module's read-only cases (refused requests change nothing)."""
    workspace = tmp_path_factory.mktemp("ws") / "pyproj"
    copy_fixture("pyproj", workspace)
    srv = RawServer(tmp_path_factory.mktemp("dsh-home"), cwd=workspace, forked=True)
    srv.initialize({"suggester": {"enabled": True}}, root=workspace)
    yield srv
    srv.close()


def test_second_initialize_is_refused_and_changes_nothing(server, tmp_path):
    before = server.request("dsh/status")["result"]
    other = tmp_path / "elsewhere"
    other.mkdir()
    for options in ({"suggester": {"enabled": False}}, {"router": {"nope": 1}}, None):
        reply = server.request(
            "initialize",
            {"processId": None, "capabilities": {}, "rootUri": other.as_uri(), "initializationOptions": options},
        )
        assert reply["error"] == {"code": -32600, "message": "Invalid Request: initialize was already received"}
    after = server.request("dsh/status")["result"]
    assert after["workspace"] == before["workspace"]
    assert after["router"]["chain"] == before["router"]["chain"]


@pytest.mark.parametrize("method", [5, 0, -1.5, None, True, ["dsh/status"], {"name": "dsh/status"}])
def test_a_method_that_is_not_a_string_is_invalid_request(server, method):
    server.send({"jsonrpc": "2.0", "id": 4242, "method": method})
    reply = server.response(4242)
    assert reply["error"]["code"] == -32600
    assert "data" not in reply["error"]
    assert "Traceback" not in str(reply) and "File " not in str(reply)
    assert "result" in server.request("dsh/status")  # still serving


@pytest.mark.parametrize("method", ["notifications/cancelled", "notifications/dsh/unknown", "notifications/"])
def test_an_mcp_notification_method_sent_with_an_id_is_invalid_request_as_on_mcp(server, method):
    """MCP's notifications (known or not) sent with an id: -32600 with the MCP transport's text
    (``dsh_protocol.ids``), not pygls's -32601 "Method Not Found"."""
    server.send({"jsonrpc": "2.0", "id": 4343, "method": method, "params": {"requestId": 1}})
    assert server.response(4343)["error"] == {
        "code": -32600,
        "message": f"Invalid Request: {method} is a notification: it is sent without an id",
    }
    assert "result" in server.request("dsh/status")  # still serving


def test_an_unknown_dollar_request_is_method_not_found_as_lsp_says(server):
    """LSP: a request starting with ``$/`` that the server does not know "must error with
    MethodNotFound"; a known ``$/`` notification with an id is -32600 (the unit tests)."""
    server.send({"jsonrpc": "2.0", "id": 4344, "method": "$/unknownThing", "params": {}})
    assert server.response(4344)["error"] == {"code": -32601, "message": "Method Not Found: $/unknownThing"}


def test_a_method_notification_that_is_not_a_string_gets_id_null(server):
    server.send({"jsonrpc": "2.0", "method": 7})
    msg = server.recv(60)
    while "method" in msg:
        msg = server.recv(60)
    assert msg["id"] is None and msg["error"]["code"] == -32600


class _Capture:
    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data += data

    def close(self) -> None:
        pass


def test_internal_error_reply_has_no_traceback_or_exception_text():
    from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

    srv = SidecarServer()
    cap = _Capture()
    srv.protocol.set_writer(cap)
    try:
        raise RuntimeError("secret-path /home/x/.ssh/id_rsa and sk-live-123")
    except RuntimeError:
        error = JsonRpcInternalError.of(sys.exc_info()).to_response_error()
    srv.protocol._send_response(7, error=error)
    text = cap.data.decode()
    assert INTERNAL_ERROR_MESSAGE in text
    for leak in ("Traceback", "traceback", "RuntimeError", "secret-path", "sk-live", 'File "'):
        assert leak not in text
    cap.data = b""
    bad = JsonRpcInvalidParams(message="maxResults: must be at most 20", data={"traceback": ["File x"]})
    srv.protocol._send_response(8, error=bad.to_response_error())
    assert "maxResults: must be at most 20" in cap.data.decode() and "traceback" not in cap.data.decode()


def test_temp_files_of_a_killed_writer_are_removed_at_the_next_start(dsh_home, workspace):
    planted = [
        dsh_home / "bandit" / ".posteriors.json.k9abc.tmp",
        dsh_home / "search-suggester" / ".knowledge.json.k9def.tmp",
    ]
    for p in planted:
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(b'{"half": ')
    keep = dsh_home / "bandit" / "notes.tmp"  # not a temp file of ours
    keep.write_text("mine")
    server = RawServer(dsh_home, cwd=workspace, forked=True)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=workspace)
        assert "result" in server.request("dsh/dismiss", {"family": "Doc"})  # reads knowledge
        assert "result" in server.request("dsh/status")
        assert server.shutdown() == 0
    finally:
        server.close()
    assert [p for p in planted if p.exists()] == []
    assert keep.read_text() == "mine"
