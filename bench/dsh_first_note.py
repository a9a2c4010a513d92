"""The first note of fresh DeepSeek Harness sessions on a busy machine: does the suggester's
note for a session's first search-class call arrive in that call's tool result?

Each session is a fresh DSH process (a fresh ``$DSH_HOME`` with the bundle installed: one real
``dsh plugin add``, then copies of it) with a fresh ``dsh-search serve`` child, scripted by the
loopback fake model to call ``grep __version__`` once; the note is delivered when the next
model request carries it. ``--busy N`` CPU-bound processes (``python3 -c 'while 1: pass'``) run
beside the whole time, as an agent's machine runs builds and tests. Two settings of the
bundle's ``firstPostExecuteTimeoutMs`` (the bound of a sidecar start's first post-execute call)
alternate session by session, so the load hits both alike: ``--bounds 500,2000`` (500 was the
one bound of every call before it existed).

Prints per bound: notes delivered of sessions, the first post-execute listener time (median,
max) and the call's whole gap (answer → next model request, median, max), ms.

    python bench/dsh_first_note.py [--sessions 20] [--busy 2] [--bounds 500,2000]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the harness and support packages

from harness import harnesses as h  # noqa: E402
from harness.fakemodel import texts  # noqa: E402

NOTE_HEAD = "search-suggester: in this repository, look here for the package version:"


def session(work: Path, installed: Path | None, bound: int) -> dict:
    flags = ["--first-bound", str(bound)] + (["--profile-from", str(installed)] if installed else [])
    report = h.scenario("dsh", "note", work, *flags)
    if report["returncode"] != 0:
        raise RuntimeError(f"dsh exited {report['returncode']}: {report['stderr'][-800:]}")
    second = report["requests"][1]["messages"] if len(report["requests"]) > 1 else []
    return {
        "delivered": NOTE_HEAD in texts(second),
        "listener_ms": (report["listener_ms"].get("post-execute") or [float("nan")])[0],
        "gap_ms": (report["gaps_ms"] or [float("nan")])[0],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sessions", type=int, default=20)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--bounds", default="500,2000")
    args = ap.parse_args()
    if h.dsh_missing():
        print(f"skipped: {h.dsh_missing()}")
        return 0
    bounds = [int(b) for b in args.bounds.split(",")]
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.busy)]
    results: dict[int, list[dict]] = {b: [] for b in bounds}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            installed = None
            for i in range(args.sessions):
                for bound in bounds:  # alternating: the load hits every bound alike
                    work = root / f"s{i}-{bound}"
                    results[bound].append(session(work, installed, bound))
                    installed = installed or work
                    print(f"session {i + 1} bound {bound}: {results[bound][-1]}", flush=True)
    finally:
        for p in burners:
            p.kill()
            p.wait()
    print(f"\n{args.sessions} fresh DSH sessions per bound, {args.busy} CPU-bound processes beside")
    for bound, runs in results.items():
        delivered = sum(r["delivered"] for r in runs)
        listener = [r["listener_ms"] for r in runs]
        gaps = [r["gap_ms"] for r in runs]
        print(
            f"firstPostExecuteTimeoutMs {bound:>5}: note delivered {delivered}/{len(runs)}; first post-execute "
            f"median {statistics.median(listener):.0f} max {max(listener):.0f} ms; call gap median "
            f"{statistics.median(gaps):.0f} max {max(gaps):.0f} ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
