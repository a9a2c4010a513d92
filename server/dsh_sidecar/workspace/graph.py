"""The workspace graph projection: every file as a node (kind, depth, recency rank) plus the
symbol index, and the proof score the suggester's seed and sticky section read from it.

Nodes come from :func:`~dsh_sidecar.workspace.recency.git_scan` (git-tracked plus untracked
not ignored) or, outside git, :func:`~dsh_sidecar.workspace.files.walk_files` (a walk honouring
the root's and nested ``.gitignore`` files); kinds from :mod:`.kinds`; recency ranks from
:mod:`.recency`; definitions and usages from :mod:`.symbols` (kept on disk by :mod:`.cache`).
A :meth:`WorkspaceGraph.refresh` of single paths re-reads just those files; a new path is
admitted unless the walk would leave it out (:func:`~dsh_sidecar.workspace.files.walk_ignores`:
the root's and nested ``.gitignore`` files, :data:`~dsh_sidecar.workspace.files.SKIP_DIRS`).

Score (the plan's "graph projection": literal = proof):

* ``proof(path, expected_kinds)`` = 0.0 when the node does not exist, else
  ``PROOF_BASE + PROOF_KIND * match + PROOF_RECENCY * recency`` = ``0.4 + 0.4·match + 0.2·recency``
  where ``match`` is 1 when the node's kind is one of ``expected_kinds`` (or none are expected)
  else 0, and ``recency = 1 / (1 + log2(1 + recency_rank))`` (1.0 for the newest rank, 0.5 for
  rank 1, ≈0.33 for rank 3, → 0 for old files). Range: 0.0, or [0.4, 1.0].
* The neutral literal 0.5 and scope 1.0 of a candidate nothing proves live in the suggester
  (``suggester/candidates.py``), which ranks by kinds, facts, symbols and the call's results;
  the depth-tier scope and the ``literal``/``scope`` wrappers were never read and are gone.

Lookups (``node``, ``exists``, ``definitions``, ``usages``, ``proof``) are dict reads;
``usages`` ranks a posting list once per name and caches it until the next change.
"""

from __future__ import annotations

import bisect
import heapq
import logging
import math
import threading
import time
from collections import Counter
from collections.abc import Callable, Container, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.workspace import fsguard, listingcache, symbolpass
from dsh_sidecar.workspace.cache import SymbolCache
from dsh_sidecar.workspace.files import MAX_FILES, walk_ignores
from dsh_sidecar.workspace.heap import collections_paused, sliced_dict
from dsh_sidecar.workspace.kindcache import KindCache
from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS, Kind, classify, depth
from dsh_sidecar.workspace.listingcache import Listing
from dsh_sidecar.workspace.listingjournal import Changes, rows_of
from dsh_sidecar.workspace.recency import git_scan
from dsh_sidecar.workspace.sharedreads import SharedReads
from dsh_sidecar.workspace.stats import FileStats, stat_files, stat_of
from dsh_sidecar.workspace.symbolpass import MAX_SYMBOL_FILES
from dsh_sidecar.workspace.symbols import MAX_FILE_BYTES, SymbolIndex, extension, extract
from dsh_sidecar.workspace.treepaths import is_file, relative, sorted_remove, through_link

log = logging.getLogger(__name__)

#: Proof weights (ours, documented in the module docstring).
PROOF_BASE: Final = 0.4
PROOF_KIND: Final = 0.4
PROOF_RECENCY: Final = 0.2
#: Usage lists cached per name (the top this many), and the most names cached.
USAGE_CACHE_DEPTH: Final = 20
USAGE_CACHE_NAMES: Final = 4096
#: Files at or above which the server reports ``$/progress`` for a build.
LARGE_REPO_FILES: Final = 5_000

Progress = Callable[[int, int], None]


@dataclass(frozen=True, slots=True)
class FileNode:
    """One workspace file: repo-relative POSIX ``path``, ``kind``, folder ``depth`` (0 = root)
    and ``recency_rank`` (0 = most recently changed; dense, files of one commit share it)."""

    path: str
    kind: Kind
    depth: int
    recency_rank: int


@dataclass(frozen=True, slots=True)
class GraphDelta:
    """What one :meth:`WorkspaceGraph.apply` did: the paths that became nodes (``added``), left
    the graph (``removed``) or stayed and were re-read (``modified``); the kind now of each path
    whose kind is new or changed (``kinds``: the added ones and, say, a file that turned
    generated); and the names whose definition files changed (``names``)."""

    added: frozenset[str] = frozenset()
    removed: frozenset[str] = frozenset()
    modified: frozenset[str] = frozenset()
    kinds: dict[str, Kind] = field(default_factory=dict)
    names: frozenset[str] = frozenset()

    @property
    def paths(self) -> frozenset[str]:
        """Every path the batch touched."""
        return self.added | self.removed | self.modified


def recency_score(rank: int) -> float:
    """``1 / (1 + log2(1 + rank))``: 1.0 for rank 0, 0.5 for rank 1."""
    return 1.0 / (1.0 + math.log2(1 + rank))


def _symbol_candidate(path: str, kind: str) -> bool:
    return kind in ("source", "test") and extension(path) in SOURCE_EXTENSIONS


class WorkspaceGraph:
    """The projection of one workspace (see the module docstring). Build with :meth:`build`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[str] = []
        self._kind: dict[str, Kind] = {}
        self._time: dict[str, float] = {}
        #: the distinct change times, negated and sorted (ascending): a file's dense recency rank
        #: is the position of its time here (bisect), so a refresh of k files moves k entries
        #: instead of re-ranking every file; ``_stamps`` counts the files of each time
        self._neg: list[float] = []
        self._stamps: dict[float, int] = {}
        self._by_kind: dict[str, list[str]] = {}
        self.symbols: SymbolIndex | None = None
        self.time_source = "none"
        self.stats: dict[str, Any] = {}
        self._usage_cache: dict[str, list[str]] = {}
        self._lock = threading.RLock()
        #: the kinds :meth:`from_listing` classified (none were known), for a kind cache to keep
        self.classified: list[Kind] | None = None
        #: the listing's stats (``workspace/stats.py``): the walk's, or taken once on first use
        self._stats: FileStats | None = None
        self._stats_lock = threading.Lock()
        #: each folder's ignore rules (``files.walk_ignores``), read again once a ``.gitignore`` changes
        self._rules: dict[str, Any] = {}
        #: the symbol cache's write an index_symbols(defer_save=True) left (:meth:`save_symbols`)
        self._save_symbols: Callable[[], bool] | None = None
        #: ``False`` while the listing is a past session's, not walked again yet
        #: (``listingcache.py``: what a note may see meanwhile)
        self.verified = True
        #: the walk the listing was made from, for the listing cache (``None`` once changed)
        self.walk: Listing | None = None
        #: what :meth:`apply` changed since :meth:`unkept` was last asked: each path's symbol
        #: entry now (``None``: it has none) for the symbol cache's journal, and whether a path
        #: came or went (the kind cache's listing is another)
        self._entries: dict[str, Any] = {}
        self._listed_changed = False
        #: whether :attr:`_stats` is this batch's copy (:meth:`_stats_to_change`)
        self._stats_copied = False

    # ------------------------------------------------------------------ building

    @classmethod
    def build(
        cls,
        root: Path,
        *,
        symbols: bool = True,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
    ) -> WorkspaceGraph:
        """List, classify and rank the files of ``root``; then (``symbols=True``) index the code
        files. ``progress(done, total)`` is called with ``(0, total)`` once the files are listed
        and then every few files of the symbol pass. ``cancel`` stops the symbol pass early.
        Never raises for unreadable files; an unreadable ``root`` gives an empty graph."""
        graph = cls.build_files(root)
        if symbols:
            graph.index_symbols(progress=progress, cancel=cancel)
        elif progress is not None:
            progress(0, 0)
        return graph

    @classmethod
    def build_files(
        cls, root: Path, kind_cache: KindCache | None = None, past: Listing | None = None
    ) -> WorkspaceGraph:
        """The file-level graph only (nodes, kinds, depths, recency ranks; no symbols); with
        ``kind_cache``, the kinds of a listing it holds are taken from it (``kindcache.py``);
        with ``past``, made of that walk (a past session's: not :attr:`verified`,
        ``listingcache.py``) instead of listing the tree."""
        t0 = time.perf_counter()
        times: dict[str, float] = {}
        source = "none"
        # the listing and its tables: long-lived, no cycle (frozen at the end: never scanned)
        with collections_paused(freeze=True):
            scan = git_scan(root) if past is None and root.is_dir() else None
            walked: FileStats | None = None
            if scan is not None:
                files, times = scan
                source = "git"
            elif past is not None or root.is_dir():
                walked, stamps = (past.stats, past.stamps) if past is not None else listingcache.walk_listing(root)
                # the past listing stays as read (the walk after ready compares with it): a copy
                files = walked.files if past is None else list(walked.files)
                source = "mtime" if past is None else past.source
            else:
                files = []
            known = kind_cache.load if kind_cache is not None else None
            graph = cls.from_listing(root, files, times, source, known, stamps if walked is not None else None)
            if walked is not None:
                graph._stats = walked.select(graph.files)
                if past is None and graph._stats.files is walked.files:
                    graph.walk = Listing(graph._stats, stamps)
        graph.verified = past is None
        graph.stats["scanMs"] = round((time.perf_counter() - t0) * 1000 - graph.stats["buildMs"], 1)
        graph.stats["buildMs"] = round((time.perf_counter() - t0) * 1000, 1)
        return graph

    @classmethod
    def from_listing(
        cls,
        root: Path,
        files: list[str],
        times: dict[str, float],
        source: str = "given",
        known: Callable[[list[str]], list[Kind] | None] | None = None,
        stamps: list[float] | None = None,
    ) -> WorkspaceGraph:
        """The file-level graph of a given listing (repo-relative POSIX paths, at most
        :data:`~dsh_sidecar.workspace.files.MAX_FILES` kept) and change times (Unix seconds;
        a missing time counts as the oldest). ``known(files)`` gives the kinds of the sorted
        listing when it knows them (a cache), else ``None``: each path is classified, and
        :attr:`classified` holds the kinds for the caller to keep. ``stamps``: the times of
        ``files`` in their order, when ``files`` is sorted and without repeats already (a walk's,
        sorted: ``times`` is then not read)."""
        t0 = time.perf_counter()
        graph = cls(root)
        if stamps is None or len(stamps) != len(files):
            files = sorted(dict.fromkeys(files))[:MAX_FILES]
            tget = times.get
            stamps = [tget(f, 0.0) for f in files]
        cached = known(files) if known is not None else None
        kinds = cached if cached is not None else list(map(classify, files))
        graph.classified = kinds if cached is None else None
        graph.files = files
        graph._kind = sliced_dict(files, kinds)
        graph._time = sliced_dict(files, stamps)
        graph._stamps = dict(Counter(stamps))
        graph._neg = sorted(-t for t in graph._stamps)
        graph.time_source = source
        by_kind: dict[str, list[str]] = {}
        for f, k in zip(files, kinds):
            group = by_kind.get(k)
            if group is None:
                by_kind[k] = [f]
            else:
                group.append(f)
        graph._by_kind = by_kind
        graph.stats = {
            "files": len(files),
            "buildMs": round((time.perf_counter() - t0) * 1000, 1),
            "recencySource": source,
        }
        return graph

    def file_stats(self) -> FileStats:
        """The stats of the listing as built (``workspace/stats.py``): the walk's, or one ``stat``
        per file on the first call (from any thread; later calls wait for it and share it)."""
        with self._stats_lock:
            if self._stats is None or self._stats.files is not self.files:
                self._stats = stat_files(self.root, self.files)
            return self._stats

    def _symbol_todo(self) -> tuple[list[int], bool]:
        """The code files to index (their positions in :attr:`files`), newest first (the rank
        order), then by path, at most :data:`MAX_SYMBOL_FILES`; and whether there were more."""
        files = self.files
        kinds = list(map(self._kind.__getitem__, files))
        todo = []
        for i, kind in enumerate(kinds):  # _symbol_candidate, written out: one pass of 100k files
            if kind == "source" or kind == "test":
                name = files[i].rpartition("/")[2]
                dot = name.rfind(".")
                if dot > 0 and name[dot:].lower() in SOURCE_EXTENSIONS:
                    todo.append(i)
        times = list(map(self._time.__getitem__, files))
        todo.sort(key=times.__getitem__, reverse=True)  # stable: a time's files stay in path order
        return todo[:MAX_SYMBOL_FILES], len(todo) > MAX_SYMBOL_FILES

    def _publish_symbols(self, index: SymbolIndex) -> None:
        """Make ``index`` the graph's symbol index (the files it found generated get that kind)."""
        with self._lock:
            for rel in index.generated:
                self._set_kind(rel, "generated")
            self.symbols = index
            self._usage_cache = {}

    def index_symbols(
        self,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        cache: SymbolCache | None = None,
        defer_save: bool = False,
        shared: SharedReads | None = None,
    ) -> None:
        """Build the symbol index over the code files, newest first, within :data:`MAX_SYMBOL_FILES`
        and the pass's CPU budget (``symbolpass.py``); the index is published only when complete
        (or cut by the budget/cancel, then ``stats['symbolsTruncated']``). With ``cache``, unchanged
        files (the same mtime, size and inode in the listing's stats) come from it, and the cache is
        rewritten when anything changed (a truncated index too: the next session on an unchanged
        tree parses nothing); with ``defer_save``, :meth:`save_symbols` writes it (after the index
        is published); ``shared``: the files read are kept there for the content index."""
        t0 = time.perf_counter()
        todo, truncated = self._symbol_todo()
        stats = self.file_stats() if cache is not None else self._stats
        done = symbolpass.run(
            self.root,
            self.files,
            todo,
            truncated,
            stats=stats,
            progress=progress,
            cancel=cancel,
            cache=cache,
            defer_save=defer_save,
            shared=shared,
        )
        self._publish_symbols(done.index)
        self.stats.update(symbolpass.summary(done, t0))
        self._save_symbols = done.save

    def save_symbols(self) -> None:
        """Write the symbol cache an :meth:`index_symbols` with ``defer_save`` left to write
        (``stats['cacheSaved']`` then says whether it was written); no-op otherwise."""
        save, self._save_symbols = self._save_symbols, None
        if save is not None:
            self.stats["cacheSaved"] = save()

    def _set_kind(self, rel: str, kind: Kind) -> None:
        old = self._kind.get(rel)
        if old == kind:
            return
        self._kind[rel] = kind
        if old is not None:
            sorted_remove(self._by_kind.get(old), rel)
        bisect.insort(self._by_kind.setdefault(kind, []), rel)

    def _set_time(self, rel: str, t: float | None) -> None:
        """Give ``rel`` the change time ``t`` (``None``: forget it), keeping the distinct
        times and their counts (O(log n) plus a list move; no re-rank)."""
        old = self._time.pop(rel, None) if t is None else self._time.get(rel)
        if old is not None:
            left = self._stamps.get(old, 0) - 1
            if left <= 0:
                self._stamps.pop(old, None)
                sorted_remove(self._neg, -old)
            else:
                self._stamps[old] = left
        if t is None:
            return
        self._time[rel] = t
        count = self._stamps.get(t, 0)
        self._stamps[t] = count + 1
        if count == 0:
            bisect.insort(self._neg, -t)

    def retime(self, times: dict[str, float]) -> None:
        """Give each listed path of ``times`` that change time (git's history moved since the
        listing was kept: ``GraphBuilder._verify``). O(k log n)."""
        with self._lock:
            for rel, t in times.items():
                if self._time.get(rel, t) != t:
                    self._set_time(rel, t)

    def listing(self) -> Listing | None:
        """The listing now with its stats and change times, for the listing cache; ``None`` when
        its stats were never taken (no symbol cache asked for them)."""
        with self._lock:
            if (stats := self._stats) is None or stats.files is not self.files or self.time_source == "none":
                return None
            copy = stats.copy(list(self.files))
            return Listing(copy, list(map(self._time.__getitem__, copy.files)), self.time_source)

    def rank(self, path: str) -> int:
        """The dense recency rank of ``path`` (0 = the newest change time; a missing time counts
        as the oldest, 0.0)."""
        return bisect.bisect_left(self._neg, -self._time.get(path, 0.0))

    # ------------------------------------------------------------------ lookups

    def __len__(self) -> int:
        return len(self.files)

    def node(self, path: str) -> FileNode | None:
        """The node of the repo-relative POSIX ``path``, or ``None``."""
        kind = self._kind.get(path)
        if kind is None:
            return None
        return FileNode(path, kind, depth(path), self.rank(path))

    def exists(self, path: str) -> bool:
        """Whether ``path`` is a node."""
        return path in self._kind

    def kind_map(self) -> dict[str, Kind]:
        """``{path: kind}`` of every node (the graph's own dict: read, never change it)."""
        return self._kind

    def by_kind(self, kind: str) -> list[str]:
        """The paths of one kind, sorted (a copy)."""
        return list(self._by_kind.get(kind, ()))

    def definitions(self, name: str) -> list[str]:
        """Files that define ``name`` (any language indexed), newest first then by path; ``[]``
        before the symbol index is ready."""
        idx = self.symbols
        files = idx.defs.get(name) if idx is not None else None
        if not files:
            return []
        times = self._time  # newest first = rank order (the rank is monotone in the time)
        return sorted(files, key=lambda f: (-times.get(f, 0.0), f))

    def usages(self, name: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` files that mention the identifier ``name`` but do not define it, best
        first: most occurrences, then newest, then path. ``[]`` before the index is ready."""
        if limit > USAGE_CACHE_DEPTH:
            return self._usages_uncached(name, limit)
        cached = self._usage_cache.get(name)
        if cached is None:
            cached = self._usages_uncached(name, USAGE_CACHE_DEPTH)
            if len(self._usage_cache) >= USAGE_CACHE_NAMES:
                self._usage_cache.clear()
            self._usage_cache[name] = cached
        return cached[:limit]

    def _usages_uncached(self, name: str, limit: int) -> list[str]:
        idx = self.symbols
        if idx is None or name not in idx.refs:
            return []
        posting, defs, times = idx.refs[name], idx.defs.get(name, ()), self._time
        return heapq.nsmallest(
            limit, (f for f in posting if f not in defs), key=lambda f: (-posting[f], -times.get(f, 0.0), f)
        )

    def proof(self, path: str, expected_kinds: Iterable[str] = ()) -> float:
        """The literal score (formula in the module docstring): 0.0 for a missing node."""
        kind = self._kind.get(path)
        if kind is None:
            return 0.0
        expected = tuple(expected_kinds)
        match = 1.0 if (not expected or kind in expected) else 0.0
        return PROOF_BASE + PROOF_KIND * match + PROOF_RECENCY * recency_score(self.rank(path))

    def status(self) -> dict[str, Any]:
        """Counts and timings for ``dsh/status``."""
        return {
            **self.stats,
            "files": len(self.files),
            "kinds": {k: len(v) for k, v in sorted(self._by_kind.items())},
            "symbols": len(self.symbols) if self.symbols is not None else None,
            "verified": self.verified,
        }

    # ------------------------------------------------------------------ refresh

    def refresh(self, changed: list[str] | None = None) -> WorkspaceGraph:
        """Bring the graph up to date. ``changed=None`` rebuilds everything (symbols too, if the
        index was built) and returns the new graph — callers keep the returned object. Otherwise
        each repo-relative (or absolute, under the root) path in ``changed`` is re-read: a file
        that exists (and is not ignored) becomes/stays a node, newest rank, symbols re-indexed;
        a missing one is dropped. Returns ``self`` then."""
        if changed is None:
            new = WorkspaceGraph.build(self.root, symbols=self.symbols is not None)
            self.__dict__.update({k: v for k, v in new.__dict__.items() if k != "_lock"})
            return self
        self.apply(changed)
        return self

    def apply(self, changed: Iterable[str], listed: Container[str] | None = None) -> GraphDelta:
        """Apply changed paths (as :meth:`refresh`) and say what changed: O(k log n) for k
        paths (sorted inserts, the change time's rank by bisect; no re-rank of every file).
        ``listed``: the paths a fresh listing of the tree holds (git's: tracked files its ignore
        rules leave out, or deleted and not staged), admitted as listed, not by the walk's rules."""
        now = time.time()
        added: set[str] = set()
        removed: set[str] = set()
        modified: set[str] = set()
        kinds: dict[str, Kind] = {}
        names: set[str] = set()
        linked: dict[str, bool] = {}  # a folder of this batch: a symlink, or under one
        batch, rules = dict.fromkeys(changed), self._rules
        with self._lock:
            self._stats_copied = False
            if any(raw.endswith(".gitignore") for raw in batch):
                rules.clear()
            for raw in batch:
                rel = relative(self.root, raw)
                if rel is None or rel in added or rel in removed or rel in modified:
                    continue
                before = self._kind.get(rel)
                defs = self.symbols.defined_in(rel) if self.symbols is not None else frozenset()
                full = self.root / rel
                if not through_link(self.root, rel.rpartition("/")[0], linked) and (
                    rel in listed if listed is not None else is_file(full) and not walk_ignores(self.root, rel, rules)
                ):
                    self._upsert(rel, full, now)
                    (modified if before is not None else added).add(rel)
                    if self._kind[rel] != before:
                        kinds[rel] = self._kind[rel]
                elif before is not None:
                    self._drop(rel)
                    removed.add(rel)
                else:
                    continue
                if self.symbols is not None:
                    names.update(defs ^ self.symbols.defined_in(rel))
            if added or removed or modified:
                self._usage_cache = {}
                self.walk = None  # the walk describes the tree before this batch (:meth:`unkept`)
                self._listed_changed |= bool(added or removed)
        return GraphDelta(frozenset(added), frozenset(removed), frozenset(modified), kinds, frozenset(names))

    def _upsert(self, rel: str, full: Path, now: float) -> None:
        st = stat_of(str(full))  # before the read: a file changed after it is parsed again later
        stat = None if st is None else (st.st_mtime_ns, st.st_size, st.st_ino)
        stats = self._stats_to_change()
        if rel not in self._kind:
            bisect.insort(self.files, rel)
            kind = classify(rel)
            self._kind[rel] = kind
            bisect.insort(self._by_kind.setdefault(kind, []), rel)
            if stats is not None:
                stats.insert(bisect.bisect_left(self.files, rel), st)
        elif stats is not None:
            stats.put(bisect.bisect_left(self.files, rel), st)
        self._set_time(rel, now)
        self._entries[rel] = None
        if self.symbols is not None and _symbol_candidate(rel, self._kind[rel]):
            data = _read(self.root, rel)
            if data is not None:
                syms = extract(rel, data)
                self.symbols.add(rel, syms)
                if syms.generated:
                    self._set_kind(rel, "generated")
                if stat is not None and stat[1] == len(data):
                    self._entries[rel] = (stat, sorted(syms.definitions), syms.tokens, syms.generated)

    def _drop(self, rel: str) -> None:
        kind = self._kind.pop(rel)
        self._set_time(rel, None)
        stats = self._stats_to_change()
        if stats is not None:
            i = bisect.bisect_left(self.files, rel)
            del self.files[i]
            stats.delete(i)
        else:
            sorted_remove(self.files, rel)
        sorted_remove(self._by_kind.get(kind), rel)
        self._entries[rel] = None
        if self.symbols is not None:
            self.symbols.remove(rel)

    def _stats_to_change(self) -> FileStats | None:
        """The listing's stats, for :meth:`apply` to change: a copy a batch (the columns copied
        at once, ~1 ms for 100k files), so that stats handed out before (to a content sync, the
        past listing the walk after ready compares with) never change; ``None`` when there
        are none for the listing as it is (taken again on first use)."""
        stats = self._stats
        if stats is None or stats.files is not self.files or len(stats) != len(self.files):
            self._stats = None
            return None
        if not self._stats_copied:
            stats = self._stats = stats.copy()
            self._stats_copied = True
        return stats

    def unkept(self, listing: bool) -> Unkept:
        """What the caches lack since the last call (then forgotten): the symbol entries of the
        changed paths (``journal.py``), their rows of the listing (with ``listing``, its stats
        whole: ``listingjournal.py``), and the paths with their kinds (``classify``'s) when a
        path came or went (``kindcache.py``): O(files), a copy under the lock; else O(changed)."""
        with self._lock:
            out = Unkept(self._entries)
            self._entries = {}
            if self._listed_changed:
                self._listed_changed = False
                known = self._kind
                files = list(self.files)
                out.kinds = (files, [classify(f) if known[f] == "generated" else known[f] for f in files])
            if listing and out.entries:  # (a listing's source: the caller's ``listing``)
                out.rows = rows_of(self._stats, self.files, self._time, out.entries)
        return out


@dataclass
class Unkept:
    """What :meth:`WorkspaceGraph.unkept` gives: ``entries`` for the symbol cache's journal,
    ``rows`` for the listing's, ``kinds`` (paths, kinds) for the kind cache."""

    entries: dict[str, Any]
    rows: Changes | None = None
    kinds: tuple[list[str], list[Kind]] | None = None


def _read(root: Path, rel: str) -> bytes | None:
    """A code file's bytes through :mod:`.fsguard` (regular files inside the workspace only);
    ``None`` for anything refused, unreadable or over :data:`MAX_FILE_BYTES`."""
    return fsguard.read_or_none(root, rel, MAX_FILE_BYTES)
