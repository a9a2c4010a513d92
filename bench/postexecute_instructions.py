"""In-process cost of ``Sidecar.post_execute`` per call, silent and note, on a varied stream of
real calls (``bench/postexecute_streams.py``: the recorded runs of one training repository,
played in session order on its checkout), for this tree and other commits' trees side by side.

Each tree runs in a fresh child process (its source first on ``PYTHONPATH``) on the same stream:
the first half of the runs warms it up, the second half is measured, every call's thread CPU
time taken and the call counted as a **note** (``additionalContexts`` not empty) or **silent**.
Runs of the trees alternate (``--repeat`` each), so the machine's noise falls on all of them.
``--callgrind`` adds one run per tree under ``valgrind --tool=callgrind`` that counts the
instructions of the calling thread inside each measured call only (instrumentation starts after
the warm-up; collection is switched on around each call and the counts dumped after it under the
call's outcome, through callgrind's client requests from a small C helper built with ``cc``):
load does not move these counts. The note texts of every tree are compared call by call with the
first tree's (a change that must not move any note: 0 differ).

    python bench/postexecute_instructions.py [--repo pydata/xarray] [--cache /work/corpus-cache]
        [--baseline-src DIR ...] [--repeat 3] [--callgrind]

(``DIR``: another commit's tree, ``git -C /work/main archive <commit> | tar -x -C DIR``.)
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

SHIM = r"""
#include <valgrind/callgrind.h>
void dsh_start(void) { CALLGRIND_START_INSTRUMENTATION; }
void dsh_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }
void dsh_dump(const char *what) { CALLGRIND_DUMP_STATS_AT(what); }
"""


def build_shim(folder: Path) -> Path:
    """The client-request helper, compiled into ``folder``."""
    src, lib = folder / "cgshim.c", folder / "cgshim.so"
    src.write_text(SHIM)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    return lib


def worker(stream: Path, out: Path, shim: Path | None) -> None:
    """Play ``stream`` (JSON: workspace, warm, measured) on the tree first on ``sys.path``;
    write per measured call [note?, thread ns, note texts] to ``out``."""
    from dsh_protocol.models import PostExecuteParams
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    data = json.loads(stream.read_text())
    cg = ctypes.CDLL(str(shim)) if shim else None
    tmp = Path(tempfile.mkdtemp(prefix="dsh-instr-"))
    env = {"DSH_HOME": str(tmp / "home"), "DSH_CACHE_DIR": str(tmp / "cache"), "HOME": str(tmp)}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), Path(data["workspace"]), env)
    deadline = time.monotonic() + 1800
    while sidecar.projection_pending():  # the graph, the targets and the content index built
        if time.monotonic() > deadline:
            raise TimeoutError("the workspace was not ready in time")
        time.sleep(0.05)
    for p in data["warm"]:
        sidecar.post_execute(PostExecuteParams.model_validate(p))
    calls = [PostExecuteParams.model_validate(p) for p in data["measured"]]
    rows: list[list[Any]] = []
    if cg is not None:
        cg.dsh_start()
    for params in calls:
        if cg is not None:
            cg.dsh_toggle()
        t0 = time.thread_time_ns()
        result = sidecar.post_execute(params)
        ns = time.thread_time_ns() - t0
        noted = bool(result.additional_contexts)
        if cg is not None:
            cg.dsh_toggle()
            cg.dsh_dump(b"note" if noted else b"silent")
        rows.append([noted, ns, [c.model_dump(mode="json") for c in result.additional_contexts]])
    sidecar.shutdown()
    out.write_text(json.dumps(rows))


def instructions(folder: Path) -> list[int]:
    """The instructions of each measured call in ``folder`` (one dump each, in call order)."""
    dumps: list[tuple[int, int]] = []
    for f in folder.glob("cg.out.*"):
        what, total = None, 0
        with f.open() as fh:
            for line in fh:
                if line.startswith("desc: Trigger: Client Request: "):
                    what = line.rsplit(":", 1)[1].strip()
                elif line.startswith(("totals:", "summary:")):
                    total = int(line.split()[1])
                    break
        if what in ("note", "silent"):
            dumps.append((int(f.name.rsplit(".", 1)[1].split("-")[0]), total))
    return [total for _, total in sorted(dumps)]


def run_tree(src: Path, stream: Path, folder: Path, callgrind: Path | None) -> list[list[Any]]:
    out = folder / "rows.json"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs")))
    cmd = [sys.executable, __file__, "--worker", str(stream), "--out", str(out)]
    if callgrind is not None:
        cmd = [
            "valgrind",
            "--tool=callgrind",
            "--instr-atstart=no",
            "--collect-atstart=no",
            "--dump-instr=no",
            "--dump-line=no",
            f"--callgrind-out-file={folder}/cg.out",
            *cmd,
            "--shim",
            str(callgrind),
        ]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return json.loads(out.read_text())


def main() -> None:
    import postexecute_streams as streams

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", default="pydata/xarray")
    ap.add_argument("--cache", type=Path, default=streams.DEFAULT_CACHE)
    ap.add_argument("--baseline-src", type=Path, action="append", default=[])
    ap.add_argument("--repeat", type=int, default=3, help="thread-time runs per tree (interleaved)")
    ap.add_argument("--callgrind", action="store_true", help="also count instructions (one run per tree)")
    args = ap.parse_args()
    try:
        corpus = streams.load(args.repo, args.cache)
    except (ValueError, OSError) as exc:  # a held-out or unknown repository, no checkout
        sys.exit(f"postexecute_instructions: {exc}")
    half = len(corpus.runs) // 2
    tmp = Path(tempfile.mkdtemp(prefix="dsh-instr-bench-"))
    stream = tmp / "stream.json"
    stream.write_text(
        json.dumps(
            {
                "workspace": str(corpus.workspace),
                "warm": [p for run in corpus.runs[:half] for p in run],
                "measured": [p for run in corpus.runs[half:] for p in run],
            }
        )
    )
    trees = [ROOT, *(b.resolve() for b in args.baseline_src)]
    names = ["this tree", *(t.name for t in trees[1:])]
    load_before = os.getloadavg()
    times: list[list[list[float]]] = [[] for _ in trees]  # per tree, per run: thread us of each call
    outcome: list[list[bool]] = [[] for _ in trees]
    texts: list[list[Any]] = [[] for _ in trees]
    for r in range(max(1, args.repeat)):
        for k in range(len(trees)):
            k = (k + r) % len(trees)  # rotate: no tree always first
            folder = tmp / f"t{k}-r{r}"
            folder.mkdir()
            rows = run_tree(trees[k], stream, folder, None)
            times[k].append([ns / 1000 for _, ns, _ in rows])
            outcome[k] = [bool(noted) for noted, _, _ in rows]
            texts[k] = [t for _, _, t in rows]
    instr: list[list[int]] = []
    if args.callgrind:
        shim = build_shim(tmp)
        for k, tree in enumerate(trees):
            folder = tmp / f"cg-{k}"
            folder.mkdir()
            run_tree(tree, stream, folder, shim)
            instr.append(instructions(folder))
    load_after = os.getloadavg()
    report(args.repo, corpus, half, names, times, outcome, texts, instr)
    print(
        f"load average before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
        f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} on {os.cpu_count()} CPUs"
    )


def report(repo, corpus, half, names, times, outcome, texts, instr) -> None:  # noqa: PLR0913
    """Per tree: thread us (median of the runs' means) and instructions per call over all
    measured calls and over the calls this tree (the first) answers silently / with a note, the
    same calls for every tree; the notes each tree makes there."""
    mine = outcome[0]
    groups = {
        "all": list(range(len(mine))),
        "silent": [i for i, o in enumerate(mine) if not o],
        "note": [i for i, o in enumerate(mine) if o],
    }
    print(
        f"{repo} on {corpus.workspace.name}: {len(corpus.runs) - half} runs measured ({len(mine)} calls) after "
        f"{half} warming up; Sidecar.post_execute in-process; calls grouped by this tree's answer "
        f"(silent {len(groups['silent'])}, note {len(groups['note'])}), the same calls for every tree"
    )
    head = f"{'tree':<16}"
    for g in groups:
        head += f" {g + ' us':>10}" + (f" {g + ' Ir':>12}" if instr else "")
    print(head + f" {'notes made':>10}")
    for k, name in enumerate(names):
        line = f"{name:<16}"
        for idx in groups.values():
            us = statistics.median(statistics.fmean(run[i] for i in idx) for run in times[k]) if idx else 0.0
            line += f" {us:>10.0f}"
            if instr:
                ir = statistics.fmean(instr[k][i] for i in idx) if idx and len(instr[k]) == len(mine) else 0.0
                line += f" {ir / 1000:>11.0f}k"
        print(line + f" {sum(outcome[k]):>10}")
    for k, name in enumerate(names[1:], 1):
        differ = sum(a != b for a, b in zip(texts[0], texts[k], strict=True))
        print(f"notes of {name} against this tree: {differ} of {len(texts[0])} calls differ")


if __name__ == "__main__":
    if "--worker" in sys.argv:
        a = argparse.ArgumentParser()
        a.add_argument("--worker", type=Path)
        a.add_argument("--out", type=Path)
        a.add_argument("--shim", type=Path)
        w = a.parse_args()
        worker(w.worker, w.out, w.shim)
    else:
        main()
