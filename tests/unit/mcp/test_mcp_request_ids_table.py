"""The MCP transport's table of request ids in flight stays as large as the requests the server
holds: each id leaves it when its answer is written or its request is cancelled, and a refusal
(written beneath the watched stream) never frees the id it collided with."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest
from dsh_protocol.ids import IN_USE
from dsh_sidecar.mcp.request_ids import AnswerWatchingStream, RequestsInFlight
from dsh_sidecar.mcp.transport import read_line
from mcp.shared.message import SessionMessage

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")


def offer(table: RequestsInFlight, message: dict) -> types.JSONRPCError | None:
    line = json.dumps({"jsonrpc": "2.0", **message}) + "\n"
    parsed, error = read_line(line)
    assert parsed is not None and error is None
    return table.refusal(parsed, line)


def test_ids_leave_the_table_when_answered_or_cancelled() -> None:
    table = RequestsInFlight()

    async def run() -> None:
        send, receive = anyio.create_memory_object_stream[SessionMessage](2000)
        answers = AnswerWatchingStream(send, table)
        for rid in range(1000):
            assert offer(table, {"id": rid, "method": "tools/list"}) is None
        refused = offer(table, {"id": "7", "method": "tools/list"})
        assert refused is not None and refused.id == "7" and refused.error.message == IN_USE
        assert len(table) == 1000
        await send.send(SessionMessage(refused))  # the transport's own refusal: not watched
        assert len(table) == 1000
        for rid in range(500):
            await answers.send(SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=rid, result={})))
        for rid in range(500, 1000):
            params = {"requestId": str(rid), "reason": "user"}
            assert offer(table, {"method": "notifications/cancelled", "params": params}) is None
        assert len(table) == 0
        async with answers:
            pass
        receive.close()

    anyio.run(run)


def test_a_cancel_sent_with_an_id_is_refused_and_frees_nothing() -> None:
    table = RequestsInFlight()
    assert offer(table, {"id": 3, "method": "tools/list"}) is None
    refused = offer(table, {"id": None, "method": "notifications/cancelled", "params": {"requestId": 3}})
    assert refused is not None and refused.id is None
    assert len(table) == 1
