"""A start's first note, held back because the index was still being built when the first
call's wait (``firstCallWaitMs``) ran out, is owed to its session (``suggester/owednote.py``):
the session's first later call that finds the index ready and has no note of its own gives it
(``owed not-ready <intent>`` in the ledger), unless it no longer adds anything by then. The build
is held here (the symbol pass runs until the test ends it; the first call's wait runs out at
once), never slept on. Before, the first note was lost: a fresh MCP server's first
``post_tool_use`` answered ``{}`` under load and nothing owed it later."""

from __future__ import annotations

from pathlib import Path

import pytest
from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester.readiness import SYMBOLS
from support.suggester import ledger_messages

from tests.e2e.test_task_aware_notes import PLAIN, workspace
from tests.unit.suggester.test_suggester_readiness import Index, make

GREP = {"name": "Bash", "input": {"command": "grep -rn shipping_cost src"}}
USAGE = "suggest Usage 0.80 3 targets " + ",".join(PLAIN)


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    return workspace(tmp_path / "shop")


def call(turn: int, tool: dict, session: str = "s", result: str | None = None) -> PostExecuteParams:
    extra = {} if result is None else {"result": {"text": result}}
    return PostExecuteParams.model_validate({"sessionId": session, "turn": turn, "tool": tool, **extra})


def cold(shop: Path, home: Path, monkeypatch: pytest.MonkeyPatch):
    """A suggester whose symbol pass is still running, and whose first call's wait runs out."""
    index = Index(shop)
    s, lines = make(shop, home, index, firstCallWaitMs=500)
    assert s.pending() == {SYMBOLS}
    monkeypatch.setattr(s, "_wait_for", lambda parts, budget_s: False)  # the build outlasts the wait
    return index, s, lines


def test_the_first_note_held_back_is_given_with_the_sessions_next_call_once_ready(shop, dsh_home, monkeypatch):
    index, s, lines = cold(shop, dsh_home, monkeypatch)
    assert s.post_execute(call(0, GREP)) == []
    assert ledger_messages(lines)[1:] == ["suppressed not-ready Usage"]
    assert s.post_execute(call(1, {"name": "Bash", "input": {"command": "git status"}})) == []  # still building
    index.symbols_done()
    index.building = False
    notes = s.post_execute(call(2, {"name": "Bash", "input": {"command": "git log -1"}}))
    assert [(n.source.intent, list(n.source.targets)) for n in notes] == [("Usage", PLAIN)]
    assert ledger_messages(lines)[1:] == ["suppressed not-ready Usage", "owed not-ready Usage", USAGE]
    assert s.post_execute(call(3, {"name": "Bash", "input": {"command": "git diff"}})) == []  # given once
    assert s.counters["notes"] == 1


def test_another_session_and_a_call_with_its_own_bound_are_owed_nothing(shop, dsh_home, monkeypatch):
    index, s, lines = cold(shop, dsh_home, monkeypatch)
    params = call(0, GREP).model_copy(update={"wait_ms": 300})
    assert s.post_execute(params) == []  # its own waitMs: the harness chose its bound, nothing owed
    assert s.post_execute(call(1, GREP, session="t")) == []  # the start's first call without one
    index.symbols_done()
    index.building = False
    assert s.post_execute(call(2, {"name": "Bash", "input": {"command": "git log -1"}})) == []
    assert s.post_execute(call(3, {"name": "Bash", "input": {"command": "git log -1"}}, session="u")) == []
    assert "owed not-ready Usage" not in ledger_messages(lines)


def test_an_owed_note_the_session_made_useless_meanwhile_is_not_given(shop, dsh_home, monkeypatch):
    """The session read the note's first target since (``recent``), or the call that would carry
    it showed its targets (``echo``): nothing is given, and nothing stays owed."""
    for k, (tool, shown) in enumerate(
        [
            ({"name": "Read", "input": {"file_path": str(shop / PLAIN[0])}}, None),
            ({"name": "Bash", "input": {"command": "ls src/shop"}}, "\n".join(PLAIN)),
        ]
    ):
        index, s, lines = cold(shop, dsh_home / str(k), monkeypatch)
        assert s.post_execute(call(0, GREP)) == []
        index.symbols_done()
        index.building = False
        s.post_execute(call(1, tool, result=shown))
        assert "owed not-ready Usage" not in ledger_messages(lines)
        assert s.post_execute(call(2, {"name": "Bash", "input": {"command": "git log -1"}})) == []
