"""Added latency per tool call inside each real harness, with the adapter against without it,
in the same run.

For each harness (Claude Code with the ``harness-adapters/claude-code`` plugin, DeepSeek
Harness with the ``harness-adapters/dsh`` bundle) a loopback fake model scripts ``--calls``
identical search calls (Claude Code: ``Bash grep -rn __version__ .``; DSH: ``grep``) and
records, per call, the time from the answer that asked for the tool to the next model
request: the harness ran the tool and everything hooked to it (the ``mcp_tool`` hook to the
warm sidecar; the ``tools/post-execute`` listener). Runs alternate with and without the
adapter (``--rounds`` each) so machine noise hits both; the figure is the difference of
the medians, calls after the first (the first call's gap is printed apart: sidecar start-up
must stay off it). Beside it, each adapter's own time per call: the ``mcp_tool`` hook's, from
Claude Code's debug log, and the DSH listeners', from the bundle's opt-in
``SEARCH_SIDECAR_TIMINGS_FILE`` file. Goals (docs/harnesses.md, per-call latency): ≤ 10 ms Claude Code, ≤ 5 ms DSH.

    python bench/harness.py [--calls 8] [--rounds 2] [--harness claude,dsh]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))  # the harness and support packages

from harness import harnesses as h  # noqa: E402

GOALS_MS = {"claude": 10.0, "dsh": 5.0}
LABELS = {
    "claude": f"Claude Code {h.CLAUDE_CODE_VERSION} mcp_tool hook",
    "dsh": f"DSH {h.DSH_VERSION} post-execute listener",
}


def measure(harness: str, calls: int, rounds: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {
        "with": [],
        "without": [],
        "first_with": [],
        "first_without": [],
        "hook": [],
        "post-execute": [],
        "assemble": [],
    }
    for _ in range(rounds):
        for mode in ("with", "without"):
            with tempfile.TemporaryDirectory() as tmp:
                flags = ["--calls", str(calls)] + (["--no-adapter"] if mode == "without" else [])
                report = h.scenario(harness, "calls", Path(tmp), *flags)
            if report["returncode"] != 0:
                raise RuntimeError(f"{harness} {mode}: exit {report['returncode']}: {report['stderr'][-500:]}")
            gaps = report["gaps_ms"]
            if len(gaps) < calls:
                raise RuntimeError(f"{harness} {mode}: {len(gaps)} tool calls seen, {calls} scripted")
            out[f"first_{mode}"].append(gaps[0])
            out[mode].extend(gaps[1:calls])
            if mode == "with":
                out["hook"].extend(report.get("hook_ms") or [])
                for label, times in (report.get("listener_ms") or {}).items():
                    out.setdefault(label, []).extend(times)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--calls", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--harness", default="claude,dsh")
    args = ap.parse_args()
    for harness in args.harness.split(","):
        missing = h.claude_missing() if harness == "claude" else h.dsh_missing()
        if missing:
            print(f"{harness}: skipped ({missing})")
            continue
        m = measure(harness, args.calls, args.rounds)
        with_ms, without_ms = statistics.median(m["with"]), statistics.median(m["without"])
        added = with_ms - without_ms
        goal = GOALS_MS[harness]
        print(
            f"{LABELS[harness]}: per tool call median {with_ms:.1f} ms with the adapter, {without_ms:.1f} ms "
            f"without (n={len(m['with'])}/{len(m['without'])}); added {added:+.1f} ms "
            f"(goal <= {goal:g} ms: {'met' if added <= goal else 'NOT met'}); ratio {with_ms / without_ms:.2f}x"
        )
        if m["hook"]:
            hook = statistics.median(m["hook"])
            print(
                f"  the mcp_tool hook itself (Claude Code's debug log, call to success): median {hook:.1f} ms "
                f"(n={len(m['hook'])}; goal <= {goal:g} ms: {'met' if hook <= goal else 'NOT met'})"
            )
        for label in ("post-execute", "assemble"):
            if m.get(label):
                own = statistics.median(m[label])
                print(
                    f"  the bundle's {label} listener itself (its own clock, RPC included): median {own:.2f} ms "
                    f"(n={len(m[label])}"
                    + (
                        f"; goal <= {goal:g} ms: {'met' if own <= goal else 'NOT met'})"
                        if label == "post-execute"
                        else ")"
                    )
                )
        print(
            f"  first call: median {statistics.median(m['first_with']):.1f} ms with, "
            f"{statistics.median(m['first_without']):.1f} ms without (sidecar start-up off this path when close)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
