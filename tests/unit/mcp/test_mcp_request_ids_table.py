"""The MCP transport's table of request ids in flight stays as large as the requests the server
holds: each id leaves it when the SDK settles its request (its answer is written, or the SDK ends
it unanswered through the hook each request is stamped with), never on a cancel alone, and a
refusal (written beneath the watched stream) never frees the id it collided with."""

from __future__ import annotations

import json

import anyio
import mcp_types as types
import pytest
from dsh_protocol.ids import IN_USE, notification_with_id
from dsh_sidecar.mcp.request_ids import AnswerWatchingStream, RequestsInFlight, SettleStampingStream
from dsh_sidecar.mcp.transport import read_line
from mcp.shared.message import ServerMessageMetadata, SessionMessage

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")


def offer(table: RequestsInFlight, message: dict) -> types.JSONRPCError | None:
    line = json.dumps({"jsonrpc": "2.0", **message}) + "\n"
    parsed, error = read_line(line)
    assert parsed is not None and error is None
    return table.refusal(parsed, line)


def request(rid: object) -> SessionMessage:
    return SessionMessage(types.JSONRPCRequest(jsonrpc="2.0", id=rid, method="tools/list"))  # type: ignore[arg-type]


async def settle_unanswered(table: RequestsInFlight, rid: object) -> None:
    """What the SDK does with a request it ends without an answer: calls its stamped hook."""
    stamped = table.stamped(request(rid))
    assert isinstance(stamped.metadata, ServerMessageMetadata) and stamped.metadata.on_request_unanswered
    await stamped.metadata.on_request_unanswered()


def test_ids_leave_the_table_when_answered_or_settled_unanswered() -> None:
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
        assert len(table) == 500  # a cancel frees nothing until the SDK settles the request
        for rid in range(500, 1000):
            await settle_unanswered(table, rid)
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


def test_a_late_answer_after_a_cancel_never_frees_the_id_of_a_request_reusing_it() -> None:
    """The cancel/answer race, step by step: the client cancels 6 while the SDK is writing 6's
    answer (the handler returned before the SDK read the cancel, so the SDK answers it), then
    sends a new request under 6. Freed on the cancel, the id let the new 6 through, and the late
    answer then freed the new 6's id: a third 6 ran over the second's entry at the SDK."""
    table = RequestsInFlight()

    async def run() -> list[types.RequestId]:
        writing, written = anyio.Event(), anyio.Event()
        wire: list[types.RequestId] = []

        class SlowWire:  # the writer beneath: each answer's write waits for ``written``
            async def send(self, item: SessionMessage) -> None:
                writing.set()
                await written.wait()
                wire.append(item.message.id)  # type: ignore[union-attr]

        answers = AnswerWatchingStream(SlowWire(), table)
        assert offer(table, {"id": 6, "method": "tools/call"}) is None
        async with anyio.create_task_group() as tg:
            tg.start_soon(answers.send, SessionMessage(types.JSONRPCResponse(jsonrpc="2.0", id=6, result={})))
            await writing.wait()  # the answer is being written
            assert offer(table, {"method": "notifications/cancelled", "params": {"requestId": 6}}) is None
            refused = offer(table, {"id": 6, "method": "tools/call"})
            assert refused is not None and (refused.id, refused.error.message) == (6, IN_USE)
            assert len(table) == 1
            written.set()
        assert len(table) == 0  # freed once, by the answer
        assert offer(table, {"id": 6, "method": "tools/call"}) is None  # the reuse, now the only 6
        again = offer(table, {"id": 6, "method": "tools/call"})
        assert again is not None and again.error.message == IN_USE
        await settle_unanswered(table, 6)  # cancelled at the SDK before it answered
        assert len(table) == 0
        return wire

    assert anyio.run(run) == [6]


def test_the_read_stream_stamps_each_request_with_its_settle_hook_and_nothing_else() -> None:
    table = RequestsInFlight()

    async def run() -> list[SessionMessage]:
        send, receive = anyio.create_memory_object_stream[SessionMessage](10)
        note = types.JSONRPCNotification(jsonrpc="2.0", method="notifications/initialized")
        assert offer(table, {"id": "a", "method": "tools/list"}) is None
        await send.send(request("a"))
        await send.send(SessionMessage(note))
        send.close()
        async with SettleStampingStream(receive, table) as stream:
            got = [item async for item in stream]
        hook = got[0].metadata.on_request_unanswered  # type: ignore[union-attr]
        await hook()
        assert len(table) == 0
        return got

    got = anyio.run(run)
    assert [(type(g.metadata).__name__, g.message.method) for g in got] == [  # type: ignore[union-attr]
        ("ServerMessageMetadata", "tools/list"),
        ("NoneType", "notifications/initialized"),
    ]


@pytest.mark.parametrize(
    "method",
    ["notifications/initialized", "notifications/cancelled", "notifications/progress", "notifications/x/unknown"],
)
def test_a_notification_method_under_an_id_is_refused_with_the_lsp_text_and_holds_nothing(method: str) -> None:
    table = RequestsInFlight()
    refused = offer(table, {"id": 5, "method": method, "params": {"requestId": 1, "progressToken": 1, "progress": 1}})
    assert refused is not None and refused.model_dump(by_alias=True, exclude_none=True) == {
        "jsonrpc": "2.0",
        "id": 5,
        "error": {"code": -32600, "message": f"Invalid Request: {method} is a notification: it is sent without an id"},
    }
    assert notification_with_id(method) == refused.error.message
    assert len(table) == 0


def test_room_waits_while_the_limit_is_held_and_returns_once_one_settles() -> None:
    table = RequestsInFlight(limit=2)
    assert offer(table, {"id": 1, "method": "tools/list"}) is None
    assert offer(table, {"id": 2, "method": "tools/list"}) is None
    waited: list[str] = []

    async def main() -> None:
        async with anyio.create_task_group() as tg:

            async def reader() -> None:
                await table.room()
                waited.append("room")

            tg.start_soon(reader)
            await anyio.wait_all_tasks_blocked()
            assert waited == []  # two held: the transport reads no further
            await settle_unanswered(table, 1)
        assert waited == ["room"] and len(table) == 1
        await table.room()  # under the limit: at once

    anyio.run(main)
