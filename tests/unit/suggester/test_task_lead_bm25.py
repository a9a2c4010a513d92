"""The task lead's code search (``lead/bm25.py``, docs/SCHEME.md "The task lead"): a task text's
search terms (``mentions.search_terms``), the tokens of the symbol index each matches, Okapi BM25
over the code files' tokens, and the document lengths the symbol index keeps for it."""

from __future__ import annotations

import math

import pytest
from dsh_sidecar.suggester.lead.bm25 import K1, B, bm25_scores, term_keys
from dsh_sidecar.suggester.lead.mentions import MAX_TERMS, mentions, search_terms
from dsh_sidecar.workspace.symbols import FileSymbols, SymbolIndex

REFS = {
    "JsonWriter": {"a.py": 2},
    "new_writer": {"b.py": 1, "a.py": 1},
    "writer": {"c.py": 3},
    "parser": {"c.py": 1},
    "Writer": {"d.py": 1},
    "unrelated": {"b.py": 4},
}
LENGTHS = {"a.py": 10, "b.py": 5, "c.py": 20, "d.py": 1}


def test_search_terms_split_identifiers_and_count():
    text = "newJsonWriter fails on mul_symbol in the parser: a HTTPServer2 error, the parser again"
    assert search_terms(text) == {
        "newjsonwriter": 1,
        "new": 1,
        "json": 1,
        "writer": 1,
        "fails": 1,
        "mul_symbol": 1,
        "mul": 1,
        "symbol": 1,
        "parser": 2,
        "httpserver2": 1,
        "http": 1,
        "server": 1,
        "error": 1,
        "again": 1,
    }


def test_search_terms_are_bounded_and_the_title_has_its_own():
    many = " ".join(f"word{i:05d}" for i in range(MAX_TERMS + 500))
    assert len(search_terms(many)) == MAX_TERMS
    m = mentions("JsonWriter drops nulls\n\nThe writer writes nothing.")
    assert m.title_terms == ("jsonwriter", "json", "writer", "drops", "nulls")
    assert m.terms["writer"] == 2  # the title's part and the body's word


def test_a_term_matches_a_token_whole_or_as_one_of_its_parts():
    keys = term_keys(REFS, {"writer", "json", "parser", "absent"})
    assert keys == {
        "json": ["JsonWriter"],
        "writer": ["JsonWriter", "new_writer", "writer", "Writer"],
        "parser": ["parser"],
    }


def test_bm25_over_the_code_tokens():
    terms = {"writer": 1, "json": 1, "parser": 2}
    scores = bm25_scores(terms, term_keys(REFS, terms), REFS, LENGTHS)
    assert sorted(scores, key=lambda f: -scores[f]) == ["c.py", "a.py", "d.py", "b.py"]
    # one rare term alone: json in a.py only (df 1 of 4 files), twice, a.py of length 10 (average 9)
    only = bm25_scores({"json": 1}, term_keys(REFS, {"json"}), REFS, LENGTHS)
    idf = math.log(1 + (4 - 1 + 0.5) / (1 + 0.5))
    assert only == {"a.py": pytest.approx(idf * 2 * (K1 + 1) / (2 + K1 * (1 - B + B * 10 / 9)))}
    assert bm25_scores({}, {}, REFS, LENGTHS) == {} and bm25_scores(terms, {}, REFS, {}) == {}


def test_a_term_in_most_files_is_left_out():
    refs = {"common": {f"f{i}.py": 1 for i in range(200)}, "rare": {"f1.py": 1}}
    lengths = {f"f{i}.py": 10 for i in range(200)}
    scores = bm25_scores({"common": 5, "rare": 1}, term_keys(refs, {"common", "rare"}), refs, lengths)
    assert list(scores) == ["f1.py"]


def test_the_symbol_index_keeps_each_files_length():
    idx = SymbolIndex()
    idx.add("a.py", FileSymbols(frozenset({"f"}), {"def": 1, "f": 3, "x": 2}))
    idx.add("b.py", FileSymbols(frozenset(), {"y": 4}))
    assert idx.lengths == {"a.py": 6, "b.py": 4}
    idx.add("a.py", FileSymbols(frozenset(), {"z": 1}))  # re-indexed
    idx.remove("b.py")
    assert idx.lengths == {"a.py": 1}
