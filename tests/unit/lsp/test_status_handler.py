"""``dsh/status`` with a fleet store: the handler hands the store's read to pygls (a generator
handler) and answers after it; nothing of that read stays behind in the protocol's table of
requests in flight (a status poller against a fleet would grow it by one future a call)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from dsh_sidecar.lsp.handlers import build_server


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
    server = build_server()
    sidecar = FleetSidecar()
    server.sidecar = sidecar  # type: ignore[assignment]
    written: list[bytes] = []

    class Writer:
        def write(self, data: bytes) -> None:
            written.append(data)

    proto = server.protocol
    proto.set_writer(Writer())

    async def run() -> None:
        for i in range(50):
            proto._handle_request(i, "dsh/status", {})
        for _ in range(100):
            await asyncio.sleep(0)
            if len(written) == 50:
                break

    asyncio.run(run())
    assert sidecar.reads == 50
    replies = [json.loads(w.split(b"\r\n\r\n", 1)[1]) for w in written]
    assert [r["id"] for r in replies] == list(range(50)) and all(r["result"] == {"ok": True} for r in replies)
    assert proto._request_futures == {}
