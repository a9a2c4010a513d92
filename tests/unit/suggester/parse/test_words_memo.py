"""Readings of tool names and keys kept between calls (``suggester/parse/words.py``): the same
reading as computed afresh, dropped when the role tables are swapped (as
``bench/tool_roles.py`` does to hold an agent family out), and bounded."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.parse import roles
from dsh_sidecar.suggester.parse.words import MAX_ENTRIES, MAX_KEY_CHARS, MAX_NAME_CHARS, TableMemo, name_words


def test_a_kept_reading_is_the_reading_computed_afresh():
    for _ in range(2):
        assert roles.key_role("content_pattern") == ("content", ("pattern", "content"))
        assert roles.read_tool("search_dir", {"search_term": "x", "dir": "a"}).used == [
            "verb:search",
            "key:term",
            "key:search",
            "key:dir",
        ]


def test_a_callers_change_to_a_reading_does_not_reach_the_next_call():
    first = roles.read_tool("Grep", {"pattern": "x"})
    first.used.append("mutated")
    assert roles.read_tool("Grep", {"pattern": "x"}).used == ["verb:grep", "key:pattern"]


def test_swapped_tables_are_read_afresh(monkeypatch: pytest.MonkeyPatch):
    assert roles.key_role("pattern")[0] == "ctx:pattern"
    assert roles.read_tool("search_dir", {"search_term": "x"}).kind == "grep"
    monkeypatch.setattr(roles, "KEY_WORDS", {k: v for k, v in roles.KEY_WORDS.items() if k != "pattern"})
    monkeypatch.setattr(roles, "VERB_WORDS", {k: v for k, v in roles.VERB_WORDS.items() if k != "search"})
    assert roles.key_role("pattern") == ("", ())
    assert "verb:search" not in roles.read_tool("search_dir", {"search_term": "x"}).used
    monkeypatch.undo()
    assert roles.key_role("pattern")[0] == "ctx:pattern"
    assert roles.read_tool("search_dir", {"search_term": "x"}).used[0] == "verb:search"


def test_long_strings_are_never_kept_and_the_memo_is_bounded():
    reads: list[str] = []

    def read(key: str) -> int:
        reads.append(key)
        return len(key)

    memo = TableMemo(read)
    tables = (object(),)
    long = "k" * (MAX_KEY_CHARS + 1)
    assert [memo(long, tables), memo(long, tables)] == [MAX_KEY_CHARS + 1] * 2
    assert reads == [long, long]
    for i in range(MAX_ENTRIES + 5):
        memo(f"key{i}", tables)
    assert len(memo._kept) <= MAX_ENTRIES
    reads.clear()
    memo("key0", tables)
    memo("key0", tables)
    assert reads == ["key0"]  # emptied when full, then kept again
    memo("key0", (object(),))
    assert reads == ["key0", "key0"]  # other tables: read afresh


def test_a_name_or_key_over_the_bound_is_refused_before_it_is_split():
    """Tool names and input keys are the client's: one over ``MAX_NAME_CHARS`` has no words (no
    role, no verb, nothing recorded in ``used``), however long; one at the bound is read."""
    at_bound = "grep_" * (MAX_NAME_CHARS // 5)
    assert len(at_bound) == MAX_NAME_CHARS
    assert name_words(at_bound) == ["grep"] * (MAX_NAME_CHARS // 5)
    assert name_words(at_bound + "x") == []
    huge = "grep_" * 400_000  # 2 MB
    call = roles.read_tool(huge, {"pattern": "x"})
    assert (call.kind, call.used) == ("other", ["key:pattern"])
    assert roles.key_role("pattern_" * 250_000) == ("", ())
    assert roles.read_tool("Grep", {"pattern_" * 250_000: "x"}).used == ["verb:grep"]
