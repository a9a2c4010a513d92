"""``dsh/status`` with a fleet store: the handler hands the store's read to pygls (a generator
handler) and answers after it; nothing of that read stays behind in the protocol's table of
requests in flight (a status poller against a fleet would grow it by one future a call)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from support.inprocess_lsp import replies, served


async def until_written(written: list[Any], n: int) -> None:
    """Turn the loop until ``n`` frames are written (at most 100 turns)."""
    for _ in range(100):
        await asyncio.sleep(0)
        if len(written) >= n:
            break


def run_collecting_loop_errors(body: Callable[[], Awaitable[None]]) -> list[dict[str, Any]]:
    """Run ``body`` on a fresh event loop; the errors its exception handler was given."""
    errors: list[dict[str, Any]] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda _loop, context: errors.append(context))
        await body()

    asyncio.run(main())
    return errors


class Status:
    def wire(self) -> dict[str, Any]:
        return {"ok": True}


class FleetSidecar:
    """What the handler reads of a sidecar with a fleet store."""

    shared = object()

    def __init__(self) -> None:
        self.reads = 0

    async def read_fleet_cooldowns(self) -> None:
        self.reads += 1
        await asyncio.sleep(0)

    def status(self) -> Status:
        return Status()


def test_a_status_with_a_fleet_store_leaves_no_request_in_flight_behind():
    sidecar = FleetSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        for i in range(50):
            proto._handle_request(i, "dsh/status", {})
        await until_written(written, 50)

    asyncio.run(run())
    assert sidecar.reads == 50
    answers = replies(written)
    assert [r["id"] for r in answers] == list(range(50)) and all(r["result"] == {"ok": True} for r in answers)
    assert proto._request_futures == {}


class SlowFleetSidecar(FleetSidecar):
    """A fleet store whose read is still running when ``shutdown`` comes."""

    async def read_fleet_cooldowns(self) -> None:
        self.reads += 1
        await asyncio.sleep(30)

    def shutdown(self) -> None:
        pass


def test_a_status_waiting_for_the_fleet_store_at_shutdown_is_answered_not_cancelled():
    """``dsh/status`` just before the exit, its fleet store read still running: ``shutdown``
    answers it with what this process knows (a status poller's last call is no -32800), then
    itself; the read's step ends without a second answer or an error in the event loop."""
    sidecar = SlowFleetSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        proto._handle_request(1, "dsh/status", {})
        await asyncio.sleep(0.01)
        proto._handle_request(2, "shutdown", None)
        await until_written(written, 2)
        await asyncio.sleep(0.05)

    loop_errors = run_collecting_loop_errors(run)
    assert sidecar.reads == 1
    assert replies(written) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": 2, "result": None},
    ]
    assert (proto._request_futures, proto.answer_at_shutdown, loop_errors) == ({}, {}, [])


class OnceSlowFleetSidecar(SlowFleetSidecar):
    """A fleet store whose first read is still running at ``shutdown``; later ones are quick."""

    async def read_fleet_cooldowns(self) -> None:
        self.reads += 1
        await asyncio.sleep(30 if self.reads == 1 else 0)


def test_a_client_reusing_a_request_id_cannot_remove_another_status_waiting_at_shutdown():
    """JSON-RPC lets the client choose request ids, and a hostile one reuses them: a second
    ``dsh/status`` under the id of one still waiting for the fleet store answers first, and
    ``shutdown`` still answers the waiting one (its entry is its own request's, not its id's)."""
    sidecar = OnceSlowFleetSidecar()
    proto, written = served(sidecar)

    async def run() -> None:
        proto._handle_request(1, "dsh/status", {})
        await asyncio.sleep(0.01)
        proto._handle_request(1, "dsh/status", {})  # the same id, answered after a quick read
        await until_written(written, 1)
        proto._handle_request(2, "shutdown", None)
        await until_written(written, 3)
        await asyncio.sleep(0.05)

    loop_errors = run_collecting_loop_errors(run)
    assert sidecar.reads == 2
    assert replies(written) == [
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": 1, "result": {"ok": True}},
        {"jsonrpc": "2.0", "id": 2, "result": None},
    ]
    assert (proto._request_futures, proto.answer_at_shutdown, loop_errors) == ({}, {}, [])
