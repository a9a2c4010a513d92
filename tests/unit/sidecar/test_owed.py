"""What a prompt-path call could not wait for (``sidecar/owed.py``): the first-call window a
start's sections and task leads share, and the task leads owed to sessions (owed, ranked once,
taken once, bounded)."""

from __future__ import annotations

import time

from dsh_protocol import AdditionalContext, NoteSource
from dsh_sidecar.sidecar.owed import FirstCallWindow, OwedLeads


def note(text: str) -> AdditionalContext:
    source = NoteSource(kind="search-suggester", form="notice", summary=text, intent="Task", targets=[text])
    return AdditionalContext(source=source, text=text)


def test_the_first_call_opens_the_window_and_later_calls_get_what_is_left_of_it():
    window = FirstCallWindow()
    first = window.left(0.5)
    assert first == 0.5
    assert window.left(0.5) <= first  # the same window, not a new one
    time.sleep(0.06)
    assert window.left(0.5) <= first - 0.05
    closed = FirstCallWindow()
    assert closed.left(0.0) == 0.0
    assert closed.left(5.0) == 0.0  # opened (empty) by the first call: no later call waits


def test_an_owed_task_is_handed_out_once_and_its_note_taken_once():
    owed = OwedLeads()
    owed.owe("a", "fix the parser")
    owed.owe("b", "bump the version")
    owed.owe("a", "fix the lexer")  # the session's later task replaces the earlier one
    assert owed.waiting()
    assert owed.tasks() == [("b", "bump the version"), ("a", "fix the lexer")]
    assert owed.tasks() == [] and not owed.waiting()
    owed.settle("a", note("src/lexer.py"))
    owed.settle("b", None)  # silence: nothing to give
    assert owed.take("b") is None
    taken = owed.take("a")
    assert taken is not None and taken.text == "src/lexer.py"
    assert owed.take("a") is None


def test_owed_sessions_are_bounded_the_oldest_dropped_first():
    owed = OwedLeads(limit=2)
    for s in ("a", "b", "c"):
        owed.owe(s, f"task {s}")
        owed.settle(s, note(s))
    assert owed.tasks() == [("b", "task b"), ("c", "task c")]
    assert [owed.take(s) is not None for s in ("a", "b", "c")] == [False, True, True]
