"""Per-trace view of the suggester on the recorded agent trajectories (a tuning aid).

For each trajectory of the **tune** split (the fixed held-out set — ``TRAJECTORY_HELDOUT``
repositories and ``TRAJECTORY_HELDOUT_FAMILIES`` agent families of ``dsh_sidecar.evaluation`` — is
refused unless ``--heldout`` is given: its per-trace details are not to be looked at while
tuning), runs the sidecar in-process on the real checkout (same suggester, graph and content index
as ``dsh-search serve``, without the stdio transport) and prints, for every call before the
agent's first edit of a repository file: its index and class, the command or input (cut), ``G``
when its result text lists a gold file, the number of repository files its result showed
(``[n]``), and the ledger lines the call produced (``suggest …`` with the note's targets,
``suppressed …``, ``abstained …``); a note is marked ``ECHO`` (it repeats a listing of ≤ 5
files) or ``LEAD`` (it names a gold file no result had shown). A summary line per trace says
whether the agent's own results listed a gold file before the first edit (``own``) and whether a
note named one (``hit``); ``--missed`` prints only the traces with ``own`` and not ``hit``.

    python bench/suggester_traces.py --cache /work/corpus-cache [--only ID,ID,FAMILY] [--missed]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

from dsh_protocol import PostExecuteParams
from dsh_sidecar.config import parse_config
from dsh_sidecar.evaluation import ECHO_MAX_FILES, FileIndex, checkout_dir, read_trajectories, workspace_files
from dsh_sidecar.evaluation.trajectories import shown_by
from dsh_sidecar.sidecar import Sidecar

ROOT = Path(__file__).resolve().parent.parent
TRAJ = ROOT / "corpus" / "trajectories"


def run_trace(t, ws: Path, verbose: bool) -> tuple[bool, bool, list[str]]:
    out: list[str] = []
    listed, shown, _opens = shown_by(t, FileIndex(workspace_files(ws)))
    seen: set[str] = set()
    with tempfile.TemporaryDirectory(prefix="dsh-traces-") as home:
        lines: list[str] = []
        env = {**os.environ, "DSH_HOME": home}
        sc = Sidecar(parse_config({"suggester": {"enabled": True}}), ws, env, log_sink=lines.append, echo_stderr=False)
        sc.wait_for_graph(180)
        own = hit = False
        for i, c in enumerate(t.calls):
            n0 = len(lines)
            res = sc.post_execute(PostExecuteParams.model_validate(c["params"]))
            seen |= shown[i]
            if i >= t.limit:
                continue
            g = bool(listed[i] & t.gold)  # the scorer's reading of the result (``listed_files``)
            own = own or g
            named = [n.source.targets for n in res.additional_contexts]
            hit = hit or any(set(ts) & t.gold for ts in named)
            inp = c["params"]["tool"]["input"]
            cmd = inp.get("command") if isinstance(inp, dict) and "command" in inp else json.dumps(inp)
            led = [m.split("] ", 1)[-1] for m in lines[n0:] if "] " in m]
            led = [m for m in led if m.startswith(("suggest", "suppressed", "abstained"))]
            if verbose or g or led:
                mark = "G" if g else " "
                out.append(f"  {i:3d} {c.get('class', ''):7} {mark} [{len(shown[i])}] {str(cmd)[:150]!r}")
                for m in led:
                    out.append(f"        -> {m[:200]}")
                for ts in named:
                    echo = bool(ts) and 1 <= len(shown[i]) <= ECHO_MAX_FILES and set(ts) <= shown[i]
                    lead = any(p in t.gold and p not in seen for p in ts)
                    out.append(f"        => {ts}{' ECHO' if echo else ''}{' LEAD' if lead else ''}")
        sc.shutdown()
    return own, hit, out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"))
    p.add_argument("--only", default=None)
    p.add_argument("--missed", action="store_true")
    p.add_argument("--verbose", action="store_true", help="every call before the first edit")
    p.add_argument("--heldout", action="store_true", help="include the held-out repositories (not while tuning)")
    a = p.parse_args(argv)
    only = set(a.only.split(",")) if a.only else None
    for t in read_trajectories(TRAJ):
        if only is not None and t.id not in only and t.row["repo"] not in only and t.family not in only:
            continue
        if t.heldout and not a.heldout:
            if only is not None:
                sys.stderr.write(f"{t.id}: held out (not shown while tuning; --heldout to score it)\n")
            continue
        own, hit, out = run_trace(t, checkout_dir(a.cache, t.row["repo"], t.row["commit"]), a.verbose)
        if a.missed and not (t.row.get("ownSearchHit") is not None and not hit):
            continue
        sys.stdout.write(
            f"{t.id} gold={sorted(t.gold)} firstEdit={t.limit} ownSearchHit={t.row.get('ownSearchHit')} "
            f"own={own} hit={hit}\n" + "\n".join(out) + "\n\n"
        )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
