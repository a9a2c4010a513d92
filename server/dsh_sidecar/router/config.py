"""The router's config block, exactly the search-router seed's schema, validated loudly.

Seed (``search-router.README.txt``, "Full schema")::

    provider: exa                  # single-provider mode (XOR with order)
    order: [exa, tavily, searxng]  # fallback-chain mode
    timeoutMs: 10000               # per-provider timeout (default 10000)
    emptyResultsFallback: true     # 0-result success counts as failure (default true)
    providers: {<id>: {apiKey, apiKeyEnv, baseURL|baseUrl, baseUrlEnv, model}}

plus ``deadlineMs`` (whole-chain deadline, ours), ``maxConcurrentSearches`` and
``maxQueuedSearches`` (:mod:`.admission`, ours) and ``cache`` (``false``, ``true`` or
``{ttlSeconds, maxEntries}``; on by default, see :mod:`.cache`). Every error is a
:class:`~dsh_sidecar.errors.ConfigError` naming the key; values are never echoed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Final, cast

from pydantic import AliasChoices, Field

from dsh_sidecar.configmodel import ConfigModel, defaults_of, parse_block
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router.cache import DEFAULT_MAX_ENTRIES, DEFAULT_TTL_S
from dsh_sidecar.router.providers import KNOWN, LOCAL_ID
from dsh_sidecar.router.resolve import (
    BASIC_AUTH_PROVIDERS,
    CANONICAL_ORDER,
    DEFAULT_ORDER,
    DEFAULT_PROVIDER,
    DEFAULT_PROVIDERS,
    MAX_URL_CHARS,
    NO_OVERRIDES,
    PROVIDER_DEFAULTS,
    ProviderOverrides,
    ProviderSpec,
    check_api_key,
    check_base_url,
    resolve_chain_of,
    resolve_provider_of,
    secrets_of,
)

__all__ = [
    "BASIC_AUTH_PROVIDERS",
    "CANONICAL_ORDER",
    "KNOWN",
    "LOCAL_ID",
    "PROVIDER_DEFAULTS",
    "ProviderSpec",
    "RouterConfig",
    "check_base_url",
    "parse_router_config",
    "resolve_chain",
    "resolve_chain_skipping",
    "resolve_provider",
    "secrets_of",
]

log = logging.getLogger(__name__)

#: Seed default per-provider timeout, milliseconds.
DEFAULT_TIMEOUT_MS: Final = 10_000
#: Seed floor of ``timeoutMs`` ("non-integer or < 100 → config error"), milliseconds.
MIN_TIMEOUT_MS: Final = 100
#: Default whole-chain deadline of one ``dsh/search``, milliseconds.
DEFAULT_DEADLINE_MS: Final = 60_000
#: Ceilings of ``timeoutMs`` (10 minutes) and ``deadlineMs`` (1 hour), milliseconds: a search
#: longer than that is a hung one; bigger values used to overflow the timer at request time.
MAX_TIMEOUT_MS: Final = 600_000
MAX_DEADLINE_MS: Final = 3_600_000
#: Searches at their providers at once, by default (``maxConcurrentSearches``, :mod:`.admission`):
#: a few times an agent's parallel tool calls and a thorough search's reformulations, far under
#: a provider's connection limits; and searches that may wait for a turn (``maxQueuedSearches``).
DEFAULT_MAX_CONCURRENT: Final = 16
DEFAULT_MAX_QUEUED: Final = 256
#: Ceilings of ``maxConcurrentSearches`` and ``maxQueuedSearches``.
MAX_CONCURRENT_SEARCHES: Final = 1024
MAX_QUEUED_SEARCHES: Final = 100_000
#: Longest API key accepted, characters (the longest base URL: :data:`MAX_URL_CHARS`).
MAX_KEY_CHARS: Final = 4096
#: An environment variable name (POSIX portable names).
ENV_NAME: Final = r"^[A-Za-z_][A-Za-z0-9_]{0,255}$"


class ProviderSettings(ConfigModel):
    """``providers.<id>``: per-provider overrides (seed "Full schema")."""

    api_key: str | None = Field(default=None, max_length=MAX_KEY_CHARS)
    """The provider's API key (unset: read from the variable apiKeyEnv names). Never logged."""
    api_key_env: str | None = Field(default=None, pattern=ENV_NAME)
    """Environment variable holding the API key (default: the provider's own, e.g. EXA_API_KEY)."""
    base_url: str | None = Field(
        default=None,
        max_length=MAX_URL_CHARS,
        # the seed spells it baseURL; baseUrl (what camelCase gives) is accepted too
        validation_alias=AliasChoices("baseURL", "baseUrl"),
        alias="baseUrl",
    )
    """Endpoint of the provider, an absolute http(s) URL (default: the provider's public one)."""
    base_url_env: str | None = Field(default=None, pattern=ENV_NAME)
    """Environment variable holding the base URL (default: the provider's own, e.g. SEARXNG_BASE_URL)."""
    model: str | None = Field(default=None, min_length=1, max_length=200)
    """Model of a provider that has one (default: the provider's own)."""


#: Bounds of ``cache.ttlSeconds`` (seconds; a day at most: search results go stale) and
#: ``cache.maxEntries`` (entries; each holds at most 50 sources).
MAX_CACHE_TTL_S: Final = 86_400
MAX_CACHE_ENTRIES: Final = 100_000


class CacheSettings(ConfigModel):
    """``cache``: the result cache (:mod:`dsh_sidecar.router.cache`). ``enabled`` is false
    for ``cache: false`` (``{enabled: false}`` is accepted too)."""

    enabled: bool = True
    """Serve repeated searches from the cache."""
    ttl_seconds: int = Field(default=DEFAULT_TTL_S, ge=1, le=MAX_CACHE_TTL_S)
    """How long a cached answer is served, seconds."""
    max_entries: int = Field(default=DEFAULT_MAX_ENTRIES, ge=1, le=MAX_CACHE_ENTRIES)
    """Most answers kept (least recently used dropped first)."""


class RouterConfig(ConfigModel):
    """The validated router block. Times are milliseconds."""

    provider: str | None = DEFAULT_PROVIDER
    """Single-provider mode: the one provider asked (not with order)."""
    order: list[str] | None = DEFAULT_ORDER
    """Fallback-chain mode: providers tried in this order (not with provider). Neither: every usable provider, in canonical order."""
    timeout_ms: int = Field(default=DEFAULT_TIMEOUT_MS, ge=MIN_TIMEOUT_MS, le=MAX_TIMEOUT_MS)
    """Per-provider timeout, milliseconds (seed: default 10000, at least 100)."""
    deadline_ms: int = Field(default=DEFAULT_DEADLINE_MS, ge=MIN_TIMEOUT_MS, le=MAX_DEADLINE_MS)
    """Deadline of a whole search over the chain, milliseconds."""
    empty_results_fallback: bool = True
    """A successful answer with no results counts as a failure, so the next provider is tried (seed)."""
    max_concurrent_searches: int = Field(default=DEFAULT_MAX_CONCURRENT, ge=1, le=MAX_CONCURRENT_SEARCHES)
    """Searches at their providers at once; more wait for a turn, their deadline running."""
    max_queued_searches: int = Field(default=DEFAULT_MAX_QUEUED, ge=0, le=MAX_QUEUED_SEARCHES)
    """Searches that may wait for a turn; past them a search is refused at once (skipped: busy)."""
    # (DEFAULT_PROVIDERS is empty, no overrides: the cast only states its value's type here)
    providers: dict[str, ProviderSettings] = Field(
        default_factory=lambda: cast("dict[str, ProviderSettings]", dict(DEFAULT_PROVIDERS))
    )
    """Per-provider key, endpoint and model, keyed by provider id."""
    cache: CacheSettings = Field(default_factory=lambda: defaults_of(CacheSettings))
    """The result cache: false, true or {ttlSeconds, maxEntries}."""
    local_fallback: bool | None = None
    """Append the offline docs index (provider local) to the chain as its last resort. Unset: on for dsh-search query, off for served chains (serve, mcp), whose zero-config chain stays the search-router seed's."""


#: Which per-provider keys make sense for which provider ("model only where the provider has one").
_ALLOWED_KEYS: Final[dict[str, frozenset[str]]] = {
    pid: frozenset(
        ({"baseURL", "baseUrl"} if d.base_url is None or d.base_url.startswith("http") else set())
        | ({"apiKey", "apiKeyEnv"} if d.key_env else set())
        | ({"model"} if d.model else set())
        | ({"baseUrlEnv"} if d.base_url_env else set())
    )
    for pid, d in PROVIDER_DEFAULTS.items()
}


def _raw_key_check(raw: Mapping[str, Any]) -> None:
    providers = raw.get("providers")
    if providers is None:
        return
    if not isinstance(providers, Mapping):
        raise ConfigError("router.providers", "must be an object keyed by provider id")
    for pid, block in providers.items():
        if pid not in PROVIDER_DEFAULTS:
            raise ConfigError(f"router.providers.{pid}", f"unknown provider (known: {', '.join(KNOWN)})")
        if not isinstance(block, Mapping):
            raise ConfigError(f"router.providers.{pid}", "must be an object")
        for key in block:
            if key not in _ALLOWED_KEYS[pid]:
                raise ConfigError(
                    f"router.providers.{pid}.{key}",
                    f"unknown key for {pid} (allowed: {', '.join(sorted(_ALLOWED_KEYS[pid])) or 'none'})",
                )
        if "baseURL" in block and "baseUrl" in block:
            raise ConfigError(f"router.providers.{pid}.baseURL", "give baseURL or baseUrl, not both")


def _cache_block(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    """``cache: false|true|{ttlSeconds, maxEntries}`` → the :class:`CacheSettings` shape."""
    if "cache" not in raw:
        return raw
    value = raw["cache"]
    out = dict(raw)
    if isinstance(value, bool):
        out["cache"] = {"enabled": value}
    elif isinstance(value, Mapping):
        out["cache"] = {"enabled": True, **value}
    else:
        raise ConfigError("router.cache", "must be false, true or {ttlSeconds, maxEntries}")
    return out


def parse_router_config(raw: Any) -> RouterConfig:
    """Validate the router block (``None`` = all defaults).

    Raises :class:`ConfigError` naming the first offending key: unknown keys and provider
    ids, ``provider`` together with ``order``, a non-integer or < 100 ``timeoutMs``, a bad URL.
    """
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise ConfigError("router", "must be an object")
    _raw_key_check(raw)
    raw = _cache_block(raw)
    cfg = parse_block(RouterConfig, raw, "router")
    if cfg.provider is not None and cfg.order is not None:
        raise ConfigError("router.provider", "give either provider (single) or order (chain), not both")
    if cfg.provider is not None and cfg.provider not in PROVIDER_DEFAULTS:
        raise ConfigError("router.provider", f"unknown provider (known: {', '.join(KNOWN)})")
    if cfg.order is not None:
        if not cfg.order:
            raise ConfigError("router.order", "must name at least one provider")
        for i, pid in enumerate(cfg.order):
            if pid not in PROVIDER_DEFAULTS:
                raise ConfigError(f"router.order[{i}]", f"unknown provider (known: {', '.join(KNOWN)})")
        if len(set(cfg.order)) != len(cfg.order):
            raise ConfigError("router.order", "names a provider twice")
    for pid, settings in cfg.providers.items():
        if settings.api_key is not None and settings.api_key.strip():  # the document's own value: refused now
            check_api_key(f"router.providers.{pid}.apiKey", settings.api_key.strip())
        if settings.base_url is not None:
            key = f"router.providers.{pid}.{'baseURL' if 'baseURL' in raw['providers'][pid] else 'baseUrl'}"
            check_base_url(key, settings.base_url, allow_credentials=pid in BASIC_AUTH_PROVIDERS)
    return cfg


def resolve_provider(pid: str, cfg: RouterConfig, env: Mapping[str, str]) -> ProviderSpec | None:
    """Resolve one provider's key, endpoint and model from ``cfg`` and ``env``
    (:func:`~dsh_sidecar.router.resolve.resolve_provider_of`); ``None`` when it is not usable
    (a keyed provider without a key, SearXNG without a base URL).

    Raises :class:`ConfigError` when a base URL taken from the environment is malformed or a
    key has whitespace/control characters inside (naming the key or variable, never the value).
    """
    return resolve_provider_of(pid, cfg.providers.get(pid), env)


def resolve_chain(
    cfg: RouterConfig, env: Mapping[str, str], problems: dict[str, ConfigError] | None = None
) -> tuple[list[ProviderSpec], list[str]]:
    """Return the providers to try, in order, and the ids that were named but are unusable
    (:func:`~dsh_sidecar.router.resolve.resolve_chain_of` of ``cfg``'s ``provider``, ``order``
    and ``providers``).

    ``provider`` → that one; ``order`` → those, in order; neither → every provider whose key
    or endpoint is available, in :data:`CANONICAL_ORDER` (DuckDuckGo needs nothing, so the
    zero-config chain is never empty). With ``localFallback`` true, the offline docs index
    (``local``) is appended when the chain does not name it. A malformed key or base URL in
    the environment makes its provider unusable and is kept in ``problems`` (without it, the
    :class:`ConfigError` is raised), as :func:`~dsh_sidecar.router.resolve.resolve_chain_of` says.
    """
    chain, missing = resolve_chain_of(cfg.provider, cfg.order, cfg.providers, env, problems)
    if cfg.local_fallback and all(spec.id != LOCAL_ID for spec in chain):
        local = resolve_provider_of(LOCAL_ID, None, env)
        if local is not None:
            chain.append(local)
    return chain, missing


def resolve_chain_skipping(
    cfg: RouterConfig, env: Mapping[str, str]
) -> tuple[list[ProviderSpec], list[str], dict[str, str]]:
    """:func:`resolve_chain` for a router: the chain, the unusable ids (named but not
    configured; named or auto-detected but with a malformed key or URL in the environment, in
    place in the plan) and, by id, why each of the latter is skipped (:func:`invalid_reason`),
    logged once here."""
    problems: dict[str, ConfigError] = {}
    chain, missing = resolve_chain(cfg, env, problems)
    invalid = {pid: invalid_reason(exc) for pid, exc in problems.items()}
    for line in skipped_lines(invalid):
        log.warning("%s", line)
    return chain, missing, invalid


def skipped_lines(invalid: Mapping[str, str]) -> list[str]:
    """One warning line per provider skipped for a malformed setting (``invalid``: by id, why,
    as :func:`resolve_chain_skipping` gives it): ``router: provider searxng skipped: invalid
    config ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)``. The server's
    stderr and an LSP client's ``window/logMessage`` carry the same text."""
    return [f"router: provider {pid} skipped: {why}" for pid, why in invalid.items()]


def invalid_reason(problem: ConfigError) -> str:
    """Why a provider whose key or base URL in the environment is malformed is not usable,
    naming the variable and what is wrong (never the value): ``invalid config
    ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)``."""
    return f"invalid config ({problem})"


def unusable_reason(pid: str, cfg: RouterConfig) -> str:
    """Why a provider named in ``provider``/``order`` is not usable, naming the variable or key
    to set (never a value): ``not configured (no API key: set EXA_API_KEY or
    providers.exa.apiKey)`` or ``not configured (no base URL: set SEARXNG_BASE_URL or
    providers.searxng.baseUrl)``."""
    defaults = PROVIDER_DEFAULTS[pid]
    given = cfg.providers.get(pid)
    settings: ProviderOverrides = NO_OVERRIDES if given is None else given
    if defaults.key_env:
        var = settings.api_key_env or defaults.key_env
        return f"not configured (no API key: set {var} or providers.{pid}.apiKey)"
    url_var = settings.base_url_env or defaults.base_url_env
    if url_var:
        return f"not configured (no base URL: set {url_var} or providers.{pid}.baseUrl)"
    return f"not configured (no base URL: set providers.{pid}.baseUrl)"
