"""DeepSeek: the Anthropic-compatible ``POST {base}/messages`` with the ``web_search_20250305``
server tool (https://api-docs.deepseek.com/guides/anthropic_api; block types of the Anthropic
Messages API's web search tool).

The key goes both as ``x-api-key`` and as a Bearer token, with ``anthropic-version:
2023-06-01``. There is no result-count parameter (the chain truncates). Sources come from
the ``web_search_tool_result`` blocks (``content`` is a list of ``web_search_result`` items:
``url``, ``title``, ``page_age``), in block order; the snippet of a URL is the first
``cited_text`` for it among the text blocks' ``citations``. A result block whose ``content``
is an object ``{type: web_search_tool_result_error, error_code}`` is a failure naming the
code. The model's text (the text blocks joined) is returned as ``content``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from dsh_sidecar.router.normalize import RawItem
from dsh_sidecar.router.providers.base import (
    BAD_RESPONSE,
    RATE_LIMITED,
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

ID: Final = "deepseek"
#: Anthropic API version header value (Anthropic Messages API).
ANTHROPIC_VERSION: Final = "2023-06-01"
#: The server tool's type and name (Anthropic web search tool).
TOOL: Final = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
#: Output token budget of the answer (the seed's reference value).
MAX_TOKENS: Final = 4096
#: Default model (seed "Full schema": ``model: deepseek-v4-flash``).
DEFAULT_MODEL: Final = "deepseek-v4-flash"
#: Longest ``error_code`` quoted in a reason, characters (the value is untrusted).
ERROR_CODE_MAX_CHARS: Final = 60
#: Error codes of the web search tool that mean "slow down" (Anthropic web search tool docs).
RATE_LIMIT_CODES: Final = frozenset({"too_many_requests"})


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 4
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults("DEEPSEEK_API_KEY", "https://api.deepseek.com/anthropic/v1", model=DEFAULT_MODEL)
AUTH_KIND: Final = AuthKind.HEADER
#: None declared: no per-second limit we could cite for the default plan (a 429 still cools down).
RATE_LIMIT: Final[RateLimit | None] = None
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset()


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The Messages request asking the model to search ``query`` with the server tool."""
    key = spec.api_key or ""
    return HttpRequest(
        method="POST",
        url=join_url(spec.base_url, "/messages"),
        headers={
            "x-api-key": key,
            "Authorization": f"Bearer {key}",
            "anthropic-version": ANTHROPIC_VERSION,
            "Accept": "application/json",
        },
        json={
            "model": spec.model or DEFAULT_MODEL,
            "max_tokens": MAX_TOKENS,
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": f"Perform a web search for the query: {query}"}]}
            ],
            "tools": [dict(TOOL)],
        },
    )


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Sources from the tool result blocks, snippets from citations, text as content.

    Raises :class:`ProviderFailure`: an error block → ``web_search error <error_code>``
    (``rate_limited`` for ``too_many_requests``, else ``upstream_error``); non-2xx → by
    status; a body without a ``content`` list → ``bad_response``.
    """
    if not 200 <= response.status < 300:
        raise status_failure(response)
    body = parse_json(response)
    blocks = body.get("content") if isinstance(body, dict) else None
    if not isinstance(blocks, list):
        raise ProviderFailure("unexpected JSON shape (no content list)", BAD_RESPONSE)
    results: list[dict[str, Any]] = []
    cited: dict[str, str] = {}
    texts: list[str] = []
    for block in blocks:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind == "web_search_tool_result":
            content = block.get("content")
            if isinstance(content, dict):
                raise _error_block(content, response.redact)
            if isinstance(content, list):
                results += [r for r in content if isinstance(r, dict)]
        elif kind == "text":
            if isinstance(block.get("text"), str):
                texts.append(block["text"])
            for citation in block.get("citations") or []:
                if not isinstance(citation, dict):
                    continue
                url, text = citation.get("url"), citation.get("cited_text")
                if isinstance(url, str) and isinstance(text, str) and url not in cited:
                    cited[url] = text
    items = [
        RawItem(
            url=r.get("url"),
            title=r.get("title"),
            snippet=cited.get(r["url"]) if isinstance(r.get("url"), str) else None,
            published=r.get("page_age"),
        )
        for r in results
    ]
    content = "".join(texts).strip() or None
    return ProviderAnswer(items=items, content=content if items else None)


def _error_block(content: dict[str, Any], redact: Callable[[str], str]) -> ProviderFailure:
    code = content.get("error_code")
    if not isinstance(code, str) or not code.strip():
        return ProviderFailure("web_search error (no error_code)", UPSTREAM_ERROR)
    code = (
        "".join(  # redacted before it is sanitised and cut
            c for c in redact(code).strip() if c.isalnum() or c in "_-."
        )[:ERROR_CODE_MAX_CHARS]
        or "unknown"
    )
    cls = RATE_LIMITED if code in RATE_LIMIT_CODES else UPSTREAM_ERROR
    return ProviderFailure(f"web_search error {code}", cls)
