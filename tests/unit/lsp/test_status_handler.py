"""``dsh/status`` with a fleet store: the handler hands the store's read to pygls (a generator
handler) and answers after it; nothing of that read stays behind in the protocol's table of
requests in flight (a status poller against a fleet would grow it by one future a call)."""

from __future__ import annotations

import asyncio
from typing import Any

from support.inprocess_lsp import replies, served


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
        for _ in range(100):
            await asyncio.sleep(0)
            if len(written) == 50:
                break

    asyncio.run(run())
    assert sidecar.reads == 50
    answers = replies(written)
    assert [r["id"] for r in answers] == list(range(50)) and all(r["result"] == {"ok": True} for r in answers)
    assert proto._request_futures == {}
