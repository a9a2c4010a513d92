"""In a session whose ``Task`` note named files, a tool-call note is judged by what it adds to
that note (``docs/SCHEME.md``, "The task lead"): ``repeat`` (every target named by it), ``first``
(its first target named by it, another not), ``lead`` (its first target not named by it, and it
names a file of the task lead's best that the note did not) or ``new`` (neither); the
classes of ``filters.TASK_SUPPRESSED`` (every one: the ``task-only`` rule) are suppressed with a
ledger line. A session without a task text, or whose ``Task`` note named nothing, keeps its
notes."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from dsh_protocol import PostExecuteParams, PostExecuteResult
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.suggester.filters import TASK_SUPPRESSED
from dsh_sidecar.suggester.session import MAX_TASK_FILES, TaskEvidence
from support.sidecar import DATA

HELPERS = '"""Helpers."""\n\nfrom demo_pkg.cli import run_cli\n\n\ndef fold_keys(items):\n    return sorted(items)\n'
CLI = '"""The command line."""\n\nfrom demo_pkg.helpers import fold_keys\n\n\ndef run_cli(argv):\n    return fold_keys(argv)\n'
#: The files a ``Task`` note named in the tests below (not ``src/demo_pkg/helpers.py``).
SAID = ["src/demo_pkg/core.py", "src/demo_pkg/cli.py", "tests/test_core.py"]


def call(pattern: str, session: str) -> PostExecuteParams:
    return PostExecuteParams.model_validate(
        {"sessionId": session, "turn": 1, "tool": {"name": "Grep", "input": {"pattern": pattern}}}
    )


def notes(result: PostExecuteResult) -> list[tuple[str, list[str]]]:
    return [(n.source.intent, list(n.source.targets)) for n in result.additional_contexts]


def ledger_lines(s: Sidecar) -> list[str]:
    s.suggester.ledger.flush()
    return [line.split("] ", 1)[1] for line in s.suggester.ledger.path.read_text().splitlines()]


@pytest.fixture
def sidecar(tmp_path: Path) -> Iterator[Sidecar]:
    workspace = tmp_path / "pyproj"
    shutil.copytree(DATA / "workspaces" / "pyproj", workspace)
    (workspace / "src" / "demo_pkg" / "helpers.py").write_text(HELPERS)
    (workspace / "src" / "demo_pkg" / "cli.py").write_text(CLI)
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    s = Sidecar(parse_config({"suggester": {"enabled": True, "taskLead": True}}), workspace, env)
    try:
        assert s.wait_for_graph(60)
        yield s
    finally:
        s.shutdown()
        asyncio.run(s.aclose())


def test_what_a_note_adds_to_the_task_note():
    task = TaskEvidence.of(["a.py", "b.py", "c.py"], [], said=["a.py", "b.py"])
    assert task.said == {"a.py", "b.py"}
    assert task.adds(["b.py", "a.py"]) == "repeat" and task.adds(["a.py"]) == "repeat"
    assert task.adds(["a.py", "c.py"]) == "first"  # c.py is ranked, but the note did not name it
    assert task.adds(["c.py", "a.py"]) == "lead"  # c.py: the lead's, not the note's
    assert task.adds(["d.py", "a.py"]) == "new" and task.adds(["d.py", "e.py"]) == "new"
    assert task.adds(["d.py", "c.py"]) == "lead"
    assert task.adds([]) is None
    assert TaskEvidence.of(["a.py"], ["x"]).adds(["a.py"]) is None  # no Task note: nothing to add to
    many = TaskEvidence.of([], [], said=[f"m{i}.py" for i in range(MAX_TASK_FILES + 3)])
    assert len(many.said) == MAX_TASK_FILES


def test_the_task_note_names_what_the_session_keeps(sidecar: Sidecar):
    lead = sidecar.suggester.task_lead("a", "merge_setting in demo_pkg/core.py drops the session's settings")
    assert lead is not None
    task = sidecar.suggester.noise.session("a").evidence.task
    assert task is not None and task.said == set(lead.source.targets)


CALLS = [  # pattern, its note without a task text, what it adds to a Task note naming SAID
    ("def merge_setting", ("Symbol", ["src/demo_pkg/core.py", "tests/test_core.py"]), "repeat"),
    ("def run_cli", ("Symbol", ["src/demo_pkg/cli.py", "src/demo_pkg/helpers.py"]), "first"),
    ("def fold_keys", ("Symbol", ["src/demo_pkg/helpers.py", "src/demo_pkg/cli.py"]), "new"),
]


def test_the_notes_beside_the_task_note(sidecar: Sidecar):
    # the session without a task text: every note
    assert [notes(sidecar.post_execute(call(p, "b"))) for p, _, _ in CALLS] == [[n] for _, n, _ in CALLS]
    assert not any(line.startswith("suppressed") for line in ledger_lines(sidecar))
    sidecar.suggester.noise.session("a").evidence.task = TaskEvidence.of(SAID, [], said=SAID)
    got = [notes(sidecar.post_execute(call(p, "a"))) for p, _, _ in CALLS]
    assert got == [[], [], []]
    suppressed = [line for line in ledger_lines(sidecar) if line.startswith("suppressed")]
    assert suppressed == ["suppressed repeated Symbol", "suppressed beside-task Symbol", "suppressed off-task Symbol"]
    assert TASK_SUPPRESSED == {"repeat": "repeated", "first": "beside-task", "lead": "beside-task", "new": "off-task"}


def test_a_task_note_that_named_nothing_keeps_the_notes(sidecar: Sidecar):
    sidecar.suggester.noise.session("a").evidence.task = TaskEvidence.of(SAID, ["merge_setting"])
    assert [notes(sidecar.post_execute(call(p, "a"))) for p, _, _ in CALLS[:1]] == [[CALLS[0][1]]]


def test_a_new_note_naming_a_file_of_the_leads_best_is_beside_the_task(sidecar: Sidecar):
    lead = [*SAID, "src/demo_pkg/helpers.py"]  # the lead ranked helpers.py, its note did not name it
    sidecar.suggester.noise.session("a").evidence.task = TaskEvidence.of(lead, [], said=SAID)
    assert [notes(sidecar.post_execute(call(p, "a"))) for p, _, _ in CALLS] == [[], [], []]
    suppressed = [line for line in ledger_lines(sidecar) if line.startswith("suppressed")]
    assert suppressed == [
        "suppressed repeated Symbol",
        "suppressed beside-task Symbol",
        "suppressed beside-task Symbol",
    ]
