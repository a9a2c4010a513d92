"""Raw provider items → sources ``{url, title?, snippet?, publishedAt?}``.

Rules (``shared/fixtures/providers/README.md``, "Normalisation rules"): an item without a
URL is dropped; duplicate URLs (exact string) are dropped, first wins; title and snippet have
HTML entities decoded, markup removed from the fields the provider documents as HTML (its
``HTML_FIELDS``, parsed with lxml's HTML parser), and from every other field only the
highlight a search engine wraps around query words — a known inline formatting element with
its closing tag (``<b>…</b>``, ``<span class="x">…</span>``: :func:`strip_format_tags`), so
``Vec<T>``, ``a < b`` and ``<T extends X>`` in a plain-text field stay text — then whitespace
runs folded to one space and the ends trimmed (empty → absent); every field is then redacted (before any cut); snippets over 400 characters keep 400
plus ``…``;
``publishedAt`` is the provider's own date string, kept verbatim when it parses as a
calendar date and is at most 40 characters; the list is capped at ``max_results`` with
``truncated`` true only when the cap dropped usable items. Items past the first
``max_results + 1`` usable ones are never normalised (a 2,000-result body costs what 6 do).
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from dsh_protocol import Source

#: Snippet cap in characters; the seed's reference implementation uses the same value.
SNIPPET_MAX_CHARS: Final = 400
#: Longest accepted date string (fixtures README).
DATE_MAX_CHARS: Final = 40
#: Longest URL kept (browsers and CDNs cap near 8 KiB; longer is junk).
URL_MAX_CHARS: Final = 8192
#: Longest title kept, characters.
TITLE_MAX_CHARS: Final = 500

#: Characters the HTML parser refuses (C0 controls but TAB/LF/CR, and DEL): whitespace.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_DATE_FORMATS: Final = ("%Y-%m-%d %H:%M:%S", "%Y/%m/%d", "%d %B %Y", "%B %d, %Y", "%b %d, %Y", "%d %b %Y")


@dataclass
class RawItem:
    """One result as a provider gave it, before normalisation (fields may be any JSON)."""

    url: Any
    title: Any = None
    snippet: Any = None
    published: Any = None


#: Inline formatting elements a search engine's highlighting uses (SearXNG passes its engines'
#: ``<b>``/``<em>``/``<span class="highlight">``, Brave ``<strong>``): stripped from plain-text
#: fields when opened and closed (:func:`strip_format_tags`).
FORMAT_TAGS: Final = frozenset(
    {"b", "strong", "i", "em", "u", "s", "strike", "del", "ins", "mark", "small", "big", "sub", "sup",
     "span", "font", "tt", "code", "kbd", "samp", "var"}
)  # fmt: skip
#: One formatting tag: an opening one with well-formed attributes (``name``, ``name=value``,
#: ``name="…"``, ``name='…'``; so ``<b && c>`` in code is no tag) or a closing one. Linear:
#: an attribute name must follow whitespace, so no text splits two ways.
_FORMAT_TAG = re.compile(
    r"<(/?)(" + "|".join(sorted(FORMAT_TAGS, key=len, reverse=True)) + r")"
    r"((?:\s+[A-Za-z_:][-\w:.]*(?:\s*=\s*(?:\"[^\"<>]*\"|'[^'<>]*'|[^\s\"'=<>`]+))?)*)\s*>",
    re.IGNORECASE,
)


def strip_format_tags(text: str) -> str:
    """``text`` without the search-highlight markup in it: each opening tag of a
    :data:`FORMAT_TAGS` element that a closing tag of the same element follows is removed with
    that closing tag (nesting matched per element, like an HTML parser's open-element stack);
    every other ``<`` stays text: ``Vec<T>``, ``a < b``, ``<T extends X>``, ``List<i>`` with no
    ``</i>``, a closing tag without an opening one. Entities are not decoded here (``&lt;b&gt;``
    is text meaning ``<b>``; decode after this). Linear in the text's length."""
    if "<" not in text:
        return text
    tags = list(_FORMAT_TAG.finditer(text))
    if not tags:
        return text
    open_: dict[str, list[int]] = {}
    drop: list[int] = []
    for i, m in enumerate(tags):
        name = m.group(2).lower()
        if not m.group(1):
            open_.setdefault(name, []).append(i)
        elif m.group(3):  # a closing tag has no attributes: this is text
            continue
        elif open_.get(name):
            drop += (open_[name].pop(), i)
    if not drop:
        return text
    out: list[str] = []
    pos = 0
    for i in sorted(drop):
        m = tags[i]
        out.append(text[pos : m.start()])
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def html_to_text(value: str) -> str:
    """The text of an HTML fragment: markup removed, entities and character references
    decoded (lxml's HTML parser, which knows void elements, comments and broken markup)."""
    from lxml import etree  # lazy: only HTML fields need it
    from lxml import html as lxml_html

    value = _CONTROL.sub(" ", value)
    try:
        return lxml_html.fragment_fromstring(value, create_parent="div").text_content()
    except (etree.ParserError, ValueError):
        return ""


#: A UTF-16 surrogate code point: in a decoded ``str`` it can only be a lone one (JSON's
#: ``"\\ud800"`` escape decodes to it; a valid pair decodes to one code point), which no UTF-8
#: encoder accepts (the CLI's output, a strict JSON reader of ``dsh/search`` replies).
_SURROGATE = re.compile("[\ud800-\udfff]")


def no_lone_surrogates(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (the replacement character); the
    same object when it has none (an ASCII string cannot: told without the regex search)."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def _identity(text: str) -> str:
    return text


def clean_text(
    value: Any, cap: int | None = None, *, is_html: bool = False, redact: Callable[[str], str] = _identity
) -> str | None:
    """Decode entities (and remove markup: all of it when ``is_html``, else the search highlight
    of :func:`strip_format_tags`), fold whitespace, redact, cut; ``None`` when nothing is left.

    ``cap`` keeps the first ``cap`` characters followed by ``…`` (U+2026); ``redact`` runs
    before the cut, so a cut never leaves part of a secret.
    """
    if not isinstance(value, str):
        return None
    text = no_lone_surrogates(html_to_text(value) if is_html else html.unescape(strip_format_tags(value)))
    # whitespace runs folded and the ends trimmed: str.split() splits on exactly the characters
    # re's \s matches in a str pattern (both Py_UNICODE_ISSPACE), so this is
    # re.sub(r"\s+", " ", text).strip() (tests/unit/router/test_router_snippets.py checks every code point)
    # at a fifth of its cost
    text = redact(" ".join(text.split()))
    if not text:
        return None
    if cap is not None and len(text) > cap:
        text = text[:cap].rstrip() + "…"
    return text


def parse_date(value: Any) -> str | None:
    """Return ``value`` verbatim when it is a date string of at most 40 characters, else ``None``.

    Accepted: ISO-8601 (date or date-time, ``Z`` suffix included), RFC 2822 (HTTP dates) and a
    few spelled-out forms (``15 March 2024``). Relative ages ("3 days ago") are not dates.
    """
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > DATE_MAX_CHARS or not any(c.isdigit() for c in text):
        return None
    iso = text[:-1] + "+00:00" if text.endswith("Z") else text
    try:
        datetime.fromisoformat(iso)
        return value
    except ValueError:
        pass
    try:
        parsedate_to_datetime(text)
        return value
    except (TypeError, ValueError, IndexError):
        pass
    for fmt in _DATE_FORMATS:
        try:
            datetime.strptime(text, fmt)
            return value
        except ValueError:
            continue
    return None


#: The URL schemes a web provider's item may carry (others are dropped).
WEB_SCHEMES: Final = ("http", "https")


def _clean_url(value: Any, redact: Callable[[str], str], schemes: Collection[str] = WEB_SCHEMES) -> str | None:
    if not isinstance(value, str):
        return None
    url = no_lone_surrogates(value.strip())
    if not url or len(url) > URL_MAX_CHARS:
        return None
    if not any(url.startswith(f"{scheme}:") for scheme in schemes):
        return None
    if url.startswith(("http:", "https:")) and not url.startswith(("http://", "https://")):
        return None
    return redact(url)


def normalize(
    items: list[RawItem],
    max_results: int,
    redact: Callable[[str], str] = _identity,
    html_fields: Collection[str] = (),
    schemes: Collection[str] = WEB_SCHEMES,
) -> tuple[list[Source], bool]:
    """Normalise, de-duplicate and cap ``items``; return ``(sources, truncated)``.

    ``html_fields`` names the fields (``title``, ``snippet``) given as HTML; ``redact`` is
    applied to every string kept (url, title, snippet, publishedAt); an item whose URL is not
    of one of ``schemes`` (default http and https) is dropped. Stops after
    ``max_results + 1`` usable items (the one past the cap only tells ``truncated``).
    """
    # here, not at the top: the provider registry (read by the config parser before the
    # ``initialize`` reply) imports this module, and needs none of the wire models
    from dsh_protocol import Source

    seen: set[str] = set()
    usable: list[Source] = []
    title_html, snippet_html = "title" in html_fields, "snippet" in html_fields
    for item in items:
        url = _clean_url(item.url, redact, schemes)
        if url is None or url in seen:
            continue
        seen.add(url)
        if len(usable) == max_results:
            return usable, True
        published = parse_date(item.published)
        usable.append(
            Source(
                url=url,
                title=clean_text(item.title, TITLE_MAX_CHARS, is_html=title_html, redact=redact),
                snippet=clean_text(item.snippet, SNIPPET_MAX_CHARS, is_html=snippet_html, redact=redact),
                published_at=redact(published) if published else None,
            )
        )
    return usable, False
