"""Reframed query variants for the ``thorough`` arm: deterministic, offline, no LLM.

The thorough arm runs the original query plus two reframings (bandit seed). Rather than
appending fixed words, each reframing changes what the query asks the engine for:

1. **keywords** – the query without question words, stop words and filler
   ("how do I configure X in Y?" → "configure X Y"): engines rank pages that *contain* the
   key terms, and question phrasing often drags in Q&A farms.
2. **facet** – the key terms plus one facet picked from the query's shape: a how-to gets
   ``tutorial example``, a comparison gets ``comparison differences``, an error message gets
   ``fix``, a recency query keeps its year/"latest" and gets ``release notes``, anything else
   gets ``overview``.

A variant equal to the original (or to the other variant) is dropped, so the arm never
sends the same query twice.
"""

from __future__ import annotations

import re
from typing import Final

from dsh_sidecar.lazyre import LazyPattern

_STOP: Final = frozenset(
    """a an the of in on for to and or is are was were be been do does did i we you my our
    your how what why when where which who whom whose can could should would will shall may
    might must please with about into from at by as it its this that these those there here
    me us get got any some""".split()
)
_WORD = re.compile(r'"[^"]+"|[\w][\w.+#/-]*', re.UNICODE)


def keywords(query: str) -> str:
    """The query's key terms in order: quoted phrases kept, stop words dropped."""
    terms = []
    for match in _WORD.finditer(query):
        token = match.group(0)
        if token.startswith('"') or token.lower() not in _STOP:
            terms.append(token)
    return " ".join(terms)


#: The facets' query shapes, in the order :func:`facet` tries them; compiled on first use or
#: by :func:`warm` (the search path's preparation: ~2–3 ms of a first thorough search otherwise).
_FACETS: Final = (
    (LazyPattern(r"\b(vs\.?|versus|compare|comparison|difference|better than)\b"), "comparison differences"),
    (LazyPattern(r"\b(error|exception|traceback|failed|fails|cannot|can't|segfault)\b"), "fix"),
    (LazyPattern(r"\b(latest|newest|today|news|release|released|20\d\d)\b"), "release notes"),
    (LazyPattern(r"^\s*(how|steps|guide)\b|\bhow to\b"), "tutorial example"),
)


def facet(query: str) -> str:
    """One facet word set chosen from the query's shape (see module docstring)."""
    q = query.lower()
    for shape, words in _FACETS:
        if shape.search(q):
            return words
    return "overview"


def warm() -> None:
    """Compile the facets' patterns now (off the event loop: the search path's preparation)."""
    for shape, _ in _FACETS:
        shape.compiled  # noqa: B018  (compiles and keeps it)


def reframe(query: str) -> list[str]:
    """The thorough arm's queries: ``[original, keywords, keywords + facet]``, duplicates removed."""
    original = " ".join(query.split())
    key = keywords(original) or original
    variants = [original, key, f"{key} {facet(original)}"]
    out: list[str] = []
    seen: set[str] = set()
    for v in variants:
        norm = v.lower()
        if norm not in seen:
            seen.add(norm)
            out.append(v)
    return out
