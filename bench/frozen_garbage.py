"""Garbage the heap's freezes strand (workspace/heap.py): a frozen reference cycle is never
collected, so each freeze that catches garbage keeps it for the life of the process.

Per run, a fresh interpreter (``PYTHONPATH`` = this tree or ``--baseline-src``) builds a
:class:`~dsh_sidecar.sidecar.Sidecar` with the suggester on over a synthetic workspace
(``bench/workspace.py``'s mix, with content), then rebuilds it ``--rebuilds`` times
(``files_changed(None)``, as a ``didChangeWatchedFiles`` without paths), each followed to the
freezer's last freeze, while a thread makes reference cycles that are garbage at once (what the
event loop makes while a build runs: exceptions and their tracebacks, callback cycles). At the
end the unfrozen garbage is collected, the heap unfrozen, and what a collection then finds is
the garbage the freezes stranded. Printed per tree: stranded objects (median, min, max), the
freezes counted, and the longest collection the freezer's thread made (the pause it may add).

    python bench/frozen_garbage.py [--files 2000] [--rebuilds 10] [--runs 3] [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

CHILD = textwrap.dedent(
    """
    import asyncio, gc, json, logging, os, sys, threading, time
    from pathlib import Path
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    class Node:
        __slots__ = ("other",)

    stop = threading.Event()

    def cycles():
        while not stop.is_set():
            for _ in range(50):
                a, b = Node(), Node()
                a.other, b.other = b, a
            time.sleep(0.001)

    errors = []
    class Errors(logging.Handler):
        def emit(self, record):
            errors.append(record.getMessage())
    logging.getLogger().addHandler(Errors(logging.ERROR))
    threading.excepthook = lambda args: errors.append(repr(args.exc_value))
    pauses, t = [], {}
    def on_gc(phase, info):
        if threading.current_thread().name != "dsh-heap-freezer":
            return
        if phase == "start":
            t["s"] = time.perf_counter()
        else:
            pauses.append((time.perf_counter() - t["s"]) * 1000)
    gc.callbacks.append(on_gc)
    maker = threading.Thread(target=cycles, daemon=True)
    maker.start()
    env = {"DSH_HOME": sys.argv[2], "DSH_CACHE_DIR": sys.argv[2] + "-cache", "PATH": os.environ.get("PATH", "")}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), Path(sys.argv[1]), env)
    heap = sidecar.projection.heap

    def settled():
        assert sidecar.wait_for_graph(300)
        while heap._thread is not None and heap._thread.is_alive():
            heap._thread.join(0.1)

    settled()
    for _ in range(int(sys.argv[3])):
        sidecar.files_changed(None)
        time.sleep(0.05)
        settled()
    stop.set()
    maker.join()
    asyncio.run(sidecar.aclose())
    gc.collect()
    frozen = gc.get_freeze_count()
    gc.unfreeze()
    stranded = gc.collect()
    print(json.dumps({"stranded": stranded, "frozen": frozen, "freezes": heap.freezes,
                      "pause_max": max(pauses, default=0.0), "files": len(sidecar.projection.graph.files), "errors": len(errors)}))
    """
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=2_000)
    ap.add_argument("--rebuilds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from build_pauses import interleaved, one_run  # the child's run, the runs' order
    from workspace import synthetic  # the generator (bench/workspace.py)

    base = Path(tempfile.mkdtemp(prefix="dsh-frozen-ws-"))
    ws = base / f"synthetic-{args.files}"
    synthetic(ws, args.files, with_content=True)
    trees = [("this tree", ROOT)] + ([("baseline", args.baseline_src.resolve())] if args.baseline_src else [])
    results: dict[str, list[dict]] = {name: [] for name, _ in trees}
    for i, name, src in interleaved(trees, args.runs):
        r = one_run(src, ws, args.rebuilds, CHILD, timeout_s=900)
        if r["errors"]:  # a build that failed makes less garbage: no figure
            raise RuntimeError(f"{name}: {r['errors']} errors logged")
        results[name].append(r)
        print(f"run {i + 1} {name}: stranded {r['stranded']}, files {r['files']}, freezes {r['freezes']}")
    print()
    print(f"garbage left frozen after {args.rebuilds} rebuilds of {args.files} files ({args.runs} runs per tree)")
    print(f"{'tree':10} {'median':>8} {'min':>8} {'max':>8} {'freezes':>8} {'freezer pause max ms':>21}")
    for name, rs in results.items():
        s = [r["stranded"] for r in rs]
        print(
            f"{name:10} {statistics.median(s):>8.0f} {min(s):>8} {max(s):>8} "
            f"{statistics.median(r['freezes'] for r in rs):>8.0f} {max(r['pause_max'] for r in rs):>21.1f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
