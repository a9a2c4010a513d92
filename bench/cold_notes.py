"""The first calls of recorded agent runs on a cold server: are their notes what the ready server
says, guesses, or held back? (Never guess before the index covers the call:
``suggester/readiness.py``.)

For the trajectories of ``corpus/trajectories/`` (``--only`` repositories, families or ids; default
the fixed held-out set's; one trace per repository and family unless ``--all``), on its real
checkout: a fresh
``dsh-search serve`` with a fresh ``$DSH_HOME`` gets the trace's first ``--calls`` calls at once
after the handshake (an agent's first searches come within seconds of its start, before a
large index is built; no ``waitMs``, so only the first held-back call waits the server's
``firstCallWaitMs``); then the same server, once its projection is ready, gets the same calls
again under another session (the ready answers). Each cold call that noted or was held back is
**same** (a note naming what the ready server names first), **guess** (a note naming another
first target, or a note where the ready server says nothing), **held back** (``suppressed
not-ready``), or **missed** (silence where the ready server notes). ``--baseline-src DIR`` runs
another commit's source on the same traces (before/after in one run).

    python bench/cold_notes.py --cache /work/corpus-cache-ii [--only psf/requests,iswe] [--calls 5]
        [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from dsh_sidecar.evaluation import TRAJECTORY_HELDOUT, TRAJECTORY_HELDOUT_FAMILIES, checkout_dir, read_trajectories

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _rpc import StdioClient, sidecar_cmd  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def env_for(src: Path | None, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DSH_HOME"] = str(home)
    env["DSH_CACHE_DIR"] = str(home / "cache")  # a cold start: no index of an earlier run (and inside
    # home: a sibling folder outlived the temp folder home is made in)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src / p) for p in ("server", "protocol", "packs"))
    return env


def first_target(result: dict[str, Any]) -> str | None:
    notes = result["additionalContexts"]
    return str(notes[0]["source"]["targets"][0]) if notes else None


def run(
    ws: Path, calls: list[dict[str, Any]], src: Path | None
) -> tuple[list[tuple[str | None, str]], list[str | None]]:
    """``(cold answers: (first target or None, ledger reason), ready first targets)``."""
    with tempfile.TemporaryDirectory(prefix="dsh-cold-") as tmp:
        client = StdioClient(sidecar_cmd(), env_for(src, Path(tmp)))
        try:
            client.initialize(ws, {"suggester": {"enabled": True}})
            cold: list[tuple[str | None, str]] = []
            for i, c in enumerate(calls):
                before = len(client.logs)
                params = {**c["params"], "sessionId": "cold", "turn": 1, "callId": f"c{i}"}
                target = first_target(client.call("dsh/postExecute", params))
                said = [re.sub(r"^\[[^\]]+\] ", "", m) for m in client.logs[before:] if "] " in m]
                cold.append((target, next((m for m in said if not m.startswith(("activated", "[bandit"))), "")))
            deadline = time.monotonic() + 900
            while not client.call("dsh/status", {})["suggester"]["graph"]["ready"]:
                if time.monotonic() > deadline:
                    raise SystemExit(f"{ws}: not ready in 900 s")
                time.sleep(0.1)
            ready = [
                first_target(
                    client.call(
                        "dsh/postExecute", {**c["params"], "sessionId": f"ready{i}", "turn": 1, "callId": f"r{i}"}
                    )
                )
                for i, c in enumerate(calls)
            ]
        finally:
            client.close()
    return cold, ready


def verdict(cold: tuple[str | None, str], ready: str | None) -> str | None:
    target, line = cold
    if target is not None:
        return "same" if target == ready else "guess"
    if line.startswith("suppressed not-ready"):
        return "held back"
    return "missed" if ready is not None else None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cache", type=Path, default=Path(os.environ.get("DSH_CORPUS_CACHE", "/work/corpus-cache-ii")))
    ap.add_argument("--trajectories", type=Path, default=ROOT / "corpus" / "trajectories")
    ap.add_argument("--only", help="repositories, families or trajectory ids, comma-separated")
    ap.add_argument("--calls", type=int, default=5, help="search-class calls from each trace's start")
    ap.add_argument("--all", action="store_true", help="every selected trace, not one per repository and family")
    ap.add_argument("--baseline-src", type=Path)
    args = ap.parse_args()
    trajs = read_trajectories(args.trajectories)
    if args.only:
        wanted = set(args.only.split(","))
        trajs = [t for t in trajs if wanted & {t.id, t.row["repo"], t.family}]
    else:
        trajs = [t for t in trajs if t.row["repo"] in TRAJECTORY_HELDOUT or t.family in TRAJECTORY_HELDOUT_FAMILIES]
    if not args.all:  # one trace per (repository, family)
        seen: set[tuple[str, str]] = set()
        picked = []
        for t in trajs:
            key = (t.row["repo"], t.family)
            if key not in seen:
                seen.add(key)
                picked.append(t)
        trajs = picked
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline_src is not None:
        trees.append(("baseline", args.baseline_src.resolve()))
    counts: dict[str, Counter[str]] = {name: Counter() for name, _ in trees}
    guesses: dict[str, list[str]] = {name: [] for name, _ in trees}
    misses: dict[str, list[str]] = {name: [] for name, _ in trees}
    for t in trajs:
        ws = checkout_dir(args.cache, t.row["repo"], t.row["commit"])
        if not ws.is_dir():
            print(f"skipped {t.id}: no checkout {ws}")
            continue
        calls = [c for c in t.calls if c.get("class") == "search"][: args.calls]
        if not calls:
            continue
        for name, src in trees:
            cold, ready = run(ws, calls, src)
            for c, r in zip(cold, ready, strict=True):
                v = verdict(c, r)
                if v is None:
                    continue
                counts[name][v] += 1
                if v == "guess":
                    guesses[name].append(f"{t.id}: {c[0]} (ready: {r})")
                elif v == "missed":  # the ledger's word for it names the cause (no line: silent)
                    misses[name].append(f"{t.id}: {c[1] or '(no ledger line)'} (ready: {r})")
            print(f"{t.id} [{name}]: " + ", ".join(f"{k} {v}" for k, v in sorted(counts[name].items())), flush=True)
    print(f"\n{len(trajs)} traces, the first {args.calls} search calls of each, on a cold server")
    print(f"{'tree':<12} {'same':>6} {'guess':>6} {'held back':>10} {'missed':>7}")
    for name, _ in trees:
        c = counts[name]
        print(f"{name:<12} {c['same']:>6} {c['guess']:>6} {c['held back']:>10} {c['missed']:>7}")
    for name, _ in trees:
        for g in guesses[name][:20]:
            print(f"guess [{name}] {g}")
        for m in misses[name][:20]:
            print(f"missed [{name}] {m}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
