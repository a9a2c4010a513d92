"""The fixed 50-call replay (docs/benchmarks.md, "Suggester replay baseline"): its numbers through
the real server path, their determinism, the scorer's definitions, and ``dsh-search replay``."""

from __future__ import annotations

import subprocess
import sys

import pytest
from dsh_sidecar.evaluation import TraceError, percentile, read_trace, replay, score
from support.replay import line, note
from support.sidecar import DATA, home_env

TRACE = DATA / "replay" / "shopcart-50.jsonl"
WORKSPACE = DATA / "workspaces" / "shopcart"
#: The baseline recorded in the README ("Suggester replay baseline"); the plan's own is
#: calls=50 notes=5 precision=1.00 recall=0.70 first-note=1 and ours must be at least as good.
BASELINE = "calls=50 notes=17 precision=1.00 recall=0.92 first-note=1"


def test_scorer_definitions():
    trace = [
        line("a", 1, "Version", ["v.py", "pyproject.toml"]),  # episode 1 (2 targets)
        line("a", 1, "Version", ["v.py", "pyproject.toml"]),
        line("a", 1),  # silence expected
        line("a", 2, "Test", ["conftest.py"]),  # episode 2: no correct note
        line("b", 1, "Doc", ["README.md"]),  # episode 3: correct note at position 2
        line("b", 1, "Doc", ["README.md"]),
    ]
    notes = [
        [],
        [note("Version", "v.py", "other.py")],  # correct, names 1 of 2 targets
        [note("Config", "x.toml")],  # false positive (expected silence)
        [note("Doc", "conftest.py")],  # wrong intent
        [],
        [note("Doc", "README.md")],
    ]
    s = score(trace, notes)
    assert (s.calls, s.notes, s.correct) == (6, 4, 2)
    assert s.precision == 0.5
    assert (s.found_targets, s.expected_targets) == (2, 4) and s.recall == 0.5
    assert s.first_note == 2.0  # positions 2 and 2
    assert s.line() == "calls=6 notes=4 precision=0.50 recall=0.50 first-note=2"


def test_read_trace_errors():
    with pytest.raises(TraceError, match="line 2: not JSON"):
        read_trace(['{"params": {}, "expect": null}', "{"])
    with pytest.raises(TraceError, match="line 1: expect must be null"):
        read_trace(['{"params": {}, "expect": {"intent": "Doc"}}'])


def test_percentile_nearest_rank():
    assert percentile([], 99) == 0.0
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0


def test_fixed_replay_meets_the_baseline_and_is_deterministic(dsh_home):
    trace = read_trace(TRACE.read_text("utf-8").splitlines())
    assert len(trace) == 50
    first, notes1, ledger = replay(trace, WORKSPACE, dsh_home=dsh_home / "one")
    per_call: list[list[str]] = []
    second, notes2, _ = replay(trace, WORKSPACE, dsh_home=dsh_home / "two", per_call=per_call)
    assert first.line() == BASELINE
    assert second.line() == BASELINE
    assert notes1 == notes2  # byte-for-byte the same notes, call by call
    # at least as good as the plan's recorded baseline
    assert first.precision >= 1.0 and first.recall >= 0.70 and first.first_note <= 1
    suggests = [m.split("] ", 1)[1] for m in ledger if "] suggest " in m]
    assert len(suggests) == first.notes
    assert (
        suggests[0]
        == "suggest Usage 0.96 4 targets src/shopcart/pricing.py,src/shopcart/api.py,src/shopcart/__init__.py,tests/test_pricing.py"
    )
    # the ledger lines of each call, line by line: a noted call's is its `suggest` line
    assert len(per_call) == 50
    noted = [i for i, n in enumerate(notes2) if n]
    assert [[m for m in per_call[i] if m.startswith("suggest ")] for i in noted] == [[m] for m in suggests]
    assert all(not any(m.startswith("suggest ") for m in per_call[i]) for i in range(50) if i not in noted)


def test_cli_replay_prints_the_same_line(dsh_home, tmp_path):
    short = tmp_path / "short.jsonl"
    short.write_text("".join(TRACE.read_text("utf-8").splitlines(keepends=True)[:5]))
    out = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "replay", str(short), "--workspace", str(WORKSPACE)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**home_env(dsh_home), "PATH": "/usr/bin:/bin"},
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "calls=5 notes=2 precision=1.00 recall=1.00 first-note=1"
    assert lines[1].startswith("latency p50=")
    bad = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "replay", str(tmp_path / "none.jsonl"), "--workspace", str(WORKSPACE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "cannot read" in bad.stderr
