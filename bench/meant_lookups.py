"""The missing-path answer's lookups (``suggester/meant.py``) on a synthetic large index: the
pass over every listed basename and folder the mechanism first made (**before**, kept here as
the reference) against the tables kept with the file index (``suggester/meanttables.py``,
**after**), in one run, interleaved call by call (before, after, after, before, …), with the
load printed beside them. Goal: well under 1 ms a call (p99) for ``files_meant``,
``folders_meant`` and ``files_under``; the answers of both are compared on every call (a
mismatch is printed and fails the run).

Also printed: the time to build the tables of the index (off the event loop, where the index
is built), their memory (``tracemalloc``: the bytes allocated by building them, per listed
file), and one ``FileIndex.with_changes`` of ``--changed`` files (its tables carried, not built).

    python bench/meant_lookups.py [--files 100000] [--rounds 5] [--seed 7] [--changed 50]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

from dsh_sidecar.suggester import meant
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.meanttables import MeantTables

# --- the reference: one pass over every listed basename or folder a call (the first form) ------


def scan_files_meant(guess: str, index: FileIndex) -> list[str]:
    """``meant.files_meant`` as first written: every listed basename's closeness to the guess."""
    name = meant._split(guess)[1]
    if not name or guess.strip("/") in index.by_name.get(name, ()):
        return []
    found: list[tuple[int, str]] = []
    for listed, paths in index.by_name.items():
        close = meant._closeness(name, listed)
        if close is not None:
            found.extend((close, p) for p in paths if p != guess.strip("/"))
    return meant._ranked(guess, meant._agreeing(guess, found))


def _scan_folders(index: FileIndex) -> set[str]:
    out: set[str] = set()
    for folder in index.by_dir:
        while folder and folder not in out:
            out.add(folder)
            folder = folder.rpartition("/")[0]
    return out


def _folder_closeness(guess: str, name: str) -> int | None:
    """0 the same folder name, 1 another case, 2 one ``s`` apart; ``None`` otherwise."""
    if name == guess:
        return 0
    low, other = guess.lower(), name.lower()
    if low == other:
        return 1
    if len(min(low, other, key=len)) >= 3 and (low + "s" == other or other + "s" == low):
        return 2
    return None


def scan_folders_meant(guess: str, index: FileIndex) -> list[str]:
    """``meant.folders_meant`` as first written: every folder at every depth looked at."""
    guess = guess.strip("/")
    name = meant._split(guess)[1]
    if not name or name in (".", ".."):
        return []
    found: list[tuple[int, str]] = []
    for folder in _scan_folders(index):
        if folder == guess:
            return []
        close = _folder_closeness(name, meant._split(folder)[1])
        if close is not None:
            found.append((close, folder))
    return meant._ranked(guess, found)


def scan_files_under(folder: str, index: FileIndex) -> list[str]:
    """``meant.files_under`` as first written: every folder's name tested, the matches sorted."""
    folder = folder.strip("/")
    out: list[str] = []
    for d in sorted(d for d in index.by_dir if d == folder or d.startswith(folder + "/")):
        out.extend(index.by_dir[d])
        if len(out) >= meant.MAX_UNDER:
            break
    return out[: meant.MAX_UNDER]


# --- the synthetic index -------------------------------------------------------------------------

_WORDS = (
    "core api util model view service client server handler config data io net http json "
    "parser render cache store auth user admin order cart item event queue task job worker "
    "plugin module main lib pkg app web ui form field route router schema types base common"
).split()
_EXTS = ("py", "java", "kt", "ts", "js", "go", "rs", "cs", "md", "json")


def synthetic(files: int, seed: int) -> list[str]:
    """``files`` repository-relative paths: about 0.8 folders a file (a deep tree of word
    folders, ``src/main/java/…``-like chains, ``test``/``tests`` folders at several depths), most
    basenames unique (a word and a number), some common ones (``index.js``, ``__init__.py``),
    and test names of several affixes beside their sources."""
    rng = random.Random(seed)
    out: set[str] = set()
    folders = [""]
    while len(out) < files:
        parent = rng.choice(folders)
        if rng.random() < 0.8 or len(folders) < 10:
            word = rng.choice(_WORDS)
            if rng.random() < 0.05:
                word = rng.choice(("test", "tests", "Tests", "spec", "examples"))
            folder = f"{parent}/{word}{rng.randrange(1000)}" if rng.random() < 0.7 else f"{parent}/{word}"
            folders.append(folder.lstrip("/"))
            parent = folders[-1]
        unit = f"{rng.choice(_WORDS).capitalize()}{rng.choice(_WORDS).capitalize()}{len(out)}"
        kind = rng.random()
        if kind < 0.02:
            name = rng.choice(("index.js", "__init__.py", "README.md", "mod.rs"))
        elif kind < 0.12:
            name = rng.choice((f"test_{unit.lower()}.py", f"{unit}Test.java", f"{unit}Tests.cs", f"{unit}.spec.ts"))
        elif kind < 0.14:
            name = f"-{unit}.kt"
        else:
            name = f"{unit}.{rng.choice(_EXTS)}"
        out.add(f"{parent}/{name}".lstrip("/"))
    return sorted(out)


def calls(index: FileIndex, seed: int) -> list[tuple[str, str]]:
    """``(lookup, argument)``: missing files of every kind the answer has (another folder, a
    leading ``-``, another case and extension, a test affix apart, a common name, nothing close),
    missing folders (one ``s`` apart, another case, nothing close), folders to list (one near the
    root holding thousands of folders, a leaf)."""
    rng = random.Random(seed)
    names = sorted(index.by_name)
    kt = [n for n in names if n.startswith("-")]
    tests = [n for n in names if n.endswith("Test.java")]
    plain = [n for n in names if n.endswith(".py") and not n.startswith(("test_", "__"))]
    out = [
        ("files_meant", f"nowhere/{rng.choice(plain)}"),  # the same name in another folder
        ("files_meant", f"src/main/{rng.choice(kt)[1:]}"),  # a Kotlin file-private name
        ("files_meant", f"x/{rng.choice(plain).upper().replace('.PY', '.ts')}"),  # case, extension
        ("files_meant", f"t/{rng.choice(tests).replace('Test.java', 'Tests.java')}"),  # a test affix apart
        ("files_meant", "app/views/index.js"),  # a common name
        ("files_meant", "src/NothingLikeIt.java"),  # nothing close
        ("folders_meant", "tests"),  # one `s` apart and the same name at many depths
        ("folders_meant", "lib/EXAMPLE"),  # another case and one `s` apart
        ("folders_meant", "nowhere/zzzq"),  # nothing close
    ]
    top = max((d for d in index.meant.dirs if "/" not in d), key=lambda d: sum(1 for _ in _under(index, d)))
    leaf = rng.choice([d for d in index.meant.dirs if d.count("/") >= 3])
    out += [("files_under", top), ("files_under", leaf)]
    return out


def _under(index: FileIndex, folder: str) -> list[str]:
    return [d for d in index.meant.dirs if d.startswith(folder + "/")][:5000]


_BEFORE: dict[str, Callable[[str, FileIndex], list[str]]] = {
    "files_meant": scan_files_meant,
    "folders_meant": scan_folders_meant,
    "files_under": scan_files_under,
}
_AFTER: dict[str, Callable[[str, FileIndex], list[str]]] = {
    "files_meant": meant.files_meant,
    "folders_meant": meant.folders_meant,
    "files_under": meant.files_under,
}


def _timed(fn: Callable[[str, FileIndex], list[str]], arg: str, index: FileIndex) -> tuple[float, float, list[str]]:
    """``fn(arg, index)``: its wall seconds, its thread's CPU seconds (what a loaded machine's
    other processes do not add), its answer."""
    t0, c0 = time.perf_counter(), time.thread_time()
    got = fn(arg, index)
    return time.perf_counter() - t0, time.thread_time() - c0, got


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=5, help="timed calls of each lookup and argument, per side")
    ap.add_argument("--after-rounds", type=int, default=200, help="more calls of the tables alone (their p99)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--changed", type=int, default=50)
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}")
    files = synthetic(args.files, args.seed)
    t0, c0 = time.perf_counter(), time.thread_time()
    index = FileIndex(Path("/ws"), files)
    built_index, cpu_index = time.perf_counter() - t0, time.thread_time() - c0
    index.build_meant()  # (the server builds them after ready, off the event loop)
    t0, c0 = time.perf_counter(), time.thread_time()
    MeantTables.of(index.by_name, index.by_dir)
    built, cpu_built = time.perf_counter() - t0, time.thread_time() - c0
    tracemalloc.start()
    tables = MeantTables.of(index.by_name, index.by_dir)
    table_bytes = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del tables
    folders = len(_scan_folders(index))
    print(
        f"index: {len(files):,} files, {len(index.by_name):,} basenames, {len(index.by_dir):,} folders "
        f"holding files, {folders:,} folders at any depth; FileIndex built in {built_index:.2f} s, CPU "
        f"{cpu_index:.2f} s (tables not included: built after ready); the tables alone {built:.2f} s, CPU {cpu_built:.2f} s; their memory "
        f"(tracemalloc) {table_bytes / 2**20:.1f} MiB "
        f"({table_bytes / len(files):.0f} bytes a file)"
    )
    work = calls(index, args.seed)
    times: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    mismatches = 0
    for r in range(args.rounds):
        for lookup, arg in work:
            sides = ("before", "after") if r % 2 == 0 else ("after", "before")
            answers = {}
            for side in sides:
                fn = (_BEFORE if side == "before" else _AFTER)[lookup]
                took, used, answers[side] = _timed(fn, arg, index)
                times.setdefault((lookup, arg, side), []).append(took)
                cpu.setdefault((lookup, arg, side), []).append(used)
            if answers["before"] != answers["after"]:
                mismatches += 1
                print(f"MISMATCH {lookup}({arg!r}): before {answers['before']} after {answers['after']}")
    for _ in range(args.after_rounds):
        for lookup, arg in work:
            took, used, _ = _timed(_AFTER[lookup], arg, index)
            times[(lookup, arg, "after")].append(took)
            cpu[(lookup, arg, "after")].append(used)
    _table(work, index, times, cpu)
    _changes(index, files, args.changed, args.seed)
    load = os.getloadavg()
    print(f"load at the end {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}; answers differing: {mismatches}")
    return 1 if mismatches else 0


def _table(
    work: list[tuple[str, str]],
    index: FileIndex,
    times: dict[tuple[str, str, str], list[float]],
    cpu: dict[tuple[str, str, str], list[float]],
) -> None:
    """Per lookup and argument: the answers, before's median wall, after's median and p99 wall
    and p99 CPU; then every after call pooled."""
    head = f"{'before p50':>11} {'after p50':>10} {'after p99':>10} {'p99 CPU':>10}"
    print(f"\n{'lookup':<14} {'argument':<48} {'answers':>7} {head}")
    for lookup, arg in work:
        b, a, c = times[(lookup, arg, "before")], times[(lookup, arg, "after")], cpu[(lookup, arg, "after")]
        n = len(_AFTER[lookup](arg, index))
        print(
            f"{lookup:<14} {arg[-48:]:<48} {n:>7} {statistics.median(b) * 1e3:>8.1f} ms "
            f"{statistics.median(a) * 1e3:>7.3f} ms {_p(a, 0.99) * 1e3:>7.3f} ms {_p(c, 0.99) * 1e3:>7.3f} ms"
        )
    every = [t for (_, _, side), ts in times.items() if side == "after" for t in ts]
    used = [t for (_, _, side), ts in cpu.items() if side == "after" for t in ts]
    before = [t for (_, _, side), ts in times.items() if side == "before" for t in ts]
    print(
        f"\nafter, every call: n {len(every)}, wall p50 {_p(every, 0.5) * 1e3:.3f} ms, p99 {_p(every, 0.99) * 1e3:.3f}"
        f" ms, CPU p99 {_p(used, 0.99) * 1e3:.3f} ms; before, every call: n {len(before)}, wall p50 "
        f"{_p(before, 0.5) * 1e3:.0f} ms"
    )


def _changes(index: FileIndex, files: list[str], changed: int, seed: int) -> None:
    """One ``with_changes`` of ``changed`` added and ``changed`` removed files: its time, and its
    tables against tables built from scratch of the new listing."""
    rng = random.Random(seed + 1)
    gone = rng.sample(files, changed)
    added = [f"new{i}/Added{i}Test.java" for i in range(changed // 2)]
    added += [f"{rng.choice(index.meant.dirs)}/Fresh{i}.py".lstrip("/") for i in range(changed - len(added))]
    t0 = time.perf_counter()
    new = index.with_changes(added, gone, {})
    took = time.perf_counter() - t0
    t0 = time.perf_counter()
    index.meant.with_changes(index._unheld(added), new._unheld(gone))
    tables_took = time.perf_counter() - t0
    fresh = MeantTables.of(new.by_name, new.by_dir)
    same = all(getattr(new.meant, t).rows() == getattr(fresh, t).rows() for t in ("by_stem", "by_core", "by_folder"))
    same = same and new.meant.dirs == fresh.dirs
    print(
        f"with_changes of {changed} added and {changed} removed files: {took * 1e3:.0f} ms (the whole index's "
        f"copy, tables included; the tables' part alone {tables_took * 1e3:.0f} ms); its tables equal a fresh "
        f"build's: {same}"
    )


if __name__ == "__main__":
    sys.exit(main())
