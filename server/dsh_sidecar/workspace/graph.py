"""The workspace graph projection: every file as a node (kind, depth, recency rank) plus the
symbol index, and the proof score the suggester's seed and sticky section read from it.

Nodes come from :func:`~dsh_sidecar.workspace.recency.git_scan` (git-tracked plus untracked
not ignored) or, outside git, :func:`~dsh_sidecar.workspace.files.walk_files` (a walk honouring
the root's and nested ``.gitignore`` files); kinds from :mod:`.kinds`; recency ranks from
:mod:`.recency`; definitions and usages from :mod:`.symbols` (kept on disk by :mod:`.cache`).
A :meth:`WorkspaceGraph.refresh` of single paths re-reads just those files; a new path is
admitted unless the root ``.gitignore`` or :data:`~dsh_sidecar.workspace.files.SKIP_DIRS`
excludes it (a full rebuild applies every ignore rule).

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

import heapq
import logging
import math
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.cache import Entry, SymbolCache
from dsh_sidecar.workspace.files import MAX_FILES, MAX_IGNORE_BYTES, SKIP_DIRS, walk_files
from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS, Kind, classify, depth
from dsh_sidecar.workspace.recency import dense_ranks, git_scan
from dsh_sidecar.workspace.symbols import MAX_FILE_BYTES, FileSymbols, SymbolIndex, extension, extract
from dsh_sidecar.workspace.wildmatch import ignore_spec

if TYPE_CHECKING:  # annotations only (wildmatch imports it when a spec is built)
    import pathspec

log = logging.getLogger(__name__)

#: Proof weights (ours, documented in the module docstring).
PROOF_BASE: Final = 0.4
PROOF_KIND: Final = 0.4
PROOF_RECENCY: Final = 0.2
#: Most files the symbol index reads (newest first), and its time budget in seconds.
MAX_SYMBOL_FILES: Final = 50_000
SYMBOL_BUDGET_S: Final = 30.0
#: Files of the symbol pass between two GIL hand-overs to the request thread (``time.sleep(0)``):
#: a waiting ``dsh/postExecute`` then waits about one file's parse, not the 5 ms switch interval.
YIELD_EVERY: Final = 4
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


def recency_score(rank: int) -> float:
    """``1 / (1 + log2(1 + rank))``: 1.0 for rank 0, 0.5 for rank 1."""
    return 1.0 / (1.0 + math.log2(1 + rank))


def _symbol_candidate(path: str, kind: str) -> bool:
    return kind in ("source", "test") and extension(path) in SOURCE_EXTENSIONS


#: Items per slice of a bulk dict build on a builder thread (:func:`_sliced_dict`).
SLICE: Final = 8192


def _sliced_dict(keys: list[str], values: list[Any]) -> dict[str, Any]:
    """``dict(zip(keys, values))`` built slice by slice: one ``dict(zip(…))`` call over 200,000
    items runs in C for 150–330 ms on this machine without releasing the GIL, which stops the
    server's event loop that long; between slices the interpreter can switch threads."""
    out: dict[str, Any] = {}
    for i in range(0, len(keys), SLICE):
        out.update(zip(keys[i : i + SLICE], values[i : i + SLICE]))
    return out


class WorkspaceGraph:
    """The projection of one workspace (see the module docstring). Build with :meth:`build`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: list[str] = []
        self._kind: dict[str, Kind] = {}
        self._time: dict[str, float] = {}
        self._rank: dict[str, int] = {}
        self._by_kind: dict[str, list[str]] = {}
        self.symbols: SymbolIndex | None = None
        self.time_source = "none"
        self.stats: dict[str, Any] = {}
        self._usage_cache: dict[str, list[str]] = {}
        self._lock = threading.RLock()
        self._ignore: pathspec.PathSpec | None = None

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
    def build_files(cls, root: Path) -> WorkspaceGraph:
        """The file-level graph only (nodes, kinds, depths, recency ranks; no symbols)."""
        t0 = time.perf_counter()
        times: dict[str, float] = {}
        source = "none"
        scan = git_scan(root) if root.is_dir() else None
        if scan is not None:
            files, times = scan
            source = "git"
        elif root.is_dir():
            pairs = walk_files(root, mtimes=True)
            files = [rel for rel, _ in pairs]
            times = dict(pairs)
            source = "mtime"
        else:
            files = []
        graph = cls.from_listing(root, files, times, source)
        graph.stats["scanMs"] = round((time.perf_counter() - t0) * 1000 - graph.stats["buildMs"], 1)
        graph.stats["buildMs"] = round((time.perf_counter() - t0) * 1000, 1)
        return graph

    @classmethod
    def from_listing(
        cls, root: Path, files: list[str], times: dict[str, float], source: str = "given"
    ) -> WorkspaceGraph:
        """The file-level graph of a given listing (repo-relative POSIX paths, at most
        :data:`~dsh_sidecar.workspace.files.MAX_FILES` kept) and change times (Unix seconds;
        a missing time counts as the oldest)."""
        t0 = time.perf_counter()
        graph = cls(root)
        files = sorted(dict.fromkeys(files))[:MAX_FILES]
        kinds = list(map(classify, files))
        tget = times.get
        stamps = [tget(f, 0.0) for f in files]
        rank_of = {t: i for i, t in enumerate(sorted(set(stamps), reverse=True))}  # dense ranks
        graph.files = files
        graph._kind = _sliced_dict(files, kinds)
        graph._time = _sliced_dict(files, stamps)
        graph._rank = _sliced_dict(files, [rank_of[t] for t in stamps])
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

    def index_symbols(
        self,
        *,
        progress: Progress | None = None,
        cancel: threading.Event | None = None,
        cache: SymbolCache | None = None,
    ) -> None:
        """Build the symbol index over the code files, newest first, within
        :data:`MAX_SYMBOL_FILES` and :data:`SYMBOL_BUDGET_S`; the index is published only
        when complete (or cut by the budget/cancel, then ``stats['symbolsTruncated']``).
        With ``cache``, unchanged files (same mtime and size) come from it, and the cache is
        rewritten when anything changed."""
        t0 = time.perf_counter()
        todo = [f for f in self.files if _symbol_candidate(f, self._kind[f])]
        todo.sort(key=lambda f: (self._rank[f], f))
        truncated = len(todo) > MAX_SYMBOL_FILES
        todo = todo[:MAX_SYMBOL_FILES]
        total = len(todo)
        if progress is not None:
            progress(0, total)
        old = cache.load() if cache is not None else {}
        new: dict[str, Entry] = {}
        index = SymbolIndex()
        base = str(self.root) + os.sep
        step = max(1, total // 100)
        hits = 0
        for i, rel in enumerate(todo, 1):
            if (cancel is not None and cancel.is_set()) or time.perf_counter() - t0 > SYMBOL_BUDGET_S:
                truncated = True
                break
            if i % YIELD_EVERY == 0:
                time.sleep(0)  # hand the GIL to a waiting request thread (no call waits a switch interval)
            symbols = None
            try:
                st = os.stat(base + rel)
            except OSError:
                st = None
            if st is not None and st.st_size <= MAX_FILE_BYTES:
                hit = old.get(rel)
                if hit is not None and hit[0] == st.st_mtime_ns and hit[1] == st.st_size:
                    symbols = FileSymbols(frozenset(hit[2]), hit[3], hit[4], parser="cache")
                    hits += 1
                else:
                    data = _read(self.root, rel)
                    symbols = extract(rel, data) if data is not None else None
            if symbols is not None:
                index.add(rel, symbols)
                if cache is not None and st is not None:  # symbols come only from a file stat() found
                    new[rel] = (
                        st.st_mtime_ns,
                        st.st_size,
                        sorted(symbols.definitions),
                        symbols.tokens,
                        symbols.generated,
                    )
            if progress is not None and (i % step == 0 or i == total):
                progress(i, total)
        with self._lock:
            for rel in index.generated:
                self._set_kind(rel, "generated")
            self.symbols = index
            self._usage_cache = {}
        saved = False
        if cache is not None and not truncated and (hits != len(new) or len(old) != len(new)):
            saved = cache.save(new)
        self.stats.update(
            symbolFiles=len(index),
            symbolMs=round((time.perf_counter() - t0) * 1000, 1),
            symbolsTruncated=truncated,
            parsers=dict(index.parsers),
            cacheHits=hits,
            cacheSaved=saved,
        )

    def _reindex_kinds(self) -> None:
        by_kind: dict[str, list[str]] = {}
        for f in self.files:
            by_kind.setdefault(self._kind[f], []).append(f)
        self._by_kind = by_kind

    def _set_kind(self, rel: str, kind: Kind) -> None:
        old = self._kind.get(rel)
        if old == kind:
            return
        self._kind[rel] = kind
        if old is not None and rel in self._by_kind.get(old, ()):
            self._by_kind[old].remove(rel)
        self._by_kind.setdefault(kind, []).append(rel)
        self._by_kind[kind].sort()

    # ------------------------------------------------------------------ lookups

    def __len__(self) -> int:
        return len(self.files)

    def node(self, path: str) -> FileNode | None:
        """The node of the repo-relative POSIX ``path``, or ``None``."""
        kind = self._kind.get(path)
        if kind is None:
            return None
        return FileNode(path, kind, depth(path), self._rank.get(path, 0))

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
        rank = self._rank
        return sorted(files, key=lambda f: (rank.get(f, 0), f))

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
        posting, defs, rank = idx.refs[name], idx.defs.get(name, ()), self._rank
        return heapq.nsmallest(
            limit, (f for f in posting if f not in defs), key=lambda f: (-posting[f], rank.get(f, 0), f)
        )

    def proof(self, path: str, expected_kinds: Iterable[str] = ()) -> float:
        """The literal score (formula in the module docstring): 0.0 for a missing node."""
        kind = self._kind.get(path)
        if kind is None:
            return 0.0
        expected = tuple(expected_kinds)
        match = 1.0 if (not expected or kind in expected) else 0.0
        return PROOF_BASE + PROOF_KIND * match + PROOF_RECENCY * recency_score(self._rank.get(path, 0))

    def status(self) -> dict[str, Any]:
        """Counts and timings for ``dsh/status``."""
        return {
            **self.stats,
            "files": len(self.files),
            "kinds": {k: len(v) for k, v in sorted(self._by_kind.items())},
            "symbols": len(self.symbols) if self.symbols is not None else None,
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
        now = time.time()
        with self._lock:
            touched = False
            for raw in changed:
                rel = self.relative(raw)
                if rel is None:
                    continue
                full = self.root / rel
                if full.is_file() and not self._ignored(rel):
                    touched |= self._upsert(rel, full, now)
                elif rel in self._kind:
                    self._drop(rel)
                    touched = True
            if touched:
                self._rank = dense_ranks(self._time, self.files)
                self._usage_cache = {}
        return self

    def relative(self, raw: str) -> str | None:
        """``raw`` (repo-relative, or absolute under the root) as a repo-relative POSIX path;
        ``None`` outside the workspace."""
        p = raw.replace(os.sep, "/")
        if os.path.isabs(p):
            try:
                p = Path(p).resolve().relative_to(self.root.resolve()).as_posix()
            except (ValueError, OSError):
                return None
        while p.startswith("./"):
            p = p[2:]
        if not p or p.startswith("../") or "/../" in p or p == "..":
            return None
        return p

    def _ignored(self, rel: str) -> bool:
        if any(part in SKIP_DIRS for part in rel.split("/")[:-1]):
            return True
        if self._ignore is None:
            lines: list[str] = []
            try:
                lines = fsguard.read_text(self.root, ".gitignore", MAX_IGNORE_BYTES).splitlines()
            except OSError:
                pass
            try:
                self._ignore = ignore_spec(lines)  # RE2: linear in the path length
            except Exception:
                self._ignore = ignore_spec([])
        return self._ignore.match_file(rel)

    def _upsert(self, rel: str, full: Path, now: float) -> bool:
        if rel not in self._kind:
            self.files.append(rel)
            self.files.sort()
            kind = classify(rel)
            self._kind[rel] = kind
            self._by_kind.setdefault(kind, []).append(rel)
            self._by_kind[kind].sort()
        self._time[rel] = now
        if self.symbols is not None and _symbol_candidate(rel, self._kind[rel]):
            data = _read(self.root, rel)
            if data is not None:
                syms = extract(rel, data)
                self.symbols.add(rel, syms)
                if syms.generated:
                    self._set_kind(rel, "generated")
        return True

    def _drop(self, rel: str) -> None:
        kind = self._kind.pop(rel)
        self._time.pop(rel, None)
        self._rank.pop(rel, None)
        self.files.remove(rel)
        if rel in self._by_kind.get(kind, ()):
            self._by_kind[kind].remove(rel)
        if self.symbols is not None:
            self.symbols.remove(rel)


def _read(root: Path, rel: str) -> bytes | None:
    """A code file's bytes through :mod:`.fsguard` (regular files inside the workspace only);
    ``None`` for anything refused, unreadable or over :data:`MAX_FILE_BYTES`."""
    return fsguard.read_or_none(root, rel, MAX_FILE_BYTES)
