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
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import ModuleType
from typing import Final

import httpx
from dsh_protocol import Attempt, Source

from dsh_sidecar.redact import Redactor
from dsh_sidecar.router.cache import CACHED_OUTCOME, CachedAnswer, ResultCache
from dsh_sidecar.router.config import ProviderSpec, RouterConfig, resolve_chain, secrets_of, unusable_reason
from dsh_sidecar.router.health import Clock, ProviderHealth
from dsh_sidecar.router.normalize import normalize
from dsh_sidecar.router.progress import ObservedAttempts
from dsh_sidecar.router.providers import PROVIDERS
from dsh_sidecar.router.providers.base import (
    BAD_RESPONSE,
    CONFIG,
    EMPTY,
    NETWORK,
    TIMEOUT,
    HttpRequest,
    HttpResponse,
    ProviderFailure,
)

log = logging.getLogger(__name__)

#: First line of the all-failed error, byte-exact (seed, "Fallback").
AGGREGATE_HEADER: Final = "search-router: all configured search providers failed:"
#: Reason of an empty answer (fixtures README, outcome ``empty``).
EMPTY_REASON: Final = "0 results"
#: Time kept back from the deadline for the reply itself, milliseconds.
DEADLINE_MARGIN_MS: Final = 25
#: Largest response body read from a provider, bytes (a bigger one is a failure, not a hang).
MAX_BODY_BYTES: Final = 8 * 1024 * 1024
#: User-Agent sent to providers.
USER_AGENT: Final = "dsh-search-sidecar/0.1 (+https://github.com/)"


@dataclass
class RouterResult:
    """A search answered by one provider (or the truthful empty result)."""

    sources: list[Source]
    truncated: bool
    attempts: list[Attempt]
    provider: str | None
    content: str | None = None


class AllProvidersFailed(Exception):
    """Every provider failed. ``str(exc)`` is the seed's aggregated text (redacted);
    ``attempts`` the per-provider outcomes."""

    def __init__(self, message: str, attempts: list[Attempt]) -> None:
        super().__init__(message)
        self.message = message
        self.attempts = attempts


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
    client: httpx.AsyncClient
    missing: list[str] = field(default_factory=list)
    modules: Mapping[str, ModuleType] = field(default_factory=lambda: PROVIDERS)
    health: ProviderHealth = field(default_factory=ProviderHealth)
    cache: ResultCache | None = None

    @classmethod
    def from_config(
        cls,
        config: RouterConfig,
        env: Mapping[str, str],
        client: httpx.AsyncClient | None = None,
        clock: Clock = time.monotonic,
        previous: Router | None = None,
    ) -> Router:
        """Resolve the chain against ``env`` and build a router. ``clock`` (monotonic
        seconds) drives cooldowns and cache expiry; injectable for tests. ``previous`` (the
        router this one replaces after a config change) hands over the health of every
        provider whose id, endpoint and key are unchanged, so a reconfiguration does not
        forget a cooldown; the cache starts empty.

        Raises :class:`~dsh_sidecar.errors.ConfigError` for a malformed URL in the environment.
        """
        chain, missing = resolve_chain(config, env)
        chain = [spec for spec in chain if spec.id in PROVIDERS] or chain
        redactor = Redactor(secrets_of(chain))
        if client is None:
            client = httpx.AsyncClient(
                follow_redirects=False,
                headers={"User-Agent": USER_AGENT},
                timeout=None,  # the chain bounds every exchange itself
                trust_env=False,
            )
        cache = None
        if config.cache.enabled:
            cache = ResultCache(config.cache.ttl_seconds, config.cache.max_entries, clock=clock)
        health = ProviderHealth(clock=clock)
        if previous is not None:
            health.inherit(previous.health, [s.id for s in chain if s in previous.chain])
        return cls(
            config=config,
            chain=chain,
            redactor=redactor,
            client=client,
            missing=missing,
            health=health,
            cache=cache,
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
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
        started = time.monotonic()
        deadline = started + (deadline_ms or self.config.deadline_ms) / 1000
        key = self._cache_key(query, max_results) if self.cache is not None else None
        if key is not None and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                attempts = [Attempt(provider=hit.provider, outcome=CACHED_OUTCOME, ms=0)]
                return RouterResult(list(hit.sources), hit.truncated, attempts, hit.provider, hit.content)
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
                answer = await self._attempt(spec, query, max_results, budget_ms)
                sources, truncated = normalize(answer.items, max_results)
                sources = [self._redact_source(src) for src in sources]
            except ProviderFailure as failure:
                ms = _ms_since(t0)
                reason = self.redactor(failure.reason)
                if budget_ms < self.config.timeout_ms and failure.failure_class == TIMEOUT:
                    reason = f"timeout after {int(budget_ms)}ms (deadline)"
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
            content = self.redactor(answer.content) if answer.content else None
            if key is not None and self.cache is not None:
                self.cache.put(key, CachedAnswer(tuple(sources), truncated, spec.id, content))
            return RouterResult(sources, truncated, attempts, spec.id, content)
        if empty is not None:
            empty.attempts = attempts
            return empty
        raise AllProvidersFailed(self._aggregate(failures), attempts)

    def _redact_source(self, source: Source) -> Source:
        """``source`` with every configured secret replaced in its url, title and snippet (a
        hostile provider may plant a key in a result)."""
        fields = {"url": source.url, "title": source.title, "snippet": source.snippet}
        update = {k: self.redactor(v) for k, v in fields.items() if v and self.redactor(v) != v}
        return source.model_copy(update=update) if update else source

    def _plan(self) -> list[ProviderSpec | str]:
        """The chain in configured order, with the ids of named-but-unusable providers
        (:attr:`missing`) at their place."""
        if not self.missing:
            return list(self.chain)
        named = [self.config.provider] if self.config.provider else list(self.config.order or [])
        specs = {s.id: s for s in self.chain}
        plan: list[ProviderSpec | str] = [specs.get(pid, pid) for pid in named if pid in specs or pid in self.missing]
        return plan

    def _aggregate(self, failures: list[_Failed]) -> str:
        lines = [AGGREGATE_HEADER]
        lines += [f"- {f.provider}: {f.reason}" for f in failures]
        if not failures:
            lines.append("- (no provider is configured or usable)")
        return self.redactor("\n".join(lines))

    async def _attempt(self, spec: ProviderSpec, query: str, max_results: int, budget_ms: float):
        module = self.modules[spec.id]
        request: HttpRequest = module.build_request(spec, query, max_results)
        try:
            async with asyncio.timeout(budget_ms / 1000):
                response = await self._exchange(request, spec.basic_auth)
        except TimeoutError:
            raise ProviderFailure(f"timeout after {int(budget_ms)}ms", TIMEOUT) from None
        except httpx.HTTPError as exc:
            raise ProviderFailure(f"network error: {_describe_http_error(exc)}", NETWORK) from None
        try:
            return module.parse_response(response, max_results)
        except ProviderFailure:
            raise
        except Exception as exc:  # a parser bug on hostile input must not crash the search
            log.warning("%s: parsing the response failed: %s", spec.id, type(exc).__name__)
            raise ProviderFailure("unreadable response", BAD_RESPONSE) from None

    async def _exchange(self, request: HttpRequest, basic_auth: tuple[str, str] | None = None) -> HttpResponse:
        """Send ``request`` (with HTTP Basic auth when the base URL carried credentials) and
        read the whole body, at most :data:`MAX_BODY_BYTES`."""
        async with self.client.stream(
            request.method,
            request.url,
            headers=request.headers,
            params=request.params,
            json=request.json,
            data=request.form,
            auth=httpx.BasicAuth(*basic_auth) if basic_auth else httpx.USE_CLIENT_DEFAULT,
        ) as response:
            chunks: list[bytes] = []
            size = 0
            async for chunk in response.aiter_bytes():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise ProviderFailure(
                        f"response body larger than {MAX_BODY_BYTES // (1024 * 1024)} MiB", BAD_RESPONSE
                    )
                chunks.append(chunk)
            headers = {k.lower(): v for k, v in response.headers.items()}
            return HttpResponse(status=response.status_code, headers=headers, body=b"".join(chunks))


def _ms_since(t0: float) -> int:
    return int((time.monotonic() - t0) * 1000)


def _describe_http_error(exc: httpx.HTTPError) -> str:
    """A short, URL-free description of a transport error (URLs may carry secrets)."""
    kind = type(exc).__name__
    if isinstance(exc, httpx.ConnectError):
        return "connection failed"
    if isinstance(exc, httpx.RemoteProtocolError):
        return "connection closed by the server"
    if isinstance(exc, httpx.ReadError):
        return "read failed"
    return kind
