"""The owed sticky section of a session (``mcp/hooks.py``): owed once, paid once, bounded; and
its place in a PostToolUse hook output, after the note."""

from __future__ import annotations

import tracemalloc

import pytest
from dsh_sidecar.mcp.hooks import (
    MAX_SESSION_ID_CHARS,
    HookInputError,
    OwedSections,
    TurnCounter,
    post_execute_params,
    with_section,
)

NOTE = {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "search-suggester: a note"}}


def test_a_session_owes_its_section_until_it_is_paid_and_the_oldest_are_dropped():
    owed = OwedSections(limit=2)
    owed.owe("a")
    owed.owe("b")
    owed.owe("a")  # owed again: the newest now
    owed.owe("c")  # over the limit: b, the oldest, is dropped
    assert [owed.owed(s) for s in ("a", "b", "c", "d")] == [True, False, True, False]
    owed.paid("a")
    owed.paid("d")  # never owed: nothing happens
    assert [owed.owed(s) for s in ("a", "c")] == [False, True]


def test_the_section_follows_the_note_or_stands_alone_and_nothing_changes_without_one():
    assert with_section(NOTE, "search-suggester: where things live") == {
        "hookSpecificOutput": {
            "hookEventName": "PostToolUse",
            "additionalContext": "search-suggester: a note\n\nsearch-suggester: where things live",
        }
    }
    assert with_section({}, "S") == {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "S"}}
    assert with_section(NOTE, None) is NOTE
    assert with_section({}, "") == {}


def _retained_by(fn) -> int:
    """Bytes still allocated after ``fn()`` (tracemalloc), what it keeps."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def _long_id(n: int) -> str:
    return f"{n:04d}" + "s" * (64 * 1024)


def test_session_ids_over_the_protocols_bound_are_neither_owed_nor_counted():
    # the MCP client is untrusted: 1000 sessions of 16 MiB ids (a line's bound) were kept whole
    owed = OwedSections()
    assert _retained_by(lambda: [owed.owe(_long_id(n)) for n in range(200)]) < 256 * 1024
    assert not owed.owed(_long_id(0))  # its post_tool_use is refused by the bound: never paid
    owed.owe("s" * MAX_SESSION_ID_CHARS)
    assert owed.owed("s" * MAX_SESSION_ID_CHARS)

    turns = TurnCounter()

    def calls() -> None:
        for n in range(200):
            with pytest.raises(HookInputError, match="^session_id: longer than 500 characters$"):
                post_execute_params(turns, "Grep", {"pattern": "x"}, _long_id(n))

    assert _retained_by(calls) < 256 * 1024
    assert post_execute_params(turns, "Grep", {"pattern": "x"}, "s" * MAX_SESSION_ID_CHARS).turn == 0
