"""Resolve an intent's candidate set against the workspace: which targets really exist.

A path candidate is a path or a glob (gitwildmatch, as in ``.gitignore``), optionally with a
``contains`` regex the file must match; a symbol candidate takes the files the workspace
symbol index lists for the searched identifier (``definitions`` or ``usages``). Only
existing targets inside the workspace are emitted, each with its pack reason. Scores follow
the plan's neutral values while no workspace graph proves a candidate: literal 0.5, scope
1.0, so ``score = prior × 0.5 × 1.0`` (plan, "The graph projection"); a symbol-index hit is
a graph proof (literal 1.0). Order is by score, then pack order.

Path candidates are resolved once per activation (:class:`FileIndex` answers a glob from a
basename index, never by walking the tree), symbol candidates once per identifier.
"""

from __future__ import annotations

import bisect
import fnmatch
import logging
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

import regex

from dsh_sidecar.suggester.packs import Candidate, budget_exhausted, check_regex, search
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.wildmatch import glob_spec, ignore_matcher

log = logging.getLogger(__name__)

#: Literal score of a candidate the graph does not prove (plan: "the documented neutral 0.5").
NEUTRAL_LITERAL: Final = 0.5
#: Literal score of a candidate the symbol index proves (plan: "the graph's proof").
PROVEN_LITERAL: Final = 1.0
#: Scope of a candidate without a graph (plan: "scope 1.0").
NEUTRAL_SCOPE: Final = 1.0
#: Path matches and names scanned all globs of one activation may spend (≈ 0.5–2 s on this machine
#: class; bench/attacks.py measures the 1,000-candidate case).
MAX_GLOB_WORK: Final = 300_000
#: Most files one glob or symbol candidate expands to.
MAX_GLOB_MATCHES: Final = 20
#: Most files whose content one ``contains`` candidate reads.
MAX_CONTAINS_READS: Final = 200
#: Largest file whose content a ``contains`` check reads, bytes (bigger files are skipped).
MAX_CONTAINS_BYTES: Final = 512 * 1024

_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class Target:
    """One resolved target: repo-relative path, reason phrase, score."""

    path: str
    reason: str
    score: float


class SymbolIndex(Protocol):
    """What the suggester reads of the workspace graph's symbol index (repo-relative paths)."""

    def definitions(self, name: str) -> list[str]: ...

    def usages(self, name: str, limit: int) -> list[str]: ...


class FileIndex:
    """The workspace's file list, indexed by folder and by basename, with an
    inside-the-workspace check. ``files`` are repo-relative POSIX paths (sorted); ``root``
    the resolved workspace folder. A glob is answered from the index (see :meth:`glob`),
    never by matching every file of a large tree.
    """

    def __init__(self, root: Path, files: Iterable[str]) -> None:
        self.root = root
        self.files = list(files)
        self.file_set = frozenset(self.files)
        by_name: dict[str, list[str]] = defaultdict(list)
        by_dir: dict[str, list[str]] = defaultdict(list)
        for rel in self.files:
            folder, _, name = rel.rpartition("/")
            by_name[name].append(rel)
            by_dir[folder].append(rel)
        self.by_name = dict(by_name)
        self.by_dir = dict(by_dir)
        self.names = sorted(self.by_name)
        self.refused: list[str] = []
        self._inside: dict[str, bool] = {}
        #: Path matches spent by :meth:`glob` so far, and whether a glob was cut by the bound.
        self.glob_work = 0
        self.glob_cut = False

    def _names_like(self, segment: str) -> list[str]:
        """Basenames matching one glob segment: a literal prefix is looked up by bisection."""
        cut = _GLOB_CHARS.search(segment)
        if cut is None:
            return [segment] if segment in self.by_name else []
        prefix = segment[: cut.start()]
        lo = bisect.bisect_left(self.names, prefix)
        hi = bisect.bisect_left(self.names, prefix + "\U0010ffff") if prefix else len(self.names)
        match = re.compile(fnmatch.translate(segment)).match  # linear since Python 3.9 (bpo-40480)
        self.glob_work += hi - lo  # names scanned count against MAX_GLOB_WORK
        return [n for n in self.names[lo:hi] if match(n)]

    def _pool(self, pattern: str) -> list[str]:
        folder, _, last = pattern.rpartition("/")
        if folder and not _GLOB_CHARS.search(folder):  # docs/*.md, .github/workflows/*.yml
            return self.by_dir.get(folder, [])
        if folder.startswith("**/") and not _GLOB_CHARS.search(folder[3:]) and _GLOB_CHARS.search(last):
            tail = folder[3:]  # **/testdata/*: the folders named so, at any depth
            return [p for d, ps in self.by_dir.items() if d == tail or d.endswith("/" + tail) for p in ps]
        return [p for n in self._names_like(last) for p in self.by_name[n]]

    def glob(self, pattern: str) -> list[str]:
        """Files matching a gitwildmatch ``pattern``, in listing (sorted) order. All globs of one
        index share :data:`MAX_GLOB_WORK` path matches (issue 13, class 7: 1,000 candidates on
        100k files took 39 s); past it a glob matches nothing and :attr:`glob_cut` is set."""
        if self.glob_work >= MAX_GLOB_WORK:
            self.glob_cut = True
            return []
        spec = glob_spec(pattern)  # RE2: an untrusted glob cannot backtrack
        pattern = pattern.lstrip("/")
        pool = self._pool(pattern)
        if self.glob_work + len(pool) > MAX_GLOB_WORK:
            self.glob_cut = True
            return []
        self.glob_work += len(pool)
        match = ignore_matcher(spec)  # one RE2 match per path
        return sorted(p for p in pool if match(p))

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` is a listed file."""
        return rel in self.file_set

    def inside(self, rel: str) -> bool:
        """Whether ``rel`` resolves inside the workspace (a symlink pointing out is refused,
        remembered in :attr:`refused`). Answers are cached per path."""
        known = self._inside.get(rel)
        if known is not None:
            return known
        ok = self._inside[rel] = self._check_inside(rel)
        return ok

    def _check_inside(self, rel: str) -> bool:
        try:
            real = (self.root / rel).resolve()
        except (OSError, RuntimeError):
            return False
        if real == self.root or self.root in real.parents:
            return True
        if rel not in self.refused:
            self.refused.append(rel)
        return False


def _content_matches(index: FileIndex, rel: str, pattern: regex.Pattern[str]) -> bool:
    if budget_exhausted():  # no reading either once untrusted regexes have used their time
        return False
    try:  # regular files inside the workspace only (symlinks out, FIFOs, devices: refused)
        text = fsguard.read_text(index.root, rel, MAX_CONTAINS_BYTES)
    except OSError:
        return False
    return search(pattern, text)


#: Folder names that hold test data, examples or vendored code, not the project's own files.
FIXTURE_DIRS: Final = frozenset(
    {
        "fixtures",
        "__fixtures__",
        "testdata",
        "test-data",
        "test_data",
        "examples",
        "vendor",
        "third_party",
        "node_modules",
    }
)


def is_fixture(rel: str) -> bool:
    """Whether ``rel`` lies in a fixture/example/vendor folder (``tests/data/`` included)."""
    parts = rel.split("/")[:-1]
    if any(p in FIXTURE_DIRS for p in parts):
        return True
    return any(parts[i] in ("tests", "test") and parts[i + 1] == "data" for i in range(len(parts) - 1))


def _project_files_first(paths: list[str]) -> list[list[str]]:
    """A glob's matches as two tiers: the project's own files, then those in fixture folders.
    The second tier is used only when nothing of the first qualified (a Version glob must name
    the package's ``__init__.py``, not a test fixture's)."""
    own = [p for p in paths if not is_fixture(p)]
    return [own, [p for p in paths if is_fixture(p)]] if len(own) < len(paths) else [paths]


def resolve(candidates: list[Candidate], index: FileIndex) -> list[Target]:
    """Existing targets of the path candidates in ``candidates``, best first, each path once.

    Symbol candidates are skipped (see :func:`resolve_symbols`).
    """
    found: list[tuple[float, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if cand.path is None:
            continue
        contains = check_regex(cand.contains) if cand.contains else None
        if _GLOB_CHARS.search(cand.path):
            tiers = _project_files_first(index.glob(cand.path))
        else:
            tiers = [[cand.path] if index.exists(cand.path) else []]
        matched = reads = 0
        for paths in tiers:
            if matched:
                break
            for rel in paths:
                if rel in seen or not index.inside(rel):
                    continue
                if contains is not None:
                    reads += 1
                    if reads > MAX_CONTAINS_READS:
                        break
                    if not _content_matches(index, rel, contains):
                        continue
                seen.add(rel)
                score = cand.prior * NEUTRAL_LITERAL * NEUTRAL_SCOPE
                found.append((-score, order, Target(rel, cand.reason, score)))
                matched += 1
                if matched >= MAX_GLOB_MATCHES:
                    break
    found.sort(key=lambda t: (t[0], t[1]))
    return [t for _, _, t in found]


def resolve_symbols(candidates: list[Candidate], symbols: SymbolIndex, name: str, index: FileIndex) -> list[Target]:
    """Targets of the symbol candidates for identifier ``name``: the files the index lists,
    existing and inside the workspace, best first; ``{name}`` in a reason becomes ``name``."""
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if cand.symbol is None:
            continue
        try:
            paths = (
                symbols.definitions(name) if cand.symbol == "definitions" else symbols.usages(name, MAX_GLOB_MATCHES)
            )
        except Exception:  # the graph is another core: a failure there is silence here
            log.warning("search-suggester: symbol index lookup failed for %r", name, exc_info=True)
            paths = []
        for rank, rel in enumerate(paths[:MAX_GLOB_MATCHES]):
            if not isinstance(rel, str) or rel in seen or not index.exists(rel) or not index.inside(rel):
                continue
            seen.add(rel)
            score = cand.prior * PROVEN_LITERAL * NEUTRAL_SCOPE
            found.append((-score, order, rank, Target(rel, cand.reason.replace("{name}", name), score)))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t for *_, t in found]
