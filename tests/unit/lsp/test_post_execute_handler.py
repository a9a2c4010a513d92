"""The ``dsh/postExecute`` handler's queued path: a call that waits (behind another, or for the
index) yields its task to pygls, and the task pygls runs for that wait leaves the protocol's
table of requests in flight once it ends (pygls itself never drops it: one entry a waiting call,
without bound). The usual call is answered at once, without a task."""

from __future__ import annotations

import asyncio
from typing import Any

from support.inprocess_lsp import Answer, replies, served

PARAMS = {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "x"}}}


class QueuingSidecar:
    """What the handler reads of a sidecar: every other call waits (a future answered later)."""

    def __init__(self) -> None:
        self.calls = 0
        self.waiting: list[tuple[asyncio.Future[Answer], int]] = []

    def post_execute_soon(self, params: Any) -> Answer | asyncio.Future[Answer]:
        self.calls += 1
        if self.calls % 2:
            return Answer(self.calls)
        future: asyncio.Future[Answer] = asyncio.get_running_loop().create_future()
        self.waiting.append((future, self.calls))
        return future

    def shutdown(self) -> None:
        pass


def test_waiting_calls_are_answered_and_leave_no_request_in_flight_behind():
    sidecar = QueuingSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        for i in range(40):
            proto._handle_request(i, "dsh/postExecute", PARAMS)
        await asyncio.sleep(0)
        for future, n in sidecar.waiting:
            future.set_result(Answer(n))
        for _ in range(200):
            await asyncio.sleep(0)
            if len(written) == 40:
                break

    asyncio.run(run())
    answers = {r["id"]: r["result"] for r in replies(written)}
    assert answers == {i: {"additionalContexts": [], "n": i + 1} for i in range(40)}
    assert proto._request_futures == {}


def test_shutdown_with_calls_still_waiting_answers_and_cancels_them():
    """``shutdown`` while calls wait: pygls cancels every request in flight, and a generator
    handler's future answers its cancellation at once, which removes it from the table pygls is
    walking. ``shutdown`` is still answered (``null``), each waiting call with -32800, and no
    step of a cancelled wait raises in the event loop."""
    sidecar = QueuingSidecar()
    proto, written = served(sidecar)
    loop_errors: list[dict[str, Any]] = []

    async def run() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: loop_errors.append(context))
        for i in range(6):
            proto._handle_request(i, "dsh/postExecute", PARAMS)
        await asyncio.sleep(0)
        proto._handle_request(99, "shutdown", None)
        for _ in range(50):
            await asyncio.sleep(0)

    asyncio.run(run())
    by_id = {r["id"]: r for r in replies(written)}
    assert by_id[99] == {"id": 99, "jsonrpc": "2.0", "result": None}
    assert sorted(by_id) == [0, 1, 2, 3, 4, 5, 99]
    assert {by_id[i]["error"]["code"] for i in (1, 3, 5)} == {-32800}
    assert [by_id[i]["result"]["n"] for i in (0, 2, 4)] == [1, 3, 5]
    assert loop_errors == []
    assert proto._shutdown
