"""The fleet store at a sidecar's exit (docs/fleet.md, "The start and the exit"): the store
enters its exit first (no call waits for it from then on, every write is queued), the flushes of
the knowledge and the bandit hand their writes over within one :data:`EXIT_HANDOFF_S`, and the
store's close sends the queue within its bound and tells what it did not send, with what the
flushes did not get to hand over. An MCP server's bound is the whole exit's, counted from its
start (the hand-over within it): its client's SIGKILL counts from the same moment."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from dsh_sidecar.state.shared import SharedState

#: Longest the exit's flushes (knowledge, bandit) wait on a fleet store for a write a background
#: thread already sent, s: the rest is queued for the store's bounded exit send.
EXIT_HANDOFF_S: Final = 0.1
#: A one-shot command waits at most this many ``state.timeoutMs`` for the bandit's first read of
#: the fleet's posteriors (connect, the script's load, the read: :func:`settle_fleet`).
FLEET_SETTLE_TIMEOUTS: Final = 4


def settle_fleet(sidecar: Any) -> bool:
    """Wait for the bandit's first read of the fleet's posteriors in ``sidecar`` (a
    :class:`~dsh_sidecar.sidecar.Sidecar`; the package imports this module): a one-shot command's
    search and status answer from them, a server from its own until it lands. At most
    :data:`FLEET_SETTLE_TIMEOUTS` × ``state.timeoutMs``; ``True`` when it landed (or none comes)."""
    timeout_s = FLEET_SETTLE_TIMEOUTS * sidecar.config.state.timeout_ms / 1000
    return sidecar.shared is None or bool(sidecar.bandit.store.settle(timeout_s))


class FleetExit:
    """One exit of a sidecar on the fleet store ``shared`` (``server_kind`` ``mcp``: the shorter
    bound, :data:`~dsh_sidecar.state.shared.EXIT_FLUSH_MCP_S`, for the whole exit from
    :meth:`begin`; ``serve``'s :data:`~dsh_sidecar.state.shared.EXIT_FLUSH_S` counts from the
    close, after the wait for a workspace build to stop)."""

    def __init__(self, shared: SharedState, server_kind: str | None) -> None:
        from dsh_sidecar.state.shared import EXIT_FLUSH_MCP_S, EXIT_FLUSH_S  # a store's: imported with it

        self.shared = shared
        self.within_s = EXIT_FLUSH_MCP_S if server_kind == "mcp" else EXIT_FLUSH_S
        #: close the store before waiting for a workspace build to stop: Claude Code kills an
        #: MCP server 0.5 s after its SIGINT, sooner than such a build may stop
        self.before_quiesce = server_kind == "mcp"
        #: the bound counts from :meth:`begin`, not from :meth:`close`: Claude Code's SIGKILL
        #: comes 0.5 s after its SIGINT whatever the hand-over took (up to 0.1 s of hand-over
        #: then 0.3 s of send on a stalled store: 0.36-0.50 s from SIGINT to exit under load)
        self.from_begin = server_kind == "mcp"
        self._began: float | None = None
        self._until: float | None = None
        self._closed = False

    def begin(self) -> None:
        """The store's exit (idempotent): one :data:`EXIT_HANDOFF_S` from the first call."""
        if self._began is None:
            self._began = time.monotonic()
            self._until = self._began + EXIT_HANDOFF_S
        self.shared.begin_exit()

    def left(self) -> float:
        """What is left of the flushes' :data:`EXIT_HANDOFF_S`, seconds."""
        return max(0.0, (self._until or 0.0) - time.monotonic())

    def flush(self, flush: Callable[[], None]) -> None:
        """Run ``flush`` (it only hands writes over now) on a thread, waited for at most what is left."""
        self.begin()
        flushing = threading.Thread(target=flush, name="dsh-exit-flush", daemon=True)
        flushing.start()
        flushing.join(self.left())

    def close(self, not_handed: int) -> None:
        """Close the store, once: its queue sent within the bound, the rest (and ``not_handed``) told."""
        if not self._closed:
            self._closed = True
            self.shared.close(not_handed, self.within_s, self._began if self.from_begin else None)
