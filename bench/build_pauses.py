"""How long the workspace build stops the server's event loop (the "Speed and memory" goals of docs/benchmarks.md,
the break-test finding "postExecute up to 502 ms during the build of a 200k-file tree").

The build runs on background threads, but a thread holding the GIL in one long C call (a
``dict(zip(…))`` over 200,000 paths) or a full cyclic-GC collection over the build's heap stops
every other thread, the event loop included, however short the request it should answer.

Per run, a fresh interpreter (``PYTHONPATH`` = this tree or ``--baseline-src``) builds a
:class:`~dsh_sidecar.sidecar.Sidecar` with the suggester on over a synthetic workspace
(``bench/workspace.py``'s mix, with content) and a fresh ``$DSH_HOME``, and runs an asyncio loop
whose only task sleeps 2 ms at a time; the lateness of each wake-up is a stall the loop would
have imposed on a request. Stops when ``dsh/status`` would say ``ready`` (graph, symbols,
content index and targets) or after ``--limit-s``. Printed per tree: time to ready, the
number of stalls over 50 and 100 ms, p99 and max stall, and the full (generation 2) GC
collections over 50 ms with the longest one. The baseline is the same measurement of the other
tree, in the same session, runs alternating.

    python bench/build_pauses.py [--files 200000] [--runs 2] [--baseline-src DIR] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = textwrap.dedent(
    """
    import asyncio, gc, json, os, sys, tempfile, time
    from pathlib import Path
    gc_pauses, t = [], {}
    def on_gc(phase, info):
        if phase == "start":
            t["s"] = time.perf_counter()
        elif info["generation"] == 2:
            gc_pauses.append((time.perf_counter() - t["s"]) * 1000)
    gc.callbacks.append(on_gc)
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    async def main():
        t0 = time.perf_counter()
        sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), Path(sys.argv[1]),
                          {"DSH_HOME": sys.argv[2], "DSH_CACHE_DIR": sys.argv[2] + "-cache", "PATH": os.environ.get("PATH", "")})
        stalls, ready = [], None
        while time.perf_counter() - t0 < float(sys.argv[3]):
            before = time.perf_counter()
            await asyncio.sleep(0.002)
            stalls.append(max(0.0, (time.perf_counter() - before) * 1000 - 2.0))
            if len(stalls) % 50 == 0 and sidecar.projection.status()["ready"]:
                ready = time.perf_counter() - t0
                break
        await sidecar.aclose()
        print(json.dumps({"ready": ready, "stalls": stalls, "gc2": gc_pauses}))

    asyncio.run(main())
    """
)


def one_run(src: Path, ws: Path, limit_s: float, child: str = CHILD, timeout_s: float | None = None) -> dict:
    """``child`` (this bench's :data:`CHILD` unless given) run on ``src``'s tree with the
    arguments ``ws``, a fresh ``$DSH_HOME`` and ``limit_s``; the JSON of its last line."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs"))}
    with tempfile.TemporaryDirectory(prefix="dsh-pauses-") as home:
        out = subprocess.run(
            [sys.executable, "-c", child, str(ws), home, str(limit_s)],
            capture_output=True,
            text=True,
            env=env,
            check=True,
            timeout=timeout_s if timeout_s is not None else limit_s + 120,
        )
    return json.loads(out.stdout.strip().splitlines()[-1])


def interleaved(trees: list[tuple[str, Path]], runs: int) -> Iterator[tuple[int, str, Path]]:
    """``(run, tree name, tree)`` for ``runs`` runs of each tree, alternating which goes first."""
    for i in range(runs):
        for name, src in trees if i % 2 == 0 else list(reversed(trees)):
            yield i, name, src


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))] if ordered else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=200_000)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--limit-s", type=float, default=300.0)
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    ap.add_argument("--keep", type=Path, help="reuse/keep the synthetic workspace under this folder")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(ROOT / "server"))
    from workspace import synthetic  # the generator (bench/workspace.py)

    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="dsh-pauses-ws-"))
    ws = base / f"synthetic-{args.files}"
    if not ws.exists():
        base.mkdir(parents=True, exist_ok=True)
        print(f"built {args.files} files in {synthetic(ws, args.files, with_content=True):.1f}s", flush=True)
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline_src.resolve())] if args.baseline_src else [])
    results: dict[str, list[dict]] = {name: [] for name, _ in trees}
    for i, name, src in interleaved(trees, args.runs):
        r = one_run(src, ws, args.limit_s)
        results[name].append(r)
        print(f"run {i + 1} {name}: ready {r['ready'] and round(r['ready'], 1)} s, max stall {max(r['stalls']):.0f} ms")
    print()
    print(
        f"event-loop stalls during the build of {args.files} files ({args.runs} runs per tree, {os.cpu_count()} CPUs)"
    )
    print(
        f"{'tree':10} {'ready s':>8} {'>50ms':>6} {'>100ms':>7} {'p99 ms':>7} {'max ms':>7} {'gc2>50ms':>9} {'gc2 max':>8}"
    )
    summary = {}
    for name, runs in results.items():
        stalls = [s for r in runs for s in r["stalls"]]
        gc2 = [g for r in runs for g in r["gc2"]]
        readies = [r["ready"] for r in runs if r["ready"] is not None]
        row = {
            "ready_s": statistics.median(readies) if readies else None,
            "over50": sum(s > 50 for s in stalls) / len(runs),
            "over100": sum(s > 100 for s in stalls) / len(runs),
            "p99": pct(stalls, 99),
            "max": max(stalls),
            "gc2_over50": sum(g > 50 for g in gc2) / len(runs),
            "gc2_max": max(gc2, default=0.0),
        }
        summary[name] = row
        ready = f"{row['ready_s']:.1f}" if row["ready_s"] is not None else "-"
        print(
            f"{name:10} {ready:>8} {row['over50']:6.1f} {row['over100']:7.1f} {row['p99']:7.1f} {row['max']:7.0f} "
            f"{row['gc2_over50']:9.1f} {row['gc2_max']:8.0f}"
        )
    if "baseline" in summary:
        print(f"max stall ratio (this tree / baseline): {summary['this tree']['max'] / summary['baseline']['max']:.2f}")
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
