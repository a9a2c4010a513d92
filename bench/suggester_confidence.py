"""Per-note confidence (``server/dsh_sidecar/suggester/confidence.py``): fit the model and choose
the abstention bar on training folds, score the held-out folds, and check the shipped constants
in a real replay.

1. **Record.** Every trajectory is replayed in-process (the real ``Sidecar`` on the real
   checkout, as ``bench/suggester_traces.py``: same suggester, graph and content index as
   ``dsh-search serve``, without the stdio transport) with ``minConfidence`` 0, so no note is
   held back; each note's features are recorded at decision time (``confidence.assess``) and
   each note is labelled by the trajectory figures (``useful``: it names a gold file or a file
   the agent opens later; ``lead``; ``echo``).
2. **Fit and choose, per fold.** For the fixed held-out set (trained on the tune traces), every
   leave-one-agent-family-out and every leave-one-repository-out fold: a logistic model of the
   code-intent notes' features (``useful`` as the label, L2 ``--l2``) is fitted on the training
   traces, and the bar is the one that maximises useful-precision on them subject to the
   **declared objective**: a lead note in at least ``--min-lead`` of the traces, at least
   ``--keep-leads`` of the traces that had a lead note without abstention keep one, and at least
   ``--min-notes`` notes per 100 search calls (no bar passing: no abstention). The held-out
   traces are scored with the notes below the bar removed (the figures of
   ``dsh_sidecar.evaluation.trajectories`` on the kept notes). Removing a note here does not
   let a later one through noise control (dedupe, cooldown): step 3 replays for real.
3. **Check** (``--check``): every trajectory replayed again with the shipped ``MODEL`` and
   ``MIN_CONFIDENCE`` (the real abstention: ``suppressed low-confidence``), printed beside the
   recorded run (``before``: the same commit with the bar at 0) per family, language and split.

The fixed fold's model and bar are printed as the Python constants to ship. Without
``--heldout`` only the tune traces are replayed (their folds; the fixed held-out set is never
looked at while tuning).

    python bench/suggester_confidence.py --cache /work/corpus-cache-ii [--heldout] [--check]
        [--only FAMILY,REPO,ID] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsh_protocol import PostExecuteParams
from dsh_sidecar.config import parse_config
from dsh_sidecar.evaluation import FileIndex, checkout_dir, read_trajectories, workspace_files
from dsh_sidecar.evaluation.folds import FOLD_COLUMNS
from dsh_sidecar.evaluation.trajectories import format_table, trajectory_figures, trajectory_summary
from dsh_sidecar.evaluation.trajectory_runs import Trajectory, _mentions, _touched_after
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.suggester import confidence
from dsh_sidecar.suggester.confidence import MODEL, Features, Model
from dsh_sidecar.suggester.thresholds import MIN_CONFIDENCE

ROOT = Path(__file__).resolve().parent.parent
TRAJ = ROOT / "corpus" / "trajectories"
#: Seconds a replay waits for the workspace graph.
GRAPH_WAIT_S = 300


# ------------------------------------------------------------------------------ record


@dataclass
class Run:
    """One replay of a trajectory: its notes per call, the features of each note, its figures."""

    t: Trajectory
    index: FileIndex
    notes: list[list[dict[str, Any]]]
    #: call index → the features of the note decided at that call (code intents only)
    features: dict[int, tuple[float, ...]] = field(default_factory=dict)
    ledger: list[str] = field(default_factory=list)

    def tags(self) -> dict[str, Any]:
        t = self.t
        return {"repo": t.row["repo"], "family": t.family, "language": t.language, "heldout": t.heldout}


@contextlib.contextmanager
def recording(into: dict[int, tuple[float, ...]], call: list[int]) -> Iterator[None]:
    """Record every assessment the pipeline makes (the pipeline calls ``confidence.assess``
    through the module) under the current call index ``call[0]``."""
    original = confidence.assess

    def assess(*args: Any, **kwargs: Any) -> confidence.Assessment | None:
        judged = original(*args, **kwargs)
        if judged is not None:
            into[call[0]] = judged.features.values()
        return judged

    confidence.assess = assess  # type: ignore[assignment]
    try:
        yield
    finally:
        confidence.assess = original  # type: ignore[assignment]


def replay(t: Trajectory, ws: Path, index: FileIndex, knobs: dict[str, Any]) -> Run:
    """``t`` replayed in-process on ``ws`` under the suggester ``knobs``."""
    run = Run(t, index, [])
    call = [0]
    with tempfile.TemporaryDirectory(prefix="dsh-confidence-") as home, recording(run.features, call):
        env = {**os.environ, "DSH_HOME": home}
        config = parse_config({"suggester": {"enabled": True, **knobs}})
        sc = Sidecar(config, ws, env, log_sink=run.ledger.append, echo_stderr=False)
        try:
            sc.wait_for_graph(GRAPH_WAIT_S)
            for i, c in enumerate(t.calls):
                call[0] = i
                res = sc.post_execute(PostExecuteParams.model_validate(c["params"]))
                run.notes.append([n.model_dump(by_alias=True) for n in res.additional_contexts])
        finally:
            sc.shutdown()
    # an assessment whose note noise control or the note's length then held back is no note
    run.features = {i: f for i, f in run.features.items() if run.notes[i]}
    return run


def replay_all(trajs: Sequence[Trajectory], cache: Path, knobs: dict[str, Any], label: str) -> list[Run]:
    runs = []
    indexes: dict[Path, FileIndex] = {}
    t0 = time.perf_counter()
    for n, t in enumerate(trajs, 1):
        ws = checkout_dir(cache, t.row["repo"], t.row["commit"])
        if ws not in indexes:
            indexes[ws] = FileIndex(workspace_files(ws))
        runs.append(replay(t, ws, indexes[ws], knobs))
        sys.stderr.write(f"\r[{label}] {n}/{len(trajs)} {time.perf_counter() - t0:.0f} s ")
    sys.stderr.write("\n")
    return runs


# ------------------------------------------------------------------------------ labels


@dataclass(frozen=True)
class Labelled:
    """One note of a recorded run: where it is, its features (``None``: a project intent, never
    held back) and what the figures say of it."""

    trace: str
    call: int
    features: tuple[float, ...] | None
    useful: bool
    lead: bool


def labelled(run: Run) -> tuple[dict[str, Any], list[Labelled]]:
    """The run's figures (all notes) and its notes, labelled."""
    fig = trajectory_figures(run.t, run.notes, run.index)
    out = [
        Labelled(run.t.id, int(n["i"]), run.features.get(int(n["i"])), bool(n["useful"]), bool(n["lead"]))
        for n in fig["note_log"]
    ]
    return {**run.tags(), **fig}, out


# ------------------------------------------------------------------------------ the model


def fit(xs: Sequence[Sequence[float]], ys: Sequence[float], l2: float) -> Model:
    """Logistic regression by Newton's method, the bias unpenalised, the weights with ``l2``;
    over the features the rows have (the first of :class:`Features`' fields: a row without the
    task feature fits a model whose task weight is 0)."""
    d = (len(xs[0]) if xs else len(Features.__dataclass_fields__)) + 1
    w = [0.0] * d
    rows = [(1.0, *x) for x in xs]
    for _ in range(100):
        grad = [0.0] * d
        hess = [[0.0] * d for _ in range(d)]
        for x, y in zip(rows, ys, strict=True):
            z = sum(a * b for a, b in zip(w, x, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))
            for j in range(d):
                grad[j] += (p - y) * x[j]
                for k in range(d):
                    hess[j][k] += p * (1 - p) * x[j] * x[k]
        for j in range(1, d):
            grad[j] += l2 * w[j]
            hess[j][j] += l2
        hess[0][0] += 1e-9
        step = _solve(hess, grad)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-10:
            break
    names = list(Features.__dataclass_fields__)[: d - 1]
    return Model(round(w[0], 4), Features(**{n: round(v, 4) for n, v in zip(names, w[1:], strict=True)}))


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """``a x = b`` by Gauss-Jordan elimination with partial pivoting (a small dense system)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for i in range(n):
        piv = max(range(i, n), key=lambda r: abs(m[r][i]))
        m[i], m[piv] = m[piv], m[i]
        if m[i][i] == 0:
            continue
        for r in range(n):
            if r != i:
                f = m[r][i] / m[i][i]
                for c in range(i, n + 1):
                    m[r][c] -= f * m[i][c]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


def confidence_of(model: Model, features: tuple[float, ...]) -> float:
    return model.confidence(Features(*features))


# ------------------------------------------------------------------------------ choosing the bar


@dataclass(frozen=True)
class Objective:
    """Maximise useful-precision subject to the lead and notes floors (module docstring)."""

    min_lead: float = 0.15
    keep_leads: float = 0.9
    min_notes: float = 8.0

    def describe(self) -> str:
        return (
            f"max useful-precision s.t. lead share >= {self.min_lead}, >= {self.keep_leads:.0%} of the "
            f"traces with a lead kept, >= {self.min_notes} notes per 100 search calls"
        )


def _quick(notes: Sequence[Labelled], keep: Callable[[Labelled], bool], traces: int, search: int) -> tuple:
    kept = [n for n in notes if keep(n)]
    useful = sum(n.useful for n in kept)
    leads = len({n.trace for n in kept if n.lead})
    return (useful / len(kept) if kept else 0.0, leads, 100 * len(kept) / search if search else 0.0)


def choose_bar(model: Model, notes: Sequence[Labelled], traces: int, search: int, obj: Objective) -> float:
    """The bar (0: none) that maximises useful-precision on ``notes`` under ``obj``; a tie goes
    to the lower bar. Candidates are midpoints between the notes' distinct confidences."""
    scored = sorted({round(confidence_of(model, n.features), 6) for n in notes if n.features is not None})
    bars = [0.0] + [(a + b) / 2 for a, b in zip(scored, scored[1:], strict=False)]
    conf = {id(n): confidence_of(model, n.features) for n in notes if n.features is not None}
    _, base_leads, _ = _quick(notes, lambda n: True, traces, search)
    best = (0.0, -1.0)
    for bar in bars:
        p, leads, per100 = _quick(notes, lambda n, bar=bar: n.features is None or conf[id(n)] >= bar, traces, search)
        ok = leads >= obj.min_lead * traces and leads >= obj.keep_leads * base_leads and per100 >= obj.min_notes
        if ok and p > best[1] + 1e-12:
            best = (bar, p)
    return round(best[0], 4)


def train(notes: Sequence[Labelled], traces: int, search: int, obj: Objective, l2: float) -> tuple[Model, float]:
    code = [n for n in notes if n.features is not None]
    model = fit([n.features for n in code if n.features is not None], [float(n.useful) for n in code], l2)
    return model, choose_bar(model, notes, traces, search, obj)


def kept_notes(run: Run, model: Model, bar: float) -> list[list[dict[str, Any]]]:
    """The run's notes with those below ``bar`` under ``model`` removed."""
    out = []
    for i, ns in enumerate(run.notes):
        f = run.features.get(i)
        out.append([] if f is not None and confidence_of(model, f) < bar else ns)
    return out


# ------------------------------------------------------------------------------ folds


def folds(runs: Sequence[Run], obj: Objective, l2: float) -> tuple[list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """The fold rows (held-out figures, each under the model and bar of its training traces)
    and the fixed fold's model and bar."""
    data = {r.t.id: labelled(r) for r in runs}
    by_id = {r.t.id: r for r in runs}
    ids = sorted(data)

    def held_out(test: list[str], train_ids: list[str]) -> tuple[list[dict[str, Any]], Model, float]:
        notes = [n for i in train_ids for n in data[i][1]]
        search = sum(data[i][0]["search"] for i in train_ids)
        model, bar = train(notes, len(train_ids), search, obj, l2)
        held = []
        for i in test:
            r = by_id[i]
            held.append({**r.tags(), **trajectory_figures(r.t, kept_notes(r, model, bar), r.index)})
        return held, model, bar

    rows: list[tuple[str, dict[str, Any]]] = []
    for kind, tag in (("family", "family"), ("repository", "repo")):
        pooled: list[dict[str, Any]] = []
        for value in sorted({str(data[i][0][tag]) for i in ids}):
            test = [i for i in ids if str(data[i][0][tag]) == value]
            train_ids = [i for i in ids if str(data[i][0][tag]) != value]
            if not train_ids:
                continue
            held, _, bar = held_out(test, train_ids)
            rows.append((f"{kind} {value} [bar {bar:.3f}]", trajectory_summary(held)))
            pooled += held
        rows.append((f"pooled held-out ({kind})", trajectory_summary(pooled)))
    chosen: dict[str, Any] = {}
    test = [i for i in ids if data[i][0]["heldout"]]
    train_ids = [i for i in ids if not data[i][0]["heldout"]]
    if train_ids:
        held, model, bar = held_out(test, train_ids)
        chosen = {"model": model, "bar": bar}
        if test:
            rows.append((f"fixed held-out set [bar {bar:.3f}]", trajectory_summary(held)))
    return rows, chosen


def before_rows(runs: Sequence[Run]) -> list[tuple[str, dict[str, Any]]]:
    """The same folds without abstention (the recorded run, bar 0)."""
    per = [labelled(r)[0] for r in runs]
    rows: list[tuple[str, dict[str, Any]]] = []
    for kind, tag in (("family", "family"), ("repository", "repo")):
        for value in sorted({str(p[tag]) for p in per}):
            rows.append((f"{kind} {value}", trajectory_summary([p for p in per if str(p[tag]) == value])))
        rows.append((f"pooled held-out ({kind})", trajectory_summary(per)))
    if any(p["heldout"] for p in per):
        rows.append(("fixed held-out set", trajectory_summary([p for p in per if p["heldout"]])))
    return rows


def split_rows(per: Sequence[dict[str, Any]], label: str) -> list[tuple[str, dict[str, Any]]]:
    """Per family, per language, the tune and held-out splits and pooled."""
    rows = []
    for key in ("family", "language"):
        for value in sorted({str(p[key]) for p in per}):
            rows.append((f"{label} {key} {value}", trajectory_summary([p for p in per if str(p[key]) == value])))
    for name, keep in (("tune", False), ("held-out", True)):
        part = [p for p in per if bool(p["heldout"]) == keep]
        if part:
            rows.append((f"{label} {name}", trajectory_summary(part)))
    rows.append((f"{label} pooled", trajectory_summary(per)))
    return rows


#: Bars of the trade-off table (the shipped one is added).
CURVE_BARS = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)


def curve_table(runs: Sequence[Run], model: Model, bar: float) -> str:
    """What each bar would give under ``model`` (notes removed from the recorded run, as in the
    folds): notes per 100 search calls, useful-precision and lead share, per split — how much
    precision the features can buy, and what it costs in leads."""
    lines = [f"{'split':10} {'bar':>6} {'notes':>6} {'n/100s':>7} {'useful-p':>9} {'lead-traces':>12}"]
    for name, keep in (("tune", False), ("held-out", True)):
        part = [r for r in runs if bool(r.t.heldout) == keep]
        if not part:
            continue
        data = [labelled(r) for r in part]
        notes = [n for _, ns in data for n in ns]
        search = sum(f["search"] for f, _ in data)
        for b in sorted({*CURVE_BARS, bar}):
            kept = [n for n in notes if n.features is None or confidence_of(model, n.features) >= b]
            p, leads, per100 = _quick(kept, lambda n: True, len(part), search)
            mark = " (shipped)" if b == bar else ""
            lines.append(
                f"{name:10} {b:>6.4g} {len(kept):>6} {per100:>7.1f} {p:>9.3f} {leads / len(part):>12.3f}{mark}"
            )
    return "\n".join(lines)


def targets_table(runs: Sequence[Run], heldout: bool) -> str:
    """Fewer targets per note: useful-precision and lead share if every note named only its
    first k targets, and the share of named targets that are useful (per-target precision)."""
    lines = [f"{'split':10} {'k':>2} {'notes':>6} {'useful-p':>9} {'lead-traces':>12} {'per-target-p':>13}"]
    for name, keep in (("tune", False), ("held-out", True)):
        part = [r for r in runs if bool(r.t.heldout) == keep]
        if not part or (keep and not heldout):
            continue
        for k in range(1, 6):
            notes = useful = named = named_useful = 0
            lead_traces = set()
            for r in part:
                gold, after = r.t.gold, _touched_after(r.t)
                seen: set[str] = set()
                _, shown, _ = _shown(r)
                for i, ns in enumerate(r.notes):
                    seen |= shown[i]
                    for n in ns:
                        ts = list(n["source"]["targets"])[:k]
                        good = [p in gold or _mentions(after[i], p) for p in ts]
                        notes += 1
                        useful += any(good)
                        named += len(ts)
                        named_useful += sum(good)
                        if any(p in gold and p not in seen for p in ts):
                            lead_traces.add(r.t.id)
            p = useful / notes if notes else 0.0
            pt = named_useful / named if named else 0.0
            lines.append(f"{name:10} {k:>2} {notes:>6} {p:>9.3f} {len(lead_traces) / len(part):>12.3f} {pt:>13.3f}")
    return "\n".join(lines)


def _shown(run: Run) -> tuple[Any, list[set[str]], Any]:
    from dsh_sidecar.evaluation.trajectories import shown_by

    return shown_by(run.t, run.index)


def model_source(model: Model, bar: float) -> str:
    body = "\n".join(f"        {name}={getattr(model.weights, name)}," for name in Features.__dataclass_fields__)
    return (
        f"# suggester/confidence.py\nMODEL: Final = Model(\n    bias={model.bias},\n    weights=Features(\n{body}\n    ),\n)\n"
        f"# suggester/thresholds.py\nMIN_CONFIDENCE: Final = {bar}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"), help="trajectory checkouts")
    p.add_argument("--only", default=None, help="comma-separated families, repositories or trajectory ids")
    p.add_argument("--heldout", action="store_true", help="also replay the fixed held-out set (not while tuning)")
    p.add_argument("--check", action="store_true", help="replay again with the shipped MODEL and MIN_CONFIDENCE")
    p.add_argument("--min-lead", type=float, default=Objective.min_lead)
    p.add_argument("--keep-leads", type=float, default=Objective.keep_leads)
    p.add_argument("--min-notes", type=float, default=Objective.min_notes)
    p.add_argument("--l2", type=float, default=1.0, help="L2 penalty of the logistic fit")
    p.add_argument("--json", type=Path, default=None, help="write the figures here")
    a = p.parse_args(argv)
    if a.cache is None or not Path(a.cache).is_dir():
        p.error("--cache DIR (or DSH_CORPUS_CACHE) must hold the trajectory checkouts (corpus/checkout.py)")
    only = set(a.only.split(",")) if a.only else None
    trajs = [
        t
        for t in read_trajectories(TRAJ)
        if (a.heldout or not t.heldout) and (only is None or t.id in only or t.row["repo"] in only or t.family in only)
    ]
    obj = Objective(a.min_lead, a.keep_leads, a.min_notes)
    t0 = time.perf_counter()
    runs = replay_all(trajs, Path(a.cache), {"minConfidence": 0}, "record")
    print(f"{len(runs)} trajectories replayed with minConfidence 0 ({time.perf_counter() - t0:.0f} s)")
    print(f"objective on the training traces: {obj.describe()}\n")
    print(format_table("held-out fold, no abstention (bar 0)", before_rows(runs), FOLD_COLUMNS))
    print()
    rows, chosen = folds(runs, obj, a.l2)
    print(format_table("held-out fold, model and bar of its training traces", rows, FOLD_COLUMNS))
    out: dict[str, Any] = {"objective": obj.describe(), "folds": {n: f for n, f in rows}}
    if chosen:
        print("\nfitted on the tune traces (the constants to ship in confidence.py):\n")
        print(model_source(chosen["model"], chosen["bar"]))
        out["fixed"] = {"model": chosen["model"].__dict__, "bar": chosen["bar"]}
    print("\nthe shipped model's trade-off, bar by bar (notes removed from the recorded run):\n")
    print(curve_table(runs, MODEL, MIN_CONFIDENCE))
    print("\nfewer targets per note (no abstention):\n")
    print(targets_table(runs, a.heldout))
    if a.check:
        before = [labelled(r)[0] for r in runs]
        t1 = time.perf_counter()
        after_runs = replay_all(trajs, Path(a.cache), {}, "check")
        after = [labelled(r)[0] for r in after_runs]
        ledger = sum(1 for r in after_runs for m in r.ledger if "suppressed low-confidence" in m)
        print(
            f"\nshipped {MODEL} at MIN_CONFIDENCE {MIN_CONFIDENCE} replayed ({time.perf_counter() - t1:.0f} s; "
            f"{ledger} notes held back as 'suppressed low-confidence'):\n"
        )
        print(format_table("split", split_rows(before, "before") + split_rows(after, "after"), FOLD_COLUMNS))
        out["check"] = {"before": dict(split_rows(before, "before")), "after": dict(split_rows(after, "after"))}
    if a.json:
        a.json.write_text(json.dumps(out, indent=1, default=str) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
