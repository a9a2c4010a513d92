"""A pack row's signal sum (``suggester/classify.py``): a built-in row searches with its
patterns' compiled ``search`` once the row is first used, with the same sums as an untrusted
row of the same signals; a signal kept to some tools is compiled only when it is searched."""

from __future__ import annotations

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.classify import CompiledRow
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
