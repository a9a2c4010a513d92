"""The router's chain resolved against the environment, without pydantic.

:func:`resolve_chain_of` turns the router block's ``provider``, ``order`` and ``providers``
settings into the providers to call (:class:`ProviderSpec`: key, endpoint, model, Basic auth),
reading keys and base URLs from the environment as the search-router seed says. The validated
:class:`~dsh_sidecar.router.config.RouterConfig` passes its fields here
(:func:`~dsh_sidecar.router.config.resolve_chain`), and ``initialize`` without options passes
the block's defaults (:data:`DEFAULT_PROVIDER`, :data:`DEFAULT_ORDER`, :data:`DEFAULT_PROVIDERS`),
which the model's fields read too, so a server can check its chain and collect its secrets
before its reply without importing pydantic (cold start). Errors are
:class:`~dsh_sidecar.errors.ConfigError` naming the key or variable, never the value.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final, Protocol
from urllib.parse import SplitResult, quote, unquote, urlsplit, urlunsplit

from dsh_sidecar.errors import ConfigError
from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.router.providers import CANONICAL_ORDER, PROVIDERS
from dsh_sidecar.router.providers.base import AuthKind, ProviderDefaults, ProviderSpec

__all__ = [
    "BASIC_AUTH_PROVIDERS",
    "CANONICAL_ORDER",
    "DEFAULT_ORDER",
    "DEFAULT_PROVIDER",
    "DEFAULT_PROVIDERS",
    "MAX_URL_CHARS",
    "NO_OVERRIDES",
    "PROVIDER_DEFAULTS",
    "ProviderOverrides",
    "ProviderSpec",
    "check_api_key",
    "check_base_url",
    "resolve_chain_of",
    "resolve_provider_of",
    "secrets_of",
    "split_credentials",
]

#: Default of the router block's ``provider`` (single-provider mode) and ``order`` (chain mode):
#: neither, so the chain is every usable provider in :data:`CANONICAL_ORDER` (seed,
#: "Auto-detection"). :class:`~dsh_sidecar.router.config.RouterConfig`'s fields default to these.
DEFAULT_PROVIDER: Final[str | None] = None
DEFAULT_ORDER: Final[list[str] | None] = None
#: Longest base URL accepted, characters.
MAX_URL_CHARS: Final = 2048

#: Provider id → its defaults (each provider module's ``DEFAULTS``).
PROVIDER_DEFAULTS: Final[dict[str, ProviderDefaults]] = {pid: p.DEFAULTS for pid, p in PROVIDERS.items()}
#: Providers whose base URL may carry ``user:password@``, sent as HTTP Basic auth (RFC 7617):
#: those whose ``AUTH_KIND`` is :attr:`AuthKind.BASIC_FROM_URL` (keyless, often self-hosted, behind
#: an auth proxy). Keyed providers authenticate with their key.
BASIC_AUTH_PROVIDERS: Final = frozenset(pid for pid, p in PROVIDERS.items() if p.AUTH_KIND is AuthKind.BASIC_FROM_URL)


class ProviderOverrides(Protocol):
    """The ``providers.<id>`` block as the resolver reads it (``None`` for a setting not given):
    :class:`~dsh_sidecar.router.config.ProviderSettings`, or :data:`NO_OVERRIDES`; read only."""

    @property
    def api_key(self) -> str | None: ...
    @property
    def api_key_env(self) -> str | None: ...
    @property
    def base_url(self) -> str | None: ...
    @property
    def base_url_env(self) -> str | None: ...
    @property
    def model(self) -> str | None: ...


#: Default of the router block's ``providers``: no per-provider block, so every provider's key,
#: endpoint and model are its own defaults (:data:`PROVIDER_DEFAULTS`, its variables).
DEFAULT_PROVIDERS: Final[Mapping[str, ProviderOverrides]] = MappingProxyType({})


@dataclass(frozen=True)
class _NoOverrides:
    """A ``providers.<id>`` block that sets nothing (what a config without one means)."""

    api_key: str | None = None
    api_key_env: str | None = None
    base_url: str | None = None
    base_url_env: str | None = None
    model: str | None = None


#: The :class:`ProviderOverrides` of a provider the config gives no block for.
NO_OVERRIDES: Final[ProviderOverrides] = _NoOverrides()


def check_base_url(key: str, url: str, allow_credentials: bool = False) -> str:
    """Check that ``url`` is an absolute http(s) URL with a host; return it without a trailing ``/``.

    Raises :class:`ConfigError` naming ``key``; the message never repeats the URL. Credentials
    (``user:password@``) are refused unless ``allow_credentials`` (then the caller strips them
    with :func:`split_credentials` and sends them as Basic auth).
    """
    stripped = url.strip()
    if len(stripped) > MAX_URL_CHARS:
        raise ConfigError(key, f"longer than {MAX_URL_CHARS} characters")
    if any(c.isspace() or not c.isprintable() for c in stripped):
        # urlsplit silently drops TAB/CR/LF (WHATWG); httpx then refuses the URL per request
        raise ConfigError(key, "contains whitespace or control characters")
    try:
        parts = urlsplit(stripped)
        _ = parts.port
        if not plainly_valid(stripped, parts):
            import httpx  # lazy: only a URL httpx must judge needs it (~60 ms of CPU: cold start, MCP's build)

            try:
                httpx.URL(stripped)  # what the client will parse: host syntax, IDNA, port range
            except httpx.InvalidURL:
                raise ValueError from None
    except ValueError:
        raise ConfigError(key, "not a valid URL") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(key, "must be an absolute http:// or https:// URL")
    if (parts.username is not None or parts.password is not None) and not allow_credentials:
        raise ConfigError(
            key,
            f"must not carry credentials (user:password@): only {', '.join(sorted(BASIC_AUTH_PROVIDERS))} take Basic auth this way",
        )
    if parts.query or parts.fragment:
        raise ConfigError(key, "must not have a query string or fragment")
    return stripped.rstrip("/")


#: A host name of plain ASCII labels (``localhost``, ``searx.example.org``), lower case as
#: :func:`urlsplit` gives it.
_PLAIN_HOST: Final = LazyPattern(r"[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)*")
#: What httpx takes for an IPv4 address (``httpx._urlparse.IPv4_STYLE_HOSTNAME``).
_IPV4_STYLE: Final = LazyPattern(r"[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+")


def plainly_valid(url: str, parts: SplitResult) -> bool:
    """Whether ``url`` (printable, no whitespace, split by :func:`urlsplit` with its port read)
    is one httpx's parser accepts without asking it: ASCII, no credentials, and a host of
    plain labels or a dotted IPv4 address. httpx's ``encode_host`` takes an ASCII host as it
    is, and checks one shaped like an IPv4 address with :mod:`ipaddress`, as here; its port
    check is ``int()`` of what :attr:`SplitResult.port` read. Any other URL (a non-ASCII or
    bracketed host, percent-escapes, credentials) is httpx's to judge."""
    host = parts.hostname or ""
    if not url.isascii() or "@" in parts.netloc:
        return False
    if _IPV4_STYLE.fullmatch(host):
        import ipaddress

        try:
            ipaddress.IPv4Address(host)
        except ValueError:
            return False
        return True
    return _PLAIN_HOST.fullmatch(host) is not None


def split_credentials(url: str) -> tuple[str, tuple[str, str] | None]:
    """``http://user:pw@host/p`` → ``("http://host/p", ("user", "pw"))`` (percent-decoded);
    a URL without credentials comes back unchanged with ``None``."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url, None
    netloc = parts.netloc.rpartition("@")[2]
    clean = urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))
    return clean, (unquote(parts.username or ""), unquote(parts.password or ""))


def _key_from(settings: ProviderOverrides, defaults: ProviderDefaults, env: Mapping[str, str], pid: str) -> str | None:
    """The provider's key: ``apiKey``, else the variable ``apiKeyEnv`` (default: the seed's
    variable). Stray whitespace at the ends is trimmed; a key with whitespace or control
    characters inside (it would corrupt the HTTP header) is a :class:`ConfigError` naming the
    key or variable, never the value."""
    if settings.api_key is not None and settings.api_key.strip():
        return check_api_key(f"router.providers.{pid}.apiKey", settings.api_key.strip())
    var = settings.api_key_env or defaults.key_env
    if var:
        value = env.get(var, "").strip()
        return check_api_key(f"${var}", value) if value else None
    return None


def check_api_key(where: str, key: str) -> str:
    """``key`` when it can go in an HTTP header; else a :class:`ConfigError` naming ``where``
    (never the value)."""
    if any(c.isspace() or not c.isprintable() or not c.isascii() for c in key):
        raise ConfigError(where, "API key contains whitespace, control or non-ASCII characters")
    return key


def resolve_provider_of(pid: str, settings: ProviderOverrides | None, env: Mapping[str, str]) -> ProviderSpec | None:
    """Resolve one provider's key, endpoint and model from its ``providers.<pid>`` block
    (``None``: the config has none, so every value is the provider's own default from
    :data:`PROVIDER_DEFAULTS` or its variables); ``None`` when it is not usable (a keyed provider
    without a key, SearXNG without a base URL).

    Raises :class:`ConfigError` when a base URL taken from the environment is malformed or a
    key has whitespace/control characters inside (naming the key or variable, never the value).
    """
    defaults = PROVIDER_DEFAULTS[pid]
    if settings is None:
        settings = NO_OVERRIDES
    key = _key_from(settings, defaults, env, pid) if defaults.key_env else None
    if defaults.key_env and key is None:
        return None
    base = settings.base_url
    if base is None:
        var = settings.base_url_env or defaults.base_url_env
        if var and env.get(var, "").strip():
            base = check_base_url(f"${var}", env[var], allow_credentials=pid in BASIC_AUTH_PROVIDERS)
    base = base or defaults.base_url
    if base is None:
        return None
    base, basic_auth = split_credentials(base.strip().rstrip("/"))
    model = settings.model or defaults.model
    return ProviderSpec(id=pid, base_url=base, api_key=key, model=model, basic_auth=basic_auth)


def resolve_chain_of(
    provider: str | None,
    order: Sequence[str] | None,
    providers: Mapping[str, ProviderOverrides],
    env: Mapping[str, str],
    problems: dict[str, ConfigError] | None = None,
) -> tuple[list[ProviderSpec], list[str]]:
    """Return the providers to try, in order, and the ids that were named but are unusable.

    ``provider`` → that one; ``order`` → those, in order; neither → every provider whose key
    or endpoint is available, in :data:`CANONICAL_ORDER` (DuckDuckGo needs nothing, so the
    zero-config chain is never empty). ``providers`` holds the ``providers.<id>`` blocks given.
    The ids are taken as valid (the config parser checked them).

    A key or base URL read from the environment that is malformed (the :class:`ConfigError`
    of :func:`resolve_provider_of`, naming the variable) makes its provider unusable, as a
    missing one does, when ``problems`` is given: the error is kept there under the provider's
    id and the id is among the unusable ones, auto-detected or named (the other providers of
    the chain keep answering; the skipped one says why). Without ``problems`` it is raised.
    """
    if provider is not None:
        ids: tuple[str, ...] = (provider,)
    elif order is not None:
        ids = tuple(order)
    else:
        ids = CANONICAL_ORDER
    chain: list[ProviderSpec] = []
    missing: list[str] = []
    broken: set[str] = set()
    for pid in ids:
        try:
            spec = resolve_provider_of(pid, providers.get(pid), env)
        except ConfigError as exc:
            if problems is None or not exc.key.startswith("$"):  # a document's value: its parser's error
                raise
            problems[pid] = exc
            broken.add(pid)
            spec = None
        if spec is None:
            missing.append(pid)
        else:
            chain.append(spec)
    if provider is None and order is None:
        missing = [pid for pid in missing if pid in broken]
    return chain, missing


def secrets_of(chain: list[ProviderSpec]) -> list[str]:
    """Every secret the chain holds, for redaction: API keys and Basic-auth passwords (also
    percent-encoded, as they may be echoed in a URL, and the base64 ``user:password`` of the
    Authorization header)."""
    out = [s.api_key for s in chain if s.api_key]
    for spec in chain:
        if spec.basic_auth and spec.basic_auth[1]:
            user, password = spec.basic_auth
            out += [password, quote(password, safe=""), base64.b64encode(f"{user}:{password}".encode()).decode()]
    return out
