"""The task arm of the trajectory replay (each trace with its task text as ``dsh/taskLead``),
one split in a seeded order, one trace at a time to a JSON-lines file: a run stopped early is a
random sample of the split, and several processes share it by ``--shard k/n``.

Each trace's line is ``{"id", "per"}`` (``per``: what ``replay_trajectories`` gives a trace,
with its ``note_log`` and, from the recording server ``bench/serve_task_ranks.py``, the task
lead's best files as ``task_ranks``) or ``{"id", "error"}``. ``--combine`` writes the finished
lines of several files as a ``--task-lead --json`` report (``trajectories_task``) for
``bench/task_notes.py``. The replay spawns the server from the imported ``dsh_sidecar``: run it
from a copy of the tree (``git archive``) with its own ``DSH_CACHE_DIR``, never while editing it.

    python bench/task_arm.py --cache /work/corpus-cache --split tune --shard 0/2 --out a.jsonl
    python bench/task_arm.py --combine a.jsonl b.jsonl --out report.json
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from dsh_sidecar.evaluation import checkout_dir, read_trajectories
from dsh_sidecar.evaluation.trajectories import replay_trajectories, trajectory_report

ROOT = Path(__file__).resolve().parent.parent
TRAJ = ROOT / "corpus" / "trajectories"
RECORDING = Path(__file__).resolve().parent / "serve_task_ranks.py"


def ordered(ids: list[str], seed: int) -> list[str]:
    """``ids`` sorted, then shuffled by ``random.Random(seed)``."""
    out = sorted(ids)
    random.Random(seed).shuffle(out)
    return out


def combine(paths: list[Path]) -> dict:
    """The finished traces of JSON-lines files as ``{"trajectories_task": report}`` (a trace
    twice: its first line kept; error lines left out and counted as ``errors``)."""
    per: dict[str, dict] = {}
    errors: list[str] = []
    for path in paths:
        for raw in path.read_text("utf-8").splitlines():
            row = json.loads(raw) if raw.strip() else None
            if row is None:
                continue
            if "per" in row:
                per.setdefault(row["id"], row["per"])
            else:
                errors.append(row["id"])
    return {"trajectories_task": trajectory_report(per, {}), "errors": errors}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, help="the corpus checkouts")
    p.add_argument("--split", choices=("tune", "heldout"), default="tune")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--shard", default="0/1", help="k/n: this process replays every n-th trace from the k-th")
    p.add_argument("--start", type=int, default=0, help="begin at this place of the seeded order")
    p.add_argument("--graph-wait", type=float, default=1200.0, help="seconds a workspace graph may take")
    p.add_argument("--trajectories-dir", type=Path, default=TRAJ)
    p.add_argument("--combine", type=Path, nargs="+", default=None, help="JSON-lines files to combine")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if args.combine:
        args.out.write_text(json.dumps(combine(args.combine), indent=1) + "\n", "utf-8")
        return 0
    if args.cache is None:
        p.error("--cache is needed to replay")
    k, n = (int(x) for x in args.shard.split("/"))
    trajs = {t.id: t for t in read_trajectories(args.trajectories_dir) if t.heldout == (args.split == "heldout")}
    mine = [i for j, i in enumerate(ordered(list(trajs), args.seed)) if j % n == k and j >= args.start]

    def task_of(t):
        name = t.row.get("task")
        return (args.trajectories_dir / name).read_text("utf-8") if name else None

    def ws(t):
        return checkout_dir(args.cache, t.row["repo"], t.row["commit"])

    command = [sys.executable, str(RECORDING)]
    with args.out.open("a", encoding="utf-8") as out:
        for i in mine:
            t0 = time.monotonic()
            try:
                per, _ = replay_trajectories([trajs[i]], ws, args.graph_wait, None, task_of, command)
                row = {"id": i, "per": per[i], "s": round(time.monotonic() - t0, 1)}
            except (OSError, RuntimeError) as exc:
                row = {"id": i, "error": str(exc)[:500], "s": round(time.monotonic() - t0, 1)}
            out.write(json.dumps(row) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
