"""Brave Search: ``GET {base}/res/v1/web/search?q=…&count=…`` with ``X-Subscription-Token``
(https://api.search.brave.com/app/documentation/web-search/get-started).

``count`` is ``min(maxResults, 20)`` (Brave's documented ceiling). Items are ``web.results[]``;
snippets come from ``description`` (which carries ``<strong>`` markup and entities), dates
from ``page_age``, else ``age`` when it is a calendar date (the normaliser drops relative
ages such as ``3 days ago``). Error bodies are ``{type: ErrorResponse, error: {code, detail,
…}}``; the reason carries ``error.detail``. Brave answers a bad key with 422
``SUBSCRIPTION_TOKEN_INVALID`` (``auth``); any other 422 is a request Brave rejected.

Rate limits: ``X-RateLimit-Reset`` and ``X-RateLimit-Remaining`` are comma-separated lists,
one entry per window (per-second first, then monthly; response-headers doc). A 429 cools Brave
down for the reset of the window that is exhausted (remaining ``0``), so a per-second limit
costs about a second, not the month.
"""

from __future__ import annotations

import json
from typing import Final

from dsh_sidecar.router.normalize import RawItem, parse_date
from dsh_sidecar.router.providers.base import (
    AUTH,
    BAD_RESPONSE,
    RATE_LIMITED,
    AuthKind,
    HttpRequest,
    HttpResponse,
    ProviderAnswer,
    ProviderDefaults,
    ProviderFailure,
    ProviderSpec,
    RateLimit,
    items_list,
    join_url,
    parse_json,
    retry_after_seconds,
    status_failure,
)

ID: Final = "brave"
#: Brave's documented maximum of ``count``.
MAX_COUNT: Final = 20
#: Brave's error code for a bad or unknown key (its auth failure).
TOKEN_INVALID: Final = "SUBSCRIPTION_TOKEN_INVALID"


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 2
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults("BRAVE_SEARCH_API_KEY", "https://api.search.brave.com", max_count=MAX_COUNT)
AUTH_KIND: Final = AuthKind.HEADER
#: Brave's free plan: 1 request per second (https://brave.com/search/api/, plan table; paid plans
#: allow more and say so in ``X-RateLimit-Limit``, which the pacer adopts once seen).
RATE_LIMIT: Final[RateLimit | None] = RateLimit(1, 1.0, "Free", "https://brave.com/search/api/")
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset({"snippet"})


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The GET request (key in ``X-Subscription-Token``)."""
    return HttpRequest(
        method="GET",
        url=join_url(spec.base_url, "/res/v1/web/search"),
        headers={"X-Subscription-Token": spec.api_key or "", "Accept": "application/json"},
        params={"q": query, "count": str(min(max_results, MAX_COUNT))},
    )


def _error_code(response: HttpResponse) -> str | None:
    try:
        body = json.loads(response.body)
    except (ValueError, UnicodeDecodeError):
        return None
    err = body.get("error") if isinstance(body, dict) else None
    code = err.get("code") if isinstance(err, dict) else None
    return code if isinstance(code, str) else None


def rate_limit_reset_seconds(headers: dict[str, str]) -> float | None:
    """Seconds until the exhausted window of ``X-RateLimit-Reset`` resets.

    The lists are per window; the window whose ``X-RateLimit-Remaining`` entry is ``0`` is the
    one that refused (the longest such reset when several are exhausted). Without a usable
    remaining list the first (per-second) entry is used. ``None`` when the header is absent
    or malformed.
    """
    resets = _int_list(headers.get("x-ratelimit-reset"))
    if not resets:
        return None
    remaining = _int_list(headers.get("x-ratelimit-remaining"))
    if remaining and len(remaining) == len(resets):
        exhausted = [r for r, left in zip(resets, remaining, strict=True) if left <= 0]
        if exhausted:
            return float(max(exhausted))
    return float(resets[0])


def _int_list(value: str | None) -> list[int]:
    if not value:
        return []
    try:
        out = [int(part.strip()) for part in value.split(",")]
    except ValueError:
        return []
    return out if all(v >= 0 for v in out) else []


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Items from ``web.results[]`` (``url``, ``title``, ``description``, ``page_age``/``age``).

    Raises :class:`ProviderFailure`: 422 ``SUBSCRIPTION_TOKEN_INVALID`` → ``auth``; 429 →
    ``rate_limited`` with the exhausted window's reset as cooldown; other non-2xx → by status;
    non-JSON → ``bad_response``. A body without ``web`` is a successful empty answer.
    """
    if response.status == 422:
        failure = status_failure(response)
        raise ProviderFailure(failure.reason, AUTH if _error_code(response) == TOKEN_INVALID else BAD_RESPONSE)
    if response.status == 429:
        failure = status_failure(response)
        cooldown = retry_after_seconds(response)
        if cooldown is None:
            cooldown = rate_limit_reset_seconds(response.headers)
        raise ProviderFailure(failure.reason, RATE_LIMITED, cooldown)
    if not 200 <= response.status < 300:
        raise status_failure(response)
    body = parse_json(response)
    if not isinstance(body, dict):
        raise ProviderFailure("unexpected JSON shape (not an object)", BAD_RESPONSE)
    web = body.get("web")
    if web is None:
        return ProviderAnswer(items=[])
    results = items_list(web, "results")
    return ProviderAnswer(
        items=[
            RawItem(
                url=r.get("url"),
                title=r.get("title"),
                snippet=r.get("description"),
                published=r.get("page_age") if parse_date(r.get("page_age")) else r.get("age"),
            )
            for r in results
        ]
    )
