"""Perplexity Search API: ``POST {base}/search`` with ``Authorization: Bearer``
(https://docs.perplexity.ai/api-reference/search-post).

The body carries ``query`` and ``max_results`` (``min(maxResults, 20)``, the documented
range 1–20). Items are ``results[]`` with ``title``, ``url``, ``snippet`` and ``date``; the
publication date is ``date`` only (``last_updated`` is not a publication date).
"""

from __future__ import annotations

from typing import Final

from dsh_sidecar.router.normalize import RawItem
from dsh_sidecar.router.providers.base import (
    AuthKind,
    HttpRequest,
    HttpResponse,
    ProviderAnswer,
    ProviderDefaults,
    ProviderSpec,
    RateLimit,
    items_list,
    join_url,
    parse_json,
    status_failure,
)

ID: Final = "perplexity"
#: Perplexity's documented maximum of ``max_results``.
MAX_COUNT: Final = 20


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 3
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults("PPLX_API_KEY", "https://api.perplexity.ai", model="sonar", max_count=MAX_COUNT)
AUTH_KIND: Final = AuthKind.BEARER
#: None declared: no per-second limit we could cite for the default plan (a 429 still cools down).
RATE_LIMIT: Final[RateLimit | None] = None
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset()


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The JSON search request (key as a Bearer token). The Search API takes no model."""
    return HttpRequest(
        method="POST",
        url=join_url(spec.base_url, "/search"),
        headers={"Authorization": f"Bearer {spec.api_key or ''}", "Accept": "application/json"},
        json={"query": query, "max_results": min(max_results, MAX_COUNT)},
    )


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Items from ``results[]`` (``url``, ``title``, ``snippet``, ``date``).

    Raises :class:`ProviderFailure`: non-2xx → by status (an HTML error page is never
    quoted), non-JSON or no ``results`` list → ``bad_response``.
    """
    if not 200 <= response.status < 300:
        raise status_failure(response)
    results = items_list(parse_json(response), "results")
    return ProviderAnswer(
        items=[
            RawItem(url=r.get("url"), title=r.get("title"), snippet=r.get("snippet"), published=r.get("date"))
            for r in results
        ]
    )
