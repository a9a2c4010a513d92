"""Suggester learning benchmark (docs/SCHEME.md, learning): the same trace replayed twice, cold then after learning.

The trace (:func:`trace`, built in code, deterministic) is a run of short sessions over the
``tests/data/workspaces/pyproj`` fixture. Each episode is one session: a search-class call
whose intent and expected target are known (``expect``), the agent then reading that target
(the learning signal: ``followed``), and unrelated calls (``expect: null``). The expected
targets are the repository's real habits, not the pack's first guesses: tests live in
``tests/test_core.py`` (the pack lists ``tests/conftest.py`` first), the docs in
``docs/index.md`` (the pack lists ``README.md`` first).

Pass 1 runs with an empty knowledge file; pass 2 is a *restarted* suggester on the same file
(so it reads what pass 1 flushed at its shutdown) replaying the same trace.

Figures per pass (definitions of the suggester replay benchmark, docs/benchmarks.md):

* precision = notes whose intent is the expected one and whose targets include an expected
  target ÷ all notes (a note on a line expecting null is a false positive);
* recall = expected targets named by a correct note inside their episode ÷ expected targets;
* first-note = mean 1-based position, within its episode, of the first correct note;
* rank = mean 1-based position of the expected target inside the correct note (ours: what the
  learning moves), top1 = share of correct notes listing the expected target first;
* the cost of one knowledge flush with the file at its row cap (5,000 rows) and its size;
* p50/p99 ms = wall time of ``post_execute`` per call (includes the knowledge flushes; with
  48 calls p99 is the slowest call, the first one, which activates: packs, file list, seed).

Pass 2 must keep precision and not lose recall (asserted in
``tests/unit/suggester/test_suggester_learning.py``). The same two passes are also run on the fixed
50-call trace (``tests/data/replay/shopcart-50.jsonl``) through the real server over stdio.

Usage: ``python bench/suggester_learning.py [--episodes 12]``.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "data" / "workspaces" / "pyproj"

#: (search call, expected intent, expected target) — the repository's habits.
EPISODES: list[tuple[dict[str, Any], str, str]] = [
    ({"name": "Grep", "input": {"pattern": "pytest fixture"}}, "Test", "tests/test_core.py"),
    ({"name": "Grep", "input": {"pattern": "readme documentation"}}, "Doc", "docs/index.md"),
    ({"name": "Grep", "input": {"pattern": "__version__"}}, "Version", "src/demo_pkg/__init__.py"),
    ({"name": "Grep", "input": {"pattern": "install_requires dependencies"}}, "Dependency", "pyproject.toml"),
]


def trace(episodes: int) -> list[dict[str, Any]]:
    """``episodes`` sessions cycling through :data:`EPISODES`, four lines each."""
    lines = []
    for i in range(episodes):
        tool, intent, target = EPISODES[i % len(EPISODES)]
        sid = f"ep{i}"

        def line(
            turn: int, tool: dict[str, Any], expect: dict[str, Any] | None = None, sid: str = sid
        ) -> dict[str, Any]:
            return {"params": {"sessionId": sid, "turn": turn, "tool": tool}, "expect": expect}

        lines.append(line(1, tool, {"intent": intent, "targets": [target]}))
        lines.append(line(1, {"name": "bash", "input": {"command": "make lint"}}))
        lines.append(line(2, {"name": "Read", "input": {"file_path": target}}))
        lines.append(line(2, {"name": "Edit", "input": {"path": target}}))
    return lines


@dataclass
class PassResult:
    """The figures of one pass (see the module docstring)."""

    calls: int
    notes: int
    precision: float
    recall: float
    first_note: float
    rank: float
    top1: float
    p50_ms: float
    p99_ms: float

    def line(self, name: str) -> str:
        """One table row."""
        return (
            f"{name:<8} calls={self.calls} notes={self.notes} precision={self.precision:.2f} "
            f"recall={self.recall:.2f} first-note={self.first_note:.2f} rank={self.rank:.2f} "
            f"top1={self.top1:.2f} p50={self.p50_ms:.3f}ms p99={self.p99_ms:.3f}ms"
        )


def replay(suggester: Suggester, lines: list[dict[str, Any]]) -> PassResult:
    """Run ``lines`` through ``suggester.post_execute`` and score them."""
    notes = correct = 0
    named: set[tuple[int, str]] = set()
    expected: set[tuple[int, str]] = set()
    first: dict[int, int] = {}
    ranks: list[int] = []
    times: list[float] = []
    episode, prev_key, pos = -1, None, 0
    for line in lines:
        exp = line["expect"]
        p = line["params"]
        key = (p["sessionId"], p["turn"], None if exp is None else (exp["intent"], tuple(exp["targets"])))
        if key != prev_key:
            episode, prev_key, pos = episode + 1, key, 0
        pos += 1
        if exp is not None:
            expected.update((episode, t) for t in exp["targets"])
        t0 = time.perf_counter()
        out = suggester.post_execute(PostExecuteParams.model_validate(p))
        times.append((time.perf_counter() - t0) * 1000)
        for note in out:
            notes += 1
            hits = [t for t in note.source.targets if exp and t in exp["targets"]]
            if exp is None or note.source.intent != exp["intent"] or not hits:
                continue
            correct += 1
            named.update((episode, t) for t in hits)
            first.setdefault(episode, pos)
            ranks.append(note.source.targets.index(hits[0]) + 1)
    times.sort()
    return PassResult(
        calls=len(lines),
        notes=notes,
        precision=correct / notes if notes else 1.0,
        recall=len(named) / len(expected) if expected else 1.0,
        first_note=statistics.fmean(first.values()) if first else 0.0,
        rank=statistics.fmean(ranks) if ranks else 0.0,
        top1=sum(r == 1 for r in ranks) / len(ranks) if ranks else 0.0,
        p50_ms=times[len(times) // 2],
        p99_ms=times[min(len(times) - 1, int(len(times) * 0.99))],
    )


def two_passes(workspace: Path, home: Path, episodes: int = 12, **config: Any) -> tuple[PassResult, PassResult]:
    """Pass 1 on an empty knowledge file, shutdown flush, pass 2 on a restarted suggester. What
    is learned is measured on every note: the per-note confidence's bar is 0 unless given (the
    trace's Test notes name test modules, which the shipped model holds back)."""
    lines = trace(episodes)
    cfg = parse_suggester_config({"enabled": True, "minConfidence": 0, **config})
    results = []
    for _ in range(2):
        s = Suggester(workspace, cfg, home)
        results.append(replay(s, lines))
        s.flush()  # what the sidecar does on `shutdown`
    return results[0], results[1]


def shopcart_two_passes(home: Path) -> tuple[Any, Any]:
    """The fixed replay trace (``tests/data/replay/shopcart-50.jsonl``) replayed twice through the
    real server over stdio (:func:`dsh_sidecar.evaluation.replay`) on one ``$DSH_HOME``:
    the second sidecar starts from what the first flushed at ``shutdown``."""
    from dsh_sidecar.evaluation import read_trace, replay

    root = FIXTURE.parent.parent
    trace_lines = read_trace((root / "replay" / "shopcart-50.jsonl").read_text("utf-8").splitlines())
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "shopcart"
        shutil.copytree(root / "workspaces" / "shopcart", ws)
        first, _, _ = replay(trace_lines, ws, dsh_home=home)
        second, _, _ = replay(trace_lines, ws, dsh_home=home)
    return first, second


def flush_cost(home: Path, rows: int = 5000, flushes: int = 50) -> tuple[float, float, int]:
    """A knowledge file at its row cap: (p50 ms, p99 ms) of one learning flush (lock, read,
    merge, atomic write + fsync) and the file's size in bytes."""
    from dsh_sidecar.suggester.knowledge import Knowledge

    path = home / "knowledge.json"
    k = Knowledge(path, "/bench/workspace")
    for i in range(rows):
        k.record("Symbol", f"src/pkg{i % 97}/module_{i}.py", followed=1)
    k.flush()
    times = []
    for i in range(flushes):
        k.record("Test", f"tests/test_{i % 7}.py", followed=1)
        t0 = time.perf_counter()
        k.flush()
        times.append((time.perf_counter() - t0) * 1000)
    times.sort()
    return times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))], path.stat().st_size


def main() -> None:
    """Print both passes of both traces."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=12)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        first, second = shopcart_two_passes(Path(tmp) / "home-shopcart")
        print("issue-5 trace tests/data/replay/shopcart-50.jsonl over stdio, same $DSH_HOME twice:")
        print(f"pass 1   {first.line()}")
        print(f"pass 2   {second.line()}")
        ok = second.precision >= first.precision and second.recall >= first.recall
        print(f"precision kept and recall not lost: {'yes' if ok else 'NO'}")
        print()
        ws = Path(tmp) / "pyproj"
        shutil.copytree(FIXTURE, ws)
        home = Path(tmp) / "home"
        cold, learned = two_passes(ws, home, args.episodes)
        print(f"suggester learning replay: {args.episodes} episodes, workspace tests/data/workspaces/pyproj")
        print(cold.line("cold"))
        print(learned.line("learned"))
        ok = learned.precision >= cold.precision and learned.recall >= cold.recall
        print(
            f"precision kept and recall not lost: {'yes' if ok else 'NO'}; "
            f"rank {cold.rank:.2f} -> {learned.rank:.2f}, top1 {cold.top1:.2f} -> {learned.top1:.2f}"
        )
        p50, p99, size = flush_cost(Path(tmp) / "home-flush")
        print()
        print(f"knowledge flush at the {5000}-row cap: p50={p50:.2f}ms p99={p99:.2f}ms file={size} bytes")


if __name__ == "__main__":
    main()
