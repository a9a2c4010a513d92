"""The missing-path answer's lookups (``suggester/meant.py``) on a synthetic large index:
**before**, the tables' candidates each read one by one (the filter before the digests, kept here
as the reference: O(candidates) a call), against **after**, the lookups as they are (a common
name's candidates read through its digest, ``meanttables.Digest``: O(answer)), in one run,
interleaved call by call (before, after, after, before, …), with the load printed beside them;
then ``--pass-rounds`` calls of the pass over every listed basename and folder the mechanism
first made (seconds a call). Goal: well under 1 ms of CPU a call (p99) for every lookup,
common names (``index.js``, ``tests``) included; the answers of all three are compared on every
call (a mismatch is printed and fails the run).

Also printed: the time to build the tables of the index (off the event loop, after ready),
their memory (``tracemalloc``: the bytes allocated by building them, per listed file; the
digests' part), and one ``FileIndex.with_changes`` of ``--changed`` files (its tables and digests
carried, compared with a fresh build's).

    python bench/meant_lookups.py [--files 100000] [--rounds 200] [--pass-rounds 1] [--seed 7] [--changed 50]
"""

from __future__ import annotations

import argparse
import gc
import heapq
import os
import random
import re
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterable
from pathlib import Path

from dsh_sidecar.suggester import meant
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.meantcache import MeantCache
from dsh_sidecar.suggester.meanttables import Keyed, MeantTables, folder_key, terms, unplural

# --- main's filter before the digests (the reference "old filter": the tables' candidates, each ---
# --- read one by one: O(candidates) a call) ------------------------------------------------------

WORD = re.compile(r"[a-z0-9]+")


def _sharing(words: frozenset[str]) -> Callable[[str], int]:
    """How many of the folder words ``words`` the folder of a path has: ``len(words &
    terms(folder))``, one candidate at a time."""
    if not words:
        return _none_shared
    forms = [tuple(w for w in (t, t + "s") if unplural(w) == t) for t in words]

    def shared(path: str) -> int:
        low = meant._split(path)[0].lower()
        if not any(t in low for t in words):
            return 0
        found = set(WORD.findall(low))
        return sum(1 for made in forms if not found.isdisjoint(made))

    return shared


def _none_shared(path: str) -> int:
    return 0


def _ranked(guess: str, found: Iterable[tuple[int, str]]) -> list[str]:
    """``found`` (closeness, path) best first: the closer name, then the more folder words shared
    with the guess, then the shorter path."""
    shared = _sharing(terms(meant._split(guess)[0]))
    if shared is _none_shared:  # (the common `ls tests`: no folder word to count)
        keyed = [(close, 0, path.count("/"), path) for close, path in found]
    else:
        keyed = [(close, -shared(path), path.count("/"), path) for close, path in found]
    return [key[3] for key in heapq.nsmallest(meant.MAX_MEANT, keyed)]


def _agreeing(guess: str, found: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``found``, or when several files answer a guess that names folders, those that share a
    folder word with it: the name alone does not tell which was meant (``lib/router/index.js``
    is none of the other ``index.js`` files of unrelated folders); more of them than a note
    names, only those sharing the most, when they are few enough, else none."""
    words = terms(meant._split(guess)[0])
    if len(found) <= 1 or not words:
        return found
    sharing = _sharing(words)
    shared = [(sharing(p), c, p) for c, p in found]
    found = [(c, p) for n, c, p in shared if n]
    if len(found) <= meant.MAX_MEANT:
        return found
    # a name in more folders than a note names: only the files sharing the most folder words,
    # when they are few (every `__snapshots__/jsfmt.spec.js.snap` shares `tests`, `snapshots`)
    best = max(n for n, _, _ in shared)
    top = [(c, p) for n, c, p in shared if n == best]
    return top if len(top) <= meant.MAX_MEANT else []


def old_files_meant(guess: str, index: FileIndex) -> list[str]:
    """``meant.files_meant`` before the digests: every candidate of the tables read."""
    name = meant._split(guess)[1]
    if not name or guess.strip("/") in index.by_name.get(name, ()):
        return []  # no name, or the guessed file is there: no wrong guess
    tables = index.meant
    if tables is None:
        return []  # the tables are not built yet: the answer abstains
    found: list[tuple[int, str]] = []
    for listed in meant._names_near(name, tables):
        close = meant._closeness(name, listed)
        if close is not None:
            found.extend((close, p) for p in index.by_name.get(listed, ()) if p != guess.strip("/"))
    return _ranked(guess, _agreeing(guess, found))


def old_folders_meant(guess: str, index: FileIndex) -> list[str]:
    """``meant.folders_meant`` before the digests: every candidate of the tables read."""
    guess = guess.strip("/")
    name = meant._split(guess)[1]
    if not name or name in (".", ".."):
        return []
    tables = index.meant
    if tables is None or index.has_dir(guess):
        return []  # not built yet (abstains), or the guessed folder is there: no wrong guess
    low, by_folder = name.lower(), tables.by_folder
    # the same name any case (0 the same, 1 another case), then one `s` apart (2), as
    # `_folder_closeness` says: each key of the table decides it for every folder listed under it
    found = [(0 if f.rpartition("/")[2] == name else 1, f) for f in _named(by_folder, low)]
    for other in (low + "s", low[:-1] if low.endswith("s") else ""):
        if other and len(min(low, other, key=len)) >= 3:
            found += [(2, f) for f in _named(by_folder, other)]
    return _ranked(guess, found)


def _named(by_folder: Keyed, key: str) -> list[str]:
    """The folders of ``by_folder`` whose last name is ``key`` in lower case (a folder of another
    name of the same hash left out)."""
    return [f for f in by_folder.get(key) if folder_key(f) == key]


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
    return _ranked(guess, _agreeing(guess, found))


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
    return _ranked(guess, found)


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
        ("files_meant", "app/views/index.js"),  # a common name, folder words few of its files share
        ("files_meant", "lib/core/index.js"),  # a common name, folder words many of its files share
        ("files_meant", "index.js"),  # a common name, no folder word
        ("files_meant", "gone/__init__.py"),
        ("files_meant", "src/NothingLikeIt.java"),  # nothing close
        ("folders_meant", "tests"),  # one `s` apart and the same name at many depths
        ("folders_meant", "api/Test"),  # a common name, another case, one `s` apart, a folder word
        ("folders_meant", "lib/EXAMPLE"),  # another case and one `s` apart
        ("folders_meant", "nowhere/zzzq"),  # nothing close
    ]
    top = max((d for d in index.meant.dirs if "/" not in d), key=lambda d: sum(1 for _ in _under(index, d)))
    leaf = rng.choice([d for d in index.meant.dirs if d.count("/") >= 3])
    out += [("files_under", top), ("files_under", leaf)]
    return out


def _under(index: FileIndex, folder: str) -> list[str]:
    return [d for d in index.meant.dirs if d.startswith(folder + "/")][:5000]


_PASS: dict[str, Callable[[str, FileIndex], list[str]]] = {
    "files_meant": scan_files_meant,
    "folders_meant": scan_folders_meant,
    "files_under": scan_files_under,
}
_BEFORE: dict[str, Callable[[str, FileIndex], list[str]]] = {
    "files_meant": old_files_meant,
    "folders_meant": old_folders_meant,
    "files_under": meant.files_under,
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


def _candidates(lookup: str, arg: str, index: FileIndex) -> int:
    """How many listed paths the lookup's keys hold (what the old filter read one by one)."""
    tables = index.meant
    name = meant._split(arg)[1]
    if lookup == "files_meant":
        near = [n for n in meant._names_near(name, tables) if meant._closeness(name, n) is not None]
        return sum(len(index.by_name.get(n, ())) for n in near)
    if lookup == "folders_meant":
        low = name.lower()
        return sum(len(tables.folders_named(k)) for k in {low, low + "s", low[:-1] if low.endswith("s") else low})
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=200, help="timed calls of each lookup and argument, per side")
    ap.add_argument("--pass-rounds", type=int, default=1, help="calls of the first form's pass (seconds each)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--changed", type=int, default=50)
    ap.add_argument("--probe", type=int, default=0, help="rounds of the 1 ms probe beside a build, a load, nothing")
    args = ap.parse_args()
    load = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}")
    files = synthetic(args.files, args.seed)
    index = _built(files)
    _kept(index)
    if args.probe:
        _probe(index, args.probe)
    work = calls(index, args.seed)
    times: dict[tuple[str, str, str], list[float]] = {}
    cpu: dict[tuple[str, str, str], list[float]] = {}
    mismatches = 0
    for r in range(args.rounds + args.pass_rounds):
        for lookup, arg in work:
            sides = ("before", "after") if r % 2 == 0 else ("after", "before")
            if r >= args.rounds:
                sides = ("pass", *sides)
            answers = {}
            for side in sides:
                fn = {"pass": _PASS, "before": _BEFORE, "after": _AFTER}[side][lookup]
                took, used, answers[side] = _timed(fn, arg, index)
                times.setdefault((lookup, arg, side), []).append(took)
                cpu.setdefault((lookup, arg, side), []).append(used)
            if any(a != answers["after"] for a in answers.values()):
                mismatches += 1
                print(f"MISMATCH {lookup}({arg!r}): {answers}")
    _table(work, index, times, cpu)
    _changes(index, files, args.changed, args.seed)
    load = os.getloadavg()
    print(f"load at the end {load[0]:.1f}/{load[1]:.1f}/{load[2]:.1f}; answers differing: {mismatches}")
    return 1 if mismatches else 0


def _built(files: list[str]) -> FileIndex:
    """The index of ``files`` with its tables; their build time and memory printed."""
    t0, c0 = time.perf_counter(), time.thread_time()
    index = FileIndex(Path("/ws"), files)
    built_index, cpu_index = time.perf_counter() - t0, time.thread_time() - c0
    index.build_meant()  # (the server builds them after ready, off the event loop)
    t0, c0 = time.perf_counter(), time.thread_time()
    MeantTables.of(index.by_name, index.by_dir, index.by_name)
    built, cpu_built = time.perf_counter() - t0, time.thread_time() - c0
    tracemalloc.start()
    tables = MeantTables.of(index.by_name, index.by_dir, index.by_name)
    table_bytes = tracemalloc.get_traced_memory()[0]
    tables.name_digests, tables.folder_digests = {}, {}
    digest_bytes = table_bytes - tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del tables
    digested = sum(len(d.source) for d in index.meant.name_digests.values())
    digested_folders = sum(len(d.source) for d in index.meant.folder_digests.values())
    print(
        f"index: {len(files):,} files, {len(index.by_name):,} basenames, {len(index.by_dir):,} folders "
        f"holding files, {len(_scan_folders(index)):,} folders at any depth; FileIndex built in {built_index:.2f} s, "
        f"CPU {cpu_index:.2f} s (tables not included: built after ready); the tables alone {built:.2f} s, CPU "
        f"{cpu_built:.2f} s; their memory (tracemalloc) {table_bytes / 2**20:.1f} MiB ({table_bytes / len(files):.0f} "
        f"bytes a file), of it the digests {digest_bytes / 2**20:.2f} MiB: {len(index.meant.name_digests)} names "
        f"({digested:,} files), {len(index.meant.folder_digests)} folder names ({digested_folders:,} folders)"
    )
    return index


def _kept(index: FileIndex) -> None:
    """The tables kept between sessions (``meantcache.py``): one build that writes the file, then
    rounds of a later session's load (checked against the listing), interleaved with builds."""
    with tempfile.TemporaryDirectory(prefix="meant-bench-") as tmp:
        cache = MeantCache.of(Path(tmp), Path(tmp) / "ws")
        names, folders = list(index.names), frozenset(index.by_dir)
        cache.tables(names, folders, index.by_name)
        cpu: dict[str, list[float]] = {"built": [], "hit": []}
        for r in range(3):
            for side in ("hit", "built") if r % 2 else ("built", "hit"):
                c0 = time.thread_time()
                if side == "hit":
                    cache.tables(names, folders, index.by_name)
                    assert cache.last == "hit", cache.last
                else:
                    MeantTables.of(names, folders, index.by_name)
                cpu[side].append(time.thread_time() - c0)
        size = cache.path.stat().st_size
    print(
        f"kept tables ({size / 2**20:.1f} MiB file): a build's CPU {' '.join(f'{t:.2f}' for t in cpu['built'])} s, "
        f"a later session's load (checked) {' '.join(f'{t:.2f}' for t in cpu['hit'])} s (interleaved)"
    )


def _probe(index: FileIndex, rounds: int) -> None:
    """What the tables' making costs a call beside it: a probe thread (sleep 1 ms, then note how
    late it woke: waiting for the GIL or a core) while, on another thread, the tables are built
    (a first session), taken back from the kept file (a later one), or nothing runs (the floor),
    interleaved; the heap frozen as the server's is at ready."""
    gc.collect()
    gc.freeze()
    with tempfile.TemporaryDirectory(prefix="meant-bench-") as tmp:
        cache = MeantCache.of(Path(tmp), Path(tmp) / "ws")
        names, folders = list(index.names), frozenset(index.by_dir)
        cache.tables(names, folders, index.by_name)
        work = {
            "nothing": lambda: time.sleep(1.0),
            "build": lambda: MeantTables.of(names, folders, index.by_name),
            "load": lambda: cache.tables(names, folders, index.by_name),
        }
        late: dict[str, list[float]] = {side: [] for side in work}
        for r in range(rounds):
            for side in list(work) if r % 2 == 0 else list(work)[::-1]:
                worker = threading.Thread(target=work[side])
                worker.start()
                while worker.is_alive():
                    t0 = time.perf_counter()
                    time.sleep(0.001)
                    late[side].append(time.perf_counter() - t0 - 0.001)
                worker.join()
    load = os.getloadavg()
    print(f"\nprobe (sleep 1 ms; how late it woke), {rounds} rounds, load {load[0]:.1f}:")
    for side, values in late.items():
        print(
            f"  beside {side:<8} n {len(values):>5}  p50 {_p(values, 0.5) * 1e3:6.2f} ms  p99 "
            f"{_p(values, 0.99) * 1e3:6.2f} ms  max {max(values) * 1e3:7.2f} ms"
        )


def _table(
    work: list[tuple[str, str]],
    index: FileIndex,
    times: dict[tuple[str, str, str], list[float]],
    cpu: dict[tuple[str, str, str], list[float]],
) -> None:
    """Per lookup and argument: the candidates, the answers, the pass's median wall, before's and
    after's p50 and p99 CPU and p99 wall; then every call pooled, per side."""
    head = f"{'pass p50':>9} {'before CPU p50/p99':>19} {'after CPU p50/p99':>19} {'p99 wall b/a':>16}"
    print(f"\n{'lookup':<14} {'argument':<40} {'cands':>6} {'answers':>7} {head}")
    for lookup, arg in work:
        scan = times.get((lookup, arg, "pass"), [float("nan")])
        b, a = cpu[(lookup, arg, "before")], cpu[(lookup, arg, "after")]
        bw, aw = times[(lookup, arg, "before")], times[(lookup, arg, "after")]
        n = len(_AFTER[lookup](arg, index))
        print(
            f"{lookup:<14} {arg[-40:]:<40} {_candidates(lookup, arg, index):>6} {n:>7} "
            f"{_p(scan, 0.5) * 1e3:>6.0f} ms {_p(b, 0.5) * 1e3:>7.3f}/{_p(b, 0.99) * 1e3:.3f} ms "
            f"{_p(a, 0.5) * 1e3:>7.3f}/{_p(a, 0.99) * 1e3:.3f} ms {_p(bw, 0.99) * 1e3:>6.2f}/{_p(aw, 0.99) * 1e3:.2f} ms"
        )
    for side in ("before", "after"):
        wall = [t for (_, _, s), ts in times.items() if s == side for t in ts]
        used = [t for (_, _, s), ts in cpu.items() if s == side for t in ts]
        print(
            f"{side}, every call: n {len(wall)}, wall p50 {_p(wall, 0.5) * 1e3:.3f} ms, p99 {_p(wall, 0.99) * 1e3:.3f} "
            f"ms; CPU p50 {_p(used, 0.5) * 1e3:.3f} ms, p99 {_p(used, 0.99) * 1e3:.3f} ms, max {max(used) * 1e3:.3f} ms"
        )


def _changes(index: FileIndex, files: list[str], changed: int, seed: int) -> None:
    """One ``with_changes`` of ``changed`` added and ``changed`` removed files: its time, and its
    tables against tables built from scratch of the new listing."""
    rng = random.Random(seed + 1)
    gone = rng.sample(files, changed)
    added = [f"new{i}/Added{i}Test.java" for i in range(changed // 2)]
    added += [f"{rng.choice(index.meant.dirs)}/Fresh{i}.py".lstrip("/") for i in range(changed - len(added))]
    added += ["lib/fresh/index.js", "fresh/tests/x.py"]
    t0 = time.perf_counter()
    new = index.with_changes(added, gone, {})
    took = time.perf_counter() - t0
    fresh = MeantTables.of(new.by_name, new.by_dir, new.by_name)
    same = all(getattr(new.meant, t).rows() == getattr(fresh, t).rows() for t in ("by_stem", "by_core", "by_folder"))
    same = same and new.meant.dirs == fresh.dirs and _digests(new.meant) == _digests(fresh)
    print(
        f"with_changes of {len(added)} added and {changed} removed files: {took * 1e3:.0f} ms (the whole index's "
        f"copy, tables and digests included); its tables equal a fresh build's: {same}"
    )


def _digests(tables: MeantTables) -> tuple[object, ...]:
    """The digests as comparable values (their source in any order: a change appends)."""
    return tuple(
        {k: (sorted(d.source), d.ranked, d.orders, d.folders, list(d.starts)) for k, d in digests.items()}
        for digests in (tables.name_digests, tables.folder_digests)
    )


if __name__ == "__main__":
    sys.exit(main())
