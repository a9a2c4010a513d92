"""An intent's candidates as resolution reads them (``suggester/resolve.py``): the rows'
candidates without the fallbacks, in row order, with whether any depends on the call, names a
symbol or matches topics; made once per rows table and intent, kept for a bounded number."""

from __future__ import annotations

from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.packs import Candidate, IntentRow
from dsh_sidecar.suggester.resolve import _CANDIDATES, CANDIDATES_KEPT, intent_candidates

SYMBOL = Candidate(symbol="definitions", reason="defines {name}")
TOPIC = Candidate(kind="doc", match="terms", reason="matches")
STATIC = Candidate(path="README.md", reason="the readme")
FALLBACK = Candidate(path="src/main.py", reason="the entry point", fallback=True)


def _rows() -> dict[str, list[CompiledRow]]:
    return {
        "Symbol": [
            CompiledRow.of("generic", "Symbol", IntentRow(candidates=[STATIC, FALLBACK]), trusted=True),
            CompiledRow.of("python", "Symbol", IntentRow(candidates=[SYMBOL]), trusted=True),
        ],
        "Doc": [CompiledRow.of("generic", "Doc", IntentRow(candidates=[STATIC, TOPIC]), trusted=True)],
        "Owner": [CompiledRow.of("generic", "Owner", IntentRow(candidates=[STATIC]), trusted=True)],
    }


def test_an_intents_candidates_and_what_resolution_asks_of_them():
    rows = _rows()
    symbol = intent_candidates(rows, "Symbol")
    assert (symbol.cands, symbol.per_call, symbol.symbol, symbol.match) == ([STATIC, SYMBOL], True, True, False)
    doc = intent_candidates(rows, "Doc")
    assert (doc.cands, doc.per_call, doc.symbol, doc.match) == ([STATIC, TOPIC], True, False, True)
    owner = intent_candidates(rows, "Owner")
    assert (owner.cands, owner.per_call, owner.symbol, owner.match) == ([STATIC], False, False, False)
    none = intent_candidates(rows, "Version")  # no row for the intent
    assert (none.cands, none.per_call, none.symbol, none.match) == ([], False, False, False)
    assert intent_candidates(rows, "Symbol") is symbol  # kept for the same table
    assert intent_candidates(_rows(), "Symbol") is not symbol  # an equal table is another table


def test_the_candidate_lists_kept_are_bounded():
    tables = [_rows() for _ in range(CANDIDATES_KEPT + 3)]
    for rows in tables:
        intent_candidates(rows, "Doc")
    assert len(_CANDIDATES) == CANDIDATES_KEPT
    assert [id(kept[0]) for kept in _CANDIDATES.values()] == [id(rows) for rows in tables[3:]]  # the oldest dropped
