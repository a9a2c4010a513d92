"""Provider health: who failed how, and which providers are cooling down.

Rules (``shared/fixtures/providers/README.md``, "Outcome vocabulary", ``cooldown``): a
failure of class ``rate_limited``, ``quota_exhausted``, ``auth`` or ``blocked`` puts the
provider on a cooldown; while it lasts, the chain skips the provider and reports it as
``skipped: <class> cooldown <N>s left`` (in ``attempts`` and in the aggregated error). The
length is the one the response stated (``Retry-After``, Brave's per-window
``X-RateLimit-Reset``), else the router's default for the class (:data:`DEFAULT_COOLDOWN_S`),
capped at :data:`MAX_COOLDOWN_S`. A success clears the provider's cooldown. Other failures
(timeouts, 5xx, unreadable bodies, config) are recorded but do not cool down, unless the
response itself set a ``Retry-After`` (a 503 may, RFC 9110 §15.6.4): the next search tries
the provider again.

Health lives in memory for one router. A config change builds a new router that inherits
the health of every provider whose id, endpoint and key are unchanged (:meth:`ProviderHealth.inherit`);
a changed key or endpoint starts clean, which ends an ``auth`` cooldown. All methods run on the event loop
thread and every update is synchronous (the two coroutines, :meth:`ProviderHealth.check` and
:meth:`ProviderHealth.share_cooldown`, await only the store, before or after their update), so
concurrent searches (the thorough arm) never interleave inside an update.

**Fleet** (docs/fleet.md): with a shared state (``state.backend`` a Redis/Valkey URL, wired by the
composition root through :meth:`ProviderHealth.share`) a cooldown started here is also written
to the store under the provider's identity (id + a digest of endpoint and key), and every
search reads the store's cooldowns of its chain (with its cache lookup, one round trip:
:meth:`ProviderHealth.adopt`), so a 429 seen by one sidecar skips that provider in all of them
from their next call. On the event loop nothing here waits for the store: writes go out from
the store's background sender, the reads a search makes are awaited off the loop within its
deadline (:meth:`ProviderHealth.check`) and, when the store is late, the check answers from
this process's own state. ``rate_limits`` (``{provider: (requests, window seconds)}`` or a function
returning it, for providers with a documented limit) spaces requests per key in a sliding
window shared by the fleet, on top of the process's own pacing (``pacing.py``); a provider
whose fleet-wide window is full is skipped for that call.
"""

from __future__ import annotations

import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar.router.providers.base import AUTH, BLOCKED, QUOTA_EXHAUSTED, RATE_LIMITED

if TYPE_CHECKING:
    from dsh_sidecar.state.shared import SharedState

#: The router's own cooldown per failure class when the response gives no length, seconds.
#: ``auth``: a rejected key will not heal by itself; one hour, or until the config changes.
#: ``quota_exhausted``: the fixtures README suggests >= 3600. ``blocked``: it suggests >= 60;
#: DuckDuckGo's challenge usually clears within minutes, so 300. ``rate_limited`` without
#: ``Retry-After``: 60 (a minute is the common rate window).
DEFAULT_COOLDOWN_S: Final[dict[str, float]] = {
    AUTH: 3600.0,
    QUOTA_EXHAUSTED: 3600.0,
    BLOCKED: 300.0,
    RATE_LIMITED: 60.0,
}
#: Longest cooldown honoured, seconds (a provider asking for weeks is retried after a day).
MAX_COOLDOWN_S: Final = 86_400.0

Clock = Callable[[], float]


@dataclass
class _State:
    last_outcome: str | None = None
    last_class: str | None = None
    cooldown_until: float = 0.0
    cooldown_class: str | None = None
    successes: int = 0
    failures: int = 0


class _LateSlot:
    """One fleet rate-window read of :meth:`ProviderHealth.check`. When it is late, this
    process's own window decides; if that refuses the request and the late read still takes a
    slot in the fleet's window (the script was already sent), the slot is given back (a request
    never sent must not hold the fleet's window); one this process sends keeps it."""

    def __init__(self, windows: SharedState, identity: str, member: str) -> None:
        self._windows, self._identity, self._member = windows, identity, member
        self._lock = threading.Lock()
        self._took = False
        self._refused = False

    def fleet(self, most: int, window_s: float) -> float:
        """The fleet's window (a read thread)."""
        wait = self._windows.take_slot(self._identity, most, window_s, self._member)
        with self._lock:
            self._took = wait <= 0
            give_back = self._took and self._refused
        if give_back:
            self._windows.release_slot(self._identity, self._member)
        return wait

    def local(self, wait: float) -> float:
        """This process's window decided ``wait`` (the store late, away or its queue full)."""
        with self._lock:
            self._refused = wait > 0
            give_back = self._took and self._refused
        if give_back:  # the fleet's answer came between the caller's bound and this
            self._windows.write_behind(lambda: self._windows.release_slot(self._identity, self._member))
        return wait


class ProviderHealth:
    """Per-provider health for one router. ``clock`` returns monotonic seconds (injectable
    for tests); ``cooldowns`` overrides :data:`DEFAULT_COOLDOWN_S`."""

    def __init__(self, clock: Clock = time.monotonic, cooldowns: dict[str, float] | None = None) -> None:
        self.clock = clock
        self.cooldowns = dict(DEFAULT_COOLDOWN_S if cooldowns is None else cooldowns)
        self._states: dict[str, _State] = {}
        self.shared: SharedState | None = None
        self.identities: dict[str, str] = {}
        self.rate_limits: dict[str, tuple[int, float] | Callable[[], tuple[int, float]]] = {}
        self._windows: SharedState | None = None
        self._local_windows: SharedState | None = None

    def share(
        self,
        shared: SharedState | None,
        identities: dict[str, str],
        rate_limits: Mapping[str, tuple[int, float] | Callable[[], tuple[int, float]]] | None = None,
    ) -> None:
        """Use ``shared`` for cooldowns and rate windows (``None``: this process only), the
        providers named by ``identities`` (``{provider: shared identity}``)."""
        self.shared, self.identities = shared, dict(identities)
        self.rate_limits = dict(rate_limits or {})
        if self.rate_limits:
            from dsh_sidecar.state.local import LocalState

            self._local_windows = LocalState(self.clock)  # also what a late store falls back to
        self._windows = shared if shared is not None else self._local_windows

    def _identity(self, provider: str) -> str:
        return self.identities.get(provider, provider)

    def inherit(self, other: ProviderHealth, providers: Iterable[str]) -> None:
        """Take over ``other``'s state of ``providers`` (same clock assumed)."""
        for pid in providers:
            if pid in other._states:
                self._states[pid] = other._states[pid]

    def _state(self, provider: str) -> _State:
        return self._states.setdefault(provider, _State())

    def record_success(self, provider: str, outcome: str = "ok") -> None:
        """The provider answered (also an empty answer): clears its cooldown."""
        state = self._state(provider)
        cooling = state.cooldown_until > self.clock()
        state.last_outcome, state.last_class = outcome, None
        state.cooldown_until, state.cooldown_class = 0.0, None
        state.successes += 1
        if cooling and (shared := self.shared) is not None:
            identity = self._identity(provider)
            shared.write_behind(lambda: shared.clear_cooldown(identity))

    def record_failure(
        self, provider: str, failure_class: str, outcome: str, cooldown_s: float | None = None, share: bool = True
    ) -> float:
        """Record a failure (``outcome`` already redacted); return the cooldown it started
        (seconds, ``0`` for classes that do not cool down). With a shared state the cooldown is
        written from the store's background sender, or with ``share`` false by the caller
        (:meth:`share_cooldown`, what a search awaits before its reply)."""
        state = self._state(provider)
        state.last_outcome, state.last_class = outcome, failure_class
        state.failures += 1
        if cooldown_s is None:
            if failure_class not in self.cooldowns:
                return 0.0
            seconds = self.cooldowns[failure_class]
        else:  # the provider said how long (Retry-After, also on a 503)
            seconds = cooldown_s
        seconds = min(max(seconds, 0.0), MAX_COOLDOWN_S)
        until = self.clock() + seconds
        if until > state.cooldown_until:
            state.cooldown_until, state.cooldown_class = until, failure_class
        if seconds > 0 and share and (shared := self.shared) is not None:
            identity = self._identity(provider)
            shared.write_behind(lambda: shared.start_cooldown(identity, failure_class, seconds))
        return seconds

    async def share_cooldown(self, provider: str, failure_class: str, seconds: float, within_s: float) -> None:
        """Write a cooldown :meth:`record_failure` started (``share`` false) to the shared state
        on the store's read threads, awaited at most ``within_s``: the search that saw the 429
        answers after the fleet knows it, and the event loop is not held meanwhile. Not sent by
        then (late, or the threads busy): the background sender writes it (the write is
        idempotent: a cooldown kept as the longest)."""
        shared = self.shared
        if shared is None or seconds <= 0:
            return
        identity = self._identity(provider)

        def send() -> bool:
            shared.start_cooldown(identity, failure_class, seconds)
            return True

        def behind() -> bool:
            shared.write_behind(send)
            return False

        await shared.read_within(send, behind, within_s)

    def identities_of(self, providers: Iterable[str]) -> tuple[str, ...]:
        """The shared identities of ``providers`` (what :meth:`adopt` takes back)."""
        return tuple(self._identity(p) for p in providers)

    async def read_fleet(self, providers: Iterable[str], within_s: float, key: str | None = None) -> bytes | None:
        """Adopt the fleet's cooldowns of ``providers`` (:meth:`adopt`) and return the fleet's
        cache entry under ``key`` (``None``: none read), in one round trip on the store's read
        threads, awaited at most ``within_s`` (and ``state.timeoutMs``); a late or away store:
        this process's cooldowns, no entry. Without a shared state, nothing is read."""
        shared = self.shared
        if shared is None:
            return None
        ids = self.identities_of(providers)
        raw, cooldowns = await shared.read_within(lambda: shared.prefetch(key, ids), lambda: (None, {}), within_s)
        self.adopt(cooldowns)
        return raw

    def adopt(self, cooldowns: Mapping[str, tuple[str, float] | None]) -> None:
        """Take the fleet's cooldowns ``{identity: (class, seconds left) | None}`` (read with a
        search's cache lookup): a longer one than this process knows is adopted."""
        if not cooldowns:
            return
        for provider, identity in self.identities.items():
            remote = cooldowns.get(identity)
            if remote is not None:
                self._adopt(provider, remote)

    def _adopt(self, provider: str, remote: tuple[str, float]) -> None:
        state = self._state(provider)
        until = self.clock() + remote[1]
        if until > state.cooldown_until:
            state.cooldown_until, state.cooldown_class = until, remote[0]
            state.last_class = state.last_class or remote[0]

    def cooldown_left(self, provider: str, fleet: bool = True) -> float:
        """Seconds of cooldown left (``0`` when the provider is usable); with a shared state and
        ``fleet``, a longer cooldown another sidecar started is read (it may wait for the store:
        not on an event loop) and adopted first."""
        if fleet and self.shared is not None:
            remote = self.shared.cooldown(self._identity(provider))
            if remote is not None:
                self._adopt(provider, remote)
        current = self._states.get(provider)
        if current is None:
            return 0.0
        return max(0.0, current.cooldown_until - self.clock())

    def skip_reason(self, provider: str) -> str | None:
        """``skipped: <class> cooldown <N>s left`` while the provider cools down, else ``None``
        (N rounded up, so it is never ``0s`` while still cooling); for a provider with a rate
        limit, ``skipped: rate_limited window full, next slot in <N>ms`` when its window is full,
        else ``None`` having taken a slot (the chain sends at once)."""
        left = self.cooldown_left(provider)
        if left <= 0:
            limit = self.rate_limits.get(provider)
            if limit is None or self._windows is None:
                return None
            if callable(limit):  # the spacing in force (a paid plan's headers may have raised it)
                limit = limit()
            wait = self._windows.take_slot(self._identity(provider), limit[0], limit[1])
            return (
                None if wait <= 0 else f"skipped: {RATE_LIMITED} window full, next slot in {math.ceil(wait * 1000)}ms"
            )
        return self._cooling(provider, left)

    def _cooling(self, provider: str, left: float) -> str:
        cls = self._states[provider].cooldown_class
        return f"skipped: {cls} cooldown {math.ceil(left)}s left"

    async def check(self, provider: str, within_s: Callable[[], float]) -> str | None:
        """:meth:`skip_reason` for an event loop: the cooldowns are this process's and those the
        search's read adopted (:meth:`adopt`), and the fleet's rate window is awaited off the
        loop within ``within_s()`` seconds; a late store leaves this process's own window to decide."""
        left = self.cooldown_left(provider, fleet=False)
        if left > 0:
            return self._cooling(provider, left)
        limit = self.rate_limits.get(provider)
        windows, local = self._windows, self._local_windows
        if limit is None or windows is None or local is None:
            return None
        if callable(limit):
            limit = limit()
        identity, (most, window_s) = self._identity(provider), limit
        slot = _LateSlot(windows, identity, uuid.uuid4().hex)
        wait = await windows.read_within(
            lambda: slot.fleet(most, window_s),
            lambda: slot.local(local.take_slot(identity, most, window_s)),
            within_s(),
        )
        return None if wait <= 0 else f"skipped: {RATE_LIMITED} window full, next slot in {math.ceil(wait * 1000)}ms"

    def last_class(self, provider: str) -> str | None:
        """The failure class of the provider's last outcome (``None`` after a success)."""
        state = self._states.get(provider)
        return state.last_class if state else None

    def status(self, providers: Iterable[str]) -> list[dict[str, Any]]:
        """For ``dsh/status``: per provider ``{provider, state, failureClass, cooldownSecondsLeft,
        lastOutcome, successes, failures}``; ``state`` is ``unknown`` (never called),
        ``ok``, ``failing`` (last call failed, no cooldown) or ``cooling_down``."""
        out = []
        for pid in providers:
            state = self._states.get(pid)
            left = self.cooldown_left(pid, fleet=False)  # what the searches read: no wait for the store
            if state is None:
                kind = "unknown"
            elif left > 0:
                kind = "cooling_down"
            elif state.last_class is None:
                kind = "ok"
            else:
                kind = "failing"
            out.append(
                {
                    "provider": pid,
                    "state": kind,
                    "failureClass": state.last_class if state else None,
                    "cooldownSecondsLeft": math.ceil(left) if left > 0 else 0,
                    "lastOutcome": state.last_outcome if state else None,
                    "successes": state.successes if state else 0,
                    "failures": state.failures if state else 0,
                }
            )
        return out
