"""Replay a JSONL trace of ``dsh/postExecute`` calls through the real server and score it
(issue #5, "Benchmark and its definitions"; used by ``dsh-search replay`` and
``bench/suggester.py``).

Trace lines: ``{"params": {<dsh/postExecute params>}, "expect": {"intent", "targets": [...]} | null}``.

* precision = notes whose intent equals the line's expected intent and whose targets include
  an expected target ÷ all notes (a note on a line expecting ``null`` is a false positive);
* an episode = consecutive lines of one session and turn with the same expected intent and
  targets; recall = expected targets named by a correct note inside their episode ÷ all
  expected targets;
* first-note = mean 1-based position within its episode of the first correct note (over
  the episodes that have one; 0 when none has).

The summary line is ``calls=<n> notes=<n> precision=<p> recall=<r> first-note=<f>`` (two
decimals for precision and recall, the plan's baseline format), followed by the per-call
round-trip latency (client side, milliseconds).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_protocol.stdio_client import StdioClient

#: Seconds the replay waits for the workspace graph (symbol index) before it starts.
GRAPH_WAIT_S: Final = 180.0


class TraceError(ValueError):
    """A malformed trace line; the message names the line number."""


@dataclass(frozen=True)
class TraceLine:
    """One call: its ``dsh/postExecute`` params and the expected note (``None``: silence)."""

    params: dict[str, Any]
    intent: str | None
    targets: tuple[str, ...]

    @property
    def episode_key(self) -> tuple[Any, ...] | None:
        if self.intent is None:
            return None
        return (self.params.get("sessionId"), self.params.get("turn"), self.intent, self.targets)


def read_trace(lines: Iterable[str]) -> list[TraceLine]:
    """Parse JSONL trace lines (blank lines skipped). Raises :class:`TraceError`."""
    out: list[TraceLine] = []
    for no, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError:
            raise TraceError(f"line {no}: not JSON") from None
        if not isinstance(obj, dict) or not isinstance(obj.get("params"), dict):
            raise TraceError(f"line {no}: needs an object with params")
        expect = obj.get("expect")
        if expect is None:
            out.append(TraceLine(obj["params"], None, ()))
            continue
        if (
            not isinstance(expect, dict)
            or not isinstance(expect.get("intent"), str)
            or not isinstance(expect.get("targets"), list)
        ):
            raise TraceError(f"line {no}: expect must be null or {{intent, targets}}")
        out.append(TraceLine(obj["params"], expect["intent"], tuple(str(t) for t in expect["targets"])))
    return out


@dataclass
class Score:
    """The replay's figures (see the module docstring)."""

    calls: int
    notes: int
    correct: int
    precision: float
    recall: float
    first_note: float
    expected_targets: int
    found_targets: int
    latencies_ms: list[float] = field(default_factory=list)

    def line(self) -> str:
        """``calls=<n> notes=<n> precision=<p> recall=<r> first-note=<f>``."""
        first = f"{self.first_note:.2f}".rstrip("0").rstrip(".")
        return f"calls={self.calls} notes={self.notes} precision={self.precision:.2f} recall={self.recall:.2f} first-note={first}"


def _correct(line: TraceLine, note: dict[str, Any]) -> bool:
    source = note.get("source", {})
    return (
        line.intent is not None
        and source.get("intent") == line.intent
        and bool(set(source.get("targets", [])) & set(line.targets))
    )


def score(trace: Sequence[TraceLine], notes: Sequence[list[dict[str, Any]]]) -> Score:
    """Score ``notes[i]`` (the ``additionalContexts`` answered to ``trace[i]``)."""
    all_notes = sum(len(n) for n in notes)
    correct = sum(1 for line, ns in zip(trace, notes) for n in ns if _correct(line, n))
    episodes: list[list[int]] = []
    prev: tuple[Any, ...] | None = None
    for i, line in enumerate(trace):
        key = line.episode_key
        if key is None:
            prev = None
            continue
        if key != prev:
            episodes.append([])
        episodes[-1].append(i)
        prev = key
    expected = found = 0
    firsts: list[int] = []
    for ep in episodes:
        targets = set(trace[ep[0]].targets)
        named: set[str] = set()
        first = None
        for pos, i in enumerate(ep, 1):
            for n in notes[i]:
                if _correct(trace[i], n):
                    named |= targets & set(n["source"]["targets"])
                    first = first or pos
        expected += len(targets)
        found += len(named)
        if first is not None:
            firsts.append(first)
    return Score(
        calls=len(trace),
        notes=all_notes,
        correct=correct,
        precision=correct / all_notes if all_notes else 0.0,
        recall=found / expected if expected else 0.0,
        first_note=sum(firsts) / len(firsts) if firsts else 0.0,
        expected_targets=expected,
        found_targets=found,
    )


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (nearest rank) of ``values``; 0.0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), int(-(-q * len(ordered) // 100))))
    return ordered[rank - 1]


def server_command() -> list[str]:
    """``dsh-search serve`` of this Python."""
    return [sys.executable, "-m", "dsh_sidecar", "serve"]


def replay(
    trace: Sequence[TraceLine],
    workspace: Path,
    suggester: dict[str, Any] | None = None,
    dsh_home: Path | None = None,
    graph_wait_s: float = GRAPH_WAIT_S,
) -> tuple[Score, list[list[dict[str, Any]]], list[str]]:
    """Spawn the sidecar over stdio on ``workspace``, wait for its workspace graph, send every
    line's params as ``dsh/postExecute``; return the score (with per-call latencies), the notes
    and the ledger lines received. ``suggester`` overrides knobs (``enabled`` is forced on).
    Raises ``RuntimeError`` when the sidecar refuses a request or the graph never gets ready."""
    with tempfile.TemporaryDirectory(prefix="dsh-replay-") as tmp:
        env = dict(os.environ)
        env["DSH_HOME"] = str(dsh_home or Path(tmp))
        client = StdioClient(server_command(), env)
        try:
            client.call(
                "initialize",
                {
                    "processId": os.getpid(),
                    "capabilities": {},
                    "rootUri": workspace.resolve().as_uri(),
                    "initializationOptions": {"suggester": {**(suggester or {}), "enabled": True}},
                },
            )
            client.send("initialized", {}, notify=True)
            deadline = time.monotonic() + graph_wait_s
            while not client.call("dsh/status", {})["suggester"]["graph"]["ready"]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the workspace graph was not ready within {graph_wait_s:.0f} s")
                time.sleep(0.05)
            notes: list[list[dict[str, Any]]] = []
            latencies: list[float] = []
            for line in trace:
                t0 = time.perf_counter()
                result = client.call("dsh/postExecute", line.params)
                latencies.append((time.perf_counter() - t0) * 1000)
                notes.append(result["additionalContexts"])
        finally:
            client.close()
    result_score = score(trace, notes)
    result_score.latencies_ms = latencies
    return result_score, notes, [m for m in client.logs if "] " in m]


def latency_line(latencies_ms: Sequence[float]) -> str:
    """``latency p50=<ms> p99=<ms> max=<ms>`` (per call, milliseconds)."""
    return (
        f"latency p50={percentile(latencies_ms, 50):.3f}ms p99={percentile(latencies_ms, 99):.3f}ms "
        f"max={max(latencies_ms, default=0.0):.3f}ms"
    )
