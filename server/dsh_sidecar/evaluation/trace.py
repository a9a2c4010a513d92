"""Replay JSONL traces of ``dsh/postExecute`` calls through the real server and score them:
the fixed fixture trace (``dsh-search replay TRACE --workspace DIR``) and the evaluation corpus
(``dsh-search replay --corpus corpus --cache DIR``, ``bench/suggester.py --corpus``).
It spawns ``dsh-search serve`` over stdio: nothing here imports the server (an import-linter
contract keeps it so).

Trace lines: ``{"params": {<dsh/postExecute params>}, "expect": {"intent", "targets": [...]} | null}``,
optionally ``"opens": [...]`` (the repository files the call opened, searched inside or edited)
and ``"dirs": [...]`` (the folders its result's bare names are relative to), written by
``corpus/intents/build.py`` and read by the echo-aware labels (:mod:`.labels`).

* precision = notes whose intent equals the line's expected intent and whose targets include
  an expected target ÷ all notes (a note on a line expecting ``null`` is a false positive);
* an episode = consecutive lines of one session and turn with the same expected intent and
  targets; recall = expected targets named by a correct note inside their episode ÷ all
  expected targets;
* first-note = mean 1-based position within its episode of the first correct note (over
  the episodes that have one; 0 when none has);
* per intent: precision over the notes *of* that intent (the note's intent), recall over the
  episodes *expecting* that intent; pooled figures sum the counts of several traces (first-note
  pools the positions, it is not a mean of means).

The summary line is ``calls=<n> notes=<n> precision=<p> recall=<r> first-note=<f>`` (two
decimals for precision and recall, the plan's baseline format), followed by the per-call
round-trip latency (client side, milliseconds).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_protocol.models import MAX_TASK_CHARS
from dsh_protocol.stdio_client import StdioClient

#: Seconds the replay waits for the workspace graph (symbol index) before it starts.
GRAPH_WAIT_S: Final = 180.0


class TraceError(ValueError):
    """A malformed trace line; the message names the line number."""


@dataclass(frozen=True)
class TraceLine:
    """One call: its ``dsh/postExecute`` params, the expected note (``None``: silence) and the
    repository files the call opened, searched inside or edited (``opens``) and the folders its
    result's bare names are relative to (``dirs``)."""

    params: dict[str, Any]
    intent: str | None
    targets: tuple[str, ...]
    opens: tuple[str, ...] = ()
    dirs: tuple[str, ...] = ()

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
        shown: dict[str, tuple[str, ...]] = {}
        for key in ("opens", "dirs"):
            value = obj.get(key) or []
            if not isinstance(value, list):
                raise TraceError(f"line {no}: {key} must be a list of paths")
            shown[key] = tuple(str(p) for p in value)
        if expect is None:
            out.append(TraceLine(obj["params"], None, (), **shown))
            continue
        if (
            not isinstance(expect, dict)
            or not isinstance(expect.get("intent"), str)
            or not isinstance(expect.get("targets"), list)
        ):
            raise TraceError(f"line {no}: expect must be null or {{intent, targets}}")
        out.append(TraceLine(obj["params"], expect["intent"], tuple(str(t) for t in expect["targets"]), **shown))
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
    #: 1-based position of the first correct note of each episode that has one.
    firsts: list[int] = field(default_factory=list)
    #: intent → ``{"notes", "correct", "expected", "found", "episodes"}`` counts.
    by_intent: dict[str, dict[str, int]] = field(default_factory=dict)

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


def _intent_row(by: dict[str, dict[str, int]], intent: str) -> dict[str, int]:
    return by.setdefault(intent, {"notes": 0, "correct": 0, "expected": 0, "found": 0, "episodes": 0})


def score(trace: Sequence[TraceLine], notes: Sequence[list[dict[str, Any]]]) -> Score:
    """Score ``notes[i]`` (the ``additionalContexts`` answered to ``trace[i]``)."""
    all_notes = sum(len(n) for n in notes)
    correct = sum(1 for line, ns in zip(trace, notes) for n in ns if _correct(line, n))
    by: dict[str, dict[str, int]] = {}
    for line, ns in zip(trace, notes):
        for n in ns:
            row = _intent_row(by, str(n.get("source", {}).get("intent")))
            row["notes"] += 1
            row["correct"] += _correct(line, n)
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
        row = _intent_row(by, str(trace[ep[0]].intent))
        row["expected"] += len(targets)
        row["found"] += len(named)
        row["episodes"] += 1
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
        firsts=firsts,
        by_intent=by,
    )


def pooled(scores: Iterable[Score]) -> Score:
    """One :class:`Score` over several traces: counts summed, first-note over all episodes."""
    scores = list(scores)
    notes = sum(s.notes for s in scores)
    correct = sum(s.correct for s in scores)
    expected = sum(s.expected_targets for s in scores)
    found = sum(s.found_targets for s in scores)
    firsts = [f for s in scores for f in s.firsts]
    by: dict[str, dict[str, int]] = {}
    for s in scores:
        for intent, row in s.by_intent.items():
            acc = _intent_row(by, intent)
            for k, v in row.items():
                acc[k] += v
    return Score(
        calls=sum(s.calls for s in scores),
        notes=notes,
        correct=correct,
        precision=correct / notes if notes else 0.0,
        recall=found / expected if expected else 0.0,
        first_note=sum(firsts) / len(firsts) if firsts else 0.0,
        expected_targets=expected,
        found_targets=found,
        latencies_ms=[x for s in scores for x in s.latencies_ms],
        firsts=firsts,
        by_intent=by,
    )


def intent_figures(s: Score) -> dict[str, dict[str, float | int]]:
    """Per intent: ``notes``, ``precision`` (of its notes), ``expected`` targets, ``recall``."""
    out: dict[str, dict[str, float | int]] = {}
    for intent in sorted(s.by_intent):
        row = s.by_intent[intent]
        out[intent] = {
            "notes": row["notes"],
            "precision": round(row["correct"] / row["notes"], 4) if row["notes"] else 0.0,
            "expected": row["expected"],
            "recall": round(row["found"] / row["expected"], 4) if row["expected"] else 0.0,
        }
    return out


#: Ledger messages counted by :func:`ledger_summary` (the seed's shapes).
_LEDGER_COUNTED: Final = re.compile(
    r"^(?P<kind>suggest|suppressed|abstained)\s+(?P<a>\S+)(?:\s+(?P<b>[A-Z][A-Za-z]*))?"
)


def ledger_summary(lines: Iterable[str]) -> dict[str, int]:
    """Counts of the ledger's ``suggest <intent>``, ``suppressed <reason> <intent>`` and
    ``abstained <reason> [<intent>]`` lines (``[<ISO>] `` prefix optional), keyed
    ``"suggest"``, ``"suppressed <reason>"``, ``"abstained <reason>"`` and the same with
    ``" <intent>"`` appended; sorted by key."""
    c: Counter[str] = Counter()
    for raw in lines:
        msg = raw.split("] ", 1)[1] if raw.startswith("[") and "] " in raw else raw
        m = _LEDGER_COUNTED.match(msg)
        if not m:
            continue
        if m["kind"] == "suggest":
            c["suggest"] += 1
            c[f"suggest {m['a']}"] += 1
            continue
        c[f"{m['kind']} {m['a']}"] += 1
        if m["b"]:
            c[f"{m['kind']} {m['a']} {m['b']}"] += 1
    return dict(sorted(c.items()))


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
    task: str | None = None,
    start: list[dict[str, Any]] | None = None,
    per_call: list[list[str]] | None = None,
    command: Sequence[str] | None = None,
) -> tuple[Score, list[list[dict[str, Any]]], list[str]]:
    """Spawn the sidecar over stdio on ``workspace``, wait for its workspace graph, send every
    line's params as ``dsh/postExecute``; return the score (with per-call latencies), the notes
    and the ledger lines received. ``suggester`` overrides knobs (``enabled`` is forced on).
    ``task``: a task text sent as ``dsh/taskLead`` (the first line's session) once the index is
    ready, before the first line, under ``taskLead`` on; its notes are appended to ``start``.
    ``per_call``: the ledger lines received while each line was answered are appended to it,
    one list per line (the server writes a call's line before its reply). ``command``: the
    server to spawn (default :func:`server_command`; a bench's recording server).
    Raises ``RuntimeError`` when the sidecar refuses a request or the graph never gets ready."""
    with tempfile.TemporaryDirectory(prefix="dsh-replay-") as tmp:
        env = dict(os.environ)
        env["DSH_HOME"] = str(dsh_home or Path(tmp))
        client = StdioClient(list(command or server_command()), env)
        try:
            knobs = {**(suggester or {}), "enabled": True, **({"taskLead": True} if task else {})}
            client.initialize(workspace, {"suggester": knobs})
            deadline = time.monotonic() + graph_wait_s
            while not client.call("dsh/status", {})["suggester"]["graph"]["ready"]:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"the workspace graph was not ready within {graph_wait_s:.0f} s")
                time.sleep(0.05)
            while not client.call("dsh/status", {})["suggester"].get("missingPathTables", True):
                if time.monotonic() > deadline:  # (built after ready: a replay's answers must not race it)
                    raise RuntimeError(f"the missing-path tables were not built within {graph_wait_s:.0f} s")
                time.sleep(0.05)
            if task:
                session = trace[0].params.get("sessionId") if trace else None
                while client.call("dsh/status", {})["suggester"]["pending"] and time.monotonic() < deadline:
                    time.sleep(0.05)  # the task lead ranks once the whole index is there
                lead = client.call("dsh/taskLead", {"sessionId": session, "task": task[:MAX_TASK_CHARS]})
                if start is not None:
                    start.extend(lead["additionalContexts"])
            notes: list[list[dict[str, Any]]] = []
            latencies: list[float] = []
            for line in trace:
                t0 = time.perf_counter()
                seen = len(client.logs)
                result = client.call("dsh/postExecute", line.params)
                latencies.append((time.perf_counter() - t0) * 1000)
                notes.append(result["additionalContexts"])
                if per_call is not None:
                    per_call.append([m.split("] ", 1)[1] for m in client.logs[seen:] if "] " in m])
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


def figures(s: Score) -> dict[str, float | int]:
    """A :class:`Score` as plain numbers (rates rounded to 4 decimals), for JSON and tests."""
    return {
        "calls": s.calls,
        "notes": s.notes,
        "correct": s.correct,
        "precision": round(s.precision, 4),
        "recall": round(s.recall, 4),
        "first_note": round(s.first_note, 4),
        "expected_targets": s.expected_targets,
        "found_targets": s.found_targets,
    }


def format_ledger(ledger: dict[str, int]) -> str:
    """The ledger summary as a table: one row per intent, one column per line kind and reason."""
    cols = sorted({k for k in ledger if k.count(" ") == 1 and not k.startswith("suggest ")} | {"suggest"})
    cols = ["suggest"] + [c for c in cols if c != "suggest"]
    intents = sorted({k.rsplit(" ", 1)[1] for k in ledger if k.count(" ") == 2 or k.startswith("suggest ")})
    rows = [f"{'ledger':12} " + " ".join(f"{c:>24}" for c in cols)]
    for intent in intents:
        cells = []
        for c in cols:
            key = f"suggest {intent}" if c == "suggest" else f"{c} {intent}"
            cells.append(f"{ledger.get(key, 0):>24}")
        rows.append(f"{intent:12} " + " ".join(cells))
    rows.append(f"{'all':12} " + " ".join(f"{ledger.get(c, 0):>24}" for c in cols))
    return "\n".join(rows)
