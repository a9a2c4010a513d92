"""Corpus II: recorded agent runs of five agent families → ``dsh/postExecute`` sequences (data files).

Runs the converter of each family (one module each, over the shared :mod:`core`):

* ``mini-swe-agent`` (bash only) — :mod:`mini_swe_agent`, SWE-bench Verified, Python;
* ``rovo-dev`` (Rovo Dev's grep/open_files/inspect_code/… tools) — :mod:`rovo_dev`, SWE-PolyBench
  Verified, Java/JavaScript/TypeScript/Python;
* ``iswe`` (symbol-navigation tools) — :mod:`iswe`, SWE-PolyBench Verified, Java;
* ``codex`` (Codex CLI argv commands and MCP tools) — :mod:`codex`, SWE-PolyBench Verified,
  TypeScript;
* ``auto-code-rover`` (AutoCodeRover's symbol search API: ``search_class``, ``search_method_in_class``…)
  — :mod:`auto_code_rover`, SWE-bench Lite, Python;

and writes into ``--out`` (default: this folder) ``index.jsonl``, one ``<id>.jsonl`` per trace
(``<family>/<instance>.jsonl`` except the mini-swe-agent traces, whose ids are the instance ids),
``tasks/<instance>.md`` (the problem statement), ``paths/`` and ``symbols/`` per
repository@commit. Inputs are local bare git dirs (nothing is fetched here); the rules and the
sources are in ``README.md``. The output is deterministic: same inputs → same bytes.

    python corpus/trajectories/convert.py \\
        --source /mirror/gruckion+mini-swe-agent/repo --dataset /mirror/lukacf+mcp-the-force-swebench/repo \\
        --polybench /mirror/amazon-science+SWE-PolyBench/repo --acr /mirror/nus-apr+auto-code-rover/repo \\
        --upstream '/mirror/{owner}+{name}/repo'

Exit code 0 on success; 1 with a message on stderr when an input is missing or inconsistent
(a base commit absent upstream, a gold patch that does not apply, a task text that differs).
Instances the checks refuse are left out and counted on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from corpus.trajectories import auto_code_rover, codex, iswe, mini_swe_agent, polybench, rovo_dev  # noqa: E402
from corpus.trajectories.core import HERE, ConvertError, Trace, write_corpus  # noqa: E402

FAMILIES = ("mini-swe-agent", "rovo-dev", "iswe", "codex", "auto-code-rover")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    ap.add_argument("--source", required=True, type=Path, help=f"git dir of {mini_swe_agent.SOURCE_REPO}")
    ap.add_argument("--dataset", required=True, type=Path, help=f"git dir of {mini_swe_agent.DATASET_REPO}")
    ap.add_argument("--polybench", type=Path, default=None, help=f"git dir of {polybench.PB_REPO}")
    ap.add_argument("--acr", type=Path, default=None, help=f"git dir of {auto_code_rover.SOURCE_REPO}")
    ap.add_argument("--upstream", required=True, help="git dir template with {owner} and {name}")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated agent families")
    ap.add_argument("--out", type=Path, default=HERE)
    args = ap.parse_args(argv)
    try:
        return run(args)
    except ConvertError as exc:
        sys.stderr.write(f"convert: {exc}\n")
        return 1


def run(args: argparse.Namespace) -> int:
    families = [f for f in args.families.split(",") if f]
    unknown = set(families) - set(FAMILIES)
    if unknown:
        raise ConvertError(f"unknown agent families: {sorted(unknown)}")
    stats: Counter[str] = Counter()
    traces: list[Trace] = []
    tasks: dict[str, str] = {}
    if "mini-swe-agent" in families:
        mini, mini_tasks = mini_swe_agent.convert(args.source, args.dataset, args.upstream, stats)
        traces += mini
        tasks.update(mini_tasks)
    pb_families = [f for f in families if f not in ("mini-swe-agent", "auto-code-rover")]
    if pb_families:
        if args.polybench is None:
            raise ConvertError(f"{', '.join(pb_families)} need --polybench")
        insts = polybench.instances(args.polybench, args.upstream, stats)
        pb_tasks: dict[str, str] = {}
        if "rovo-dev" in families:
            rovo, rovo_tasks = rovo_dev.convert(args.polybench, args.upstream, insts, stats)
            traces += rovo
            pb_tasks.update(rovo_tasks)
        if "iswe" in families:
            runs, iswe_tasks = iswe.convert(args.polybench, args.upstream, insts, stats)
            for t in runs:
                canonical = pb_tasks.get(t.instance)
                if canonical is not None and not polybench.same_task(canonical, iswe_tasks[t.instance]):
                    stats["iswe refused: its issue text is not the Rovo Dev run's problem statement"] += 1
                    continue
                pb_tasks.setdefault(t.instance, iswe_tasks[t.instance])
                traces.append(t)
        if "codex" in families:
            traces += codex.convert(args.polybench, args.upstream, insts, pb_tasks, stats)
        used = {t.instance for t in traces}
        tasks.update({k: v for k, v in pb_tasks.items() if k in used})
    if "auto-code-rover" in families:
        if args.acr is None:
            raise ConvertError("auto-code-rover needs --acr")
        acr, acr_tasks = auto_code_rover.convert(args.acr, args.dataset, args.upstream, stats)
        for iid, text in acr_tasks.items():
            if tasks.setdefault(iid, text) != text:
                raise ConvertError(f"{iid}: two task texts")
        traces += acr
    counts = write_corpus(args.out, traces, args.upstream, tasks)
    per_family = Counter(t.family for t in traces)
    sys.stderr.write(f"convert: {counts}; {dict(per_family)}; {dict(sorted(stats.items()))}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
