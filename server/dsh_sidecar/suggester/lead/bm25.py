r"""Okapi BM25 of a task's search terms over the code (the task lead's ``bm25`` and ``title``
features, ``docs/SCHEME.md``, "The task lead").

The documents are the code files of the symbol index, each its identifier tokens with their
counts (``SymbolIndex.refs``: every ``[A-Za-z_]\w+`` token of a code file, comments and strings
included) and its length (``SymbolIndex.lengths``). A search term (``mentions.search_terms``:
lower-case, an identifier whole and as its parts) matches a token whose lower-case form is the
term or has it as a camelCase/snake_case part, so ``writer`` counts the occurrences of
``JsonWriter`` and ``new_writer`` alike — the code-aware tokenization of code search and of
SWE-bench's BM25 retrieval, read from the index the sidecar already has.

Bounded work: one pass over the index's vocabulary (:func:`term_keys`), then the postings of
the rarest terms first, at most :data:`MAX_POSTINGS` of them; a term in more than
:data:`MAX_DF_SHARE` of the files is left out (it ranks nothing and costs the most).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Collection, Mapping
from typing import Final

#: Lucene's (Pyserini's) parameters: term frequency saturates early, a file's length weighs
#: little (a short issue against whole files).
K1: Final = 0.9
B: Final = 0.4
#: A term in more than this share of the files is left out.
MAX_DF_SHARE: Final = 0.25
#: Postings read per ranking at most (the rarest terms first).
MAX_POSTINGS: Final = 400_000
#: The parts of an identifier (as ``mentions.search_terms`` splits them).
_PART: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def term_keys(refs: Mapping[str, Mapping[str, int]], terms: Collection[str]) -> dict[str, list[str]]:
    """Search term → the identifier tokens of the code it matches: the token lower-cased, or
    one of its camelCase/snake_case parts (``writer`` matches ``JsonWriter``, ``new_writer``).
    One pass over the vocabulary of ``refs``."""
    out: dict[str, list[str]] = defaultdict(list)
    for key in refs:
        low = key.lower()
        if low in terms:
            out[low].append(key)
        if key.islower() and key.isalpha():  # a plain lower-case word is its only part
            continue
        for part in dict.fromkeys(p.lower() for p in _PART.findall(key)):
            if part != low and part in terms:
                out[part].append(key)
    return out


def bm25_scores(
    terms: Mapping[str, int],
    keys: Mapping[str, list[str]],
    refs: Mapping[str, Mapping[str, int]],
    lengths: Mapping[str, int],
) -> dict[str, float]:
    """File → Okapi BM25 of ``terms`` (term → how often the query has it) whose matching tokens
    are ``keys`` (:func:`term_keys`), over the files of ``lengths``."""
    n = len(lengths)
    if not terms or not n:
        return {}
    avgdl = max(1.0, sum(lengths.values()) / n)
    cap = max(50, MAX_DF_SHARE * n)
    plan = []
    for term, tokens in keys.items():
        if term in terms:
            size = sum(len(refs[k]) for k in tokens if k in refs)
            if size <= cap:
                plan.append((size, term, tokens))
    plan.sort(key=lambda t: (t[0], t[1]))
    budget = MAX_POSTINGS
    acc: dict[str, float] = defaultdict(float)
    norm = K1 * (1 - B)
    slope = K1 * B / avgdl
    for size, term, tokens in plan:
        budget -= size
        if budget < 0:
            break
        tf: dict[str, int] = defaultdict(int)
        for k in tokens:
            for f, c in refs.get(k, {}).items():
                tf[f] += c
        df = len(tf)
        weight = terms[term] * math.log(1.0 + (n - df + 0.5) / (df + 0.5))
        for f, c in tf.items():
            acc[f] += weight * c * (K1 + 1) / (c + norm + slope * lengths.get(f, avgdl))
    return acc
