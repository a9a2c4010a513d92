"""``dsh/postExecute`` latency during and after the workspace build, against the floor of the
same run ("Speed and memory", docs/benchmarks.md: p99 ≤ floor + 2 ms on a 100k-file workspace **during**
the graph/index build as well as after it).

What it does, per run (a fresh ``dsh-search serve`` with a fresh ``$DSH_HOME``, so the graph,
symbol index, content index and targets are all built from nothing):

1. ``initialize`` on a synthetic workspace (``bench/workspace.py``'s mix, default 100k files
   with content), then at once a stream of **pairs**: one real intent call and one floor call,
   their order alternating pair by pair, so both see the same machine noise;
2. every ``--check-every`` pairs a ``dsh/status`` (not timed): the batch just measured is
   labelled **during** when the status after it still says the projection is not ready
   (``suggester.graph.ready`` false), **after** when the status before it already said ready;
   the one batch in which the build finished is dropped (it is neither);
3. after the build, ``--after`` more pairs.

Intent calls are the grep/glob/read/bash calls of ``corpus/intents/*/trace.jsonl`` (with
their result texts, the way harnesses send them) plus the synthetic tree's own searches
(``content_index.CALLS``), cycled; the floor is a non-search call (``make build``) that the
suggester dismisses at once: transport, validation and the query parse.

``--runs`` runs are made (more when a phase has fewer than ``--min-calls`` samples, up to
``--max-runs``); with ``--baseline-src DIR`` (another commit's source tree, e.g. ``git archive
main | tar -x -C DIR``) the runs alternate baseline / this tree on the same workspace, so the
before and after figures come from the same session. Printed per tree and phase: n, p50 and p99
of the intent calls and of the floor, p99 − floor p99 (the goal's figure), p50 difference, and the
p99 ratio.

    python bench/postexecute_latency.py [--files 100000] [--runs 2] [--after 1500]
        [--baseline-src DIR] [--keep DIR] [--scripts]

``--scripts`` adds the ``.py`` writes of the recorded agent runs (``corpus/trajectories``)
to the intent calls: the reproduction scripts the suggester parses (``query.script_names``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _rpc import StdioClient, sidecar_cmd  # noqa: E402
from content_index import CALLS, FLOOR  # noqa: E402

HERE = Path(__file__).resolve().parent
#: The goal: intent p99 over the floor p99, ms (docs/benchmarks.md).
GOAL_OVER_FLOOR_MS = 2.0
#: Tool names (lower case) taken from the corpus traces.
KINDS = {"grep", "glob", "read", "bash"}
#: The synthetic tree's own searches: ``bench/content_index.py``'s, without its folder listing;
#: the floor is its non-search call too.
SYNTHETIC = [c for c in CALLS if c["input"] != {"command": "ls .github/workflows"}]


def script_writes() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(tool, result) of every write of a ``.py`` file in the recorded agent runs
    (``corpus/trajectories``): the scripts the suggester parses for the project names they
    use (``query.script_names``), oversized ones included (they are dismissed unparsed)."""
    out = []
    for trace in sorted((HERE / "corpus" / "trajectories").glob("*__*.jsonl")):
        for line in trace.read_text().splitlines():
            if not line.strip():
                continue
            tool = (json.loads(line).get("params") or {}).get("tool") or {}
            if tool.get("name") == "write" and str((tool.get("input") or {}).get("file_path", "")).endswith(".py"):
                out.append((tool, {"text": ""}))
    return out


def corpus_calls(scripts: bool = False) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(tool, result) of every grep/glob/read/bash call in the corpus traces, then the synthetic
    searches (with an empty result), then (``scripts``) :func:`script_writes`; interleaved so
    consecutive calls come from different traces."""
    per_trace: list[list[tuple[dict[str, Any], dict[str, Any]]]] = []
    for trace in sorted((HERE / "corpus" / "intents").glob("*/trace.jsonl")):
        rows = []
        for line in trace.read_text().splitlines():
            if not line.strip():
                continue
            params = json.loads(line)["params"]
            tool = params.get("tool") or {}
            if str(tool.get("name", "")).lower() in KINDS:
                rows.append((tool, params.get("result") or {"text": ""}))
        per_trace.append(rows)
    per_trace.append([(t, {"text": ""}) for t in SYNTHETIC])
    if scripts:
        per_trace.append(script_writes())
    out: list[tuple[dict[str, Any], dict[str, Any]]] = []
    for i in range(max(len(r) for r in per_trace)):
        out += [rows[i] for rows in per_trace if i < len(rows)]
    return out


def pct(values: list[float], q: float) -> float:
    """The ``q``-th percentile (0–100) by nearest rank; 0.0 for no values."""
    if not values:
        return 0.0
    s = sorted(values)
    return s[max(0, min(len(s) - 1, int(round(q / 100 * len(s) + 0.5)) - 1))]


def one_run(
    root: Path, home: Path, pythonpath: str | None, calls: list, args: argparse.Namespace
) -> dict[str, list[float]]:
    """One fresh server: samples (ms) of ``intent``/``floor`` for ``during``/``after``."""
    env = dict(os.environ, DSH_HOME=str(home), DSH_CACHE_DIR=f"{home}-cache")  # fresh: no earlier index
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    client = StdioClient(sidecar_cmd(), env)
    out: dict[str, list[float]] = {"during intent": [], "during floor": [], "after intent": [], "after floor": []}
    seq = 0

    def timed(tool: dict[str, Any], result: dict[str, Any]) -> float:
        nonlocal seq
        seq += 1
        params = {"sessionId": f"lat{seq // 100}", "turn": 1, "callId": f"c{seq}", "tool": tool, "result": result}
        t0 = time.perf_counter()
        reply = client.request("dsh/postExecute", params)
        ms = (time.perf_counter() - t0) * 1000
        assert "result" in reply, reply
        return ms

    def batch(n: int, k0: int) -> tuple[list[float], list[float]]:
        intent, floor = [], []
        for k in range(k0, k0 + n):
            tool, result = calls[k % len(calls)]
            if k % 2:
                floor.append(timed(FLOOR, {"text": ""}))
                intent.append(timed(tool, result))
            else:
                intent.append(timed(tool, result))
                floor.append(timed(FLOOR, {"text": ""}))
        return intent, floor

    def ready() -> bool:
        return bool(client.call("dsh/status", {})["suggester"]["graph"]["ready"])

    try:
        client.request("dsh/status", {})  # the process is up (answered -32002 before initialize)
        t0 = time.perf_counter()
        client.initialize(root, {"suggester": {"enabled": True}})  # the reply, then `initialized`
        init_ms = (time.perf_counter() - t0) * 1000
        k = 0
        was_ready = ready()
        deadline = time.monotonic() + args.build_timeout
        while not was_ready and time.monotonic() < deadline:
            intent, floor = batch(args.check_every, k)
            k += args.check_every
            now_ready = ready()
            if not now_ready:
                out["during intent"] += intent
                out["during floor"] += floor
            was_ready = now_ready
        build_s = time.perf_counter() - t0
        intent, floor = batch(args.after, k)
        out["after intent"] += intent
        out["after floor"] += floor
        out["meta"] = [init_ms, build_s]
    finally:
        client.close()
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--runs", type=int, default=2, help="runs per tree (at least)")
    p.add_argument("--max-runs", type=int, default=6, help="runs per tree at most")
    p.add_argument("--min-calls", type=int, default=1000, help="intent samples wanted per phase")
    p.add_argument("--after", type=int, default=1500, help="pairs after the build, per run")
    p.add_argument("--check-every", type=int, default=20, help="pairs between two dsh/status checks")
    p.add_argument("--build-timeout", type=float, default=600.0)
    p.add_argument("--baseline-src", type=Path, help="another commit's source tree, runs alternated with this one")
    p.add_argument("--keep", type=Path, help="build the synthetic tree here and keep it")
    p.add_argument(
        "--scripts", action="store_true", help="add the .py writes of the recorded agent runs to the intent calls"
    )
    args = p.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from workspace import synthetic  # the generator (imports this tree's package)

    calls = corpus_calls(args.scripts)
    tmp = Path(tempfile.mkdtemp(prefix="dsh-lat-"))
    root = (args.keep or tmp) / f"synthetic-{args.files}"
    if not root.exists():
        print(f"built {args.files} files in {synthetic(root, args.files, with_content=True):.1f}s", flush=True)
    for dirpath, _dirs, names in os.walk(root):  # warm the page cache: every run then starts alike
        for n in names:
            with open(os.path.join(dirpath, n), "rb") as fh:
                fh.read(4096)
    trees: list[tuple[str, str | None]] = []
    if args.baseline_src:
        src = args.baseline_src.resolve()
        trees.append(("baseline", os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs"))))
    trees.append(("this tree", None))
    pooled: dict[str, dict[str, list[float]]] = {label: {} for label, _ in trees}
    runs = 0
    while True:
        for label, pythonpath in trees:
            got = one_run(root, tmp / f"home-{label.replace(' ', '-')}-{runs}", pythonpath, calls, args)
            init_ms, build_s = got.pop("meta")
            for key, values in got.items():
                pooled[label].setdefault(key, []).extend(values)
            print(
                f"run {runs + 1} {label}: initialize {init_ms:.0f} ms, ready after {build_s:.1f} s, "
                f"{len(got['during intent'])} pairs during, {len(got['after intent'])} after",
                flush=True,
            )
        runs += 1
        short = any(len(pooled[label].get("during intent", [])) < args.min_calls for label, _ in trees)
        if runs >= args.max_runs or (runs >= args.runs and not short):
            break
    load = os.getloadavg()
    print(
        f"\ndsh/postExecute on {args.files} files, {runs} run(s) per tree, {len(calls)} distinct intent calls; "
        f"{os.cpu_count()} CPUs, load {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}"
    )
    print(
        f"{'tree':<10} {'phase':<7} {'n':>6} {'p50':>7} {'p99':>7} {'floor p50':>9} {'floor p99':>9} "
        f"{'p99-floor':>9} {'p50-floor':>9} {'p99 x':>6}  goal p99-floor <= {GOAL_OVER_FLOOR_MS} ms"
    )
    met = True
    for label, _ in trees:
        for phase in ("during", "after"):
            it, fl = pooled[label].get(f"{phase} intent", []), pooled[label].get(f"{phase} floor", [])
            over = pct(it, 99) - pct(fl, 99)
            ok = bool(it) and over <= GOAL_OVER_FLOOR_MS
            met &= ok or label != "this tree"
            print(
                f"{label:<10} {phase:<7} {len(it):>6} {pct(it, 50):>7.3f} {pct(it, 99):>7.3f} {pct(fl, 50):>9.3f} "
                f"{pct(fl, 99):>9.3f} {over:>+9.3f} {pct(it, 50) - pct(fl, 50):>+9.3f} "
                f"{pct(it, 99) / max(pct(fl, 99), 1e-9):>6.2f}  {'met' if ok else 'NOT met'}"
                + ("" if len(it) >= args.min_calls else f" (only {len(it)} samples)")
            )
    print(
        json.dumps({label: {k: [pct(v, 50), pct(v, 99), len(v)] for k, v in d.items()} for label, d in pooled.items()})
    )
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
