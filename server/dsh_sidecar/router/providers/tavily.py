"""Tavily: ``POST {base}/search`` with ``Authorization: Bearer``
(https://docs.tavily.com/api-reference/endpoint/search).

The body carries ``query``, ``max_results`` (``min(maxResults, 20)``, Tavily's documented
ceiling) and ``search_depth: basic`` (the seed's choice, one credit a search). Snippets come
from ``content``, dates from ``published_date``. Error bodies are ``{"detail": {"error": …}}``
(as the official tavily-python client reads them). Tavily-specific statuses: 432 (plan limit)
and 433 (pay-as-you-go limit) are ``quota_exhausted``: they will not clear soon.
"""

from __future__ import annotations

from typing import Final

from dsh_sidecar.router.normalize import RawItem
from dsh_sidecar.router.providers.base import (
    QUOTA_EXHAUSTED,
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
    status_failure,
)

ID: Final = "tavily"
#: Tavily's documented maximum of ``max_results``.
MAX_COUNT: Final = 20
#: Tavily's quota statuses (tavily-python: 432 plan limit, 433 pay-as-you-go limit).
QUOTA_STATUSES: Final = frozenset({432, 433})


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 1
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults("TAVILY_API_KEY", "https://api.tavily.com", max_count=MAX_COUNT)
AUTH_KIND: Final = AuthKind.BEARER
#: None declared: no per-second limit we could cite for the default plan (a 429 still cools down).
RATE_LIMIT: Final[RateLimit | None] = None
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset()


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The JSON search request (key as a Bearer token)."""
    return HttpRequest(
        method="POST",
        url=join_url(spec.base_url, "/search"),
        headers={"Authorization": f"Bearer {spec.api_key or ''}", "Accept": "application/json"},
        json={"query": query, "max_results": min(max_results, MAX_COUNT), "search_depth": "basic"},
    )


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Items from ``results[]`` (``url``, ``title``, ``content``, ``published_date``).

    Raises :class:`ProviderFailure`: 432/433 → ``quota_exhausted``; other non-2xx → by status;
    non-JSON or no ``results`` list → ``bad_response``. ``answer`` (when present) is the content.
    """
    if response.status in QUOTA_STATUSES:
        failure = status_failure(response)
        raise ProviderFailure(failure.reason, QUOTA_EXHAUSTED)
    if not 200 <= response.status < 300:
        raise status_failure(response)
    body = parse_json(response)
    results = items_list(body, "results")
    answer = body.get("answer") if isinstance(body.get("answer"), str) else None
    return ProviderAnswer(
        items=[
            RawItem(url=r.get("url"), title=r.get("title"), snippet=r.get("content"), published=r.get("published_date"))
            for r in results
        ],
        content=answer or None,
    )
