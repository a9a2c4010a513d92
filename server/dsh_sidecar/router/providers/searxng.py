"""SearXNG: ``GET {base}/search?q=…&format=json`` (https://docs.searxng.org/dev/search_api).

No key and no result-count parameter (the chain truncates). The instance must enable the
``json`` format, else it answers 403 with an HTML page. ``results: []`` together with
``unresponsive_engines`` is a degraded instance (``upstream_error``), not an empty web.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from dsh_sidecar.router.normalize import RawItem
from dsh_sidecar.router.providers.base import (
    BAD_RESPONSE,
    CONFIG,
    UPSTREAM_ERROR,
    AuthKind,
    HttpRequest,
    HttpResponse,
    ProviderAnswer,
    ProviderDefaults,
    ProviderFailure,
    ProviderSpec,
    RateLimit,
    join_url,
    parse_json,
    status_failure,
)

ID: Final = "searxng"


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 5
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults(None, None, base_url_env="SEARXNG_BASE_URL")
AUTH_KIND: Final = AuthKind.BASIC_FROM_URL
#: None declared: no per-second limit we could cite for the default plan (a 429 still cools down).
RATE_LIMIT: Final[RateLimit | None] = None
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset()


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The search request; ``max_results`` is not sent (SearXNG has no count control)."""
    return HttpRequest(
        method="GET",
        url=join_url(spec.base_url, "/search"),
        headers={"Accept": "application/json"},
        params={"q": query, "format": "json", "pageno": "1"},
    )


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Items from ``results[]`` (``url``, ``title``, ``content``, ``publishedDate``).

    Raises :class:`ProviderFailure`: 403 → ``config`` (json format disabled), other non-2xx →
    by status, non-JSON → ``bad_response``, empty with unresponsive engines → ``upstream_error``.
    """
    if response.status == 403:
        raise ProviderFailure("HTTP 403 (is `json` enabled in search.formats of the instance's settings.yml?)", CONFIG)
    if not 200 <= response.status < 300:
        raise status_failure(response)
    body = parse_json(response)
    if not isinstance(body, dict) or not isinstance(body.get("results", []), list):
        raise ProviderFailure("unexpected JSON shape (no results list)", BAD_RESPONSE)
    items = [
        RawItem(url=r.get("url"), title=r.get("title"), snippet=r.get("content"), published=r.get("publishedDate"))
        for r in body.get("results", [])
        if isinstance(r, dict)
    ]
    if not items:
        dead = _unresponsive(body.get("unresponsive_engines"), response.redact)
        if dead:
            raise ProviderFailure(f"0 results (unresponsive engines: {dead})", UPSTREAM_ERROR)
    return ProviderAnswer(items=items)


def _unresponsive(value: object, redact: Callable[[str], str]) -> str:
    """``[[engine, reason], …]`` → ``"engine: reason; …"`` (redacted, then bounded)."""
    if not isinstance(value, list):
        return ""
    parts = []
    for pair in value[:10]:
        if isinstance(pair, list) and pair and isinstance(pair[0], str):
            reason = pair[1] if len(pair) > 1 and isinstance(pair[1], str) else "unresponsive"
            parts.append(f"{redact(pair[0])[:40]}: {redact(reason)[:80]}")
    return "; ".join(parts)
