"""The fallback chain: try each provider in order, return the first usable answer.

Seed (``search-router.README.txt``, "Fallback"): a provider fails on network errors,
timeouts, any non-2xx status, unparseable responses and, by default, empty results; the
chain returns the first success; when every provider fails, one aggregated, key-free error
whose first line is :data:`AGGREGATE_HEADER`. When no provider answered usefully but at
least one answered an empty success, the truthful empty result is returned instead.

The per-provider timeout covers the whole exchange (headers and body), and the whole chain
has a deadline: each attempt gets what is left of it minus :data:`DEADLINE_MARGIN_MS`;
providers not reached in time are reported as ``skipped: deadline``. Providers cooling down
(:mod:`.health`) are skipped as ``skipped: <class> cooldown <N>s left``; a repeated search is
answered from the result cache (:mod:`.cache`) as one ``ok (cached)`` attempt.
"""

from __future__ import annotations

import asyncio
import logging
import multiprocessing
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Final

from dsh_protocol import Attempt, Source

from dsh_sidecar.redact import Redactor
from dsh_sidecar.router.cache import CACHED_OUTCOME, CachedAnswer, ResultCache
from dsh_sidecar.router.config import ProviderSpec, RouterConfig, resolve_chain, secrets_of, unusable_reason
from dsh_sidecar.router.health import Clock, ProviderHealth
from dsh_sidecar.router.normalize import WEB_SCHEMES, normalize
from dsh_sidecar.router.pacing import Pacer
from dsh_sidecar.router.progress import ObservedAttempts
from dsh_sidecar.router.providers import LOCAL_ID, PROVIDERS
from dsh_sidecar.router.providers.base import (
    AUTH,
    BAD_RESPONSE,
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

    import httpx

    from dsh_sidecar.router.localdocs import LocalDocs

log = logging.getLogger(__name__)

#: First line of the all-failed error, byte-exact (seed, "Fallback").
AGGREGATE_HEADER: Final = "search-router: all configured search providers failed:"
#: Reason of an empty answer (fixtures README, outcome ``empty``).
EMPTY_REASON: Final = "0 results"
#: Bodies larger than this are parsed and normalised off the event loop, bytes (a 5-result
#: JSON answer is 2-10 KB and parses in well under a millisecond; 2,000 results take ~60 ms).
OFF_LOOP_BYTES: Final = 64 * 1024
#: Time kept back from the deadline for the reply itself, milliseconds.
DEADLINE_MARGIN_MS: Final = 25


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
    client: httpx.AsyncClient | None = None
    missing: list[str] = field(default_factory=list)
    modules: Mapping[str, Provider] = field(default_factory=lambda: PROVIDERS)
    health: ProviderHealth = field(default_factory=ProviderHealth)
    cache: ResultCache | None = None
    pacer: Pacer = field(default_factory=Pacer)
    #: The offline docs index, when ``local`` is in the chain (:mod:`.localdocs`).
    docs: LocalDocs | None = None
    _client_lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False, compare=False)

    @classmethod
    def from_config(
        cls,
        config: RouterConfig,
        env: Mapping[str, str],
        client: httpx.AsyncClient | None = None,
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

        Raises :class:`~dsh_sidecar.errors.ConfigError` for a malformed URL in the environment.
        """
        chain, missing = resolve_chain(config, env)
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
            health=health,
            cache=cache,
            pacer=pacer,
            docs=docs,
        )

    def http(self) -> httpx.AsyncClient:
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
        self.http()
        from dsh_sidecar.router.http import warm_async_backend

        warm_async_backend()

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
        """Every secret of the chain (API keys, Basic-auth passwords), for a process-wide
        redactor (log filter)."""
        return secrets_of(self.chain)

    def health_status(self) -> list[dict[str, object]]:
        """Per-provider health for ``dsh/status`` (see :meth:`ProviderHealth.status`); every
        text in it is redacted already."""
        return self.health.status(s.id for s in self.chain)

    def cache_status(self) -> dict[str, int] | None:
        """``{entries, hits, misses}`` of the result cache, ``None`` when it is off."""
        return self.cache.status() if self.cache is not None else None

    def _cache_key(self, query: str, max_results: int):
        return ResultCache.key(query, max_results, tuple((s.id, s.base_url) for s in self.chain))

    async def search(self, query: str, max_results: int, deadline_ms: int | None = None) -> RouterResult:
        """Search ``query`` through the chain.

        ``max_results`` caps the sources; ``deadline_ms`` bounds the whole chain (default: the
        config's ``deadlineMs``), each attempt getting ``min(timeoutMs, what is left -
        DEADLINE_MARGIN_MS)``. A live cache entry answers at once (one ``ok (cached)``
        attempt, ``ms`` 0); providers cooling down or not configured are reported as
        ``skipped: …``. Raises :class:`AllProvidersFailed` when no provider answered (its
        message is the seed's aggregated text, one line per provider incl. skipped ones).
        Cancelling the calling task aborts the in-flight HTTP exchange (the connection is
        closed) and records nothing in the provider's health.
        """
        self.http()  # the first search creates the client (and imports httpx) before its deadline starts
        started = time.monotonic()
        deadline = started + (deadline_ms or self.config.deadline_ms) / 1000
        key = self._cache_key(query, max_results) if self.cache is not None else None
        if key is not None and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                cached = [Attempt(provider=hit.provider, outcome=CACHED_OUTCOME, ms=0)]
                return RouterResult(list(hit.sources), hit.truncated, cached, hit.provider, hit.content)
        attempts: list[Attempt] = ObservedAttempts()  # tells an MCP web_search its progress
        failures: list[_Failed] = []
        empty: RouterResult | None = None
        for spec in self._plan():
            if isinstance(spec, str):  # named in provider/order but not usable
                reason = f"skipped: {unusable_reason(spec, self.config)}"
                attempts.append(Attempt(provider=spec, outcome=reason, ms=0))
                failures.append(_Failed(spec, reason, CONFIG))
                continue
            if spec.id not in self.modules:
                attempts.append(Attempt(provider=spec.id, outcome="skipped: not implemented", ms=0))
                continue
            cooling = self.health.skip_reason(spec.id)
            if cooling is not None:
                attempts.append(Attempt(provider=spec.id, outcome=cooling, ms=0))
                failures.append(_Failed(spec.id, cooling, self.health.last_class(spec.id) or "skipped"))
                continue
            left_ms = (deadline - time.monotonic()) * 1000 - DEADLINE_MARGIN_MS
            if left_ms <= 0:
                attempts.append(Attempt(provider=spec.id, outcome="skipped: deadline", ms=0))
                failures.append(_Failed(spec.id, "skipped: deadline", TIMEOUT))
                continue
            budget_ms = min(self.config.timeout_ms, left_ms)
            t0 = time.monotonic()
            try:
                answer, sources, truncated = await self._attempt(spec, query, max_results, budget_ms)
            except ProviderFailure as failure:
                ms = _ms_since(t0)
                reason = self.redactor(failure.reason)
                if failure.failure_class == TIMEOUT:  # the attempt's whole budget (a pacing wait included)
                    reason = f"timeout after {int(budget_ms)}ms"
                    if budget_ms < self.config.timeout_ms:
                        reason += " (deadline)"
                attempts.append(Attempt(provider=spec.id, outcome=reason, ms=ms))
                failures.append(_Failed(spec.id, reason, failure.failure_class))
                self.health.record_failure(spec.id, failure.failure_class, reason, failure.cooldown_s)
                continue
            ms = _ms_since(t0)
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
            self.health.record_success(spec.id)
            if self.docs is not None and spec.id != LOCAL_ID:  # kept for later offline searches
                self.docs.remember(query, sources)
            content = self.redactor(answer.content) if answer.content else None
            if key is not None and self.cache is not None:
                self.cache.put(key, CachedAnswer(tuple(sources), truncated, spec.id, content))
            return RouterResult(sources, truncated, attempts, spec.id, content)
        if empty is not None:
            empty.attempts = attempts
            return empty
        outage = all(f.failure_class in OUTAGE_CLASSES for f in failures)
        raise AllProvidersFailed(self._aggregate(failures), attempts, outage=outage)

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

    def _plan(self) -> list[ProviderSpec | str]:
        """The chain in configured order, with the ids of named-but-unusable providers
        (:attr:`missing`) at their place."""
        if not self.missing:
            return list(self.chain)
        named = [self.config.provider] if self.config.provider else list(self.config.order or [])
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
        normalise. A body over :data:`OFF_PROCESS_BYTES` is parsed and normalised in a worker
        process, one over :data:`OFF_LOOP_BYTES` in a thread, so a large answer never stalls
        the event loop (other requests keep being served)."""
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

        async with self.pacer.slot(spec.id, provider.RATE_LIMIT, budget_ms) as waited_s:
            response = await exchange(self.http(), request, budget_ms - waited_s * 1000, spec.basic_auth)
        self.pacer.observe(spec.id, provider.RATE_LIMIT, response.headers)
        if len(response.body) > OFF_PROCESS_BYTES:
            try:
                pool = _POOL or await asyncio.to_thread(_worker_pool)  # started off the loop
                return await asyncio.get_running_loop().run_in_executor(
                    pool,
                    digest_in_worker,
                    provider.ID,
                    response.status,
                    response.headers,
                    response.body,
                    max_results,
                    tuple(self.secrets()),
                )
            except BrokenProcessPool:  # the worker died (OOM?): parse here, in a thread
                log.warning("router: the body-parsing worker process died; parsing in a thread")
                _reset_worker_pool()
        response = replace(response, redact=self.redactor)
        if len(response.body) > OFF_LOOP_BYTES:
            return await asyncio.to_thread(self._digest, provider, response, max_results)
        return self._digest(provider, response, max_results)

    def _digest(
        self, provider: Provider, response: HttpResponse, max_results: int
    ) -> tuple[ProviderAnswer, list[Source], bool]:
        return digest(provider, response, max_results, self.redactor)


def digest(
    provider: Provider, response: HttpResponse, max_results: int, redactor: Redactor
) -> tuple[ProviderAnswer, list[Source], bool]:
    """Parse and normalise one response (redacted, cut to ``max_results`` before the rest is
    normalised). Raises :class:`ProviderFailure`; a parser bug is ``unreadable response``."""
    if response.redact is not redactor:
        response = replace(response, redact=redactor)
    try:
        answer = provider.parse_response(response, max_results)
        schemes = getattr(provider, "URL_SCHEMES", WEB_SCHEMES)
        sources, truncated = normalize(answer.items, max_results, redactor, provider.HTML_FIELDS, schemes)
        answer.items = []  # not needed past here (and not worth sending back from a worker)
    except ProviderFailure:
        raise
    except Exception as exc:  # a parser bug on hostile input must not crash the search
        log.warning("%s: parsing the response failed: %s", provider.ID, type(exc).__name__)
        raise ProviderFailure("unreadable response", BAD_RESPONSE) from None
    return answer, sources, truncated


#: Bodies larger than this are parsed in a worker process, bytes: ``json.loads`` and lxml
#: hold the GIL for their whole run (~10 ms a MB), so a thread would still stall the loop.
OFF_PROCESS_BYTES: Final = 256 * 1024
_POOL: ProcessPoolExecutor | None = None
_WORKER_REDACTORS: dict[tuple[str, ...], Redactor] = {}


_POOL_LOCK = threading.Lock()


def _worker_pool() -> ProcessPoolExecutor:
    """One worker process for large bodies, started (``spawn``: no inherited threads or
    locks) on first need and waited for, so the caller (a thread, not the event loop) pays
    the start-up, not a search."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            pool = ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn"))
            pool.submit(_warm).result()
            _POOL = pool
        return _POOL


def _warm() -> None:
    import dsh_sidecar.router.providers  # noqa: F401  (the parsers, imported once in the worker)


def _reset_worker_pool() -> None:
    global _POOL
    pool, _POOL = _POOL, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


def digest_in_worker(
    provider_id: str, status: int, headers: dict[str, str], body: bytes, max_results: int, secrets: tuple[str, ...]
) -> tuple[ProviderAnswer, list[Source], bool]:
    """:func:`digest` in the worker process (arguments and results pickled)."""
    redactor = _WORKER_REDACTORS.get(secrets)
    if redactor is None:
        _WORKER_REDACTORS.clear()
        redactor = _WORKER_REDACTORS[secrets] = Redactor(secrets)
    return digest(PROVIDERS[provider_id], HttpResponse(status, headers, body, redact=redactor), max_results, redactor)


def _ms_since(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)
