"""Workspace graph benchmark (issues #5/#6): file-level build time for synthetic workspaces of
10k and 100k files (a plain folder walked with ``.gitignore``, and the same tree as a git
checkout with history), the symbol-index time for this repository and for a synthetic 10k-module
source tree, the on-disk cache question (JSON load vs rebuild), and lookup latency p50/p99
(``node``, ``proof``, ``scope``, ``definitions``, ``usages``; goal p99 ≤ 2 ms per call).

Figures are printed as a table; goals are compared in the same run (no stored timings).

    python bench/workspace.py [--sizes 10000,100000] [--no-git] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dsh_sidecar.workspace import WorkspaceGraph
from dsh_sidecar.workspace.cache import SymbolCache

ROOT = Path(__file__).resolve().parent.parent
#: Goal for the file-level build of 100k files, seconds (docs/benchmarks.md).
GOAL_BUILD_100K_S = 2.0
#: Goal for one lookup on the hot path, p99 milliseconds (docs/benchmarks.md).
GOAL_LOOKUP_P99_MS = 2.0

_KIND_MIX = [  # (relative folder pattern, file name pattern, content), cycled per folder
    ("src/{pkg}/{mod}", "m{i}.py", "def f{i}():\n    return {i}\n"),
    ("tests/{pkg}", "test_m{i}.py", "from src import f{i}\n"),
    ("docs/{pkg}", "page{i}.md", "# page\n"),
    ("web/{pkg}", "c{i}.ts", "export function c{i}() {{ return {i} }}\n"),
    ("config/{pkg}", "s{i}.yaml", "a: 1\n"),
    ("assets/{pkg}", "img{i}.png", ""),
]


def synthetic(root: Path, files: int, *, with_content: bool = False) -> float:
    """Create ``files`` files under ``root`` (50 per folder, kinds mixed) plus a manifest, a
    lock file and a ``.gitignore``; return seconds spent."""
    t0 = time.perf_counter()
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text("[project]\nname = 'syn'\n")
    (root / "uv.lock").write_text("")
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    made, folder = 3, 0
    while made < files:
        tpl_dir, tpl_name, tpl_text = _KIND_MIX[folder % len(_KIND_MIX)]
        d = root / tpl_dir.format(pkg=f"p{folder // 60:04d}", mod=f"d{folder % 60:02d}")
        d.mkdir(parents=True, exist_ok=True)
        for i in range(min(50, files - made)):
            path = os.path.join(d, tpl_name.format(i=i + folder * 50))
            if with_content:
                with open(path, "w") as fh:
                    fh.write(tpl_text.format(i=i + folder * 50))
            else:
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o644))
        made += min(50, files - made)
        folder += 1
    return time.perf_counter() - t0


def git_commit_all(root: Path) -> float:
    """``git init`` + three commits at controlled dates (the last touching 1% of the files)."""
    t0 = time.perf_counter()
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="b",
        GIT_AUTHOR_EMAIL="b@example.com",
        GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@example.com",
    )

    def git(*args: str, date: str | None = None) -> None:
        e = dict(env, **({"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date} if date else {}))
        subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=e)

    git("init", "-q")
    git("add", "-A")
    git("commit", "-qm", "one", date="2024-01-01T00:00:00Z")
    touched = [p for p in root.rglob("*.py")][::100]
    for p in touched:
        p.write_text("# touched\n")
    git("add", "-A")
    git("commit", "-qm", "two", date="2025-01-01T00:00:00Z")
    return time.perf_counter() - t0


def timed_build(root: Path, repeat: int = 3) -> tuple[WorkspaceGraph, str]:
    """The fastest of ``repeat`` file-level builds and its figure: wall seconds, plus the CPU
    seconds of this process and of its git children (CPU time does not grow with machine load,
    wall time does: on a loaded 2-core machine compare the CPU figures)."""
    best: tuple[float, WorkspaceGraph, float, float] | None = None
    for _ in range(repeat):
        c0, t0 = os.times(), time.perf_counter()
        graph = WorkspaceGraph.build_files(root)
        wall, c1 = time.perf_counter() - t0, os.times()
        own = c1.user - c0.user + c1.system - c0.system
        kids = c1.children_user - c0.children_user + c1.children_system - c0.children_system
        if best is None or wall < best[0]:
            best = (wall, graph, own, kids)
    assert best is not None
    wall, graph, own, kids = best
    return graph, f"{wall:.2f} s wall (cpu {own:.2f} s + git {kids:.2f} s; scan {graph.stats['scanMs']:.0f} ms)"


def pct(samples: list[float], q: float) -> float:
    s = sorted(samples)
    return s[min(len(s) - 1, int(round(q * (len(s) - 1))))]


def time_calls(fn, args: list, repeat: int = 3) -> tuple[float, float]:
    """p50/p99 of one call in ms over ``args`` (each timed alone)."""
    samples: list[float] = []
    for _ in range(repeat):
        for a in args:
            t = time.perf_counter_ns()
            fn(*a)
            samples.append((time.perf_counter_ns() - t) / 1e6)
    return pct(samples, 0.5), pct(samples, 0.99)


def cache_roundtrip(graph: WorkspaceGraph, tmp: Path) -> tuple[float, float]:
    """Seconds to write and to read back a JSON cache of the file-level graph (what an on-disk
    cache would save against a rebuild)."""
    data = {
        "files": graph.files,
        "kinds": [graph.node(f).kind for f in graph.files],
        "ranks": [graph.node(f).recency_rank for f in graph.files],
    }
    path = tmp / "graph-cache.json"
    t0 = time.perf_counter()
    path.write_text(json.dumps(data))
    t1 = time.perf_counter()
    loaded = json.loads(path.read_text())
    _ = dict(zip(loaded["files"], loaded["kinds"]))
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--no-git", action="store_true", help="skip the git-checkout variant")
    ap.add_argument("--keep", type=Path, help="build the synthetic trees here and keep them")
    args = ap.parse_args(argv)
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="dsh-bench-ws-"))
    rows: list[tuple[str, str]] = []
    ok = True
    try:
        big_graph = None
        for n in [int(x) for x in args.sizes.split(",") if x]:
            root = tmp / f"ws-{n}"
            gen = synthetic(root, n)
            best, figure = timed_build(root)
            rows.append((f"build {n:>6} files, walk (.gitignore)", f"{figure}; tree made in {gen:.1f} s"))
            if n >= 100_000:
                ok &= best.stats["buildMs"] / 1000 <= GOAL_BUILD_100K_S
            big_graph = best
            if not args.no_git:  # the same tree, now a git checkout with history
                gt = git_commit_all(root)
                best, figure = timed_build(root)
                rows.append((f"build {n:>6} files, git checkout", f"{figure}; git setup {gt:.1f} s"))
                if n >= 100_000:
                    ok &= best.stats["buildMs"] / 1000 <= GOAL_BUILD_100K_S
                big_graph = best
        if big_graph is not None:
            w, r = cache_roundtrip(big_graph, tmp)
            rows.append(
                (
                    f"JSON cache of {len(big_graph.files)} nodes",
                    f"write {w * 1000:.0f} ms, read {r * 1000:.0f} ms vs build {big_graph.stats['buildMs']:.0f} ms",
                )
            )
            sample = random.Random(7).sample(big_graph.files, 2000) + [f"missing/{i}.py" for i in range(200)]
            p50, p99 = time_calls(big_graph.node, [(p,) for p in sample])
            rows.append(
                (f"node() on {len(big_graph.files)} files", f"p50 {p50 * 1000:.1f} µs  p99 {p99 * 1000:.1f} µs")
            )
            p50, p99 = time_calls(big_graph.proof, [(p, ("source", "test")) for p in sample])
            rows.append(
                (f"proof() on {len(big_graph.files)} files", f"p50 {p50 * 1000:.1f} µs  p99 {p99 * 1000:.1f} µs")
            )
            ok &= p99 <= GOAL_LOOKUP_P99_MS

        # symbol index: this repository, then a synthetic 10k-file tree with content; each
        # cold (parsed) and warm (from the on-disk cache, as after a restart)
        sroot = tmp / "symbols-10k"
        synthetic(sroot, 10_000, with_content=True)
        built: dict[str, WorkspaceGraph] = {}
        for label, where in (("this repository", ROOT), ("synthetic 10k files", sroot)):
            cache = SymbolCache(tmp / "cache", where)
            cold = WorkspaceGraph.build_files(where)
            cold.index_symbols(cache=cache)
            warm = WorkspaceGraph.build_files(where)
            warm.index_symbols(cache=cache)
            rows.append(
                (
                    f"symbol index, {label}",
                    f"{cold.stats['symbolMs'] / 1000:.2f} s for {cold.stats['symbolFiles']} code files "
                    f"(parsers {cold.stats['parsers']}; file level {cold.stats['buildMs']:.0f} ms)",
                )
            )
            rows.append(
                (
                    f"symbol index from cache, {label}",
                    f"{warm.stats['symbolMs'] / 1000:.2f} s ({warm.stats['cacheHits']} hits, "
                    f"cache {cache.path.stat().st_size // 1024} KiB)",
                )
            )
            built[label] = warm
        repo, sym = built["this repository"], built["synthetic 10k files"]

        names = sorted(repo.symbols.defs) if repo.symbols else []
        rng = random.Random(11)
        sample_names = rng.sample(names, min(300, len(names))) + ["self", "name", "path", "NoSuchSymbol"]
        for label, fn, arg in (
            ("definitions()", repo.definitions, lambda n: (n,)),
            ("usages(limit=5), cold", None, None),
            ("usages(limit=5), warm", repo.usages, lambda n: (n, 5)),
        ):
            if fn is None:  # cold: a fresh graph object each round so the cache is empty
                samples = []
                for n in sample_names:
                    repo._usage_cache.clear()
                    t = time.perf_counter_ns()
                    repo.usages(n, 5)
                    samples.append((time.perf_counter_ns() - t) / 1e6)
                p50, p99 = pct(samples, 0.5), pct(samples, 0.99)
            else:
                p50, p99 = time_calls(fn, [arg(n) for n in sample_names])
            rows.append((f"{label} on this repository", f"p50 {p50 * 1000:.1f} µs  p99 {p99 * 1000:.1f} µs"))
            ok &= p99 <= GOAL_LOOKUP_P99_MS
        p50, p99 = time_calls(sym.usages, [(f"f{i}", 5) for i in range(0, 10_000, 37)] + [("return", 5)])
        rows.append(("usages() on synthetic 10k", f"p50 {p50 * 1000:.1f} µs  p99 {p99 * 1000:.1f} µs"))
        ok &= p99 <= GOAL_LOOKUP_P99_MS
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)

    load = os.getloadavg()
    rows.append(
        ("machine", f"{os.cpu_count()} CPUs, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1/5/15 min)")
    )
    width = max(len(k) for k, _ in rows)
    print(f"{'measure'.ljust(width)}  figure")
    print(f"{'-' * width}  {'-' * 40}")
    for k, v in rows:
        print(f"{k.ljust(width)}  {v}")
    print(
        f"goals: build 100k ≤ {GOAL_BUILD_100K_S} s, lookup p99 ≤ {GOAL_LOOKUP_P99_MS} ms -> {'met' if ok else 'MISSED'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
