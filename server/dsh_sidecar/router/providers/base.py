"""What every provider module is made of: one descriptor, one request builder, one parser.

A provider module is a :class:`Provider` (a :class:`typing.Protocol` a module satisfies with
module-level names): ``ID``, its ``POSITION`` in the seed's canonical auto-detection order,
its ``DEFAULTS`` (endpoint, key variable, model, largest count), its ``AUTH_KIND``, its
documented ``RATE_LIMIT``, the ``HTML_FIELDS`` it documents as HTML, and
``build_request(spec, query, max_results) -> HttpRequest`` /
``parse_response(response, max_results) -> ProviderAnswer``; the parser raises
:class:`ProviderFailure` for anything that is not a usable answer. The registry
(:mod:`dsh_sidecar.router.providers`) finds every module of the package, so adding a
provider is adding one file. The HTTP exchange itself (timeouts, bounded reads and
decompression, cancellation) lives in :mod:`dsh_sidecar.router.http`; no provider touches a
socket.

The shape follows what LiteLLM's search configs (request/response transformations separate
from the HTTP handler) and ddgs' engines (class attributes describing the endpoint, a
payload builder and an extractor) do, as plain module names instead of classes.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from enum import StrEnum
from typing import Any, Final, Protocol, runtime_checkable

from dsh_sidecar.router.normalize import RawItem, no_lone_surrogates

# Failure classes (shared/fixtures/providers/README.md, "Outcome vocabulary").
AUTH: Final = "auth"
RATE_LIMITED: Final = "rate_limited"
QUOTA_EXHAUSTED: Final = "quota_exhausted"
BLOCKED: Final = "blocked"
UPSTREAM_ERROR: Final = "upstream_error"
BAD_RESPONSE: Final = "bad_response"
CONFIG: Final = "config"
TIMEOUT: Final = "timeout"
NETWORK: Final = "network"
EMPTY: Final = "empty"
#: Ours: the provider's documented request spacing left no slot within the attempt's budget.
PACED: Final = "paced"

#: Longest piece of a provider's own error message quoted in a reason, characters.
ERROR_DETAIL_MAX_CHARS: Final = 160


class AuthKind(StrEnum):
    """How a provider authenticates."""

    #: The API key in a provider-specific header (``x-api-key``, ``X-Subscription-Token``).
    HEADER = "header"
    #: The API key as ``Authorization: Bearer <key>``.
    BEARER = "bearer"
    #: Keyless; ``user:password@`` in the base URL is sent as HTTP Basic auth (RFC 7617), for
    #: self-hosted instances behind an auth proxy.
    BASIC_FROM_URL = "basic-from-url"


@dataclass(frozen=True)
class ProviderDefaults:
    """What the seed's table says of one provider: its key variable (``None``: keyless),
    default origin (``None``: the user must give one), base-URL variable, default model, and
    the provider's documented largest result count per request (``None``: no count control)."""

    key_env: str | None
    base_url: str | None
    base_url_env: str | None = None
    model: str | None = None
    max_count: int | None = None


@dataclass(frozen=True)
class RateLimit:
    """A provider's documented request rate: at most ``requests`` per ``per_s`` seconds on the
    plan named by ``plan`` (the most restrictive plan a user of ours is likely on), from
    ``source``. The chain spaces requests by it (:mod:`dsh_sidecar.router.pacing`)."""

    requests: int
    per_s: float
    plan: str
    source: str

    @property
    def interval_s(self) -> float:
        """The spacing between two requests, seconds."""
        return self.per_s / self.requests


@dataclass(frozen=True)
class ProviderSpec:
    """One provider resolved against the environment: ready to call. ``base_url`` never
    carries credentials; ``basic_auth`` holds them (:attr:`AuthKind.BASIC_FROM_URL` only)."""

    id: str
    base_url: str
    api_key: str | None = field(default=None, repr=False)  # never in a repr, log or traceback
    model: str | None = None
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)


@dataclass(frozen=True)
class HttpRequest:
    """One HTTP request a provider wants sent. ``url`` is absolute."""

    method: str
    url: str
    headers: dict[str, str] = field(default_factory=dict)
    params: dict[str, str] | None = None
    json: Any = None
    form: dict[str, str] | None = None


def _no_redaction(text: str) -> str:
    return text


@dataclass(frozen=True)
class HttpResponse:
    """One HTTP response, fully read (bounded by the chain). Header names are lower-case.

    ``redact`` is the chain's redactor: a parser applies it to any provider text *before* it
    cuts or sanitises that text (the normaliser redacts the items' fields itself)."""

    status: int
    headers: dict[str, str]
    body: bytes
    redact: Callable[[str], str] = field(default=_no_redaction, repr=False, compare=False)

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-case (``""`` when absent)."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    def text(self) -> str:
        """The body decoded as UTF-8 (invalid bytes replaced)."""
        return self.body.decode("utf-8", errors="replace")


@dataclass
class ProviderAnswer:
    """A provider's usable answer: raw items (normalised by the chain) and optional prose."""

    items: list[RawItem]
    content: str | None = None


class ProviderFailure(Exception):
    """The provider did not give a usable answer.

    ``reason`` is the short text shown after ``- <id>: `` in the aggregated error and in
    ``attempts[].outcome`` (redacted by the chain); ``failure_class`` one of the module
    constants; ``cooldown_s`` the cooldown the response itself asked for (seconds), if any.
    The reason quotes provider text (an error body, engine names): it is kept on one line
    (whitespace runs, line breaks included, become one space), so it cannot add lines to the
    aggregated error, and a lone surrogate in it becomes U+FFFD (no JSON-RPC or MCP writer
    encodes one).
    """

    def __init__(self, reason: str, failure_class: str, cooldown_s: float | None = None) -> None:
        reason = no_lone_surrogates(" ".join(str(reason).split()))
        super().__init__(reason)
        self.reason = reason
        self.failure_class = failure_class
        self.cooldown_s = cooldown_s

    def __reduce__(self) -> tuple:  # picklable (a body parsed in a worker process)
        return (ProviderFailure, (self.reason, self.failure_class, self.cooldown_s))


@runtime_checkable
class Provider(Protocol):
    """One provider, as a module (module-level names) or any object with these members.

    ``ID`` is the config id; ``POSITION`` orders auto-detection (seed: "exa → tavily → brave →
    perplexity → deepseek → searxng → duckduckgo", 0-based); ``HTML_FIELDS`` names the
    :class:`RawItem` fields (``title``, ``snippet``) the provider documents as HTML, the only
    ones the normaliser parses as markup.
    """

    ID: str
    POSITION: int
    DEFAULTS: ProviderDefaults
    AUTH_KIND: AuthKind
    RATE_LIMIT: RateLimit | None
    HTML_FIELDS: frozenset[str]

    def build_request(self, spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
        """The HTTP request for ``query`` asking for at most ``max_results`` results."""
        ...

    def parse_response(self, response: HttpResponse, max_results: int) -> ProviderAnswer:
        """The answer in ``response``; raises :class:`ProviderFailure` when there is none."""
        ...


def parse_json(response: HttpResponse) -> Any:
    """Decode a JSON body or raise a ``bad_response`` failure naming the content type."""
    try:
        return json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        ctype = response.content_type or "none"
        raise ProviderFailure(f"unparseable JSON response (content-type {ctype})", BAD_RESPONSE) from None


def _error_detail(response: HttpResponse) -> str | None:
    """A short human message from a JSON error body (``error``/``message``/``detail``), if
    any: redacted, then cut to :data:`ERROR_DETAIL_MAX_CHARS`."""
    if "json" not in response.content_type:
        return None
    try:
        body = json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        return None
    for _ in range(3):  # unwrap {"detail": {"error": "..."}} and the like
        if isinstance(body, dict):
            for key in ("error", "message", "detail", "msg"):
                if key in body and body[key]:
                    body = body[key]
                    break
            else:
                return None
        else:
            break
    if isinstance(body, str):
        text = " ".join(response.redact(body).split())  # redacted before the cut
        return text[:ERROR_DETAIL_MAX_CHARS] or None
    return None


def retry_after_seconds(response: HttpResponse, now: float | None = None) -> float | None:
    """Seconds from a ``Retry-After`` header (RFC 9110 §10.2.3): delta-seconds or an HTTP-date
    (``now`` is the wall clock in epoch seconds, default :func:`time.time`). ``None`` when the
    header is absent or malformed; a date in the past gives ``0``.
    """
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:  # RFC 9110 dates are GMT
            return None
        return max(0.0, when.timestamp() - (time.time() if now is None else now))
    return seconds if seconds >= 0 and seconds == seconds and seconds != float("inf") else None


def items_list(body: Any, key: str) -> list[dict[str, Any]]:
    """The list of objects under ``body[key]`` (non-objects skipped); a missing key is an empty
    list. Raises a ``bad_response`` failure when ``body`` is not an object or ``body[key]`` is
    not a list."""
    if not isinstance(body, dict):
        raise ProviderFailure("unexpected JSON shape (not an object)", BAD_RESPONSE)
    value = body.get(key, [])
    if value is None:
        value = []
    if not isinstance(value, list):
        raise ProviderFailure(f"unexpected JSON shape ({key} is not a list)", BAD_RESPONSE)
    return [item for item in value if isinstance(item, dict)]


def status_failure(response: HttpResponse) -> ProviderFailure:
    """The generic failure for a non-2xx status: ``HTTP <code>`` plus the provider's short
    JSON error message when it gives one (never an HTML page), classed by status."""
    status = response.status
    reason = f"HTTP {status}"
    detail = _error_detail(response)
    if detail:
        reason += f": {detail}"
    if status in (401, 403):
        return ProviderFailure(reason, AUTH)
    if status == 429:
        return ProviderFailure(reason, RATE_LIMITED, retry_after_seconds(response))
    if status >= 500:  # a 503 may say how long it will be down (RFC 9110 §15.6.4)
        return ProviderFailure(reason, UPSTREAM_ERROR, retry_after_seconds(response) if status == 503 else None)
    return ProviderFailure(reason, BAD_RESPONSE)


def join_url(base: str, path: str) -> str:
    """Append ``path`` to ``base`` keeping the base's own path (``/searx`` + ``/search``)."""
    return base.rstrip("/") + "/" + path.lstrip("/")
