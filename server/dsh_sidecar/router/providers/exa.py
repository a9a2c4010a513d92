"""Exa: ``POST {base}/search`` with ``x-api-key`` (https://exa.ai/docs/reference/search).

The count goes in ``numResults`` (``min(maxResults, 100)``, Exa's documented ceiling). Exa
returns no page text unless ``contents`` asks for it, so the request always asks for
``contents.text`` capped at :data:`TEXT_MAX_CHARS` characters: that text is the snippet
(fixtures README, "snippet source per provider"). Dates come from ``publishedDate``. Error
bodies are ``{requestId, error, tag}`` (https://exa.ai/docs/admin/error-codes); the reason
carries ``error`` (the chain redacts the key when Exa echoes it back).
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

ID: Final = "exa"
#: Exa's documented maximum of ``numResults``.
MAX_COUNT: Final = 100
#: Characters of page text asked for per result (our choice; the snippet cap is 400 anyway,
#: the extra lets the normaliser cut on its own rule).
TEXT_MAX_CHARS: Final = 1000


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 0
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults("EXA_API_KEY", "https://api.exa.ai", max_count=MAX_COUNT)
AUTH_KIND: Final = AuthKind.HEADER
#: None declared: no per-second limit we could cite for the default plan (a 429 still cools down).
RATE_LIMIT: Final[RateLimit | None] = None
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset()


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The JSON search request (key in ``x-api-key``)."""
    return HttpRequest(
        method="POST",
        url=join_url(spec.base_url, "/search"),
        headers={"x-api-key": spec.api_key or "", "Accept": "application/json"},
        json={
            "query": query,
            "numResults": min(max_results, MAX_COUNT),
            "contents": {"text": {"maxCharacters": TEXT_MAX_CHARS}},
        },
    )


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Items from ``results[]`` (``url``, ``title``, ``text``, ``publishedDate``).

    Raises :class:`ProviderFailure`: non-2xx → by status (401/403 ``auth``, 429
    ``rate_limited`` …), non-JSON or no ``results`` list → ``bad_response``.
    """
    if not 200 <= response.status < 300:
        raise status_failure(response)
    results = items_list(parse_json(response), "results")
    return ProviderAnswer(
        items=[
            RawItem(url=r.get("url"), title=r.get("title"), snippet=r.get("text"), published=r.get("publishedDate"))
            for r in results
        ]
    )
