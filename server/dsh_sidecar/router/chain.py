"""The fallback chain: try each provider in order, return the first usable answer.

Seed (``search-router.README.txt``, "Fallback"): a provider fails on network errors,
timeouts, any non-2xx status, unparseable responses and, by default, empty results; the
chain returns the first success; when every provider fails, one aggregated, key-free error
whose first line is :data:`AGGREGATE_HEADER`. When no provider answered usefully but at
least one answered an empty success, the truthful empty result is returned instead.

The per-provider timeout covers the whole exchange (headers and body), and the whole chain
has a deadline: each attempt gets what is left of it minus the time reserved to compose and
send the answer (:func:`deadline_reserve_ms`); providers not reached with a fair budget left (:mod:`.budget`) are
``skipped: deadline``, an outage. Providers cooling down (:mod:`.health`) are skipped as ``skipped: <class> cooldown
<N>s left``; a repeated search is answered from the result cache (:mod:`.cache`) as one ``ok (cached)`` attempt.

**Fleet**: what a search reads from the fleet's store, off the event loop: :mod:`.fleet`.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from dsh_protocol import Attempt, Source

from dsh_sidecar.redact import Redactor
from dsh_sidecar.router.admission import SearchSlots
from dsh_sidecar.router.budget import MIN_ATTEMPT_MS, deadline_reserve_ms, fair, fleet_wait, ms_since
from dsh_sidecar.router.cache import CACHED_OUTCOME, CachedAnswer, CacheKey, ResultCache
from dsh_sidecar.router.config import (
    ProviderSpec,
    RouterConfig,
    resolve_chain_skipping,
    secrets_of,
    unusable_reason,
)
from dsh_sidecar.router.digest import digest
from dsh_sidecar.router.fleet import FleetReads
from dsh_sidecar.router.health import Clock, ProviderHealth
from dsh_sidecar.router.outcomes import AGGREGATE_HEADER, DEADLINE_SKIP
from dsh_sidecar.router.pacing import Pacer
from dsh_sidecar.router.parsing import OFF_PROCESS_BYTES, WORKER, Fetched, WorkerGone
from dsh_sidecar.router.progress import ObservedAttempts
from dsh_sidecar.router.providers import CANONICAL_ORDER, LOCAL_ID, PROVIDERS
from dsh_sidecar.router.providers.base import (
    AUTH,
    BLOCKED,
    CONFIG,
    EMPTY,
    NETWORK,
    PACED,
    QUOTA_EXHAUSTED,
    RATE_LIMITED,
    TIMEOUT,
    HttpRequest,
    HttpResponse,
    Provider,
    ProviderAnswer,
    ProviderFailure,
)

if TYPE_CHECKING:
    from pathlib import Path

    from dsh_sidecar.router.http import ProviderClient
    from dsh_sidecar.router.localdocs import LocalDocs

log = logging.getLogger(__name__)

#: Set once anyio's asyncio backend is imported (:meth:`Router.prepare`; process-wide).
_BACKEND_WARM = threading.Event()
#: Reason of an empty answer (fixtures README, outcome ``empty``).
EMPTY_REASON: Final = "0 results"
#: Bodies larger than this are parsed and normalised off the event loop, bytes (a 5-result
#: JSON answer is 2-10 KB and parses in well under a millisecond; 2,000 results take ~60 ms).
OFF_LOOP_BYTES: Final = 64 * 1024
#: Time a worker's fetch may take past its exchange's budget, and its digest of a body read
#: here may take, before the chain gives up on it, milliseconds: the worker's digest of an
#: 8 MiB body (the cap) on a busy machine.
WORKER_GRACE_MS: Final = 2000


@dataclass
class RouterResult:
    """A search answered by one provider (or the truthful empty result)."""

    sources: list[Source]
    truncated: bool
    attempts: list[Attempt]
    provider: str | None
    content: str | None = None


#: Failure classes that say nothing of the search itself: the provider was not configured,
#: unreachable, refused the key, or was cooling down/blocked/out of quota/paced. A search whose
#: every provider failed only for these produced no answer at all (an outage), which the bandit
#: must not learn from. Timeouts, 5xx and unreadable answers are real outcomes.
OUTAGE_CLASSES: Final = frozenset({CONFIG, NETWORK, AUTH, RATE_LIMITED, QUOTA_EXHAUSTED, BLOCKED, PACED, "skipped"})


class AllProvidersFailed(Exception):
    """Every provider failed. ``str(exc)`` is the seed's aggregated text (redacted);
    ``attempts`` the per-provider outcomes; ``outage`` true when every failure was of an
    :data:`OUTAGE_CLASSES` class (no provider produced an answer of any kind)."""

    def __init__(self, message: str, attempts: list[Attempt], outage: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts
        self.outage = outage


@dataclass
class _Failed:
    provider: str
    reason: str
    failure_class: str


@dataclass
class Router:
    """The router core. Build with :meth:`from_config`; call :meth:`search`.

    ``client`` is shared by every search (connection reuse, also by the thorough arm's
    concurrent searches); ``health`` tracks failures and cooldowns; ``cache`` is ``None``
    when ``cache: false``.
    """

    config: RouterConfig
    chain: list[ProviderSpec]
    redactor: Redactor
    client: ProviderClient | None = None
    missing: list[str] = field(default_factory=list)
    #: Why a provider of :attr:`missing` with a malformed key or URL in the environment is skipped.
    invalid: dict[str, str] = field(default_factory=dict)
    modules: Mapping[str, Provider] = field(default_factory=lambda: PROVIDERS)
    health: ProviderHealth = field(default_factory=ProviderHealth)
    cache: ResultCache | None = None
    pacer: Pacer = field(default_factory=Pacer)
    #: The offline docs index, when ``local`` is in the chain (:mod:`.localdocs`).
    docs: LocalDocs | None = None
    _client_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)
    #: The running :meth:`prepare` (its loop and future), shared by the searches waiting for it.
    _preparing: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = field(
        default=None, init=False, repr=False, compare=False
    )
    #: Providers whose last answer was over :data:`~.parsing.OFF_PROCESS_BYTES`: their
    #: exchanges run in the parsing worker (:meth:`_fetched`) until one answers small.
    _large: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    _fleet: FleetReads = field(default_factory=FleetReads, init=False, repr=False, compare=False)
    slots: SearchSlots = field(default_factory=SearchSlots, repr=False, compare=False)

    @classmethod
    def from_config(
        cls,
        config: RouterConfig,
        env: Mapping[str, str],
        client: ProviderClient | None = None,
        clock: Clock = time.monotonic,
        previous: Router | None = None,
        docs_root: Path | None = None,
    ) -> Router:
        """Resolve the chain against ``env`` and build a router. ``clock`` (monotonic
        seconds) drives cooldowns and cache expiry; injectable for tests. ``previous`` (the
        router this one replaces after a config change) hands over the health of every
        provider whose id, endpoint and key are unchanged, so a reconfiguration does not
        forget a cooldown; the cache starts empty. ``docs_root`` is the project whose docs the
        offline docs index holds, when ``local`` is in the chain.

        A malformed key or base URL in the environment skips its provider (logged once here;
        every search and :meth:`health_status` say why): the others keep answering."""
        chain, missing, invalid = resolve_chain_skipping(config, env)
        chain = [spec for spec in chain if spec.id in PROVIDERS] or chain
        redactor = Redactor(secrets_of(chain))
        cache = None
        if config.cache.enabled:
            cache = ResultCache(config.cache.ttl_seconds, config.cache.max_entries, clock=clock)
        health = ProviderHealth(clock=clock)
        pacer = Pacer(clock=clock)
        if previous is not None:
            health.inherit(previous.health, [s.id for s in chain if s in previous.chain])
            pacer.inherit(previous.pacer)
        docs = None
        if any(spec.id == LOCAL_ID for spec in chain):
            docs = previous.docs if previous is not None and previous.docs is not None else None
            if docs is None:
                from dsh_sidecar.paths import docs_cache
                from dsh_sidecar.router.localdocs import LocalDocs

                docs = LocalDocs(docs_cache(env), docs_root)
        return cls(
            config=config,
            chain=chain,
            redactor=redactor,
            client=client,
            missing=missing,
            invalid=invalid,
            health=health,
            cache=cache,
            pacer=pacer,
            docs=docs,
            slots=SearchSlots.kept(previous.slots if previous is not None else None, config),
        )

    def http(self) -> ProviderClient:
        """The shared HTTP client, created on first use (httpx and its TLS context cost tens
        of milliseconds that the ``initialize`` reply need not wait for)."""
        if self.client is None:
            with self._client_lock:  # warm() on its thread and a first search may race
                if self.client is None:
                    from dsh_sidecar.router.http import make_client

                    self.client = make_client()
        return self.client

    def warm(self) -> None:
        """Import httpx and create the shared client now (the server runs this on a thread
        after the ``initialize`` reply), so the first search does not pay ~0.1–0.3 s for them on
        the event loop. Call it off the event loop. Idempotent."""
        self.prepare()

    @property
    def ready(self) -> bool:
        """Whether a search can start its exchange without importing or building anything: the
        client exists (so :mod:`.http` and httpx are imported whole) and anyio's asyncio
        backend is loaded (a first exchange imported it on the event loop, synchronously:
        1.8 s under load, past a 1 ms budget its timer could not interrupt)."""
        return self.client is not None and _BACKEND_WARM.is_set()

    def prepare(self) -> None:
        """Import the exchange (httpx) and its async backend and create the shared client:
        what a search that finds the router not :attr:`ready` runs on a worker thread, so the
        event loop (a ``$/cancelRequest``, other requests) is never held by it. Idempotent;
        thread-safe. Call it off the event loop."""
        self.http()
        if not _BACKEND_WARM.is_set():
            from dsh_sidecar.router.http import warm_async_backend

            warm_async_backend()
            _BACKEND_WARM.set()

    async def until_ready(self, timeout_s: float) -> bool:
        """Wait (at most ``timeout_s``) for :meth:`prepare`, run once on a worker thread however
        many searches wait for it; ``True`` once :attr:`ready`. A timeout leaves it running."""
        if self.ready:
            return True
        loop = asyncio.get_running_loop()
        preparing = self._preparing
        if preparing is None or preparing[0] is not loop or preparing[1].done():
            preparing = self._preparing = (loop, loop.run_in_executor(None, self.prepare))
        try:
            await asyncio.wait_for(asyncio.shield(preparing[1]), max(0.0, timeout_s))
        except TimeoutError:
            return False
        return True

    def deadline_passed(self, outcome: str = DEADLINE_SKIP) -> AllProvidersFailed:
        """The failure of a search with no fair budget left (:mod:`.budget`) before any provider could be
        tried (the search path was being prepared, or it waited for a turn): every provider ``outcome`` (or
        refused a turn: ``skipped: busy (…)``), an outage (nothing to learn), as :meth:`_chain`'s own skips."""
        attempts: list[Attempt] = []
        failures: list[_Failed] = []
        for spec in self._plan():
            pid = spec if isinstance(spec, str) else spec.id
            attempts.append(Attempt(provider=pid, outcome=outcome, ms=0))
            failures.append(_Failed(pid, outcome, "skipped"))
        return AllProvidersFailed(self._aggregate(failures), attempts, outage=True)

    def adopt_client(self, old: Router) -> bool:
        """Take ``old``'s HTTP client when this router has none yet (a reconfigure built this
        router from ``old`` before ``old``'s client existed, and :meth:`warm` then made it);
        ``True`` when taken. The caller closes ``old``'s client otherwise."""
        with self._client_lock:
            if self.client is None and old.client is not None:
                self.client = old.client
                return True
        return False

    async def aclose(self) -> None:
        """Close the HTTP client (and stop the offline docs index's threads)."""
        if self.docs is not None:
            await asyncio.to_thread(self.docs.close)
        if self.client is not None:
            await self.client.aclose()

    def describe(self) -> list[dict[str, str]]:
        """The chain for ``dsh/status``: id and endpoint origin of each provider (no keys)."""
        return [{"provider": s.id, "baseUrl": self.redactor(s.base_url)} for s in self.chain]

    def secrets(self) -> list[str]:
        """Every secret of the chain (API keys, Basic-auth passwords), for the log filter's redactor."""
        return secrets_of(self.chain)

    def health_status(self) -> list[dict[str, object]]:
        """Per-provider health for ``dsh/status`` (see :meth:`ProviderHealth.status`); every
        text in it is redacted already. One skipped for a malformed setting (:attr:`invalid`):
        ``failing``, class ``config``, its reason as the last outcome."""
        skip = {"state": "failing", "failureClass": CONFIG, "cooldownSecondsLeft": 0, "successes": 0, "failures": 0}
        invalid = [{"provider": pid, **skip, "lastOutcome": f"skipped: {why}"} for pid, why in self.invalid.items()]
        return self.health.status(s.id for s in self.chain) + invalid

    def cache_status(self) -> dict[str, int] | None:
        """``{entries, hits, misses}`` of the result cache, ``None`` when it is off."""
        return self.cache.status() if self.cache is not None else None

    def _cache_key(self, query: str, max_results: int) -> CacheKey:
        return ResultCache.key(query, max_results, tuple((s.id, s.base_url) for s in self.chain))

    async def search(self, query: str, max_results: int, deadline_ms: int | None = None) -> RouterResult:
        """Search ``query`` through the chain.

        ``max_results`` caps the sources; ``deadline_ms`` bounds the whole chain (default: the
        config's ``deadlineMs``), each attempt getting ``min(timeoutMs, what is left of it minus
        the reserve)`` (:func:`deadline_reserve_ms`: the time to compose and send the answer). A live cache entry answers at once (one ``ok (cached)``
        attempt, ``ms`` 0); providers cooling down or not configured are reported as
        ``skipped: …``. Raises :class:`AllProvidersFailed` when no provider answered (its
        message is the seed's aggregated text, one line per provider incl. skipped ones).
        Cancelling the calling task aborts the in-flight HTTP exchange (the connection is
        closed) and records nothing in the provider's health.
        """
        started = _now()
        total_ms = deadline_ms or self.config.deadline_ms
        deadline = started + (total_ms - deadline_reserve_ms(total_ms)) / 1000  # the last attempt's end
        key = self._cache_key(query, max_results) if self.cache is not None else None
        cached = await self._cached(key, deadline)
        if cached is not None:
            return cached
        last_start = deadline - MIN_ATTEMPT_MS / 1000  # past it no provider is asked (.budget)
        if not self.ready:  # httpx and the client (~0.1-1 s of imports): on a thread, inside the deadline
            await self.until_ready(last_start - _now())  # not ready by then: every attempt is skipped
        async with self.slots.held(lambda: last_start - _now(), self.deadline_passed):  # a turn (.admission)
            return await self._chain(query, max_results, key, deadline)

    async def _chain(self, query: str, max_results: int, key: CacheKey | None, deadline: float) -> RouterResult:
        attempts: list[Attempt] = ObservedAttempts()  # tells an MCP web_search its progress
        failures: list[_Failed] = []
        empty: RouterResult | None = None
        for spec in self._plan():
            skipped = await self._unavailable(spec, deadline)
            if skipped is not None:
                attempts.append(skipped[0])
                if skipped[1] is not None:
                    failures.append(skipped[1])
                continue
            assert not isinstance(spec, str)
            left_ms = (deadline - _now()) * 1000
            if not fair(left_ms) or not self.ready:  # not asked: as deadline_passed() (.budget)
                attempts.append(Attempt(provider=spec.id, outcome=DEADLINE_SKIP, ms=0))
                failures.append(_Failed(spec.id, DEADLINE_SKIP, "skipped"))
                continue
            budget_ms = min(self.config.timeout_ms, left_ms)
            t0 = time.monotonic()
            try:
                answer, sources, truncated = await self._attempt(spec, query, max_results, budget_ms)
            except ProviderFailure as failure:
                attempt, failed = self._failed(spec.id, failure, budget_ms, ms_since(t0))
                attempts.append(attempt)
                failures.append(failed)
                await self._record_failure(spec.id, failure, failed.reason, deadline)
                continue
            ms = ms_since(t0)
            if not sources:
                attempts.append(Attempt(provider=spec.id, outcome=EMPTY_REASON, ms=ms))
                self.health.record_success(spec.id, EMPTY_REASON)
                result = RouterResult(sources=[], truncated=False, attempts=attempts, provider=spec.id)
                if not self.config.empty_results_fallback:
                    return result
                empty = empty or result
                failures.append(_Failed(spec.id, EMPTY_REASON, EMPTY))
                continue
            attempts.append(Attempt(provider=spec.id, outcome="ok", ms=ms))
            return self._answered(spec.id, query, key, answer, sources, truncated, attempts)
        return self._unanswered(empty, attempts, failures)

    def _unanswered(self, empty: RouterResult | None, attempts: list[Attempt], failures: list[_Failed]) -> RouterResult:
        """The end of a chain no provider answered with sources: the first empty answer (with
        every attempt), else :class:`AllProvidersFailed`."""
        if empty is not None:
            empty.attempts = attempts
            return empty
        outage = all(f.failure_class in OUTAGE_CLASSES for f in failures)
        raise AllProvidersFailed(self._aggregate(failures), attempts, outage=outage)

    async def _cached(self, key: CacheKey | None, deadline: float) -> RouterResult | None:
        """The live cache entry of ``key`` as a result (one ``ok (cached)`` attempt, ``ms`` 0), or
        ``None``; on a shared store a local miss reads the fleet's entry and cooldowns (one round
        trip, off the loop, within ``deadline``: :meth:`.fleet.FleetReads.read`)."""
        if key is None or self.cache is None:
            if self.health.shared is not None:
                await self._fleet.read(self.health, None, self._ids(), None, deadline - _now())
            return None
        hit = self.cache.peek(key)
        if hit is None and self.health.shared is not None:
            hit = await self._fleet.read(self.health, self.cache, self._ids(), key, deadline - _now())
        self.cache.count(hit is not None)
        if hit is None:
            return None
        cached = [Attempt(provider=hit.provider, outcome=CACHED_OUTCOME, ms=0)]
        return RouterResult(list(hit.sources), hit.truncated, cached, hit.provider, hit.content)

    def _answered(
        self,
        pid: str,
        query: str,
        key: CacheKey | None,
        answer: ProviderAnswer,
        sources: list[Source],
        truncated: bool,
        attempts: list[Attempt],
    ) -> RouterResult:
        """The result of provider ``pid``'s answer: its health, the offline docs index and the
        cache told, the content redacted."""
        self.health.record_success(pid)
        if self.docs is not None and pid != LOCAL_ID:  # kept for later offline searches
            self.docs.remember(query, sources)
        content = self.redactor(answer.content) if answer.content else None
        if key is not None and self.cache is not None:
            self.cache.put(key, CachedAnswer(tuple(sources), truncated, pid, content))
        return RouterResult(sources, truncated, attempts, pid, content)

    async def _record_failure(self, pid: str, failure: ProviderFailure, reason: str, deadline: float) -> None:
        cls = failure.failure_class
        seconds = self.health.record_failure(pid, cls, reason, failure.cooldown_s, share=False)
        if seconds > 0 and self.health.shared is not None:  # in the store before this search answers
            await self.health.share_cooldown(pid, cls, seconds, fleet_wait(deadline - _now()))

    async def _unavailable(self, spec: ProviderSpec | str, deadline: float) -> tuple[Attempt, _Failed | None] | None:
        """The attempt (and failure) of a provider skipped before the deadline is looked at:
        named but not usable, not implemented, or cooling down; ``None`` when it may be asked."""
        if isinstance(spec, str):  # named in provider/order but not usable, or its setting malformed
            reason = f"skipped: {self.invalid.get(spec) or unusable_reason(spec, self.config)}"
            return Attempt(provider=spec, outcome=reason, ms=0), _Failed(spec, reason, CONFIG)
        if spec.id not in self.modules:
            return Attempt(provider=spec.id, outcome="skipped: not implemented", ms=0), None
        if self.health.shared is not None:  # the cooldowns again when the providers before took a while
            await self._fleet.refresh(self.health, self._ids(), deadline - _now())
        cooling = await self.health.check(spec.id, lambda: fleet_wait(deadline - _now()))
        if cooling is not None:
            failed = _Failed(spec.id, cooling, self.health.last_class(spec.id) or "skipped")
            return Attempt(provider=spec.id, outcome=cooling, ms=0), failed
        return None

    def _failed(self, pid: str, failure: ProviderFailure, budget_ms: float, ms: int) -> tuple[Attempt, _Failed]:
        """The attempt and failure of provider ``pid`` that failed after ``ms``."""
        reason = self.redactor(failure.reason)
        if failure.failure_class == TIMEOUT:  # the attempt's whole budget (a pacing wait included)
            reason = f"timeout after {int(budget_ms)}ms"
            if budget_ms < self.config.timeout_ms:
                reason += " (deadline)"
        return Attempt(provider=pid, outcome=reason, ms=ms), _Failed(pid, reason, failure.failure_class)

    def empty_as_failure(self, result: RouterResult) -> AllProvidersFailed:
        """The seed's all-failed error for a search whose providers all failed or answered
        empty (``emptyResultsFallback: true``: "0-result success counts as failure"), which
        :meth:`search` answers with the truthful empty result instead: one ``- <id>: <reason>``
        line per provider tried or skipped, ``0 results`` for an empty answer."""
        failures = [
            _Failed(a.provider, a.outcome, EMPTY if a.outcome == EMPTY_REASON else "skipped")
            for a in result.attempts
            if a.outcome != "skipped: not implemented"
        ]
        return AllProvidersFailed(self._aggregate(failures), list(result.attempts), outage=False)

    def _ids(self) -> list[str]:
        return [s.id for s in self.chain]

    def _plan(self) -> list[ProviderSpec | str]:
        """The chain in configured (or canonical) order, with the ids of unusable providers
        (:attr:`missing`: named but not configured, or a setting malformed) at their place."""
        if not self.missing:
            return list(self.chain)
        named = [self.config.provider] if self.config.provider else list(self.config.order or CANONICAL_ORDER)
        specs = {s.id: s for s in self.chain}
        plan: list[ProviderSpec | str] = [specs.get(pid, pid) for pid in named if pid in specs or pid in self.missing]
        return plan + [s for s in self.chain if s.id not in named]  # the appended offline docs index

    def _aggregate(self, failures: list[_Failed]) -> str:
        lines = [AGGREGATE_HEADER]
        lines += [f"- {f.provider}: {f.reason}" for f in failures]
        if not failures:
            lines.append("- (no provider is configured or usable)")
        return self.redactor("\n".join(lines))

    async def _attempt(
        self, spec: ProviderSpec, query: str, max_results: int, budget_ms: float
    ) -> tuple[ProviderAnswer, list[Source], bool]:
        """One provider: build, pace (:mod:`.pacing`), exchange (:mod:`.http`), parse and
        normalise. A body over :data:`~.parsing.OFF_PROCESS_BYTES` is parsed and normalised in a worker
        process (:mod:`.parsing`; in a thread while it starts), one over :data:`OFF_LOOP_BYTES` in a thread,
        so a large answer never stalls the event loop (other requests keep being served); after a
        large answer, the provider's next exchanges run in that worker too (:meth:`_fetched`)."""
        provider = self.modules[spec.id]
        try:
            request: HttpRequest = provider.build_request(spec, query, max_results)
        except ProviderFailure:
            raise
        except Exception as exc:  # a bad value reaching a builder is that provider's failure
            log.warning("%s: building the request failed: %s", spec.id, type(exc).__name__)
            raise ProviderFailure("invalid request", CONFIG) from None
        if getattr(provider, "TRANSPORT", "http") == "local":  # answered in-process, in a thread
            if self.docs is None:
                raise ProviderFailure("offline docs index not set up", CONFIG)
            local = await self.docs.exchange(request, budget_ms)
            return self._digest(provider, replace(local, redact=self.redactor), max_results)
        from dsh_sidecar.router.http import exchange  # lazy: httpx is not needed before a search

        fetched: Fetched | None = None
        async with self.pacer.slot(spec.id, provider.RATE_LIMIT, budget_ms) as waited_s:
            budget_ms -= waited_s * 1000
            if spec.id in self._large and provider is PROVIDERS.get(spec.id):
                t0 = time.monotonic()
                fetched = await self._fetched(spec, request, budget_ms, max_results)
                budget_ms -= (time.monotonic() - t0) * 1000  # what a worker that went took
            if fetched is None:
                response = await exchange(self.http(), request, budget_ms, spec.basic_auth)
        if fetched is not None:
            if fetched.headers is not None:  # a response came: its size says where the next goes
                self.pacer.observe(spec.id, provider.RATE_LIMIT, fetched.headers)
                if fetched.size <= OFF_PROCESS_BYTES:
                    self._large.discard(spec.id)
            if isinstance(fetched.outcome, ProviderFailure):
                raise fetched.outcome
            return fetched.outcome
        self.pacer.observe(spec.id, provider.RATE_LIMIT, response.headers)
        if len(response.body) > OFF_PROCESS_BYTES:
            self._large.add(spec.id)  # its next exchanges: in the worker
            answer = await self._worker_digest(provider, response, max_results)
            if answer is not None:
                return answer
        response = replace(response, redact=self.redactor)
        if len(response.body) > OFF_LOOP_BYTES:
            return await asyncio.to_thread(self._digest, provider, response, max_results)
        return self._digest(provider, response, max_results)

    async def _worker_digest(
        self, provider: Provider, response: HttpResponse, max_results: int
    ) -> tuple[ProviderAnswer, list[Source], bool] | None:
        """The worker's digest of a large body read here (:meth:`.parsing.ParseWorker.digest`), or ``None``
        when the worker is not running (then started in the background: no search waits for its spawn),
        died, is behind or sent nothing within :data:`WORKER_GRACE_MS` (the caller parses in a thread;
        :meth:`.parsing.ParseWorker.abandon_if_silent`). Raises the provider's failure."""
        if WORKER.behind() or not WORKER.ready():  # silent past a job's grace, or not running: no wait
            WORKER.start_soon()  # (a no-op while it runs or starts)
            return None
        sent = time.monotonic()
        try:
            async with asyncio.timeout(WORKER_GRACE_MS / 1000):
                answer: tuple[ProviderAnswer, list[Source], bool] = await WORKER.digest(
                    provider.ID, response.status, response.headers, response.body, max_results, tuple(self.secrets())
                )
                return answer
        except WorkerGone:  # the worker died (OOM?) or could not start
            return None
        except TimeoutError:  # stuck: given up (the next job starts another)
            WORKER.abandon_if_silent(sent)
            return None

    async def _fetched(
        self, spec: ProviderSpec, request: HttpRequest, budget_ms: float, max_results: int
    ) -> Fetched | None:
        """The worker's exchange and digest of ``request`` (:meth:`.parsing.ParseWorker.fetch`),
        or ``None`` when the worker cannot take it (the caller exchanges on the loop). Bounded
        by the budget plus :data:`WORKER_GRACE_MS` (the digest) even if the worker stalls; a
        worker that sent nothing in that time is given up (:meth:`.parsing.ParseWorker.abandon_if_silent`).
        A worker not running (starting, given up, or dead) is started, in the background, by the
        next large body read here."""
        if not WORKER.ready() or WORKER.behind():  # not running, or silent past a job's grace
            self._large.discard(spec.id)
            return None
        sent = time.monotonic()
        try:
            async with asyncio.timeout((budget_ms + WORKER_GRACE_MS) / 1000):
                return await WORKER.fetch(
                    spec.id, request, budget_ms, spec.basic_auth, max_results, tuple(self.secrets())
                )
        except WorkerGone:
            self._large.discard(spec.id)  # back to the loop until a large answer comes again
            return None
        except TimeoutError:
            if WORKER.abandon_if_silent(sent):  # stuck: the provider's next exchanges on the loop
                self._large.discard(spec.id)
            raise ProviderFailure(f"timeout after {int(budget_ms)}ms", TIMEOUT) from None

    def _digest(
        self, provider: Provider, response: HttpResponse, max_results: int
    ) -> tuple[ProviderAnswer, list[Source], bool]:
        return digest(provider, response, max_results, self.redactor)


def _now() -> float:
    """The deadline's clock (``time.monotonic``; a test freezes it to check the budgets)."""
    return time.monotonic()
