"""The owed sticky section of a session (``mcp/hooks.py``): owed once, paid once, bounded; and
its place in a PostToolUse hook output, after the note."""

from __future__ import annotations

from dsh_sidecar.mcp.hooks import OwedSections, with_section

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
