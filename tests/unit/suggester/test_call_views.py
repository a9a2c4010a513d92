"""A call's path mappings and evidence view (``Suggester._views``): the last call's are used
again while the prepared targets, the graph, its symbol index and the content index are the
same objects, and made anew when any of them is another one."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from support.suggester import call, make_suggester, post


def test_a_calls_views_are_kept_while_the_index_is_the_same(shopcart: Path, dsh_home: Path):
    s, _ = make_suggester(shopcart, dsh_home, warm=True)
    first = s._context(call("Grep", {"pattern": "x"}))
    second = s._context(call("Grep", {"pattern": "y"}, session="other"))
    assert first.paths is second.paths and first.evidence is second.evidence
    assert first.prepared is not None and second.evidence.is_file.__self__ is first.prepared.index
    before = s.prepared
    assert s.prepare()  # a new preparation swapped in
    assert s.prepared is not before
    third = s._context(call("Grep", {"pattern": "x"}))
    assert third.paths is not first.paths and third.evidence is not first.evidence
    assert third.paths.index is s.prepared.index


def test_another_symbol_index_on_the_same_graph_makes_new_views(shopcart: Path, dsh_home: Path):
    graph = SimpleNamespace(symbols=object())
    s, _ = make_suggester(shopcart, dsh_home, warm=True)
    s._symbols = lambda: graph  # type: ignore[method-assign]
    first = s._views(s.prepared, graph, None)
    assert s._views(s.prepared, graph, None) == first
    graph.symbols = object()  # the graph's symbol pass ran again
    assert s._views(s.prepared, graph, None)[1] is not first[1]


def test_the_call_is_answered_the_same_with_kept_views(shopcart: Path, dsh_home: Path):
    s, _ = make_suggester(shopcart, dsh_home, warm=True)
    notes = [post(s, "Grep", {"pattern": "class Cart"}, session=f"s{i}") for i in range(2)]
    assert notes[0] and notes[0] == notes[1]
