"""Which returned sources an answer used: the URLs an answer cites, and the key a URL is
compared (and kept for feedback) by.

An answer *uses* a search when it cites one of the search's sources: a markdown link
``[title](https://…)``, an autolink ``<https://…>`` or a bare ``https://…``. URLs are compared
by :func:`url_key`, a short digest of :func:`~.arms.normalise_url` (scheme/host case, default
port, trailing ``/``, fragment and ``utm_*`` ignored), so a search waiting for feedback keeps
16 hex characters per source, never its URLs (they would tell what was searched).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from typing import Final

from dsh_sidecar.bandit.arms import normalise_url

#: Longest answer text read for citations, characters (the rest is not looked at).
MAX_ANSWER_CHARS: Final = 200_000
#: Most URLs taken from one answer or one feedback.
MAX_CITED_URLS: Final = 1000
#: Longest URL compared, characters (a longer one is not a source any provider returned).
MAX_URL_CHARS: Final = 4096

# http(s) URL up to whitespace or a character that cannot end one in running text or markdown
_URL = re.compile(r"https?://[^\s<>\"'`\\{}|^\[\]]+", re.IGNORECASE)
_TRAILING = ".,;:!?*_~"


def _trim(url: str) -> str:
    """``url`` without the punctuation of the sentence around it: trailing ``.,;:!?*_~``, and a
    closing ``)`` the URL did not open (markdown's ``[t](url)``, a parenthesised URL) — a
    balanced one stays (``…/wiki/Chain_(unit)``). Linear: the parentheses are counted once and
    the end moved back (counting them again for each ``)`` taken off, and copying the URL each
    time, was quadratic: a URL and 40,000 ``)`` took 2.4 s)."""
    opened, closed = url.count("("), url.count(")")
    end = len(url)
    while end:
        last = url[end - 1]
        if last in _TRAILING:
            end -= 1
        elif last == ")" and closed > opened:
            closed -= 1
            end -= 1
        else:
            break
    return url[:end]


def cited_urls(text: str) -> list[str]:
    """The http(s) URLs ``text`` cites, in order, each once, at most :data:`MAX_CITED_URLS`
    (only the first :data:`MAX_ANSWER_CHARS` characters are read)."""
    seen: set[str] = set()
    out: list[str] = []
    for match in _URL.finditer(text[:MAX_ANSWER_CHARS]):
        url = _trim(match.group(0))
        if len(url) > len("https://") and url not in seen:
            seen.add(url)
            out.append(url)
            if len(out) >= MAX_CITED_URLS:
                break
    return out


def url_key(url: str) -> str:
    """The comparison key of ``url``: 16 hex characters of the BLAKE2b digest of its
    normalised form (:func:`~.arms.normalise_url`)."""
    return hashlib.blake2b(normalise_url(url[:MAX_URL_CHARS]).encode("utf-8", "replace"), digest_size=8).hexdigest()


def url_keys(urls: Iterable[str], limit: int = MAX_CITED_URLS) -> frozenset[str]:
    """:func:`url_key` of the first ``limit`` ``urls`` that are strings."""
    keys: set[str] = set()
    for n, url in enumerate(urls):
        if n >= limit:
            break
        if isinstance(url, str):
            keys.add(url_key(url))
    return frozenset(keys)
