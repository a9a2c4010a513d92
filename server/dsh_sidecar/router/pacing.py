"""Request spacing for providers that document a per-second limit (Brave: 1 request/s on the
free plan), so the chain waits for a slot instead of earning a 429 and a cooldown.

A provider with a :class:`~dsh_sidecar.router.providers.base.RateLimit` has one request in
flight at a time (:meth:`Pacer.slot`, a per-provider lock taken in arrival order: concurrent
searches, the thorough arm's variants included, queue up), and a request is sent no sooner
than ``interval_s`` after the previous one's response came back. Counting from the previous
*response* rather than its send time keeps the gap at the provider (which counts arrivals) at
least ``interval_s`` whatever the latency. When the slot cannot come with a fair budget of
the attempt's left (:data:`~.budget.MIN_ATTEMPT_MS`) the attempt fails at once as ``paced`` (no
cooldown, an outage: the chain goes on), so a spacing wait never ends in a timeout blamed on
the provider.

The interval is the documented one until the provider says otherwise: the IETF draft
``RateLimit-Policy``/``X-RateLimit-Policy`` header (``<limit>;w=<seconds>``, the shortest
window wins) or, for Brave, the first entry of ``X-RateLimit-Limit`` (its per-second window;
Brave's response-headers documentation) makes a paid plan's higher rate apply from the next
request on.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Final

from dsh_sidecar.router.budget import MIN_ATTEMPT_MS
from dsh_sidecar.router.providers.base import PACED, ProviderFailure, RateLimit

#: Shortest spacing adopted from a response header, seconds (a header claiming 10,000 req/s
#: is taken as 100 req/s).
MIN_INTERVAL_S: Final = 0.01
#: Longest spacing adopted from a response header, seconds.
MAX_INTERVAL_S: Final = 60.0

_POLICY_ITEM = re.compile(r"^\s*(\d+)\s*;\s*w\s*=\s*(\d+)")

Clock = Callable[[], float]
Sleep = Callable[[float], Awaitable[object]]


def interval_from_headers(headers: Mapping[str, str], per_s: float) -> float | None:
    """The spacing a response announces, seconds, or ``None``. ``headers`` are lower-case;
    ``per_s`` is the window of the first ``X-RateLimit-Limit`` entry (the documented one)."""
    policy = headers.get("ratelimit-policy") or headers.get("x-ratelimit-policy")
    if policy:
        windows: list[tuple[int, int]] = []
        for item in policy.split(","):
            m = _POLICY_ITEM.match(item)
            if m and int(m.group(1)) > 0 and int(m.group(2)) > 0:
                windows.append((int(m.group(2)), int(m.group(1))))
        if windows:
            window, limit = min(windows)
            return min(max(window / limit, MIN_INTERVAL_S), MAX_INTERVAL_S)
    limits = headers.get("x-ratelimit-limit")
    if limits:
        first = limits.split(",")[0].strip()
        if first.isdigit() and int(first) > 0:
            return min(max(per_s / int(first), MIN_INTERVAL_S), MAX_INTERVAL_S)
    return None


class Pacer:
    """Per-provider request slots. ``clock`` (monotonic seconds) and ``sleep`` are injectable
    for tests. All methods run on the event loop thread."""

    def __init__(self, clock: Clock = time.monotonic, sleep: Sleep = asyncio.sleep) -> None:
        self.clock = clock
        self.sleep = sleep
        self._done: dict[str, float] = {}
        self._interval: dict[str, float] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def interval(self, provider: str, limit: RateLimit) -> float:
        """The spacing in force for ``provider``, seconds."""
        return self._interval.get(provider, limit.interval_s)

    @contextlib.asynccontextmanager
    async def slot(self, provider: str, limit: RateLimit | None, budget_ms: float) -> AsyncIterator[float]:
        """Hold ``provider``'s request slot for the body of the ``async with`` (the request and
        its response); yields the seconds waited (0 without a limit).

        Raises :class:`ProviderFailure` (``paced``) when the slot cannot start with
        :data:`~.budget.MIN_ATTEMPT_MS` of ``budget_ms`` left; the slot is then not taken."""
        if limit is None:
            yield 0.0
            return
        started = self.clock()
        lock = self._locks.setdefault(provider, asyncio.Lock())
        waits_ms = budget_ms - MIN_ATTEMPT_MS  # the longest wait that leaves the request a fair budget
        try:
            await asyncio.wait_for(lock.acquire(), max(0.0, waits_ms) / 1000)
        except TimeoutError:
            raise ProviderFailure("skipped: rate limit spacing (another request holds the slot)", PACED) from None
        try:
            now = self.clock()
            delay = max(0.0, self._done.get(provider, float("-inf")) + self.interval(provider, limit) - now)
            if (now - started + delay) * 1000 > waits_ms:
                raise ProviderFailure(f"skipped: rate limit spacing (next request slot in {delay:.1f}s)", PACED)
            if delay > 0:
                await self.sleep(delay)
            try:
                yield now - started + delay
            finally:
                self._done[provider] = self.clock()
        finally:
            lock.release()

    def observe(self, provider: str, limit: RateLimit | None, headers: Mapping[str, str]) -> None:
        """Adopt the spacing a response of ``provider`` announces (see the module docstring)."""
        if limit is None:
            return
        announced = interval_from_headers(headers, limit.per_s)
        if announced is not None:
            self._interval[provider] = announced

    def inherit(self, other: Pacer) -> None:
        """Keep ``other``'s last response times and learned intervals (a reconfigured router)."""
        self._done.update(other._done)
        self._interval.update(other._interval)
