"""Suggester learning (plan, "The learning"): knowledge file, offline seed, online learning, durable dismissals,
sticky section — against the core directly (the stdio path is in test_suggester_learning_e2e.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import dsh_sidecar.evaluation.trace
import pytest
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.suggester.knowledge import SCHEMA, Knowledge, Row
from dsh_sidecar.workspace.graph import WorkspaceGraph
from support.sidecar import forked_command
from support.suggester import call, ledger_messages, make_suggester
from support.trees import copy_fixture

T0 = 1_764_480_000.0  # 2025-11-30T05:20:00Z


class Clock:
    def __init__(self, t: float = T0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def make(workspace: Path, home: Path, clock: Clock | None = None, **cfg) -> tuple[Suggester, list[str]]:
    """A suggester on the fixed clock :data:`T0` unless ``clock`` is given. What is learned
    from the notes is tested on every note the earlier stages let through: the per-note
    confidence's bar is 0 unless given (``test_suggester_confidence.py`` tests the bar)."""
    return make_suggester(workspace, home, clock=clock or Clock(), **{"minConfidence": 0, **cfg})


def kfile(home: Path) -> Path:
    return home / "search-suggester" / "knowledge.json"


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b'{"schema": "someone-else", "version": 1}',
        json.dumps({"schema": SCHEMA, "version": 99}).encode(),
        json.dumps(
            {"schema": SCHEMA, "version": 1, "workspaces": {"/ws": {"rows": {"Test": {"a": {"followed": -3}}}}}}
        ).encode(),
    ],
)
def test_corrupt_or_foreign_file_is_kept_aside_and_starts_cold(tmp_path, content, workspace, dsh_home):
    path = kfile(dsh_home)
    path.parent.mkdir(parents=True)
    path.write_bytes(content)
    s, lines = make(workspace, dsh_home)
    notes = s.post_execute(call("grep", {"pattern": "__version__"}))
    assert [n.source.targets for n in notes] == [["src/demo_pkg/__init__.py"]]  # the static pack still emits
    aside = list(path.parent.glob("knowledge.json.corrupt-*"))
    assert len(aside) == 1 and aside[0].read_bytes() == content
    assert any("moved aside" in w for w in s.knowledge.warnings)
    assert s.learning_status()["warnings"] == s.knowledge.warnings
    s.dismiss("Doc", None)  # the next write starts a fresh, valid file
    assert json.loads(path.read_text())["schema"] == SCHEMA
    assert aside[0].read_bytes() == content  # never overwritten


# ---------------------------------------------------------------------- seed


def test_offline_seed_warms_builtin_targets_without_saving(workspace, dsh_home):
    s, _ = make(workspace, dsh_home)
    s.warm()
    k = s.knowledge
    assert k.row("Version", "src/demo_pkg/__init__.py") == Row(seed=1.0)
    assert k.row("Test", "tests/conftest.py") == Row(seed=1.0)
    assert k.row("Test", "tests/test_core.py") == Row(seed=1.0)
    assert s.seeded == len(k.rows) > 0
    assert not kfile(dsh_home).exists()  # the seed does not save by itself
    s.dismiss("Owner", None)  # the next real write persists the seed rows
    rows = json.loads(kfile(dsh_home).read_text())["workspaces"]["path:" + workspace.resolve().as_posix()]["rows"]
    assert rows["Test"]["tests/conftest.py"] == {"followed": 0, "ignored": 0, "seed": 1.0, "lastUsed": 0.0}


def test_seed_never_overwrites_and_proven_is_seeded_twice(workspace, dsh_home):
    pre = Knowledge(kfile(dsh_home), "path:" + workspace.resolve().as_posix(), Clock())
    pre.record("Test", "tests/conftest.py", followed=3)
    pre.flush()
    graph = WorkspaceGraph.build(workspace)
    s = Suggester(
        workspace, parse_suggester_config({"enabled": True}), dsh_home, clock=Clock(), workspace=lambda: graph
    )
    s.warm()
    k = s.knowledge
    assert k.row("Test", "tests/conftest.py") == Row(followed=3, last_used=T0)  # never overwritten
    assert k.row("Test", "tests/test_core.py").seed == 2.0  # a test node: proven, seeded twice
    assert k.row("Test", "pyproject.toml").seed == 1.0  # a manifest: not a Test kind
    assert k.row("Doc", "README.md").seed == 2.0


def test_seed_skips_intents_a_repo_pack_overrides(workspace, dsh_home):
    (workspace / ".dsh").mkdir()
    (workspace / ".dsh" / "pack.yml").write_text(
        "id: mine\nintents:\n  Test:\n    signals: [{pattern: 'pytest', weight: 3}]\n"
        "    candidates: [{path: tests/test_core.py, reason: our tests}]\n"
    )
    s, _ = make(workspace, dsh_home)
    s.warm()
    assert s.knowledge.row("Test", "tests/test_core.py") is None  # built-in packs only
    assert s.knowledge.row("Doc", "README.md") == Row(seed=1.0)


@pytest.mark.parametrize("cfg", [{"learn": False}, {"seed": False}])
def test_seed_switched_off(workspace, dsh_home, cfg):
    s, _ = make(workspace, dsh_home, **cfg)
    s.warm()
    assert s.seeded == 0 and s.knowledge.rows == {}


# ---------------------------------------------------------------------- online learning


def test_followed_closes_the_window_and_moves_counts(workspace, dsh_home):
    s, lines = make(workspace, dsh_home)
    note = s.post_execute(call("grep", {"pattern": "pytest fixture"}))[0]
    assert note.source.targets == ["tests/conftest.py", "pyproject.toml", "tests/test_core.py"]
    s.post_execute(call("bash", {"command": "make"}))  # untouched call inside the window
    s.post_execute(call("Read", {"file_path": str(workspace / "tests" / "test_core.py")}))
    s.post_execute(call("Read", {"file_path": "tests/conftest.py"}))  # window already closed
    assert [m for m in ledger_messages(lines) if m.startswith(("followed", "ignored"))] == [
        "followed Test tests/test_core.py"
    ]
    k = s.knowledge
    assert k.row("Test", "tests/test_core.py") == Row(followed=1, seed=1.0, last_used=T0)
    assert k.row("Test", "tests/conftest.py") == Row(ignored=1, seed=1.0, last_used=T0)  # passed over
    assert s.learning_status()["followed"] == 1 and s.learning_status()["openWindows"] == 0


def test_untouched_window_closes_as_ignored(workspace, dsh_home):
    s, lines = make(workspace, dsh_home, learnWindow=3)
    s.post_execute(call("grep", {"pattern": "__version__"}))
    for _ in range(3):  # calls 2..4: inside the window, untouched
        s.post_execute(call("bash", {"command": "make"}))
    assert not any(m.startswith("ignored") for m in ledger_messages(lines))
    s.post_execute(call("Read", {"path": "src/demo_pkg/__init__.py"}))  # call 5: too late
    assert [m for m in ledger_messages(lines) if m.startswith(("followed", "ignored"))] == ["ignored Version"]
    assert s.knowledge.row("Version", "src/demo_pkg/__init__.py").ignored == 1


def test_learn_false_learns_nothing(workspace, dsh_home):
    s, lines = make(workspace, dsh_home, learn=False)
    s.post_execute(call("grep", {"pattern": "__version__"}))
    s.post_execute(call("read", {"path": "src/demo_pkg/__init__.py"}))
    assert not any(m.startswith("followed") for m in ledger_messages(lines))
    assert s.knowledge.rows == {}


def _learn_round(s: Suggester, session: str, workspace: Path) -> list[str]:
    note = s.post_execute(call("grep", {"pattern": "pytest fixture"}, session=session))[0]
    s.post_execute(call("read", {"path": "tests/test_core.py"}, session=session))
    return note.source.targets


def test_learned_order_changes_and_persists_across_restart(workspace, dsh_home):
    s, lines = make(workspace, dsh_home)
    assert _learn_round(s, "a", workspace) == ["tests/conftest.py", "pyproject.toml", "tests/test_core.py"]
    assert _learn_round(s, "b", workspace) == ["tests/conftest.py", "pyproject.toml", "tests/test_core.py"]
    learned = s.post_execute(call("grep", {"pattern": "pytest fixture"}, session="c"))[0].source.targets
    assert learned == ["tests/test_core.py", "tests/conftest.py", "pyproject.toml"]
    assert ledger_messages(lines).count("followed Test tests/test_core.py") == 2
    s.flush()  # what `shutdown` does
    restarted, _ = make(workspace, dsh_home)
    again = restarted.post_execute(call("grep", {"pattern": "pytest fixture"}, session="d"))[0].source.targets
    assert again == learned


# ---------------------------------------------------------------------- dismissals


def test_family_dismissal_is_durable_and_expires_on_read(workspace, dsh_home):
    clock = Clock()
    s, lines = make(workspace, dsh_home, clock=clock, dismissTtl=60)
    record, expires = s.dismiss("Version", None)
    assert (record, expires) == ("dismissed Version *", "2025-11-30T05:21:00Z")
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert [m for m in ledger_messages(lines) if not m.startswith("activated")] == [
        "dismissed Version *",
        "suppressed dismissed Version",
    ]
    # a restarted sidecar on the same file still honours it
    other, olines = make(workspace, dsh_home, clock=clock, dismissTtl=60)
    assert other.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert ledger_messages(olines)[-1] == "suppressed dismissed Version"
    clock.t = T0 + 60  # expired: pruned on read, no timer
    assert len(other.post_execute(call("grep", {"pattern": "__version__"}, session="t2"))) == 1
    assert other.knowledge.active_dismissals() == {}
    other.dismiss("Doc", None)  # the flush prunes the expired one from the file
    ws = json.loads(kfile(dsh_home).read_text())["workspaces"]["path:" + workspace.resolve().as_posix()]
    assert ws["dismissals"] == {"Doc": {"*": T0 + 60 + 60}}


def test_path_dismissal_drops_the_candidate(workspace, dsh_home):
    s, lines = make(workspace, dsh_home)
    record, _ = s.dismiss("Test", "./tests/conftest.py")
    assert record == "dismissed Test tests/conftest.py"
    note = s.post_execute(call("grep", {"pattern": "pytest fixture"}))[0]
    assert note.source.targets == ["pyproject.toml", "tests/test_core.py"]
    with pytest.raises(ValueError, match="family: unknown intent 'Nope'"):
        s.dismiss("Nope", None)


def test_a_notes_targets_are_filtered_against_one_reading_of_the_dismissals(workspace, dsh_home, monkeypatch):
    clock = Clock()
    s, _ = make(workspace, dsh_home, clock=clock)
    s.dismiss("Test", "./tests/conftest.py")
    s.dismiss("Test", "pyproject.toml")
    s.dismiss("Doc", None)
    s.dismiss("Doc", "tests/test_core.py")  # another intent's: not the Test note's
    assert s.dismissals.paths_dismissed("Test") == {"tests/conftest.py", "pyproject.toml"}
    assert s.dismissals.paths_dismissed("Doc") == {"*", "tests/test_core.py"}
    readings = []
    active = s.knowledge.active_dismissals
    monkeypatch.setattr(s.knowledge, "active_dismissals", lambda: readings.append(1) or active())
    note = s.post_execute(call("grep", {"pattern": "pytest fixture"}))[0]
    assert note.source.targets == ["tests/test_core.py"]
    assert len(readings) == 2  # the family's dismissal, then the targets' (three targets found)
    clock.t += 10**9  # every dismissal expired
    assert s.dismissals.paths_dismissed("Test") == frozenset()


# ---------------------------------------------------------------------- sticky section


def test_section_off_by_default(workspace, dsh_home):
    s, _ = make(workspace, dsh_home)
    assert s.section_text(None) is None


def test_sticky_section_ttl_and_invalidation(workspace, dsh_home):
    clock = Clock()
    s, lines = make(workspace, dsh_home, clock=clock, sectionMode="sticky", sectionTtl=300)
    index = s.section_text("s").splitlines()
    assert index[0] == "search-suggester: where things live in this repository:"
    assert "- Test: tests/conftest.py, pyproject.toml, tests/test_core.py" in index
    assert "- Doc: README.md, docs/index.md" in index
    assert all(re.fullmatch(r"- [A-Z][a-z]+: [^,\s]+(, [^,\s]+){0,2}", line) for line in index[1:])
    s.post_execute(call("grep", {"pattern": "pytest fixture"}, session="s"))
    text = s.section_text("s")
    assert text == (
        "search-suggester: in this repository, the tests and their fixtures lives here:\n"
        "- tests/conftest.py — shared pytest fixtures\n"
        "- pyproject.toml — pytest configuration ([tool.pytest.ini_options])\n"
        "- tests/test_core.py — a test module"
    )
    assert ledger_messages(lines).count("section rebuilt (ttl 300)") == 2
    clock.t += 299
    assert s.section_text("s") == text
    assert ledger_messages(lines).count("section rebuilt (ttl 300)") == 2  # cached
    clock.t += 1
    s.section_text("s")
    assert ledger_messages(lines).count("section rebuilt (ttl 300)") == 3  # TTL passed
    s.invalidate()  # dsh/toolsChanged
    s.section_text("s")
    assert ledger_messages(lines).count("section rebuilt (ttl 300)") == 4


def test_section_lists_graph_proven_paths_first(workspace, dsh_home):
    s, _ = make(workspace, dsh_home, sectionMode="sticky")
    s.proves = lambda intent, path: path == "tests/test_core.py"
    s.post_execute(call("grep", {"pattern": "pytest fixture"}, session="s"))
    assert s.section_text("s").splitlines()[1:] == ["- tests/test_core.py — a test module"]


# ---------------------------------------------------------------------- replay, two passes


def test_second_replay_pass_keeps_precision_and_recall_and_ranks_better(workspace, dsh_home):
    from bench.suggester_learning import two_passes

    cold, learned = two_passes(workspace, dsh_home, episodes=8)
    assert learned.precision >= cold.precision == 1.0
    assert learned.recall >= cold.recall == 1.0
    assert cold.top1 < 1.0 and learned.top1 == 1.0  # the pack's first guess was wrong for Test
    assert learned.rank == 1.0 < cold.rank
    assert (learned.calls, learned.notes) == (cold.calls, cold.notes) == (32, 8)


@pytest.mark.slow
def test_replay_trace_second_pass_over_stdio_keeps_precision_and_recall(dsh_home, monkeypatch):
    # the two sidecars forked (support.forkserver): what is tested is what the first one learned
    # and flushed at its exit, which the second reads, not how they start
    monkeypatch.setattr(dsh_sidecar.evaluation.trace, "server_command", forked_command)
    from bench.suggester_learning import shopcart_two_passes

    first, second = shopcart_two_passes(dsh_home)
    assert second.precision >= first.precision
    assert second.recall >= first.recall
    assert second.calls == first.calls == 50
    doc = json.loads(kfile(dsh_home).read_text())
    rows = [r for ws in doc["workspaces"].values() for paths in ws["rows"].values() for r in paths.values()]
    assert sum(r["followed"] for r in rows) > 0  # the first sidecar learned and flushed at shutdown


def test_dismissed_path_is_checked_and_normalised(workspace, dsh_home):
    s, lines = make(workspace, dsh_home)
    with pytest.raises(ValueError, match="path: must not contain control characters"):
        s.dismiss("Test", "a.py\n[2025-11-30T05:20:00.000Z] suggest Version 0.99 1 targets evil")
    with pytest.raises(ValueError, match="path: longer than 1024 characters"):
        s.dismiss("Test", "a" * 1025)
    for outside in ("../../etc/passwd", "/etc/passwd", "tests/../../x.py"):
        with pytest.raises(ValueError, match="path: must be a repo-relative path inside the workspace"):
            s.dismiss("Test", outside)
    record, _ = s.dismiss("Test", str(workspace.resolve() / "tests" / "conftest.py"))
    assert record == "dismissed Test tests/conftest.py"
    assert ledger_messages(lines) == ["dismissed Test tests/conftest.py"]


def test_knowledge_is_keyed_by_repository_identity_and_survives_a_move(tmp_path, dsh_home):
    import shutil

    first = tmp_path / "first" / "pyproj"
    copy_fixture("pyproj", first)
    (first / ".git").mkdir()
    (first / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (first / ".git" / "config").write_text('[remote "origin"]\n\turl = git@github.com:Team/PyProj.git\n')
    s, _ = make(first, dsh_home)
    assert s.identity == "remote:github.com/team/pyproj"
    s.dismiss("Owner", None)
    moved = tmp_path / "elsewhere" / "renamed"
    shutil.move(str(first.parent), str(tmp_path / "elsewhere"))
    (tmp_path / "elsewhere" / "pyproj").rename(moved)
    again, lines = make(moved, dsh_home)
    assert again.identity == "remote:github.com/team/pyproj"
    assert again.post_execute(call("grep", {"pattern": "CODEOWNERS maintainers"})) == []
    assert ledger_messages(lines)[-1] == "suppressed dismissed Owner"
