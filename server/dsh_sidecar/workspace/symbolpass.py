"""The symbol pass of a workspace graph build: the code files indexed newest first, within a
file count and a CPU budget, each taken from the symbol cache (``cache.py``) when its
``(mtime_ns, size, inode)`` is the one its entry was made from, else read and parsed
(``symbols.py``).

The stats come from the build's listing (``stats.py``: one ``stat`` per file for the whole
build), so a file taken from the cache costs no system call. A cache with entries is mapped as
the index (:meth:`~dsh_sidecar.workspace.cache.SymbolEntries.index`: O(files), the usages left
in its columns until asked for); when every file of the pass is in it as it is now (the common
case of a later session on an unchanged tree) that is all, else the files that changed are
taken out of it and parsed again, and the cached files the pass does not take (gone, no longer
code, past its cut) are dropped. The cache is written again only when something was parsed or
left it, by the builder after it publishes the index (``defer_save``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from array import array
from collections import Counter
from collections.abc import Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.cache import Entry, SymbolCache, SymbolEntries
from dsh_sidecar.workspace.heap import collections_paused
from dsh_sidecar.workspace.journal import COMPACT_AT, Entries
from dsh_sidecar.workspace.sharedreads import SharedReads
from dsh_sidecar.workspace.stats import FileStats, Stat, stat_of
from dsh_sidecar.workspace.symbols import MAX_FILE_BYTES, FileSymbols, SymbolIndex, extract

#: Most files the symbol index reads (newest first), and its time budget in CPU seconds of its
#: thread (a busy machine slows the pass's wall clock, not its work: a wall-clock budget cut the
#: index short under load); a pass is cut after :data:`SYMBOL_WALL_S` wall-clock seconds whatever.
MAX_SYMBOL_FILES: Final = 50_000
SYMBOL_BUDGET_S: Final = 30.0
SYMBOL_WALL_S: Final = 600.0
#: Files between two hand-overs of the GIL when no system call does it (files from the cache).
YIELD_EVERY: Final = 1024

Progress = Callable[[int, int], None]


@dataclass
class Pass:
    """What one symbol pass produced: the index, whether it was cut, and its counts; ``save``:
    the cache's write when ``defer_save`` asked for it later (``None``: nothing to write, or
    written already, ``saved``)."""

    index: SymbolIndex
    truncated: bool
    hits: int
    saved: bool
    save: Callable[[], bool] | None = None


def _read(root: Path, rel: str, reader: fsguard.FolderReader | None = None) -> bytes | None:
    """A code file's bytes through :mod:`.fsguard` (regular files inside the workspace only;
    ``reader``: the pass's, folder by folder, the same answer); ``None`` for anything refused,
    unreadable or over :data:`MAX_FILE_BYTES`."""
    return reader.read(rel) if reader is not None else fsguard.read_or_none(root, rel, MAX_FILE_BYTES)


def _stat(root: str, rel: str) -> Stat | None:
    st = stat_of(root + rel)
    return None if st is None else (st.st_mtime_ns, st.st_size, st.st_ino)


def all_current(
    todo: list[int], files: list[str], old: SymbolEntries, stats: FileStats, overlay: Entries | None = None
) -> bool:
    """Whether the cache holds exactly the files of ``todo`` (positions in ``files``, whose stats
    are ``stats``) that a pass reads, each as it is now, once the journal ``overlay`` is laid over
    it (``journal.py``): a file over :data:`MAX_FILE_BYTES` is never read nor cached (one such
    file, a vendored bundle or a large test, had kept every later session of a real tree off
    this path: each file then taken from the cache one by one, ~2 s for 20k files), and neither
    is one that cannot be stat'ed (a tracked file deleted from a git work tree, which git still
    lists: one had kept a checkout's every later session off this path)."""
    if not old:
        return False
    if not overlay and _same_columns(todo, files, old, stats):
        return True
    return _beyond(todo, files, old, stats, overlay or {}) == 0


def _same_columns(todo: list[int], files: list[str], old: SymbolEntries, stats: FileStats) -> bool:
    """Whether the cache is the files of ``todo`` a pass reads, in its order, as they are now:
    the columns compared at once (C), not a tuple a file."""
    kept = [i for i in todo if stats.size[i] <= MAX_FILE_BYTES]
    return [files[i] for i in kept] == old.paths and all(
        array(code, map(column.__getitem__, kept)) == have
        for code, column, have in (
            ("q", stats.mtime, old.mtime),
            ("q", stats.size, old.size),
            ("Q", stats.ino, old.ino),
        )
    )


def _beyond(todo: list[int], files: list[str], old: SymbolEntries, stats: FileStats, overlay: Entries) -> int:
    """How many entries the cache with ``overlay`` laid over it holds beyond the files of
    ``todo``, when it holds each of those as it is now (:func:`all_current`); ``-1`` when it
    does not."""
    held = len(old) + sum(
        (e is not None) - (old.position(rel) is not None) for rel, e in overlay.items()
    )  # the entries once the journal is laid over the cache
    cached = 0
    for i in todo:
        st = stats.at(i)
        rel = files[i]
        if st is None:  # gone (git lists a tracked file deleted from the work tree): no entry
            if (overlay[rel] is not None) if rel in overlay else old.position(rel) is not None:
                return -1
            continue
        if st[1] > MAX_FILE_BYTES:
            continue
        if rel in overlay:
            entry = overlay[rel]
            if entry is None or st != entry[0]:
                return -1
        elif (j := old.position(rel)) is None or st != old.stat(j):
            return -1
        cached += 1
    return held - cached if held >= cached else -1


def _left_out(todo: list[int], files: list[str], old: SymbolEntries, overlay: Entries, count: int) -> list[str] | None:
    """The ``count`` entries of the cache that are not files of ``todo`` (a file that fell past
    the pass's cut when a newer one came, one no longer code); ``None`` unless exactly ``count``
    are found there, or when the journal ``overlay`` holds an entry of a file not in the pass
    (one gone since: the journal is written into the cache, ``_save``)."""
    passed = set(map(files.__getitem__, todo))
    if any(e is not None and p not in passed for p, e in overlay.items()):
        return None
    out = [p for p in old.paths if p not in passed and (p not in overlay or overlay[p] is not None)]
    return out if len(out) == count else None


def _warm(
    todo: list[int], files: list[str], old: SymbolEntries, stats: FileStats, overlay: Entries
) -> SymbolIndex | None:
    """The index mapped from the cache ``old`` with the journal ``overlay`` laid over it when
    together they hold every file of the pass as it is now (:func:`all_current`) and the journal
    is not due to be written into the cache (:data:`~dsh_sidecar.workspace.journal.COMPACT_AT`
    files at most); ``None`` otherwise. Up to :data:`COMPACT_AT` entries they hold beyond the
    pass's files (the oldest file of a cut pass, pushed past the cut by a file added) are left
    out of the index and stay in the files, as the journal's entries do until it is compacted:
    the cache is not written again for them."""
    if len(overlay) > COMPACT_AT or not old:
        return None
    beyond = 0 if not overlay and _same_columns(todo, files, old, stats) else _beyond(todo, files, old, stats, overlay)
    if not 0 <= beyond <= COMPACT_AT - len(overlay):
        return None
    extra = _left_out(todo, files, old, overlay, beyond) if beyond else []
    if extra is None:
        return None
    index = old.index()
    for rel, entry in overlay.items():
        index.remove(rel)
        if entry is not None:
            index.add(rel, _symbols(entry))
    for rel in extra:
        index.remove(rel)
    if overlay or extra:
        index.parsers = Counter({"cache": len(index)}) if len(index) else Counter()
    return index


def _symbols(entry: Entry) -> FileSymbols:
    _, defs, tokens, generated = entry
    if generated:
        return FileSymbols(generated=True, parser="cache")
    return FileSymbols(frozenset(defs), dict(tokens), parser="cache")


def run(
    root: Path,
    files: list[str],
    todo: list[int],
    truncated: bool,
    *,
    stats: FileStats | None = None,
    progress: Progress | None = None,
    cancel: threading.Event | None = None,
    cache: SymbolCache | None = None,
    defer_save: bool = False,
    shared: SharedReads | None = None,
) -> Pass:
    """Index the files at positions ``todo`` of ``files`` (``stats``: their stats, else each
    file is stat'ed here); see the module docstring. With ``defer_save``, the cache is not written
    here: :attr:`Pass.save` writes it (the builder publishes the index first); ``shared``: keeps
    each file read for the content index's sync (``sharedreads.py``)."""
    t0, cpu0 = time.perf_counter(), time.thread_time()
    total = len(todo)
    if progress is not None:
        progress(0, total)
    old = cache.load(total) if cache is not None else SymbolEntries()
    overlay = cache.overlay if cache is not None else {}
    if cache is not None and stats is not None and (warm := _warm(todo, files, old, stats, overlay)) is not None:
        if progress is not None:
            progress(total, total)
        return Pass(warm, truncated, len(old), False)
    new: list[tuple[str, Entry | int]] = []  # an int: the position of an entry of ``old``
    # a cache with entries to reuse is mapped as the index (O(files)), the files that changed
    # taken out of it and parsed again: the index is not rebuilt posting by posting
    mapped = cache is not None and stats is not None and len(old) > 0
    index = old.index() if mapped else SymbolIndex()
    base = str(root) + os.sep
    step = max(1, total // 100)
    hits, cut = 0, total
    with fsguard.FolderReader(root, MAX_FILE_BYTES) as reader, contextlib.closing(_paused(todo)) as files_todo:
        for n, i in enumerate(files_todo, 1):
            # the thread's CPU clock is a system call: read every 64 files (~1 ms of parsing)
            spent = n % 64 == 0 and (
                time.thread_time() - cpu0 > SYMBOL_BUDGET_S or time.perf_counter() - t0 > SYMBOL_WALL_S
            )
            if (cancel is not None and cancel.is_set()) or spent:
                truncated, cut = True, n - 1
                break
            if n % YIELD_EVERY == 0:
                time.sleep(0)  # a file from the cache makes no system call that would hand the GIL over
            rel = files[i]
            st = stats.at(i) if stats is not None else _stat(base, rel)
            hits += _take(root, rel, st, old, index, mapped, new, reader, overlay, shared)
            if progress is not None and (n % step == 0 or n == total):
                progress(n, total)
    # a journal read is written into the cache (one not taken whole, an entry of a file gone or
    # forged, would send every later session this way)
    journalled = sum(1 for rel, e in new if e is overlay.get(rel)) if overlay else 0
    if mapped:
        _untake(index, old, {files[i] for i in todo[:cut]}, journalled)
    if cache is None:
        return Pass(index, truncated, hits, False)
    save = functools.partial(_save, cache, old, new, [files[i] for i in todo[cut:]], len(new) - hits + len(overlay))
    return Pass(index, truncated, hits, False, save) if defer_save else Pass(index, truncated, hits, save())


def _paused(todo: list[int]) -> Generator[int, None, None]:
    """``todo``, each run of :data:`YIELD_EVERY` files taken with the cyclic collector paused
    (``heap.collections_paused``): a pass makes a few containers a file for the index, all
    long-lived and none in a cycle, and each full collection while it goes on scans the whole
    heap again (5 of them, 0.24 s of a 2.3 s pass on 100k files). Between runs the collector is
    back: another thread's garbage waits one run at most (~40 ms of parsing)."""
    for start in range(0, len(todo), YIELD_EVERY):
        with collections_paused():
            yield from todo[start : start + YIELD_EVERY]


def _take(
    root: Path,
    rel: str,
    st: Stat | None,
    old: SymbolEntries,
    index: SymbolIndex,
    mapped: bool,
    new: list[tuple[str, Entry | int]],
    reader: fsguard.FolderReader | None = None,
    overlay: Entries | None = None,
    shared: SharedReads | None = None,
) -> int:
    """Index one file of a pass (its stat ``st``): from the journal ``overlay`` or the cache
    ``old`` when its entry is current (already in ``index`` when the index was ``mapped`` from
    the cache), else read (and kept in ``shared``) and parsed (its cached version taken out of a
    mapped index first); its entry appended to ``new``. 1 when it came from the cache or the
    journal."""
    if overlay and rel in overlay:
        entry = overlay[rel]
        if entry is not None and st is not None and entry[0] == st:
            index.add(rel, _symbols(entry))  # (replaces a mapped index's cached version)
            new.append((rel, entry))
            return 1
        j = None
    else:
        j = old.position(rel) if st is not None else None
    if st is not None and j is not None and old.stat(j) == st:
        if not mapped:
            index.add(rel, old.symbols(j))
        new.append((rel, j))
        return 1
    if mapped:
        index.remove(rel)  # its cached version, if any, is not current
    data = _read(root, rel, reader) if st is not None and st[1] <= MAX_FILE_BYTES else None
    if data is not None and st is not None:
        if shared is not None:
            shared.put(rel, st, data)
        symbols = extract(rel, data)
        index.add(rel, symbols)
        new.append((rel, (st, sorted(symbols.definitions), symbols.tokens, symbols.generated)))
    return 0


def _untake(index: SymbolIndex, old: SymbolEntries, taken: set[str], journalled: int = 0) -> None:
    """Take out of an index mapped from ``old`` the cached files a pass did not take (gone, no
    longer code, past its cut); its ``cache`` parser count is then the cached files left and
    the ``journalled`` ones taken from the journal."""
    for rel in [p for p in old.paths if p not in taken]:
        index.remove(rel)
    index.parsers["cache"] = index.cached_files() + journalled
    if not index.parsers["cache"]:
        del index.parsers["cache"]


def _save(
    cache: SymbolCache, old: SymbolEntries, new: list[tuple[str, Entry | int]], unreached: list[str], parsed: int
) -> bool:
    """Save the symbol cache when it differs from what was loaded (``old``); the entries of the
    files a cut pass did not reach (``unreached``) stay cached. A truncated index is saved
    too (its entries are those of the newest :data:`MAX_SYMBOL_FILES` code files): a later
    session on an unchanged tree then parses nothing. Whether it was saved."""
    for rel in unreached:
        j = old.position(rel)
        if j is not None:
            new.append((rel, j))
    if parsed or len(old) != len(new):
        return cache.save(SymbolEntries.of((rel, old.entry(e) if isinstance(e, int) else e) for rel, e in new))
    return False


def summary(done: Pass, t0: float) -> dict[str, Any]:
    """The graph's status figures of a pass that started at ``t0`` (``perf_counter``)."""
    return {
        "symbolFiles": len(done.index),
        "symbolMs": round((time.perf_counter() - t0) * 1000, 1),
        "symbolsTruncated": done.truncated,
        "parsers": dict(done.index.parsers),
        "cacheHits": done.hits,
        "cacheSaved": done.saved,
    }
