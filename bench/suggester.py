"""Suggester benchmarks, all through the real server path (``dsh-search serve`` spawned over stdio).

**The corpus** (``--corpus``): the labelled intent traces of ``corpus/intents/`` and the
recorded agent trajectories of ``corpus/trajectories/`` (Corpus II: four agent families, 20
repositories, four languages), replayed on real checkouts in a cache folder (``--cache DIR`` or
``DSH_CORPUS_CACHE``; make them with ``corpus/checkout.py``; nothing is fetched here), or on stub
workspaces materialized from the corpus data (``--materialized``, what the CI test pins). Prints
per repository, per split (tune / heldout) and pooled precision, recall and first-note,
per-intent figures, the ledger summary; then the trajectory tables per repository, agent family
and language with the fixed tune / held-out split (``TRAJECTORY_HELDOUT``,
``TRAJECTORY_HELDOUT_FAMILIES``), the help figures (echo, lead, rank, gold-hit before any edit,
searches saved) beside the agent's own results and random files, and the **folds**:
leave-one-repository-out, leave-one-agent-family-out and the fixed held-out set (definitions:
``dsh_sidecar.evaluation`` and ``docs/corpus.md``; per-trace view of the tune traces:
``bench/suggester_traces.py``):

    python bench/suggester.py --corpus --cache ~/.cache/dsh-corpus [--only attrs,chi,rovo-dev] [--json out.json]
    python bench/suggester.py --corpus --materialized [--trajectory-ids a,b] [--no-intents]

``--rescore OLD.json`` scores a report kept with ``--json`` again with today's definitions, on
the same notes (each note's call and targets are in the report), without replaying:

    python bench/suggester.py --corpus --materialized --rescore before.json [--json after.json]

``--task-lead`` replays the trajectories a second time with each trace's task text (the index
row's ``task`` file) sent as ``dsh/taskLead`` at the session's start under ``taskLead`` on; its
``Task`` note counts as a note before the first call in every figure, and every table is
printed twice: "tool calls alone" and "with the task text" (``call-lead``: the lead share of the
tool-call notes alone):

    python bench/suggester.py --corpus --cache /work/corpus-cache-ii --no-intents --task-lead

``--suggester '{"bias": 0.5}'`` replays under those knobs (``initializationOptions.suggester``);
``--select bias=-0.5,0,0.5`` replays every trajectory once per value and reports each fold under
the value chosen on the other folds (``--objective lead_share,-echo_share``, default
``dsh_sidecar.evaluation.DEFAULT_OBJECTIVE``; a term ``key>=v`` or ``key<=v`` is a floor or a
ceiling: ``--select minConfidence=0,0.2172,0.3 --objective
'lead_share>=0.15,notes_per_100_search>=8,useful_precision'`` takes the most precise bar that
keeps both floors): a knob is kept only when the held-out rows move.

**The fixture** (default): the fixed 50-call trace over the shopcart fixture,
then the same trace over a synthetic 100k-file workspace (the fixture plus filler).

Prints, per workspace, ``calls=<n> notes=<n> precision=<p> recall=<r> first-note=<f>`` (the
definitions are in ``dsh_sidecar.evaluation``) and the per-call round-trip latency
p50/p99 (client side, ms; goal p99 ≤ 2 ms), plus the sidecar's activation time and graph
build figures. Compare with the README's "Suggester replay baseline".

    python bench/suggester.py [--files 100000] [--trace T.jsonl --workspace DIR] [--keep DIR]

Every run keeps its temporary files in one scratch folder (``dsh-corpus-…``, ``dsh-bench-…``),
removed however the run ends (Ctrl-C and ``kill`` included: ``bench/_scratch.py``), and gives the
sidecars it starts their own index cache there (``DSH_CACHE_DIR``), unless ``DSH_CACHE_DIR`` is set:
the rows of the shared ``~/.cache/dsh-search`` are keyed by the rules' version, which two branches
may raise to the same number.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from dsh_protocol import PostExecuteParams
from dsh_sidecar.evaluation import (
    DEFAULT_OBJECTIVE,
    TraceLine,
    checkout_dir,
    format_corpus,
    intent_report,
    latency_line,
    parse_objective,
    read_manifest,
    read_trace,
    read_trajectories,
    replay,
    run_intents,
)
from dsh_sidecar.evaluation.corpus import run_trajectory_grid
from dsh_sidecar.evaluation.folds import fold_report
from dsh_sidecar.evaluation.trajectories import rescore_trajectories, trajectory_report, workspace_files
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.workspace import WorkspaceGraph

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _scratch import own_cache, scratch  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TRACE = ROOT / "tests" / "data" / "replay" / "shopcart-50.jsonl"
FIXTURE = ROOT / "tests" / "data" / "workspaces" / "shopcart"
#: Modification time given to the synthetic filler (2020-01-01T00:00:00Z).
OLD_MTIME = 1_577_836_800


def synthetic_workspace(dest: Path, files: int) -> float:
    """Copy the fixture to ``dest`` and add filler files up to ``files`` in total (nested
    package folders of small Python modules, docs and data files); return seconds spent."""
    t0 = time.perf_counter()
    shutil.copytree(FIXTURE, dest)
    have = sum(1 for _ in dest.rglob("*") if _.is_file())
    n = 0
    per_dir = 50
    while have + n < files:
        d = dest / "vendor" / f"area{n // (per_dir * 40):03d}" / f"pkg{(n // per_dir) % 40:02d}"
        d.mkdir(parents=True, exist_ok=True)
        for i in range(min(per_dir, files - have - n)):
            k = n + i
            kind = k % 10
            if kind < 7:
                (d / f"mod{k}.py").write_text(f"def helper_{k}(x):\n    return x + {k}\n")
            elif kind < 9:
                (d / f"notes{k}.md").write_text(f"# note {k}\n")
            else:
                (d / f"data{k}.json").write_text("{}\n")
        n += per_dir
    # the filler is old history: the files an agent works on are the recently changed ones,
    # which the graph indexes first (its symbol pass is capped, newest first)
    for path in (dest / "vendor").rglob("*"):
        os.utime(path, (OLD_MTIME, OLD_MTIME))
    return time.perf_counter() - t0


def core_latencies(trace: list[TraceLine], workspace: Path, learn: bool) -> list[float]:
    """Per-call milliseconds of ``Suggester.post_execute`` in-process (no JSON-RPC), after
    activation and the graph build, like the server's path minus the transport."""
    graph = WorkspaceGraph.build(workspace)
    with tempfile.TemporaryDirectory(prefix="dsh-bench-home-") as home:
        core = Suggester(
            workspace, parse_suggester_config({"enabled": True, "learn": learn}), Path(home), workspace=lambda: graph
        )
        core.warm()
        gc.freeze()
        out = []
        for line in trace:
            params = PostExecuteParams.model_validate(line.params)
            t0 = time.perf_counter()
            core.post_execute(params)
            out.append((time.perf_counter() - t0) * 1000)
    return out


def run(trace_path: Path, workspace: Path, label: str) -> None:
    trace = read_trace(trace_path.read_text("utf-8").splitlines())
    t0 = time.perf_counter()
    score, _notes, logs = replay(trace, workspace)
    wall = time.perf_counter() - t0
    print(f"[{label}] {score.line()}")
    print(
        f"[{label}] {latency_line(score.latencies_ms)} (per dsh/postExecute round trip over stdio, {len(score.latencies_ms)} calls)"
    )
    # the same moment's floor: the server path for a call the suggester ignores at once
    silent = [
        TraceLine({**line.params, "tool": {"name": "bash", "input": {"command": "make build"}}}, None, ())
        for line in trace
    ]
    floor, _, _ = replay(silent, workspace)
    print(
        f"[{label}] floor {latency_line(floor.latencies_ms)} (same server, a non-search call: transport + validation)"
    )
    no_learn, _, _ = replay(trace, workspace, {"learn": False})
    print(f"[{label}] learn=false {latency_line(no_learn.latencies_ms)} ({no_learn.line()})")
    for learn in (True, False):
        core = core_latencies(trace, workspace, learn)
        print(f"[{label}] core in-process learn={str(learn).lower()} {latency_line(core)}")
    activated = next((m for m in logs if "] activated (" in m), "")
    print(f"[{label}] replay wall {wall:.1f}s incl. start-up and graph build; {activated.split('] ', 1)[-1]}")


CORPUS = ROOT / "corpus"


def parse_select(spec: str | None) -> tuple[str, list] | None:
    """``knob=v1,v2`` → ``("knob", [v1, v2])`` (each value read as JSON, else kept as text)."""
    if not spec:
        return None
    knob, sep, values = spec.partition("=")
    if not sep or not knob.strip() or not values.strip():
        raise ValueError(f"--select needs knob=v1,v2,…: {spec!r}")
    out = []
    for raw in values.split(","):
        try:
            out.append(json.loads(raw))
        except ValueError:
            out.append(raw)
    return knob.strip(), out


def corpus(
    cache: Path | None,
    materialized: Path | None,
    only: set[str] | None,
    trajectory_ids: set[str] | None,
    trajectories_dir: Path,
    intents: bool = True,
    suggester: dict | None = None,
    select: tuple[str, list] | None = None,
    objective: tuple[str, ...] = DEFAULT_OBJECTIVE,
    task_lead: bool = False,
) -> dict:
    """Both figure sets; on checkouts in ``cache`` or on stubs materialized under ``materialized``.
    ``task_lead``: the trajectories a second time with each trace's task text (``dsh/taskLead``
    at the session's start, ``taskLead`` on), reported beside the tool calls alone."""
    sys.path.insert(0, str(ROOT))
    from corpus.materialize import materialize, materialize_trajectory

    rep: dict = {"cache": str(cache) if cache else None, "materialized": materialized is not None}
    if intents:
        repos = [r for r in read_manifest(CORPUS) if only is None or r.dir in only or r.repo in only]
        if materialized is not None:

            def ws(r):
                dest = materialized / "intents" / r.dir
                if not dest.exists():
                    materialize(r.data, dest)
                return dest
        else:

            def ws(r):
                return checkout_dir(cache, r.repo, r.commit)

        rep["intents"] = intent_report(run_intents(repos, ws, suggester=suggester))
    if (trajectories_dir / "index.jsonl").is_file():
        trajs = read_trajectories(trajectories_dir, trajectory_ids)
        if only is not None:
            trajs = [t for t in trajs if t.row["repo"] in only or t.id in only or t.family in only]
        if materialized is not None:

            def tws(t):
                dest = materialized / "trajectories" / f"{t.row['repo'].replace('/', '__')}@{t.row['commit']}"
                if not dest.exists():
                    materialize_trajectory(trajectories_dir, t.row["repo"], t.row["commit"], dest)
                return dest
        else:

            def tws(t):
                return checkout_dir(cache, t.row["repo"], t.row["commit"])

        if trajs:
            rep["trajectories"] = run_trajectory_grid(trajs, tws, suggester, select, objective)
            if task_lead:

                def task_of(t):
                    name = t.row.get("task")
                    return (trajectories_dir / name).read_text("utf-8") if name else None

                rep["trajectories_task"] = run_trajectory_grid(
                    trajs, tws, suggester, select, objective, task_of=task_of
                )
    return rep


def rescore(kept_path: Path, cache: Path | None, materialized: bool, trajectories_dir: Path, objective) -> dict:
    """The trajectory report of a kept ``--json`` report scored again on the same notes."""
    kept = json.loads(kept_path.read_text("utf-8"))
    old = kept["trajectories"]
    trajs = read_trajectories(trajectories_dir, set(old["traces"]))

    def files_of(t):
        if materialized:
            key = f"{t.row['repo'].replace('/', '__')}@{t.row['commit']}"
            return [p for p in (trajectories_dir / "paths" / f"{key}.txt").read_text("utf-8").split("\n") if p]
        return workspace_files(checkout_dir(cache, t.row["repo"], t.row["commit"]))

    per = rescore_trajectories(trajs, old["traces"], files_of)
    rep = trajectory_report(per, old["ledger"])
    rep["folds"] = fold_report({"default": per}, objective)
    return {
        "cache": str(cache) if cache else None,
        "materialized": materialized,
        "rescored": str(kept_path),
        "trajectories": rep,
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", action="store_true", help="score the evaluation corpus instead of the fixture")
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"), help="corpus checkouts")
    p.add_argument("--materialized", action="store_true", help="corpus on stub workspaces made from its data")
    p.add_argument("--only", default=None, help="comma-separated repository dirs, owner/name or trajectory ids")
    p.add_argument("--trajectory-ids", default=None, help="comma-separated trajectory ids (default: all)")
    p.add_argument("--trajectories-dir", type=Path, default=CORPUS / "trajectories")
    p.add_argument("--no-intents", action="store_true", help="trajectories only")
    p.add_argument("--json", type=Path, default=None, help="also write the figures as JSON here")
    p.add_argument("--suggester", default=None, help="suggester knobs as JSON (initializationOptions.suggester)")
    p.add_argument("--select", default=None, help="knob=v1,v2,…: choose the value on the training folds")
    p.add_argument(
        "--objective",
        default=None,
        help="summary keys to maximise, in order (-key minimises; key>=v, key<=v: a floor, a ceiling)",
    )
    p.add_argument(
        "--task-lead",
        action="store_true",
        help="also replay each trajectory with its task text (dsh/taskLead at the session's start)",
    )
    p.add_argument("--rescore", type=Path, default=None, help="score a kept --json report again (no replay)")
    p.add_argument("--trace", type=Path, default=TRACE)
    p.add_argument("--workspace", type=Path, default=FIXTURE)
    p.add_argument("--files", type=int, default=100_000, help="size of the synthetic workspace (0: skip it)")
    p.add_argument("--keep", type=Path, default=None, help="build the synthetic workspace here and keep it")
    args = p.parse_args(argv)
    if args.corpus:
        if not args.materialized and (args.cache is None or not Path(args.cache).is_dir()):
            p.error("--corpus needs --cache DIR (or DSH_CORPUS_CACHE) holding the checkouts, or --materialized")
        only = set(args.only.split(",")) if args.only else None
        ids = set(args.trajectory_ids.split(",")) if args.trajectory_ids else None
        try:
            knobs = json.loads(args.suggester) if args.suggester else None
            select = parse_select(args.select)
            objective = parse_objective(args.objective)
        except ValueError as exc:
            p.error(str(exc))
        if knobs is not None and not isinstance(knobs, dict):
            p.error("--suggester must be a JSON object")
        t0 = time.perf_counter()
        if args.rescore:
            rep = rescore(
                args.rescore,
                Path(args.cache) if args.cache else None,
                args.materialized,
                args.trajectories_dir,
                objective,
            )
            print(f"corpus report {args.rescore} scored again ({time.perf_counter() - t0:.0f} s)\n")
            print(format_corpus(rep))
            if args.json:
                args.json.write_text(json.dumps(rep, indent=1) + "\n", "utf-8")
            return 0
        # one scratch folder (removed however the run ends: a stopped replay left ~100 MB) with
        # the run's own index cache unless DSH_CACHE_DIR names one
        with scratch("dsh-corpus-") as tmp, own_cache(tmp / "cache"):
            rep = corpus(
                Path(args.cache) if args.cache else None,
                tmp if args.materialized else None,
                only,
                ids,
                args.trajectories_dir,
                intents=not args.no_intents,
                suggester=knobs,
                select=select,
                objective=objective,
                task_lead=args.task_lead,
            )
        where = "materialized stub workspaces" if args.materialized else f"real checkouts in {args.cache}"
        print(f"corpus on {where} ({time.perf_counter() - t0:.0f} s)\n")
        print(format_corpus(rep))
        if args.json:
            args.json.write_text(json.dumps(rep, indent=1) + "\n", "utf-8")
        return 0
    with scratch("dsh-bench-") as tmp, own_cache(tmp / "cache"):
        run(args.trace, args.workspace, args.workspace.name)
        if args.files > 0:
            dest = (args.keep or tmp) / f"synthetic-{args.files}"
            if not dest.exists():
                secs = synthetic_workspace(dest, args.files)
                print(f"[synthetic] built {args.files} files in {secs:.1f}s")
            run(args.trace, dest, f"synthetic-{args.files}")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
