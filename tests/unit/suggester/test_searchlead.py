"""The session's searches as a task text (``suggester/searchlead.py``, knob ``searchLead``, off by
default): the text made of what the session searched for, the workspace ranked against it with
the task lead's ranker on a small real workspace (graph and symbol index built for real), the
ranking cached while the searches do not change, and the target it adds (the best file the
session was not shown, second)."""

from __future__ import annotations

from pathlib import Path

from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.config import parse_suggester_config
from dsh_sidecar.suggester.searchlead import REASON, SearchedLead, add_target, searched_lead, text_of
from dsh_sidecar.suggester.session import SessionEvidence, TaskEvidence
from dsh_sidecar.workspace import WorkspaceGraph

FILES = {
    "src/shop/cart.py": (
        "from shop.pricing import apply_discount\n\n\nclass Cart:\n    def total(self, code=None):\n"
        "        return apply_discount(0, code)\n"
    ),
    "src/shop/pricing.py": "def apply_discount(amount, code):\n    return amount\n",
    "src/shop/shipping.py": "def shipping_cost(weight):\n    return 5 + weight * 0.5\n",
    "README.md": "# shop\n",
}


def _graph(root: Path) -> WorkspaceGraph:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return WorkspaceGraph.build(root)


def _lead(*paths: str, names: tuple[str, ...] = ("A", "B"), words: tuple[str, ...] = ()) -> SearchedLead:
    return SearchedLead((names, words), TaskEvidence.of(paths, ()))


def test_the_knob_is_off_by_default_and_takes_four_values():
    assert parse_suggester_config(None).search_lead == "off"
    assert parse_suggester_config({"searchLead": "add"}).search_lead == "add"
    assert parse_suggester_config({"searchLead": "order"}).search_lead == "order"
    assert parse_suggester_config({"searchLead": "second"}).search_lead == "second"


def test_the_text_backticks_the_names_and_drops_what_would_break_them():
    assert text_of(["Cart", "a`b"], ["discount", "x`"]) == "`Cart` discount"


def test_the_workspace_ranked_against_the_searches_and_kept_while_they_do_not_change(tmp_path):
    graph = _graph(tmp_path / "shop")
    ev = SessionEvidence()
    assert searched_lead(ev, graph, None) is None  # nothing searched yet
    ev.searched("apply_discount", ["apply_discount"])
    first = searched_lead(ev, graph, None)
    assert first is not None
    assert first.ranks.rank("src/shop/pricing.py") == 0
    assert first.relevance("src/shop/pricing.py") == 1.0
    assert first.relevance("src/shop/shipping.py") == 0.0
    assert searched_lead(ev, graph, None) is first  # the same searches: the same ranking
    ev.searched("Cart", ["cart"])
    again = searched_lead(ev, graph, None)
    assert again is not first and again is not None
    assert again.ranks.rank("src/shop/cart.py") is not None


def test_no_ranking_without_the_symbol_index():
    ev = SessionEvidence()
    ev.searched("Cart", [])
    assert searched_lead(ev, None, None) is None


def test_the_best_unseen_file_joins_second():
    ev = SessionEvidence()
    ev.showed(["a.py"])
    targets = [Target("t.py", "defines x", 1.0), Target("u.py", "uses x", 0.5)]
    added = add_target(targets, _lead("a.py", "t.py", "b.py", "c.py"), ev)
    assert [t.path for t in added] == ["t.py", "b.py", "u.py"]
    assert added[1].reason == REASON


def test_nothing_joins_beyond_the_first_three_or_after_one_search():
    ev = SessionEvidence()
    ev.showed(["a.py", "b.py", "c.py"])
    targets = [Target("t.py", "defines x", 1.0)]
    assert add_target(targets, _lead("a.py", "b.py", "c.py", "d.py"), ev) == targets
    assert add_target(targets, _lead("d.py", names=("A",)), SessionEvidence()) == targets
