"""A pack row's signal sum (``suggester/classify.py``): a built-in row searches with its
patterns' compiled ``search`` once the row is first used, with the same sums as an untrusted
row of the same signals; a signal kept to some tools is compiled only when it is searched. The
classifier reads the rows through a plan per rows table and tool (only the signals that apply
to the tool), kept for a bounded number of tables."""

from __future__ import annotations

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.classify import _PLANS, PLANS_KEPT, CompiledRow, classify, plan, searches_untrusted
from dsh_sidecar.suggester.gate import gate
from dsh_sidecar.suggester.packs import IntentRow, Signal
from dsh_sidecar.suggester.parse import parse_call

ROW = IntentRow(
    signals=[
        Signal(pattern=r"__version__", weight=2.0),
        Signal(pattern=r"(?i)\bversion\b", weight=1.5),
        Signal(pattern=r"^setup\.py$", weight=0.5, tools=["glob"]),
        Signal(pattern=r"def ", weight=-1.0),
    ]
)


def grep(pattern: str):
    return parse_call("Grep", {"pattern": pattern})


def test_a_trusted_rows_sums_are_an_untrusted_rows():
    trusted = CompiledRow.of("p", "Version", ROW, trusted=True)
    untrusted = CompiledRow.of("p", "Version", ROW, trusted=False)
    cases = {
        "__version__": 2.0,
        "Version =": 1.5,
        "__version__ = version": 3.5,
        "def version": 0.5,
        "frobnicate": None,
    }
    for text, expected in cases.items():
        assert trusted.signal_sum(grep(text)) == expected == untrusted.signal_sum(grep(text))
    assert untrusted._searches is None  # an untrusted row keeps its budgeted search


def test_a_tool_kept_signal_counts_only_for_its_tool_and_compiles_at_its_first_search():
    row = CompiledRow.of("p", "Version", ROW, trusted=True)
    assert row.signal_sum(grep("setup.py")) is None  # a grep: the glob-only signal is not searched
    kept = row.signals[2][0]
    assert isinstance(kept, LazyPattern) and kept._compiled is None
    assert row.signal_sum(parse_call("Glob", {"pattern": "setup.py"})) == 0.5
    assert kept._compiled is not None


def test_a_row_without_signals_sums_to_none_every_call():
    row = CompiledRow.of("p", "Version", IntentRow(), trusted=True)
    assert [row.signal_sum(grep("__version__")) for _ in range(2)] == [None, None]
    assert row._searches == ()


def _rows(*rows: IntentRow) -> dict[str, list[CompiledRow]]:
    return {"Version": [CompiledRow.of("p", "Version", r, trusted=True) for r in rows]}


def test_the_classifier_reads_each_tools_signals_from_a_plan_made_once_per_table_and_tool():
    rows = _rows(ROW)
    grep_plan = plan(rows, "grep")
    assert plan(rows, "grep") is grep_plan  # kept: the same table and tool
    ((intent, ((threshold, searches, row),)),) = grep_plan
    assert (intent, threshold, row) == ("Version", 0.85, rows["Version"][0])
    assert [w for _, w in searches] == [2.0, 1.5, -1.0]  # the glob-only signal is not the grep's
    assert [w for _, w in plan(rows, "glob")[0][1][0][1]] == [2.0, 1.5, 0.5, -1.0]
    assert classify(grep("setup.py"), rows, 0.0, {}) is None
    assert classify(parse_call("Glob", {"pattern": "setup.py"}), rows, 2.0, {}) == ("Version", gate(2.5, 0.0))
    # an equal table is another table: its own plan, its own rows
    other = _rows(ROW)
    assert plan(other, "grep") is not grep_plan and plan(other, "grep")[0][1][0][2] is other["Version"][0]


def test_the_plans_kept_are_bounded():
    tables = [_rows(ROW) for _ in range(PLANS_KEPT + 5)]
    for rows in tables:
        plan(rows, "grep")
    assert len(_PLANS) == PLANS_KEPT
    assert all(kept[0] is tables[-1 - i] for i, kept in enumerate(reversed(_PLANS.values())))
    assert (id(tables[0]), "grep") not in _PLANS or _PLANS[(id(tables[0]), "grep")][0] is not tables[0]


def test_a_plan_keeps_an_untrusted_rows_budgeted_sum_and_evidence_alone_scores_a_row_without_signals():
    untrusted = CompiledRow.of("repo", "Version", ROW, trusted=False)
    rows = {"Version": [untrusted], "Symbol": [CompiledRow.of("p", "Symbol", IntentRow(), trusted=True)]}
    assert plan(rows, "grep")[0][1] == ((0.85, None, untrusted),)
    assert classify(grep("__version__ version"), rows, 0.0, {}) == ("Version", gate(3.5, 0.0))
    assert classify(grep("frobnicate"), rows, 0.0, {"Symbol": 1.2}) == ("Symbol", gate(1.2, 0.0))
    assert classify(grep("frobnicate"), rows, 0.0, {"Symbol": 0.5}) is None  # 0.62 < 0.75


def test_a_calls_regex_budget_is_set_up_only_when_an_untrusted_row_can_be_searched(monkeypatch):
    from dsh_sidecar.suggester import packs
    from dsh_sidecar.suggester.triggers import search as trigger

    budgets = []
    real = trigger.classify

    def spy(*args):
        budgets.append(packs._BUDGET.get())
        return real(*args)

    monkeypatch.setattr(trigger, "classify", spy)
    monkeypatch.setattr(trigger, "CALL_BUDGET_S", 0.0)  # used up at once: an untrusted search is no match
    trusted = _rows(ROW)
    assert not searches_untrusted(trusted, "grep") and not searches_untrusted(trusted, "glob")
    hit, exhausted = trigger.classify_call(grep("__version__ version"), trusted, 0.0, None)
    assert hit is not None and (hit.intent, hit.k, exhausted) == ("Version", gate(3.5, 0.0), False)
    assert budgets == [None]
    mixed = {"Version": [CompiledRow.of("repo", "Version", ROW, trusted=False), *trusted["Version"]]}
    assert searches_untrusted(mixed, "grep") and searches_untrusted(mixed, "glob")
    hit, exhausted = trigger.classify_call(grep("__version__ version"), mixed, 0.0, None)
    assert hit is not None and (hit.intent, hit.k, exhausted) == ("Version", gate(3.5, 0.0), True)
    assert len(budgets) == 2 and budgets[1] is not None and budgets[1].seconds == 0.0
