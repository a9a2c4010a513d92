"""Raw provider items → sources ``{url, title?, snippet?, publishedAt?}``.

Rules (``shared/fixtures/providers/README.md``, "Normalisation rules"): an item without a
URL is dropped; duplicate URLs (exact string) are dropped, first wins; title and snippet have
tags stripped, then HTML entities decoded, then whitespace runs folded to one space and the
ends trimmed (empty → absent); snippets over 400 characters keep 400 plus ``…``;
``publishedAt`` is the provider's own date string, kept verbatim when it parses as a
calendar date and is at most 40 characters; the list is capped at ``max_results`` with
``truncated`` true only when the cap dropped usable items.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from datetime import datetime
from email.utils import parsedate_to_datetime
from typing import Any, Final

from dsh_protocol import Source

#: Snippet cap in characters; the seed's reference implementation uses the same value.
SNIPPET_MAX_CHARS: Final = 400
#: Longest accepted date string (fixtures README).
DATE_MAX_CHARS: Final = 40
#: Longest URL kept (browsers and CDNs cap near 8 KiB; longer is junk).
URL_MAX_CHARS: Final = 8192
#: Longest title kept, characters.
TITLE_MAX_CHARS: Final = 500

_TAG = re.compile(r"<[^>]*>")
_WS = re.compile(r"\s+")
_DATE_FORMATS: Final = ("%Y-%m-%d %H:%M:%S", "%Y/%m/%d", "%d %B %Y", "%B %d, %Y", "%b %d, %Y", "%d %b %Y")


@dataclass
class RawItem:
    """One result as a provider gave it, before normalisation (fields may be any JSON)."""

    url: Any
    title: Any = None
    snippet: Any = None
    published: Any = None


def clean_text(value: Any, cap: int | None = None) -> str | None:
    """Strip tags, decode entities, fold whitespace; ``None`` when nothing is left.

    ``cap`` keeps the first ``cap`` characters followed by ``…`` (U+2026).
    """
    if not isinstance(value, str):
        return None
    text = _TAG.sub("", value)
    text = html.unescape(text)
    text = _WS.sub(" ", text).strip()
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


def _clean_url(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    url = value.strip()
    if not url or len(url) > URL_MAX_CHARS:
        return None
    if not (url.startswith("http://") or url.startswith("https://")):
        return None
    return url


def normalize(items: list[RawItem], max_results: int) -> tuple[list[Source], bool]:
    """Normalise, de-duplicate and cap ``items``; return ``(sources, truncated)``."""
    seen: set[str] = set()
    usable: list[Source] = []
    for item in items:
        url = _clean_url(item.url)
        if url is None or url in seen:
            continue
        seen.add(url)
        usable.append(
            Source(
                url=url,
                title=clean_text(item.title, TITLE_MAX_CHARS),
                snippet=clean_text(item.snippet, SNIPPET_MAX_CHARS),
                published_at=parse_date(item.published),
            )
        )
    return usable[:max_results], len(usable) > max_results
