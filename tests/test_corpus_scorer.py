"""The corpus scorer's definitions (``dsh_sidecar.evaluation``) on hand-made data: pooling,
per-intent figures, the ledger summary and the trajectory figures with their baselines.
No server here; the replays of the corpus itself are in ``test_corpus_scores.py``."""

from __future__ import annotations

import json
import random
from pathlib import Path

from dsh_sidecar.evaluation import (
    CorpusRepo,
    IntentRun,
    Trajectory,
    format_intent_report,
    intent_figures,
    intent_report,
    ledger_summary,
    pooled,
    score,
    trajectory_figures,
    trajectory_summary,
)
from dsh_sidecar.evaluation.trajectories import _mentions
from support.replay import line, note  # the fixture scorer test's note/line builders


def test_per_intent_counts_and_pooling():
    a = score(
        [line("a", 1, "Version", ["v.py", "pyproject.toml"]), line("a", 1), line("a", 2, "Doc", ["README.md"])],
        [[note("Version", "v.py")], [note("Config", "x.toml")], []],
    )
    b = score(
        [line("b", 1, "Doc", ["README.md"]), line("b", 1, "Doc", ["README.md"]), line("b", 2, "Owner", ["LICENSE"])],
        [[], [note("Doc", "README.md")], [note("Owner", "CODEOWNERS")]],
    )
    assert a.by_intent == {
        "Version": {"notes": 1, "correct": 1, "expected": 2, "found": 1, "episodes": 1},
        "Config": {"notes": 1, "correct": 0, "expected": 0, "found": 0, "episodes": 0},
        "Doc": {"notes": 0, "correct": 0, "expected": 1, "found": 0, "episodes": 1},
    }
    p = pooled([a, b])
    assert (p.calls, p.notes, p.correct, p.expected_targets, p.found_targets) == (6, 4, 2, 5, 2)
    assert p.precision == 0.5 and p.recall == 0.4
    assert p.firsts == [1, 2] and p.first_note == 1.5  # positions pooled, not a mean of means
    assert p.line() == "calls=6 notes=4 precision=0.50 recall=0.40 first-note=1.5"
    assert intent_figures(p) == {
        "Config": {"notes": 1, "precision": 0.0, "expected": 0, "recall": 0.0},
        "Doc": {"notes": 1, "precision": 1.0, "expected": 2, "recall": 0.5},
        "Owner": {"notes": 1, "precision": 0.0, "expected": 1, "recall": 0.0},
        "Version": {"notes": 1, "precision": 1.0, "expected": 2, "recall": 0.5},
    }
    empty = pooled([])
    assert (empty.calls, empty.precision, empty.recall, empty.first_note) == (0, 0.0, 0.0, 0.0)


def test_intent_report_splits_tune_and_heldout():
    a = score([line("a", 1, "Doc", ["README.md"])], [[note("Doc", "README.md")]])
    b = score([line("b", 1, "Doc", ["README.md"])], [[note("Doc", "docs/x.md")]])
    runs = [
        IntentRun(CorpusRepo("o/a", "0" * 40, "a", "python", "tune", Path("a")), a, [], {"suggest": 1}),
        IntentRun(CorpusRepo("o/b", "1" * 40, "b", "go", "heldout", Path("b")), b, [], {"suggest": 1}),
    ]
    rep = intent_report(runs)
    assert rep["tune"]["precision"] == 1.0 and rep["heldout"]["precision"] == 0.0
    assert rep["pooled"]["precision"] == 0.5 and rep["pooled"]["notes"] == 2
    assert rep["ledger"] == {"suggest": 2}
    table = format_intent_report(rep)
    assert "o/b                          heldout      1     1      0.00   0.00       0.00" in table
    assert "pooled all" in table
    assert table.splitlines()[-1] == f"{'all':12} {2:>24}"


def test_ledger_summary_counts_the_seed_lines():
    lines = [
        "[2026-12-01T09:00:00.000Z] activated (packs generic intents 4 threshold 0.75)",
        "[2026-12-01T09:00:00.001Z] suggest Version 0.88 2 targets a.py,b.toml",
        "[2026-12-01T09:00:00.002Z] suppressed turn-cap Doc",
        "[2026-12-01T09:00:00.003Z] suppressed turn-cap Symbol",
        "[2026-12-01T09:00:00.004Z] abstained no-companions Owner 0.86",
        "abstained foreign-workspace",
        "followed Version a.py",
    ]
    assert ledger_summary(lines) == {
        "abstained foreign-workspace": 1,
        "abstained no-companions": 1,
        "abstained no-companions Owner": 1,
        "suggest": 1,
        "suggest Version": 1,
        "suppressed turn-cap": 2,
        "suppressed turn-cap Doc": 1,
        "suppressed turn-cap Symbol": 1,
    }


def call(i, cls, name, inp):
    return {"i": i, "class": cls, "params": {"sessionId": "t", "turn": 1, "tool": {"name": name, "input": inp}}}


def test_trajectory_figures_and_baselines():
    calls = [
        call(0, "search", "bash", {"command": "grep -rn foo /testbed/pkg"}),
        call(1, "read", "read", {"file_path": "pkg/other.py"}),
        call(2, "search", "bash", {"command": "find . -name '*.py'"}),
        call(3, "edit", "edit", {"file_path": "pkg/core.py", "command": "sed -i s/a/b/ pkg/core.py"}),
        call(4, "run", "bash", {"command": "cat /testbed/pkg/late.py"}),
    ]
    t = Trajectory({"id": "t", "repo": "o/n", "gold": ["pkg/core.py"], "firstEdit": 3, "ownSearchHit": 0}, calls)
    notes = [
        [note("Symbol", "pkg/other.py")],  # useful: read at call 1
        [],
        [note("Usage", "pkg/nope.py", "pkg/core.py")],  # names gold before the first edit
        [note("Doc", "pkg/late.py")],  # at the edit: not before it; "run" class reads do not count
        [],
    ]
    files = ["pkg/core.py", "pkg/other.py", "pkg/late.py", "README.md"]
    f = trajectory_figures(t, notes, files)
    rng = random.Random(int("e3b98a4da31a127d4bde6e43033f66ba274cab0eb7eb1c70ec41402bf6273dd8", 16))  # sha256("t")
    picks = [rng.choice(sorted(files)) for _ in range(2)]  # two search calls before the first edit
    assert {k: f[k] for k in ("calls", "search", "notes", "useful", "gold_hit", "own_hit")} == {
        "calls": 5,
        "search": 2,
        "notes": 3,
        "useful": 2,
        "gold_hit": True,
        "own_hit": True,
    }
    assert f["random_notes"] == 2
    assert f["random_hit"] == ("pkg/core.py" in picks)
    assert trajectory_figures(t, notes, files) == f  # seeded: the same draw every time
    s = trajectory_summary([f, {**f, "gold_hit": False, "own_hit": False, "useful": 0}])
    assert s["traces"] == 2 and s["notes"] == 6 and s["search_calls"] == 4
    assert s["useful_precision"] == round(2 / 6, 4)
    assert s["gold_hit_before_first_edit"] == 0.5 and s["own_search_hit_before_first_edit"] == 0.5
    assert s["notes_per_100_search"] == 150.0


def test_trajectory_without_edit_counts_every_call():
    calls = [call(0, "search", "bash", {"command": "ls"}), call(1, "search", "bash", {"command": "ls src"})]
    t = Trajectory({"id": "u", "repo": "o/n", "gold": ["src/a.py"], "firstEdit": None, "ownSearchHit": None}, calls)
    f = trajectory_figures(t, [[], [note("Symbol", "src/a.py")]], ["src/a.py"])
    assert f["gold_hit"] is True and f["own_hit"] is False
    assert f["random_notes"] == 2 and f["random_hit"] is True  # one file: the draw is the gold file


def test_a_path_counts_only_as_a_whole_path():
    assert _mentions(json.dumps({"command": "git checkout a/b.py\npython3 -m pytest"}), "a/b.py")
    assert _mentions(json.dumps({"command": "cat /testbed/a/b.py | head"}), "a/b.py")
    assert _mentions(json.dumps({"command": "echo x >a/b.py"}), "a/b.py")
    assert not _mentions(json.dumps({"command": "cat a/b.pyc"}), "a/b.py")
    assert not _mentions(json.dumps({"command": "cat xa/b.py"}), "a/b.py")
