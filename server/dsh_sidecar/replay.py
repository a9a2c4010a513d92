"""Replay JSONL traces of ``dsh/postExecute`` calls through the real server and score them:
the fixed fixture trace (``dsh-search replay TRACE --workspace DIR``) and the evaluation corpus
(``dsh-search replay --corpus bench/corpus --cache DIR``, ``bench/suggester.py --corpus``).
It spawns ``dsh-search serve`` over stdio, so it lives beside the CLI, not in the suggester core.

Trace lines: ``{"params": {<dsh/postExecute params>}, "expect": {"intent", "targets": [...]} | null}``.

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

Trajectory figures (recorded agent runs, ``bench/corpus/trajectories/``; see ``docs/corpus.md``):

* useful-precision = notes naming (among their targets) a file the agent reads or edits at a
  later call of the trace, or a gold file ÷ all notes;
* gold-hit-before-first-edit = traces where a note at a call before the agent's first edit
  (any call when it never edits) names a gold file ÷ traces;
* notes per 100 search-class calls = 100 × notes ÷ calls of class ``search``;
* own-search baseline = traces where a search-class result before the first edit lists a gold
  file (the index's ``ownSearchHit``) ÷ traces;
* random-file baseline = the same two figures for a suggester that, at every search-class call
  before the first edit, names one file drawn uniformly from the workspace's files with
  ``random.Random(sha256("<trace id>"))`` (deterministic).
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_protocol.stdio_client import StdioClient

#: Seconds the replay waits for the workspace graph (symbol index) before it starts.
GRAPH_WAIT_S: Final = 180.0
#: The trajectories' held-out repositories (``docs/corpus.md``, "Held-out trajectories"): never
#: tuned on, their per-trace details not looked at while tuning; scored as their own row.
TRAJECTORY_HELDOUT: Final = frozenset({"pylint-dev/pylint", "pytest-dev/pytest"})


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
            client.initialize(workspace, {"suggester": {**(suggester or {}), "enabled": True}})
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


# ---------------------------------------------------------------------------- the corpus


@dataclass(frozen=True)
class CorpusRepo:
    """One repository of the intent corpus (a row of ``intents/manifest.yaml``)."""

    repo: str
    commit: str
    dir: str
    ecosystem: str
    split: str
    data: Path


def checkout_dir(cache: Path, repo: str, commit: str) -> Path:
    """``<cache>/<owner>__<name>@<commit>``: the corpus cache layout (``bench/corpus/checkout.py``)."""
    owner, _, name = repo.partition("/")
    return cache / f"{owner}__{name}@{commit}"


def read_manifest(corpus: Path) -> list[CorpusRepo]:
    """The repositories of ``<corpus>/intents/manifest.yaml``. Raises ``OSError``/``ValueError``."""
    import yaml

    rows = yaml.safe_load((corpus / "intents" / "manifest.yaml").read_text("utf-8"))["repositories"]
    out = []
    for r in rows:
        if r.get("split") not in ("tune", "heldout"):
            raise ValueError(f"{r.get('repo')}: split must be tune or heldout")
        out.append(
            CorpusRepo(r["repo"], r["commit"], r["dir"], r["ecosystem"], r["split"], corpus / "intents" / r["dir"])
        )
    return out


@dataclass
class IntentRun:
    """The replay of one corpus repository."""

    repo: CorpusRepo
    score: Score
    notes: list[list[dict[str, Any]]]
    ledger: dict[str, int]


def run_intents(
    repos: Sequence[CorpusRepo], workspace_of: Callable[[CorpusRepo], Path], graph_wait_s: float = GRAPH_WAIT_S
) -> list[IntentRun]:
    """Replay each repository's ``trace.jsonl`` on ``workspace_of(repo)`` (a fresh server and
    ``$DSH_HOME`` each). Raises ``RuntimeError`` (server), ``TraceError``, ``OSError``."""
    runs = []
    for r in repos:
        trace = read_trace((r.data / "trace.jsonl").read_text("utf-8").splitlines())
        ws = workspace_of(r)
        if not ws.is_dir():
            raise OSError(f"no workspace {ws} for {r.repo}@{r.commit[:12]}")
        s, notes, logs = replay(trace, ws, graph_wait_s=graph_wait_s)
        runs.append(IntentRun(r, s, notes, ledger_summary(logs)))
    return runs


def intent_report(runs: Sequence[IntentRun]) -> dict[str, Any]:
    """Figures per repository, per split, pooled and per intent (pooled), plus the ledger."""
    ledger: Counter[str] = Counter()
    for run in runs:
        ledger.update(run.ledger)
    tune = pooled(r.score for r in runs if r.repo.split == "tune")
    held = pooled(r.score for r in runs if r.repo.split == "heldout")
    allp = pooled(r.score for r in runs)
    return {
        "repos": {r.repo.dir: {"repo": r.repo.repo, "split": r.repo.split, **figures(r.score)} for r in runs},
        "tune": figures(tune),
        "heldout": figures(held),
        "pooled": figures(allp),
        "intents": intent_figures(allp),
        "ledger": dict(sorted(ledger.items())),
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


def format_intent_report(rep: dict[str, Any]) -> str:
    """The intent figures as a fixed-width text table."""
    head = f"{'repository':28} {'split':8} {'calls':>5} {'notes':>5} {'precision':>9} {'recall':>6} {'first-note':>10}"
    rows = [head]

    def row(name: str, split: str, f: dict[str, Any]) -> str:
        return (
            f"{name:28} {split:8} {f['calls']:>5} {f['notes']:>5} {f['precision']:>9.2f} {f['recall']:>6.2f} "
            f"{f['first_note']:>10.2f}"
        )

    for f in rep["repos"].values():
        rows.append(row(f["repo"], f["split"], f))
    rows += [row("pooled tune", "", rep["tune"]), row("pooled heldout", "", rep["heldout"])]
    rows.append(row("pooled all", "", rep["pooled"]))
    rows.append("")
    rows.append(f"{'intent':12} {'notes':>5} {'precision':>9} {'expected':>8} {'recall':>6}")
    for intent, f in rep["intents"].items():
        rows.append(f"{intent:12} {f['notes']:>5} {f['precision']:>9.2f} {f['expected']:>8} {f['recall']:>6.2f}")
    rows.append("")
    rows.append(format_ledger(rep["ledger"]))
    return "\n".join(rows)


# ---------------------------------------------------------------------------- trajectories


@dataclass
class Trajectory:
    """One recorded agent run: its index row and its calls (``{"i", "class", "params"}``)."""

    row: dict[str, Any]
    calls: list[dict[str, Any]]

    @property
    def id(self) -> str:
        return str(self.row["id"])

    @property
    def gold(self) -> set[str]:
        return set(self.row.get("gold") or [])

    @property
    def limit(self) -> int:
        """Index of the first edit (the length of the trace when it never edits)."""
        fe = self.row.get("firstEdit")
        return len(self.calls) if fe is None else int(fe)


def read_trajectories(folder: Path, ids: Iterable[str] | None = None) -> list[Trajectory]:
    """``<folder>/index.jsonl`` and each ``<folder>/<id>.jsonl`` (only ``ids`` when given)."""
    wanted = set(ids) if ids is not None else None
    out = []
    for raw in (folder / "index.jsonl").read_text("utf-8").splitlines():
        if not raw.strip():
            continue
        row = json.loads(raw)
        if wanted is not None and row["id"] not in wanted:
            continue
        calls = [json.loads(x) for x in (folder / f"{row['id']}.jsonl").read_text("utf-8").splitlines() if x.strip()]
        out.append(Trajectory(row, calls))
    return out


def _mentions(blob: str, path: str) -> bool:
    """``path`` appears in ``blob`` (a JSON text) as a whole path: after a start, ``/``, space,
    quote or redirection, before an end, space, quote, separator or an escape (``\\n``)."""
    return re.search(r"(?:^|[\s/'\"=:(<>])" + re.escape(path) + r"(?=$|[\s'\":,;|&<>)\]\\])", blob) is not None


def _touched_after(t: Trajectory) -> list[str]:
    """Per call index: the JSON of the tool inputs of the read/edit calls after it, joined."""
    blobs = [
        json.dumps(c["params"].get("tool", {}).get("input", {}), ensure_ascii=False)
        if c.get("class") in ("read", "edit")
        else ""
        for c in t.calls
    ]
    after = [""] * len(blobs)
    acc = ""
    for i in range(len(blobs) - 1, -1, -1):
        after[i] = acc
        if blobs[i]:
            acc = blobs[i] + "\n" + acc
    return after


def trajectory_figures(t: Trajectory, notes: Sequence[list[dict[str, Any]]], files: Sequence[str]) -> dict[str, Any]:
    """The per-trace counts behind the trajectory figures (module docstring); ``files`` is the
    workspace's file list (for the random-file baseline)."""
    after = _touched_after(t)
    gold = t.gold
    n_notes = useful = 0
    gold_hit = False
    for i, ns in enumerate(notes):
        for n in ns:
            targets = list(n.get("source", {}).get("targets", []))
            n_notes += 1
            if set(targets) & gold or any(_mentions(after[i], p) for p in targets):
                useful += 1
            if i < t.limit and set(targets) & gold:
                gold_hit = True
    rng = random.Random(int(hashlib.sha256(t.id.encode()).hexdigest(), 16))
    ordered = sorted(files)
    r_notes = r_useful = 0
    r_hit = False
    for i, c in enumerate(t.calls[: t.limit]):
        if c.get("class") != "search" or not ordered:
            continue
        pick = rng.choice(ordered)
        r_notes += 1
        if pick in gold or _mentions(after[i], pick):
            r_useful += 1
        r_hit = r_hit or pick in gold
    return {
        "calls": len(t.calls),
        "search": sum(1 for c in t.calls if c.get("class") == "search"),
        "notes": n_notes,
        "useful": useful,
        "gold_hit": gold_hit,
        "own_hit": t.row.get("ownSearchHit") is not None,
        "random_notes": r_notes,
        "random_useful": r_useful,
        "random_hit": r_hit,
    }


def _rate(a: int, b: int) -> float:
    return round(a / b, 4) if b else 0.0


def trajectory_summary(per_trace: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Pooled trajectory figures over the per-trace counts of :func:`trajectory_figures`."""
    n = len(per_trace)
    notes = sum(p["notes"] for p in per_trace)
    search = sum(p["search"] for p in per_trace)
    rn = sum(p["random_notes"] for p in per_trace)
    return {
        "traces": n,
        "calls": sum(p["calls"] for p in per_trace),
        "search_calls": search,
        "notes": notes,
        "useful_notes": sum(p["useful"] for p in per_trace),
        "useful_precision": _rate(sum(p["useful"] for p in per_trace), notes),
        "gold_hit_before_first_edit": _rate(sum(p["gold_hit"] for p in per_trace), n),
        "notes_per_100_search": round(100 * notes / search, 2) if search else 0.0,
        "own_search_hit_before_first_edit": _rate(sum(p["own_hit"] for p in per_trace), n),
        "random_useful_precision": _rate(sum(p["random_useful"] for p in per_trace), rn),
        "random_gold_hit_before_first_edit": _rate(sum(p["random_hit"] for p in per_trace), n),
        "random_notes_per_100_search": round(100 * rn / search, 2) if search else 0.0,
    }


def workspace_files(root: Path) -> list[str]:
    """Every regular file under ``root`` (no ``.git``), repo-relative, sorted."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            p = Path(dirpath, f)
            if p.is_file() and not p.is_symlink():
                out.append(p.relative_to(root).as_posix())
    return sorted(out)


def run_trajectories(
    trajs: Sequence[Trajectory], workspace_of: Callable[[Trajectory], Path], graph_wait_s: float = GRAPH_WAIT_S
) -> dict[str, Any]:
    """Replay each trajectory on ``workspace_of(t)`` (a fresh server and ``$DSH_HOME`` each);
    return ``{"traces": {id: counts}, "repos": {repo: summary}, "pooled": summary, "ledger": …}``."""
    per: dict[str, dict[str, Any]] = {}
    ledger: Counter[str] = Counter()
    files_cache: dict[Path, list[str]] = {}
    for t in trajs:
        ws = workspace_of(t)
        if not ws.is_dir():
            raise OSError(f"no workspace {ws} for {t.row['repo']}@{str(t.row['commit'])[:12]}")
        trace = [TraceLine(c["params"], None, ()) for c in t.calls]
        _, notes, logs = replay(trace, ws, graph_wait_s=graph_wait_s)
        if ws not in files_cache:
            files_cache[ws] = workspace_files(ws)
        per[t.id] = {"repo": t.row["repo"], **trajectory_figures(t, notes, files_cache[ws])}
        ledger.update(ledger_summary(logs))
    repos: dict[str, list[dict[str, Any]]] = {}
    for p in per.values():
        repos.setdefault(p["repo"], []).append(p)
    return {
        "traces": per,
        "repos": {k: trajectory_summary(v) for k, v in sorted(repos.items())},
        "tune": trajectory_summary([p for p in per.values() if p["repo"] not in TRAJECTORY_HELDOUT]),
        "heldout": trajectory_summary([p for p in per.values() if p["repo"] in TRAJECTORY_HELDOUT]),
        "pooled": trajectory_summary(list(per.values())),
        "ledger": dict(sorted(ledger.items())),
    }


def format_trajectory_report(rep: dict[str, Any]) -> str:
    """The trajectory figures (suggester, the agent's own search, random files) as a table."""
    head = (
        f"{'repository':26} {'traces':>6} {'search':>6} {'notes':>5} {'n/100s':>6} {'useful-p':>8} "
        f"{'gold-hit':>8} {'own-search':>10} {'random-hit':>10} {'random-p':>8}"
    )
    rows = [head]
    items = list(rep["repos"].items())
    items += [(f"pooled {k}", rep[k]) for k in ("tune", "heldout") if k in rep] + [("pooled", rep["pooled"])]
    for name, f in items:
        rows.append(
            f"{name:26} {f['traces']:>6} {f['search_calls']:>6} {f['notes']:>5} {f['notes_per_100_search']:>6.2f} "
            f"{f['useful_precision']:>8.2f} {f['gold_hit_before_first_edit']:>8.2f} "
            f"{f['own_search_hit_before_first_edit']:>10.2f} {f['random_gold_hit_before_first_edit']:>10.2f} "
            f"{f['random_useful_precision']:>8.2f}"
        )
    rows.append("")
    rows.append(format_ledger(rep["ledger"]))
    return "\n".join(rows)


def run_corpus(
    corpus: Path,
    cache: Path,
    *,
    intents: bool = True,
    trajectories: bool = True,
    only: Iterable[str] | None = None,
    graph_wait_s: float = GRAPH_WAIT_S,
) -> dict[str, Any]:
    """Both figure sets on the real checkouts in ``cache`` (``<owner>__<name>@<commit>/``,
    made by ``bench/corpus/checkout.py``; nothing is fetched here). ``only``: repository dirs
    / owner/name / trajectory ids to keep. Raises ``OSError`` naming a missing checkout."""
    keep = set(only) if only is not None else None
    out: dict[str, Any] = {"cache": str(cache)}
    if intents:
        repos = [r for r in read_manifest(corpus) if keep is None or r.dir in keep or r.repo in keep]
        runs = run_intents(repos, lambda r: checkout_dir(cache, r.repo, r.commit), graph_wait_s)
        out["intents"] = intent_report(runs)
    tdir = corpus / "trajectories"
    if trajectories and (tdir / "index.jsonl").is_file():
        trajs = [t for t in read_trajectories(tdir) if keep is None or t.id in keep or t.row["repo"] in keep]
        out["trajectories"] = run_trajectories(
            trajs, lambda t: checkout_dir(cache, t.row["repo"], t.row["commit"]), graph_wait_s
        )
    return out


def format_corpus(rep: dict[str, Any]) -> str:
    """:func:`format_intent_report` then :func:`format_trajectory_report` (those present)."""
    parts = []
    if "intents" in rep:
        parts.append("intents (labelled calls on real repositories)\n" + format_intent_report(rep["intents"]))
    if "trajectories" in rep:
        parts.append("trajectories (recorded agent runs)\n" + format_trajectory_report(rep["trajectories"]))
    return "\n\n".join(parts)
