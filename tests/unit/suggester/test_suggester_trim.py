"""Fewer targets where the session's evidence tells them apart (``suggester/trim.py``): a
Symbol note leaves out the targets without support when another has some; the ``suggest``
ledger line lists exactly what the note names; ``trimUnsupported`` off names them all."""

from __future__ import annotations

from dsh_sidecar.suggester import parse_suggester_config
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.trim import TRIMMED_INTENTS, supported
from dsh_sidecar.workspace import WorkspaceGraph
from support.suggester import call, ledger_messages, make_suggester


class Support:
    """A scorer whose support is a table (the trim reads nothing else of it)."""

    def __init__(self, table: dict[str, float]) -> None:
        self.table = table
        self.asked: list[str] = []

    def support(self, path: str) -> float:
        self.asked.append(path)
        return self.table.get(path, 0.0)


def targets(*paths: str) -> list[Target]:
    return [Target(p, "r", 1.0) for p in paths]


def paths(ts: list[Target]) -> list[str]:
    return [t.path for t in ts]


def test_a_symbol_note_keeps_its_supported_targets_in_order():
    scorer = Support({"a.py": 3.0, "c.py": 0.5, "e.py": 2.0})
    got = supported(targets("a.py", "b.py", "c.py", "d.py", "e.py"), "Symbol", scorer)
    assert paths(got) == ["a.py", "c.py", "e.py"]  # order kept, not re-sorted by support
    # a supported target after an unsupported first one (a test placed last, a source first)
    got = supported(targets("src/x.py", "tests/test_x.py"), "Symbol", Support({"tests/test_x.py": 1.0}))
    assert paths(got) == ["tests/test_x.py"]


def test_no_support_anywhere_trims_nothing():
    scorer = Support({})
    ts = targets("a.py", "b.py", "c.py")
    assert supported(ts, "Symbol", scorer) is ts
    # negative support (none is given today) is no support
    assert paths(supported(targets("a.py", "b.py"), "Symbol", Support({"a.py": -1.0}))) == ["a.py", "b.py"]


def test_only_symbol_notes_are_trimmed():
    """A Usage note answers with the uses, which support (defining the name, a frame, a
    searched word, an opened folder) does not measure; a Test note and a project intent keep
    their order too."""
    assert {"Symbol"} == set(TRIMMED_INTENTS)
    scorer = Support({"a.py": 3.0})
    for intent in ("Usage", "Test", "Version", "Config"):
        ts = targets("a.py", "b.py")
        assert supported(ts, intent, scorer) is ts
    assert scorer.asked == []  # nothing scored for an intent that is not trimmed
    one = targets("b.py")
    assert supported(one, "Symbol", scorer) is one  # one target: nothing to tell apart


def test_the_knob_defaults_on():
    assert parse_suggester_config(None).trim_unsupported is True
    assert parse_suggester_config({"trimUnsupported": False}).trim_unsupported is False


def test_a_definition_search_names_the_definition_not_its_uses(shopcart, dsh_home):
    graph = WorkspaceGraph.build(shopcart)
    search = {"command": 'rg -n "def merge_items" src'}
    s, lines = make_suggester(shopcart, dsh_home, graph, warm=True)
    notes = s.post_execute(call("bash", search))
    # cart.py defines the searched name; api.py (a use) and the test have no support
    assert [n.source.targets for n in notes] == [["src/shopcart/cart.py"]]
    assert ledger_messages(lines)[-1] == "suggest Symbol 0.97 1 targets src/shopcart/cart.py"
    off, lines_off = make_suggester(shopcart, dsh_home / "off", graph, warm=True, trimUnsupported=False)
    notes = off.post_execute(call("bash", search))
    assert [n.source.targets for n in notes] == [["src/shopcart/cart.py", "src/shopcart/api.py", "tests/test_cart.py"]]
    assert ledger_messages(lines_off)[-1] == (
        "suggest Symbol 0.97 3 targets src/shopcart/cart.py,src/shopcart/api.py,tests/test_cart.py"
    )


def test_a_usage_note_keeps_the_uses(shopcart, dsh_home):
    graph = WorkspaceGraph.build(shopcart)
    s, lines = make_suggester(shopcart, dsh_home, graph, warm=True)
    notes = s.post_execute(call("bash", {"command": "git grep apply_discount"}))
    assert [n.source.targets for n in notes] == [
        ["src/shopcart/pricing.py", "src/shopcart/api.py", "src/shopcart/__init__.py", "tests/test_pricing.py"]
    ]
    assert ledger_messages(lines)[-1].startswith("suggest Usage 0.96 4 targets ")
