"""A frame whose header block is broken is refused with the request's own id, never lost
silently, and the stream is read on (docs/SECURITY.md, "Leftovers of the earlier suite"):
a header without its blank line, a ``Content-Length`` line that never ends, two headers and
no blank line, and each of those with a wrong length."""

from __future__ import annotations

import json

import pytest
from dsh_sidecar.lsp.framing import NO_BLANK_LINE, UNENDED_HEADER
from support.rawrpc import RawServer, frame


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the module: that it keeps serving after each case is the point."""
    srv = RawServer(tmp_path_factory.mktemp("dsh-home"))
    srv.initialize({})
    yield srv
    srv.close()


def body(msg_id: int | str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "dsh/status"}).encode()


def refused(msg_id: int | str, reason: str) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": -32600, "message": f"Invalid Request: {reason}"}}


def assert_serving(srv: RawServer, msg_id: int) -> None:
    srv.send_raw(frame(body(msg_id)))
    assert srv.response(msg_id)["result"]["version"]


@pytest.mark.parametrize(
    ("head", "reason"),
    [
        (b"Content-Length: %d\r\n", NO_BLANK_LINE),
        (b"content-length:%d\n", NO_BLANK_LINE),  # lower case, LF only
        (b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n", NO_BLANK_LINE),
        (b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: %d\r\n", NO_BLANK_LINE),
        (b"Content-Length: %d", UNENDED_HEADER),  # the header line never ends: the body runs on
        (b"Content-Length:   %d  ", UNENDED_HEADER),
    ],
    ids=["no-blank-line", "lf-lowercase", "two-headers", "type-then-length", "unended-line", "unended-spaces"],
)
def test_the_request_is_refused_with_its_id_at_once_and_the_next_frame_served(server, head, reason):
    msg = body(f"broken-{reason[:3]}-{len(head)}")
    server.send_raw(head % len(msg) + msg)  # and nothing after it: the client waits for this reply
    reply = server.recv()
    assert reply == refused(json.loads(msg)["id"], reason)
    assert_serving(server, 501)


def test_a_notification_without_its_blank_line_is_refused_with_a_null_id(server):
    note = b'{"jsonrpc":"2.0","method":"dsh/toolsChanged"}'
    server.send_raw(b"Content-Length: %d\r\n" % len(note) + note)
    assert server.recv() == refused(None, NO_BLANK_LINE)
    assert_serving(server, 502)


def test_an_understated_length_without_the_blank_line_then_the_next_frame(server):
    msg = body(31)
    # 6 bytes short: the refused part still carries the id; its tail runs into the next header,
    # where the reader re-synchronises
    server.send_raw(b"Content-Length: %d\r\n" % (len(msg) - 6) + msg + frame(body(32)))
    assert server.response(31) == refused(31, NO_BLANK_LINE)
    assert server.response(32)["result"]["version"]


def test_an_overstated_length_without_the_blank_line_costs_the_next_frame_at_most(server):
    msg = body(41)
    server.send_raw(b"Content-Length: %d\r\n" % (len(msg) + 20) + msg)
    # the 20 bytes it still waits for come with the next frame (which they break)
    server.send_raw(frame(body(42)) + frame(body(43)))
    assert server.response(41) == refused(41, NO_BLANK_LINE)
    assert server.response(43)["result"]["version"]  # serving again by the frame after
    server.drain(0.3)


def test_an_unended_header_line_with_the_next_frame_in_the_same_write(server):
    msg = body(51)
    server.send_raw(b"Content-Length: %d" % len(msg) + msg + frame(body(52)) + frame(body(53)))
    assert server.response(51) == refused(51, UNENDED_HEADER)
    assert server.response(52)["result"]["version"]
    assert server.response(53)["result"]["version"]


def test_a_body_over_the_limit_without_its_blank_line_is_drained_and_refused(server):
    big = b'{"jsonrpc":"2.0","id":61,"method":"dsh/status","params":{"pad":"' + b"x" * (17 << 20) + b'"}}'
    server.send_raw(b"Content-Length: %d\r\n" % len(big) + big)
    reply = server.response(61, timeout=60)
    assert reply["error"]["code"] == -32600
    assert reply["error"]["message"].startswith("Invalid Request: the header block did not end with a blank line")
    assert_serving(server, 62)
