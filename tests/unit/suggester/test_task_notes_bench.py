"""The task-aware notes bench (``bench/task_notes.py``): each tool-call note of a session with a
``Task`` note is ``repeat``, ``first`` or ``new`` of the ``Task`` note's files, and a rule acts
on the tool-call notes of such a session only (a session without one keeps its notes)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))
task_notes = pytest.importorskip("task_notes")

TASK = {"i": -1, "intent": "Task", "targets": ["a.py", "b.py"]}


def note(i: int, *targets: str, intent: str = "Symbol") -> dict:
    return {"i": i, "intent": intent, "targets": list(targets)}


def test_the_classes_of_a_tool_call_note():
    task = TASK["targets"]
    assert task_notes._cls(task, note(3, "b.py", "a.py")) == "repeat"
    assert task_notes._cls(task, note(3, "a.py", "c.py")) == "first"
    assert task_notes._cls(task, note(3, "c.py", "a.py")) == "new"


def test_rules_act_on_the_task_sessions_tool_call_notes_only():
    log = [TASK, note(1, "a.py"), note(2, "a.py", "c.py"), note(4, "c.py", intent="Config")]
    assert task_notes._log_under(log, task_notes.RULES["drop-repeat"]) == [log[0], log[2], log[3]]
    assert task_notes._log_under(log, task_notes.RULES["drop-repeat-first"]) == [log[0], log[3]]
    assert task_notes._log_under(log, task_notes.RULES["trim"]) == [log[0], note(2, "c.py"), log[3]]
    assert task_notes._log_under(log, task_notes.RULES["code-new-only"]) == [log[0]]
    assert task_notes._log_under(log, task_notes.RULES["task-only"]) == [log[0]]
    assert task_notes._log_under(log, task_notes.RULES["first-only"]) == [log[0], log[2]]
    assert task_notes._log_under(log, task_notes.RULES["drop-new"]) == [log[0], log[1], log[2]]
    alone = log[1:]  # no Task note: every rule keeps the session's notes
    assert all(task_notes._log_under(alone, rule) == alone for rule in task_notes.RULES.values())


def test_the_lead_aware_rules_keep_a_new_note_naming_a_file_of_the_leads_best():
    log = [TASK, note(1, "a.py"), note(2, "a.py", "c.py"), note(3, "d.py", "e.py"), note(5, "f.py", "c.py")]
    ranks = ["a.py", "b.py", "c.py", "e.py"]  # the lead's best: e.py and c.py not in the Task note
    rules = task_notes.RULES
    assert task_notes._log_under(log, rules["first+lead-new"], ranks) == [log[0], log[2], log[3], log[4]]
    assert task_notes._log_under(log, rules["first+lead-first-new"], ranks) == [log[0], log[2]]
    # the agent's first repository edit at call 4: a new note after it is dropped
    assert task_notes._log_under(log, rules["first+lead-new-pre-edit"], ranks, 4) == [log[0], log[2], log[3]]
    assert task_notes._log_under(log, rules["first+new-pre-edit"], (), 4) == [log[0], log[2], log[3]]
    assert task_notes._log_under(log, rules["drop-repeat-lead-new"], ranks) == [log[0], log[2], log[3], log[4]]
    # without a recorded ranking no new note names a file of it
    assert task_notes._log_under(log, rules["first+lead-new"]) == [log[0], log[2]]
