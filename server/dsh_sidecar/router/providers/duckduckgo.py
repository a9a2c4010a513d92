"""DuckDuckGo: ``POST {base}/html/`` with form field ``q`` (the keyless HTML endpoint).

The page is parsed per result block (``div.result``): the title link ``a.result__a`` and the
``a.result__snippet`` *of the same block*, never paired by position across the page. Links
``//duckduckgo.com/l/?uddg=<target>&rut=…`` are unwrapped to the ``uddg`` value; ads
(``result--ad`` blocks, links to ``duckduckgo.com/y.js`` direct or as the ``uddg`` target)
are dropped. The anti-bot challenge page (``form#challenge-form``, ``anomaly-modal``), served
as 202 or 200, is a ``blocked`` failure, never "0 results". No dates are available.
Parsing follows what SearXNG's DuckDuckGo engine and ddgs do with the same page.
"""

from __future__ import annotations

from html import escape
from typing import TYPE_CHECKING, Final
from urllib.parse import parse_qs, urlsplit

from dsh_sidecar.router.normalize import RawItem
from dsh_sidecar.router.providers.base import (
    BAD_RESPONSE,
    BLOCKED,
    AuthKind,
    HttpRequest,
    HttpResponse,
    ProviderAnswer,
    ProviderDefaults,
    ProviderFailure,
    ProviderSpec,
    RateLimit,
    join_url,
    status_failure,
)

if TYPE_CHECKING:
    from lxml import etree

ID: Final = "duckduckgo"

_BLOCK_XPATH: Final = "//div[contains(concat(' ', normalize-space(@class), ' '), ' result ')]"


#: Position in the seed's canonical auto-detection order (0-based).
POSITION: Final = 6
#: Seed table "Supported providers" and "Full schema" defaults.
DEFAULTS: Final = ProviderDefaults(None, "https://html.duckduckgo.com")
AUTH_KIND: Final = AuthKind.BASIC_FROM_URL
#: None declared: no per-second limit we could cite for the default plan (a 429 still cools down).
RATE_LIMIT: Final[RateLimit | None] = None
#: Fields this provider documents as HTML (parsed as markup by the normaliser).
HTML_FIELDS: Final[frozenset[str]] = frozenset({"title", "snippet"})


def _has_class(el: etree._Element, name: str) -> bool:
    return name in (el.get("class") or "").split()


def build_request(spec: ProviderSpec, query: str, max_results: int) -> HttpRequest:
    """The form POST; DuckDuckGo has no count control (about 10 a page)."""
    return HttpRequest(
        method="POST",
        url=join_url(spec.base_url, "/html/"),
        headers={"Accept": "text/html"},
        form={"q": query, "b": "", "kl": "wt-wt"},
    )


def unwrap_link(href: str) -> str | None:
    """The real target of a result link: the ``uddg`` value percent-decoded once, or the
    link itself when it is direct; ``None`` for ads (``duckduckgo.com/y.js``)."""
    href = href.strip()
    if href.startswith("//"):
        href = "https:" + href
    parts = urlsplit(href)
    host = (parts.hostname or "").lower()
    if host.endswith("duckduckgo.com") and parts.path == "/l/":
        target = parse_qs(parts.query).get("uddg", [None])[0]
        if not target:
            return None
        href = target
        parts = urlsplit(href)
        host = (parts.hostname or "").lower()
    if host.endswith("duckduckgo.com") and parts.path.startswith("/y.js"):
        return None
    return href


def _is_challenge(doc: etree._Element) -> bool:
    return bool(doc.xpath("//form[@id='challenge-form']") or doc.xpath("//*[contains(@class, 'anomaly-modal')]"))


def parse_response(response: HttpResponse, max_results: int) -> ProviderAnswer:
    """Items from the result blocks of the HTML page.

    Raises :class:`ProviderFailure`: a challenge page → ``blocked`` (``blocked (HTTP 202
    challenge)`` or ``blocked (challenge page)``); another non-2xx → by status; no HTML →
    ``bad_response``.
    """
    if not 200 <= response.status < 300:
        raise status_failure(response)
    import lxml.html  # lazy: not needed before the first DuckDuckGo answer (cold start)
    from lxml import etree

    text = response.text()
    if not text.strip():
        raise ProviderFailure("empty response body", BAD_RESPONSE)
    try:
        doc = lxml.html.document_fromstring(text)
    except (etree.ParserError, ValueError):
        raise ProviderFailure("unparseable HTML response", BAD_RESPONSE) from None
    if _is_challenge(doc):
        where = "HTTP 202 challenge" if response.status == 202 else "challenge page"
        raise ProviderFailure(f"blocked ({where})", BLOCKED, None)
    if response.status == 202:
        raise ProviderFailure("blocked (HTTP 202)", BLOCKED, None)
    items: list[RawItem] = []
    for block in doc.xpath(_BLOCK_XPATH):
        if _has_class(block, "result--ad") or _has_class(block, "result--no-result"):
            continue
        links = block.xpath(".//a[contains(concat(' ', normalize-space(@class), ' '), ' result__a ')]")
        if not links:
            continue
        url = unwrap_link(links[0].get("href") or "")
        if url is None:
            continue
        snippets = block.xpath(".//*[contains(concat(' ', normalize-space(@class), ' '), ' result__snippet ')]")
        items.append(
            RawItem(
                url=url,
                title=_text(links[0]),
                snippet=_text(snippets[0]) if snippets else None,
            )
        )
    return ProviderAnswer(items=items)


def _text(el: etree._Element) -> str:
    """The element's text with markup removed and entities decoded, escaped again for the
    normaliser (which strips tags and decodes entities itself)."""
    return escape(el.text_content(), quote=False)
