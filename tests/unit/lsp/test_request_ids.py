"""A client that reuses the id of a request still in flight (JSON-RPC 2.0: an id names one
request until it is answered). pygls files each request's future under the client's id, so the
second overwrote the first's entry: both ran and both were answered under the one id (the client
cannot tell which answer is whose), the first's answer removed the second's entry, and a
``$/cancelRequest`` of the id then reached neither. The transport answers the reuse with
``InvalidRequest`` and runs nothing; the first request is answered once, and stays cancellable."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from dsh_sidecar.lsp.transport import dispatch
from lsprotocol import types as lsp
from support.inprocess_lsp import Answer, replies, served

IN_USE = "Invalid Request: the id is in use by a request still in flight"
PARAMS = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "x"}}}


class WaitingSidecar:
    """What the handler reads of a sidecar: every call waits (a future answered later)."""

    def __init__(self) -> None:
        self.calls = 0
        self.tools_changed_calls = 0
        self.waiting: list[asyncio.Future[Answer]] = []

    def post_execute_soon(self, params: Any) -> asyncio.Future[Answer]:
        self.calls += 1
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.waiting.append(future)
        return future

    def tools_changed(self) -> None:
        self.tools_changed_calls += 1

    def shutdown(self) -> None:
        pass


def body(message: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode()


def turn(written: list[bytes], n: int) -> Any:
    async def until() -> None:
        for _ in range(200):
            await asyncio.sleep(0)
            if len(written) >= n:
                return

    return until()


def test_an_id_reused_while_its_request_is_in_flight_is_refused_and_the_first_answered_once():
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        dispatch(proto, body({"id": 7, "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        dispatch(proto, body({"id": 7, "method": "dsh/postExecute", "params": {**PARAMS, "turn": 2}}))
        await turn(written, 1)
        sidecar.waiting[0].set_result(Answer(1))
        await turn(written, 2)
        for _ in range(20):
            await asyncio.sleep(0)

    asyncio.run(run())
    assert sidecar.calls == 1  # the reuse ran nothing
    assert replies(written) == [
        {
            "jsonrpc": "2.0",
            "id": 7,
            "error": {"code": -32600, "message": IN_USE},
        },
        {"jsonrpc": "2.0", "id": 7, "result": {"additionalContexts": [], "n": 1}},
    ]
    assert proto._request_futures == {}


def test_a_cancel_after_a_refused_reuse_still_cancels_the_first_request():
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        dispatch(proto, body({"id": "a", "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        dispatch(proto, body({"id": "a", "method": "dsh/postExecute", "params": PARAMS}))
        dispatch(proto, body({"method": "$/cancelRequest", "params": {"id": "a"}}))
        await turn(written, 2)
        for _ in range(20):
            await asyncio.sleep(0)

    asyncio.run(run())
    got = replies(written)
    assert [r["id"] for r in got] == ["a", "a"]
    assert got[0]["error"]["message"] == IN_USE
    assert got[1]["error"]["code"] == -32800  # the first request, cancelled
    assert proto._request_futures == {}


def test_an_id_is_free_again_once_its_request_is_answered():
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        dispatch(proto, body({"id": 3, "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        sidecar.waiting[0].set_result(Answer(1))
        await turn(written, 1)
        dispatch(proto, body({"id": 3, "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        sidecar.waiting[1].set_result(Answer(2))
        await turn(written, 2)

    asyncio.run(run())
    assert [(r["id"], r["result"]["n"]) for r in replies(written)] == [(3, 1), (3, 2)]


def test_a_response_under_the_id_of_a_request_in_flight_does_not_answer_it():
    """pygls files the client's requests and the server's own in one table: a "response" from the
    client under the id of its own request in flight resolved that request, and the server
    answered it with what the client had sent. Only a response to a request of the server's is
    taken; the client's request is answered by its handler."""
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        dispatch(proto, body({"id": 5, "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        dispatch(proto, body({"id": 5, "result": {"forged": True}}))
        for _ in range(20):
            await asyncio.sleep(0)
        sidecar.waiting[0].set_result(Answer(1))
        await turn(written, 1)

    asyncio.run(run())
    assert replies(written) == [{"jsonrpc": "2.0", "id": 5, "result": {"additionalContexts": [], "n": 1}}]
    assert proto._request_futures == {}


def test_a_response_to_the_servers_own_request_resolves_it():
    proto, written = served(WaitingSidecar())

    async def run() -> Any:
        sent = proto.send_request_async(
            lsp.WINDOW_WORK_DONE_PROGRESS_CREATE, lsp.WorkDoneProgressCreateParams(token="t")
        )
        request = replies(written)[0]
        dispatch(proto, body({"id": request["id"], "result": None}))
        return await asyncio.wait_for(sent, 5)

    assert asyncio.run(run()) is None
    assert proto.awaiting_responses == set()
    assert proto._request_futures == {}


NOTIFICATION_WITH_ID = "Invalid Request: {} is a notification: it is sent without an id"


def test_a_notification_method_sent_with_an_id_is_answered_and_runs_nothing(caplog: Any) -> None:
    """A message with an id is a request and is answered (JSON-RPC 2.0). pygls structures a
    notification method's message by the method's type, which has no id: the id was dropped, the
    notification ran (a ``$/cancelRequest`` cancelled), and the request was never answered."""
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        dispatch(proto, body({"id": 1, "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        dispatch(proto, body({"id": 2, "method": "$/cancelRequest", "params": {"id": 1}}))
        dispatch(proto, body({"id": 3, "method": "initialized", "params": {}}))
        dispatch(proto, body({"id": 4, "method": "dsh/toolsChanged", "params": {}}))  # the sidecar's own
        await turn(written, 3)
        sidecar.waiting[0].set_result(Answer(1))
        await turn(written, 4)

    asyncio.run(run())
    assert replies(written) == [
        {
            "jsonrpc": "2.0",
            "id": 2,
            "error": {"code": -32600, "message": NOTIFICATION_WITH_ID.format("$/cancelRequest")},
        },
        {"jsonrpc": "2.0", "id": 3, "error": {"code": -32600, "message": NOTIFICATION_WITH_ID.format("initialized")}},
        {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32600, "message": NOTIFICATION_WITH_ID.format("dsh/toolsChanged")},
        },
        {"jsonrpc": "2.0", "id": 1, "result": {"additionalContexts": [], "n": 1}},  # not cancelled
    ]
    assert sidecar.tools_changed_calls == 0  # refused, not run


def test_responses_and_cancels_under_ids_no_request_can_have_are_dropped_without_an_error(caplog: Any) -> None:
    """An id that is an object, a list or a fraction names no request: a client "response" or a
    ``$/cancelRequest`` under one is dropped with a warning. pygls looked such an id up in its
    tables (a dict key): ``TypeError: unhashable type``, a traceback logged per message."""
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)
    caplog.set_level("WARNING")

    async def run() -> None:
        dispatch(proto, body({"id": 1, "method": "dsh/postExecute", "params": PARAMS}))
        await asyncio.sleep(0)
        for bad in ({"a": [1]}, [1], 1.5):
            dispatch(proto, body({"id": bad, "result": {}}))
            dispatch(proto, body({"id": bad, "error": {"code": 1, "message": "m"}}))
            dispatch(proto, body({"method": "$/cancelRequest", "params": {"id": bad}}))
        sidecar.waiting[0].set_result(Answer(1))
        await turn(written, 1)

    asyncio.run(run())
    assert replies(written) == [{"jsonrpc": "2.0", "id": 1, "result": {"additionalContexts": [], "n": 1}}]
    assert [r.levelname for r in caplog.records] == ["WARNING"] * 9
    assert not any(r.exc_info for r in caplog.records)
