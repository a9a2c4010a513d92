"""How many searches are at their providers at once (``router.maxConcurrentSearches``), and how
many more may wait for a turn (``router.maxQueuedSearches``).

Without a cap, every request in flight held its own provider connection: 4,000 ``web_search``
calls against a provider that hangs opened 4,000 connections, over MCP as over LSP. Past the cap
a search *waits*, first come first served, with its deadline still running: a client of a search
tool expects an answer to every search it sends, later rather than never, and a burst (a
thorough search's reformulations, parallel tool calls) is the normal case, not an error. A search
whose deadline passes while it waits, or whose turn comes with less than a fair budget left
(:mod:`.budget`), ends as one whose deadline passed before its first provider (every provider
``skipped: deadline``, an outage the bandit learns nothing from). Past the wait
list, a search is refused at once (every provider ``skipped: busy (…)``, also an outage): its
wait would outlast any deadline, and what a waiting search holds (its request, its task, its
query of at most ``MAX_QUERY_CHARS`` characters: a few kilobytes) stays bounded by the list.
A cache hit never takes a turn. Waiting costs nothing on the event loop: the suggester's asked
methods are answered while searches wait.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from typing import TYPE_CHECKING, Final

from dsh_sidecar.router.config import DEFAULT_MAX_CONCURRENT, DEFAULT_MAX_QUEUED
from dsh_sidecar.router.outcomes import DEADLINE_SKIP

if TYPE_CHECKING:
    from dsh_sidecar.router.config import RouterConfig

#: Each provider's outcome in a search refused a turn (then `` (N searches running, M waiting)``).
BUSY: Final = "skipped: busy"


class SearchesBusy(Exception):
    """The wait list is full: the search is refused without waiting. ``str()`` says how full."""


class WaitExpired(Exception):
    """The search's deadline passed while it waited for a turn."""


class SearchSlots:
    """At most :attr:`limit` holders at once; up to :attr:`max_waiting` more wait in arrival
    order, each at most its own time. A released turn goes to the first waiter (so a newcomer
    never overtakes the wait list). Used from one event loop at a time; a reconfigured router
    keeps its predecessor's (:meth:`kept`), so the searches still running count: a lowered limit
    takes effect as they end, a raised one at the next search or end."""

    def __init__(self, limit: int = DEFAULT_MAX_CONCURRENT, max_waiting: int = DEFAULT_MAX_QUEUED) -> None:
        self.limit = limit
        self.max_waiting = max_waiting
        self.running = 0
        self._waiters: deque[asyncio.Future[None]] = deque()

    @classmethod
    def kept(cls, previous: SearchSlots | None, config: RouterConfig) -> SearchSlots:
        """``previous`` (the slots of the router a reconfiguration replaces: its searches still
        count) with ``config``'s bounds, else new slots."""
        slots = previous if previous is not None else cls()
        slots.limit, slots.max_waiting = config.max_concurrent_searches, config.max_queued_searches
        return slots

    @property
    def waiting(self) -> int:
        return len(self._waiters)

    @asynccontextmanager
    async def held(self, left_s: Callable[[], float], refused: Callable[[str], Exception]) -> AsyncIterator[None]:
        """A turn for the body, waited for at most ``left_s()`` seconds (read only when it must
        wait: the search's deadline, on its own clock). Raises ``refused(outcome)``
        when the wait list is full (:data:`BUSY`) or the time passes first (:data:`DEADLINE_SKIP`),
        before the body runs; an exception of the body passes through."""
        try:
            await self._acquire(left_s)
        except SearchesBusy as busy:
            raise refused(f"{BUSY} ({busy})") from None
        except WaitExpired:
            raise refused(DEADLINE_SKIP) from None
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, left_s: Callable[[], float]) -> None:
        self._fill()  # a limit raised by a reconfiguration: the waiters go first
        if self.running < self.limit and not self._waiters:
            self.running += 1
            return
        if len(self._waiters) >= self.max_waiting:
            raise SearchesBusy(f"{self.running} searches running, {len(self._waiters)} waiting")
        turn = asyncio.get_running_loop().create_future()
        self._waiters.append(turn)
        try:
            async with asyncio.timeout(max(0.0, left_s())):
                await turn
        except BaseException as exc:
            if turn.done() and not turn.cancelled():  # handed a turn as the wait ended: pass it on
                self._release()
            else:
                self._discard(turn)
            if isinstance(exc, TimeoutError):
                raise WaitExpired from None
            raise

    def _release(self) -> None:
        self.running -= 1
        self._fill()

    def _fill(self) -> None:
        """Hand the free turns to the first waiters (none over a lowered limit)."""
        while self._waiters and self.running < self.limit:
            turn = self._waiters.popleft()
            if not turn.done():
                self.running += 1
                turn.set_result(None)

    def _discard(self, turn: asyncio.Future[None]) -> None:
        with suppress(ValueError):
            self._waiters.remove(turn)
