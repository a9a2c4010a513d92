"""In-process profile of the ``dsh/postExecute`` path during and after the workspace build
(README, "Benchmarks": the post-execute latency): a ``Sidecar`` on a synthetic workspace (``bench/workspace.py``,
default 100k files with content) with its background threads (graph, symbol index, content
index, targets) running, the calls of ``postexecute_latency.corpus_calls()`` made on this
thread; only this thread is profiled (``cProfile`` profiles the thread that enables it).

Prints p50/p99/max in ms of ``Sidecar.post_execute`` (params validated as the wire does) during
and after the build, the slowest calls after the build, and the top ``--top`` functions by
cumulative time of each phase. ``--no-parse-cache`` clears the shell-parse cache before each
call, so every line is parsed as if new (the corpus calls are cycled: without it, repeats hit
the cache).

    python bench/postexecute_profile.py [--files 100000] [--after 3000] [--top 25] [--keep DIR]
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dsh_protocol.models import PostExecuteParams  # noqa: E402
from dsh_sidecar.config import parse_config  # noqa: E402
from dsh_sidecar.sidecar import Sidecar  # noqa: E402
from dsh_sidecar.suggester.parse import shell  # noqa: E402
from postexecute_latency import corpus_calls, pct  # noqa: E402
from workspace import synthetic  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--files", type=int, default=100_000)
    p.add_argument("--after", type=int, default=3000)
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--keep", type=Path)
    p.add_argument(
        "--no-parse-cache", action="store_true", help="clear the shell-parse cache before each call (every line new)"
    )
    args = p.parse_args(argv)
    clear = getattr(getattr(shell, "shell_words", None), "cache_clear", None) if args.no_parse_cache else None
    tmp = Path(tempfile.mkdtemp(prefix="dsh-prof-"))
    root = (args.keep or tmp) / f"synthetic-{args.files}"
    if not root.exists():
        synthetic(root, args.files, with_content=True)
    calls = corpus_calls()
    sidecar = Sidecar(
        parse_config({"suggester": {"enabled": True}}),
        root,
        {"DSH_HOME": str(tmp / "home"), "DSH_CACHE_DIR": str(tmp / "cache")},
    )
    seq = 0

    def one(prof: cProfile.Profile) -> tuple[float, str]:
        nonlocal seq
        tool, result = calls[seq % len(calls)]
        seq += 1
        raw = {"sessionId": f"p{seq // 100}", "turn": 1, "callId": f"c{seq}", "tool": tool, "result": result}
        if clear is not None:
            clear()
        prof.enable()
        t0 = time.perf_counter()
        sidecar.post_execute(PostExecuteParams.model_validate(raw))
        ms = (time.perf_counter() - t0) * 1000
        prof.disable()
        return ms, str(tool.get("input"))[:90]

    def ready() -> bool:
        return not sidecar.projection_pending()  # the graph, the targets and the content index built

    phases: dict[str, tuple[cProfile.Profile, list[tuple[float, str]]]] = {
        "during": (cProfile.Profile(), []),
        "after": (cProfile.Profile(), []),
    }
    t0 = time.perf_counter()
    while not ready():
        phases["during"][1].append(one(phases["during"][0]))
        time.sleep(0.001)  # a harness's calls come apart: let the build run between them
    build_s = time.perf_counter() - t0
    for _ in range(args.after):
        phases["after"][1].append(one(phases["after"][0]))
    sidecar.shutdown()
    print(f"{args.files} files; ready after {build_s:.1f} s")
    for phase, (prof, samples) in phases.items():
        ms = [s for s, _ in samples]
        print(
            f"\n== {phase}: {len(ms)} calls, p50 {pct(ms, 50):.3f} ms, p99 {pct(ms, 99):.3f} ms, max {max(ms):.3f} ms"
        )
        for s, what in sorted(samples, reverse=True)[:8]:
            print(f"   {s:8.3f} ms  {what}")
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("cumulative").print_stats(args.top)
        print(out.getvalue())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
