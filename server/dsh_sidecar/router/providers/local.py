"""The offline docs index: SQLite FTS5 over this machine's documentation, the chain's last resort.

Not a web search: :mod:`dsh_sidecar.router.localdocs` answers the request in-process (a
thread, never the event loop) from an index in the cache directory of the project's docs,
the installed Python distributions' descriptions and module docstrings, the Python language
reference topics, man pages and the results earlier web searches fetched. Here, as for every
provider, only the two pure halves: the request (the user's words as an FTS5 expression) and
the parse of the answer (a JSON document, the same shape whatever built it).

Never auto-detected (:data:`AUTO_DETECT`): the zero-config chain stays the search-router
seed's seven providers. ``dsh-search query`` appends it to its chain unless told not to
(``--no-local``, ``router.localFallback: false``); a served chain (``serve``, ``mcp``) has it
only when asked (``router.localFallback: true``, or ``local`` in ``order``): docs/SCHEME.md.
"""

from __future__ import annotations

import re
from typing import Final

from dsh_sidecar.router.normalize import RawItem
from dsh_sidecar.router.providers.base import (
    BAD_RESPONSE,
    UPSTREAM_ERROR,
    AuthKind,
    HttpRequest,
    HttpResponse,
    ProviderAnswer,
    ProviderDefaults,
    ProviderFailure,
    ProviderSpec,
    RateLimit,
    items_list,
    parse_json,
)

ID: Final = "local"
#: After the seed's seven (it is never in the canonical auto-detection order).
POSITION: Final = 7
#: Not put in a zero-config chain (the search-router seed's auto-detection is the seven others).
AUTO_DETECT: Final = False
#: Answered in-process by :mod:`dsh_sidecar.router.localdocs`, not over HTTP.
TRANSPORT: Final = "local"
#: The request's URL: the index, not an endpoint (no key, nothing to configure).
INDEX_URL: Final = "local:docs-index"
DEFAULTS: Final = ProviderDefaults(None, INDEX_URL)
AUTH_KIND: Final = AuthKind.BEARER  # unused: keyless and never sent anywhere
RATE_LIMIT: Final[RateLimit | None] = None
HTML_FIELDS: Final[frozenset[str]] = frozenset()
#: URL schemes its sources carry: web pages (a package's documentation, an earlier web
#: result), ``file:`` (a project doc, a module) and ``man:`` (a man page).
URL_SCHEMES: Final = ("http", "https", "file", "man")

#: Words dropped from an FTS5 expression: they match everything and rank nothing.
STOPWORDS: Final = frozenset(
    "a an and are as at be by can do does for from how i in is it of on or the to what when where which who why "
    "with without you your my me this that these those not no yes".split()
)
#: Most words of a query kept (the longest first), so an expression stays small.
MAX_TERMS: Final = 12
_WORD: Final = re.compile(r"\w+", re.UNICODE)


def match_expression(query: str) -> str:
    """The FTS5 expression of ``query``: each distinct word (not a stopword, at least two
    characters, at most :data:`MAX_TERMS`, the longest kept) as a quoted string, joined with
    ``OR`` (ranked by bm25, so documents with more and rarer words come first). Quoting makes
    every word a plain term: FTS5 syntax in the query (``NEAR``, ``*``, ``:``, ``"``) is text."""
    words: list[str] = []
    for w in _WORD.findall(query.lower()):
        if len(w) >= 2 and w not in STOPWORDS and w not in words:
            words.append(w)
    if len(words) > MAX_TERMS:
        keep = set(sorted(words, key=len, reverse=True)[:MAX_TERMS])
        words = [w for w in words if w in keep]
    return " OR ".join(f'"{w}"' for w in words)


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The index request: the FTS5 expression of ``query`` and the count wanted."""
    return HttpRequest(
        method="SEARCH", url=spec.base_url, params={"match": match_expression(query), "limit": str(max_results)}
    )


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """``{"results": [{url, title, snippet, source}], "building": bool}`` → items. An empty
    index still being built is an ``upstream_error`` (try again shortly), not an empty answer."""
    if response.status != 200:
        raise ProviderFailure(f"offline docs index unavailable ({response.status})", UPSTREAM_ERROR)
    body = parse_json(response)
    rows = items_list(body, "results")
    if not rows and body.get("building") and not body.get("docs"):
        raise ProviderFailure("offline docs index still being built (try again shortly)", UPSTREAM_ERROR)
    if not isinstance(body.get("docs", 0), int):
        raise ProviderFailure("unexpected JSON shape (docs is not a count)", BAD_RESPONSE)
    return ProviderAnswer(
        items=[RawItem(url=r.get("url"), title=r.get("title"), snippet=r.get("snippet")) for r in rows]
    )
