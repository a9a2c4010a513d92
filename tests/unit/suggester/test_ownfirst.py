"""Where the agent's own results first show a gold file and what came before
(``bench/suggester_ownfirst.py``): the first call that showed one, the class of the search-class
calls before it, and what the suggester did at them."""

from __future__ import annotations

from collections import Counter

from bench.suggester_ownfirst import (
    LISTINGS,
    MISS,
    NO_SEARCH,
    SEARCHED,
    before_class,
    only_lists,
    own_first,
    product_class,
    table,
)

G = "pkg/core.py"


def _call(klass: str, name: str = "bash", **inp: object) -> dict:
    return {"class": klass, "params": {"tool": {"name": name, "input": inp}}}


def test_the_first_call_before_the_first_edit_that_showed_gold():
    shown = [set(), {"a.py"}, {G}, {G}]
    assert own_first(shown, {G}, limit=4) == 2
    assert own_first(shown, {G}, limit=2) is None  # only after the first repository edit


def test_folder_listings_search_for_nothing():
    assert only_lists(_call("search", command="ls -R"))
    assert only_lists(_call("search", command="cd /testbed && find . -type f"))
    assert only_lists(_call("search", command=["ls", "-la"]))
    assert only_lists(_call("search", name="expand_folder", folder_path="src"))
    assert not only_lists(_call("search", command="find . -name '*form*'"))
    assert not only_lists(_call("search", command="ls -R | grep form"))
    assert not only_lists(_call("search", command="grep -rn needs_extensions sphinx"))
    assert not only_lists(_call("search", name="grep", content_pattern="serverlessrc"))


def test_the_class_of_what_came_before():
    calls = [_call("search", command="ls"), _call("read", command="cat a.py"), _call("search", command="grep -rn x .")]
    assert before_class(calls, None) == (MISS, [])
    assert before_class(calls, 0) == (NO_SEARCH, [])
    assert before_class(calls, 2) == (LISTINGS, [0])
    assert before_class(calls + [_call("search", command="ls")], 3) == (SEARCHED, [0, 2])


def test_what_the_suggester_did_at_the_earlier_searches():
    named = {"index": 1, "decision": "Note", "named": [G], "targets": [G]}
    assert product_class([named], [1], {G}) == ("product first", [])
    assert product_class([named], [0], {G}) == ("no trigger", [])  # another call
    assert product_class([named], [0], {G}, own=2) == ("product first", [])  # a note before the own result
    assert product_class([named], [0], {G}, own=1) == ("no trigger", [])  # at the own result: no lead
    held = {"index": 1, "trigger": "search", "decision": "Suppressed", "reason": "low-confidence", "targets": [G]}
    assert product_class([{**held, "chosen": [G]}], [1], {G}) == ("gold a target, lost: low-confidence", [])
    assert product_class([{**held, "chosen": "unranked"}], [1], {G}) == ("gold a target, lost: unranked", [])
    wrong = {"index": 1, "trigger": "search", "decision": "Note", "named": ["pkg/tests/test_core.py"]}
    assert product_class([wrong], [1], {G}) == ("spoke, wrong targets (tests only)", [])
    other = {**wrong, "named": ["pkg/other.py"]}
    assert product_class([other], [1], {G}) == ("spoke, wrong targets", [])
    gate = {"index": 1, "trigger": "search", "decision": "Suppressed", "reason": "recent", "targets": ["a.py"]}
    assert product_class([gate], [1], {G}) == ("silent by a gate", ["search:recent"])
    assert product_class([{**gate, "chosen": "echo"}], [1], {G}) == ("silent by a gate", ["search:echo"])


def test_the_table_has_a_row_per_group_and_a_column_per_class():
    counts = {"all": Counter({MISS: 1, NO_SEARCH: 2}), "x": Counter({NO_SEARCH: 2})}
    assert table(counts, "family").splitlines() == [
        f"| family | traces | {NO_SEARCH} | {MISS} |",
        "| --- | ---: | ---: | ---: |",
        "| all | 3 | 2 | 1 |",
        "| x | 2 | 2 | 0 |",
    ]
