"""The fleet store's exit bound (docs/fleet.md, "The start and the exit"): an MCP server's counts
from the exit's start, the flushes' hand-over within it (Claude Code's SIGKILL counts from its
SIGINT, whatever the hand-over took); ``serve``'s counts from the store's close, after the wait
for a workspace build to stop."""

from __future__ import annotations

import time
from typing import Any

from dsh_sidecar.sidecar.fleetexit import EXIT_HANDOFF_S, FleetExit
from dsh_sidecar.state.shared import EXIT_FLUSH_MCP_S, EXIT_FLUSH_S


class Store:
    """What the exit calls of a fleet store."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []

    def begin_exit(self) -> None:
        self.calls.append(("begin_exit", None))

    def close(self, not_handed: int, within_s: float, since: float | None = None) -> None:
        self.calls.append(("close", (not_handed, within_s, since)))


def test_an_mcp_exit_bounds_the_store_from_the_exits_start() -> None:
    store = Store()
    exit_ = FleetExit(store, "mcp")  # type: ignore[arg-type]
    before = time.monotonic()
    exit_.begin()
    after = time.monotonic()
    exit_.begin()  # a second begin (shutdown, then the exit) does not move the start
    exit_.close(2)
    exit_.close(5)  # once
    closes = [args for name, args in store.calls if name == "close"]
    assert len(closes) == 1
    not_handed, within_s, since = closes[0]
    assert (not_handed, within_s) == (2, EXIT_FLUSH_MCP_S)
    assert since is not None and before <= since <= after
    assert EXIT_HANDOFF_S < EXIT_FLUSH_MCP_S  # the hand-over fits within the whole bound


def test_a_serve_exit_bounds_the_store_from_its_close() -> None:
    store = Store()
    exit_ = FleetExit(store, None)  # type: ignore[arg-type]
    exit_.begin()
    exit_.close(0)
    assert [args for name, args in store.calls if name == "close"] == [(0, EXIT_FLUSH_S, None)]
