"""Resolve an intent's candidates against the workspace: which targets really exist.

Sources (``packs.Candidate``):

* a **path** or glob (gitwildmatch, as in ``.gitignore``), optionally with a ``contains``
  regex the file must match — resolved once per activation (:class:`FileIndex` answers a glob
  from a basename index, never by walking the tree);
* a **kind** (graph query): the files of a path kind or content fact (``workspace/kinds.py``,
  ``workspace/content.py``), the project's own shallow files first — resolved once per
  activation and again when the facts change; with ``match: terms`` only the files the content
  index matches with the call's terms, BM25 best first (per call);
* a **symbol** relation (definitions/usages of the searched identifier, per call,
  :func:`resolve_symbols`), ranked by :func:`rank_definitions`;
* the call's own **results** (per call, :func:`resolve_results`).

Only existing targets inside the workspace are emitted, each with its pack reason. Scores follow
the plan (``score = prior × literal × scope``): literal 0.5 and scope 1.0 while nothing proves
a candidate (plan, "The graph projection"); a symbol-index hit, a content fact, a topic match
or a listed result is a proof (literal 1.0; a topic match scales it by its BM25 share of the
best match). Order is by score, then pack order.
"""

from __future__ import annotations

import bisect
import fnmatch
import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, Protocol, TypeVar

from dsh_sidecar.suggester.packs import Candidate, budget_exhausted, check_regex, search
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.facts import DOC_EXTENSIONS
from dsh_sidecar.workspace.kinds import TEST_DIRS, code_language_of
from dsh_sidecar.workspace.wildmatch import glob_spec, ignore_matcher

if TYPE_CHECKING:  # annotations only; the patterns are compiled in .packs
    import regex

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
#: Least share of source files that makes a folder a code folder (:meth:`FileIndex.code_folder`).
CODE_SHARE: Final = 0.5


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
        self.file_set: AbstractSet[str] = frozenset(self.files)
        by_name: dict[str, list[str]] = defaultdict(list)
        by_dir: dict[str, list[str]] = defaultdict(list)
        for rel in self.files:
            folder, _, name = rel.rpartition("/")
            by_name[name].append(rel)
            by_dir[folder].append(rel)
        self.by_name = dict(by_name)
        self.by_dir = dict(by_dir)
        self.names = sorted(self.by_name)
        #: Most ``/`` in one listed path (no longer suffix of a path can be a listed file).
        self.depth = max((rel.count("/") for rel in self.files), default=0)
        self.refused: list[str] = []
        self._inside: dict[str, bool] = {}
        self._sorted = sorted(self.files)
        #: Path matches spent by :meth:`glob` so far, and whether a glob was cut by the bound.
        self.glob_work = 0
        self.glob_cut = False
        #: ``{path: kind}`` (``workspace/kinds.py``); filled by the owner from the graph.
        self.kinds: dict[str, str] = {}
        #: ``{fact or kind: [paths]}``: content facts and path kinds (``workspace/content.py``).
        self.facts: dict[str, list[str]] = {}
        self._members: dict[str, tuple[list[str], int, AbstractSet[str]]] = {}
        #: ``{(pattern, path): whether the file matched}`` of the ``contains`` checks made: a
        #: preparation after a change reads again only the files that changed
        self.contains_seen: dict[tuple[str, str], bool] = {}

    def has_dir(self, rel: str) -> bool:
        """Whether ``rel`` is a folder holding at least one listed file (at any depth)."""
        rel = rel.strip("/")
        if not rel:
            return True
        if rel in self.by_dir:
            return True
        prefix = rel + "/"
        i = bisect.bisect_left(self._sorted, prefix)
        return i < len(self._sorted) and self._sorted[i].startswith(prefix)

    def code_folder(self, rel: str, sample: int = 200) -> bool:
        """Whether ``rel`` is a folder of the project's code: below the root, not in the test
        tree, and at least :data:`CODE_SHARE` of its first ``sample`` listed files (path
        order) are of kind ``source``."""
        rel = rel.strip("/")
        if not rel or rel == "." or in_test_tree(rel + "/x"):
            return False
        prefix = rel + "/"
        i = bisect.bisect_left(self._sorted, prefix)
        files: list[str] = []
        while i < len(self._sorted) and len(files) < sample and self._sorted[i].startswith(prefix):
            files.append(self._sorted[i])
            i += 1
        return bool(files) and sum(self.kinds.get(f) == "source" for f in files) >= CODE_SHARE * len(files)

    def kind(self, rel: str) -> str:
        """The path kind of ``rel`` (``other`` when unknown)."""
        return self.kinds.get(rel, "other")

    def with_kind(self, kind: str) -> list[str]:
        """Paths of a fact or path kind."""
        return self.facts.get(kind, [])

    def kind_members(self, kind: str) -> AbstractSet[str]:
        """:meth:`with_kind` as a set, built once per list (a call filtering its listed paths
        by kind would otherwise build a set of, say, 50,000 test paths each time: 2 ms on a
        200k-file tree, bench/postexecute_latency.py)."""
        paths = self.facts.get(kind, [])
        cached = self._members.get(kind)
        if cached is None or cached[0] is not paths or cached[1] != len(paths):
            cached = self._members[kind] = (paths, len(paths), frozenset(paths))
        return cached[2]

    def with_changes(
        self,
        added: Iterable[str],
        removed: Iterable[str],
        kinds: Mapping[str, str],
        modified: Iterable[str] = (),
    ) -> FileIndex:
        """A new index: this one with ``added`` listed, ``removed`` forgotten and the path kinds
        of ``kinds`` set; this one is left as it is (copy on write: a call reading it never sees
        half a change). The per-name and per-folder lists of the changed paths are copied, the
        flat tables (the listing, its set, the kinds) copied in slices that hand the GIL over
        (pointers only: the paths are shared), or shared when no path came, went or changed
        kind (files edited in place, the common change); ``facts`` are the caller's to set. What was
        learnt of paths that did not change (``modified`` did: their contents) carries over:
        whether they resolve inside the workspace, their ``contains`` answers."""
        added = [p for p in dict.fromkeys(added) if p not in self.file_set]
        gone = {p for p in removed if p in self.file_set}
        kinds = {p: k for p, k in kinds.items() if self.kinds.get(p) != k}
        new = FileIndex.__new__(FileIndex)
        new.root = self.root
        new.glob_work, new.glob_cut = 0, False
        new.refused = list(self.refused)
        new.facts = self.facts
        new._members = dict(self._members)  # valid while a fact's list is the same object
        changed = gone | set(added) | set(kinds) | set(modified)
        new._inside = {k: v for k, v in self._inside.items() if k not in changed}
        new.contains_seen = {k: v for k, v in self.contains_seen.items() if k[1] not in changed}
        if not added and not gone and not kinds:  # files edited in place: the tables are shared
            new.files, new._sorted, new.file_set, new.kinds = self.files, self._sorted, self.file_set, self.kinds
            new.by_name, new.by_dir, new.names, new.depth = self.by_name, self.by_dir, self.names, self.depth
            return new
        listing = sliced_copy(self._sorted)
        for rel in gone:
            i = bisect.bisect_left(listing, rel)
            if i < len(listing) and listing[i] == rel:
                del listing[i]
        for rel in added:
            bisect.insort(listing, rel)
        new.files = new._sorted = listing
        new.file_set = _sliced_set(self.file_set, added, gone)
        new.kinds = sliced_dict_copy(self.kinds)
        for rel in gone:
            new.kinds.pop(rel, None)
        new.kinds.update(kinds)
        by_name, by_dir = sliced_dict_copy(self.by_name), sliced_dict_copy(self.by_dir)
        names = self.names
        for rel in gone:
            folder, _, name = rel.rpartition("/")
            for table, key in ((by_name, name), (by_dir, folder)):
                left = [p for p in table.get(key, ()) if p != rel]
                if left:
                    table[key] = left
                else:
                    table.pop(key, None)
            if name not in by_name:  # its last file: the name goes from the sorted names
                names = list(names) if names is self.names else names
                i = bisect.bisect_left(names, name)
                if i < len(names) and names[i] == name:
                    del names[i]
        for rel in added:
            folder, _, name = rel.rpartition("/")
            if name not in by_name:
                names = list(names) if names is self.names else names
                bisect.insort(names, name)
            by_name[name] = [*by_name.get(name, ()), rel]
            by_dir[folder] = [*by_dir.get(folder, ()), rel]
        new.by_name, new.by_dir, new.names = by_name, by_dir, names
        new.depth = max([self.depth, *(rel.count("/") for rel in added)])
        return new

    def follow_members(self, kind: str, before: FileIndex, added: Iterable[str], removed: AbstractSet[str]) -> None:
        """Give :meth:`kind_members` of ``kind`` (whose list changed from ``before``'s by
        ``added`` and ``removed``) its set now, built off the calls' path: the set ``before``
        had, copied in slices, and changed (a call would otherwise build it whole: ~3 ms for
        50,000 paths with the GIL held). Nothing when ``before`` never built it."""
        old = before._members.get(kind)
        paths = self.facts.get(kind)
        if old is None or paths is None:
            return
        self._members[kind] = (paths, len(paths), _sliced_set(old[2], added, removed))

    def add(self, rel: str) -> None:
        """List a new file (a ``didChangeWatchedFiles`` creation)."""
        if rel in self.file_set:
            return
        self.files.append(rel)
        self.file_set = self.file_set | {rel}
        folder, _, name = rel.rpartition("/")
        if name not in self.by_name:
            bisect.insort(self.names, name)
        self.by_name.setdefault(name, []).append(rel)
        self.by_dir.setdefault(folder, []).append(rel)
        bisect.insort(self._sorted, rel)
        self._inside.pop(rel, None)

    def remove(self, rel: str) -> None:
        """Forget a deleted file."""
        if rel not in self.file_set:
            return
        self.file_set = self.file_set - {rel}
        self.files.remove(rel)
        folder, _, name = rel.rpartition("/")
        for table in (self.by_name.get(name), self.by_dir.get(folder), self._sorted):
            if table is not None and rel in table:
                table.remove(rel)
        self._inside.pop(rel, None)

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
        index share :data:`MAX_GLOB_WORK` path matches (docs/SECURITY.md, class 7: 1,000 candidates on
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
    seen = index.contains_seen.get((pattern.pattern, rel))
    if seen is not None:  # the file has not changed since it was read
        return seen
    if budget_exhausted():  # no reading either once untrusted regexes have used their time
        return False
    try:  # regular files inside the workspace only (symlinks out, FIFOs, devices: refused)
        text = fsguard.read_text(index.root, rel, MAX_CONTAINS_BYTES)
    except OSError:
        return False
    found = index.contains_seen[(pattern.pattern, rel)] = search(pattern, text)
    return found


_V = TypeVar("_V")
#: Items copied per slice by :func:`sliced_copy`, :func:`_sliced_set` and :func:`sliced_dict_copy`.
SLICE: Final = 8192


def sliced_copy(items: list[str]) -> list[str]:
    """A copy of ``items`` made slice by slice, the GIL handed over between slices (one C copy
    of 100,000 pointers holds it ~1 ms on a busy machine: the event loop's calls wait that long)."""
    out: list[str] = []
    for i in range(0, len(items), SLICE):
        out += items[i : i + SLICE]
        time.sleep(0)
    return out


def _sliced_set(items: AbstractSet[str], added: Iterable[str], removed: AbstractSet[str]) -> set[str]:
    """``items | added - removed``, copied slice by slice (:func:`sliced_copy`)."""
    elements = list(items)  # one C copy of the pointers, then the hashing in slices
    out: set[str] = set()
    for i in range(0, len(elements), SLICE):
        out.update(elements[i : i + SLICE])
        time.sleep(0)
    out.update(added)
    out.difference_update(removed)
    return out


def sliced_dict_copy(items: dict[str, _V]) -> dict[str, _V]:
    """A copy of ``items``, slice by slice (:func:`sliced_copy`)."""
    keys, values = list(items), list(items.values())  # C copies of the pointers, then slices
    out: dict[str, _V] = {}
    for i in range(0, len(keys), SLICE):
        out.update(zip(keys[i : i + SLICE], values[i : i + SLICE]))
        time.sleep(0)
    return out


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
    """Whether ``rel`` lies in a fixture/example/vendor folder (``tests/data/`` included; names
    in any case)."""
    parts = [p.lower() for p in rel.split("/")[:-1]]
    if any(p in FIXTURE_DIRS for p in parts):
        return True
    return any(parts[i] in ("tests", "test") and parts[i + 1] == "data" for i in range(len(parts) - 1))


#: Intents about the project as a whole: their targets are the project's own files, never a
#: copy inside its test tree (a fixture workspace's ``pyproject.toml``, a Sphinx test root's
#: ``conf.py``, a test crate's ``Cargo.toml``) unless the call scopes into that tree.
PROJECT_INTENTS: Final = frozenset({"Version", "Ledger", "Dependency", "Path", "Config", "Owner", "Doc"})
#: Folder names (leading/trailing ``_`` ignored: ``__fixtures__``, ``_examples``, ``__tests__``)
#: whose files are test fixtures, test data, examples or vendored code. Chosen from the corpus
#: checkouts (docs/corpus.md, "Test trees"): every manifest, changelog, ``conf.py``, tox/setup
#: config or CODEOWNERS found below one of them is a fixture, none is the project's own.
TEST_TREE_DIRS: Final = TEST_DIRS | FIXTURE_DIRS


def in_test_tree(rel: str) -> bool:
    """Whether ``rel`` lies below a test, fixture, example or vendor folder
    (:data:`TEST_TREE_DIRS`, any depth, any case: Swift's ``Tests/``, ``Vendor/``;
    ``tests/data/`` included)."""
    return any(p.strip("_").lower() in TEST_TREE_DIRS or p.lower() in TEST_TREE_DIRS for p in rel.split("/")[:-1])


def scoped_into(rel: str, scopes: Iterable[str]) -> bool:
    """Whether a call scoped to ``scopes`` (folders or files, repo-relative) looks inside the
    test tree holding ``rel``: some scope lies in the test tree and ``rel`` is at or below it."""
    for s in scopes:
        s = s.strip("/")
        if not s or s == "." or not (in_test_tree(s + "/x")):
            continue
        if rel == s or rel.startswith(s + "/"):
            return True
    return False


def _project_files_first(paths: list[str]) -> list[list[str]]:
    """A glob's matches as two tiers: the project's own files, then those in fixture folders.
    The second tier is used only when nothing of the first qualified (a Version glob must name
    the package's ``__init__.py``, not a test fixture's)."""
    own = [p for p in paths if not is_fixture(p)]
    return [own, [p for p in paths if is_fixture(p)]] if len(own) < len(paths) else [paths]


def _project_order(paths: list[str]) -> list[str]:
    """The project's own files first (not fixtures/examples/vendored), then shallow before
    deep, then by path."""
    return sorted(paths, key=lambda p: (is_fixture(p), p.count("/"), p))


def resolve(candidates: list[Candidate], index: FileIndex) -> list[Target]:
    """Existing targets of the call-independent candidates (paths, globs, kinds without
    ``match``) in ``candidates``, best first, each path once."""
    found: list[tuple[float, int, Target]] = []
    for order, cand in enumerate(candidates):
        if cand.per_call:
            continue
        if cand.kind is not None:
            matched = 0
            for rel in _project_order(index.with_kind(cand.kind)):
                if not index.exists(rel) or not index.inside(rel):
                    continue
                score = cand.prior * PROVEN_LITERAL * NEUTRAL_SCOPE
                found.append((-score, order, Target(rel, cand.reason, score)))
                matched += 1
                if matched >= MAX_GLOB_MATCHES:
                    break
            continue
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
                if not index.inside(rel):
                    continue
                if contains is not None:
                    reads += 1
                    if reads > MAX_CONTAINS_READS:
                        break
                    if not _content_matches(index, rel, contains):
                        continue
                score = cand.prior * NEUTRAL_LITERAL * NEUTRAL_SCOPE
                found.append((-score, order, Target(rel, cand.reason, score)))
                matched += 1
                if matched >= MAX_GLOB_MATCHES:
                    break
    best: dict[str, tuple[float, int, Target]] = {}
    phrase: dict[str, tuple[float, str]] = {}  # the reason of the most confident (highest-prior) candidate
    for item in found:  # a path several candidates name keeps its best score (then first order)
        path = item[2].path
        old = best.get(path)
        if old is None or (item[0], item[1]) < (old[0], old[1]):
            best[path] = item
        prior = candidates[item[1]].prior
        if path not in phrase or prior > phrase[path][0]:
            phrase[path] = (prior, item[2].reason)
    ordered = sorted(best.values(), key=lambda t: (t[0], t[1]))
    return [Target(t.path, phrase[t.path][1], t.score) for _, _, t in ordered]


# ---------------------------------------------------------------------------- per call


#: Re-export hubs: a definition found here is demoted when the name is defined elsewhere too.
REEXPORT_NAMES: Final = frozenset(
    {"__init__.py", "index.ts", "index.js", "index.mjs", "index.tsx", "mod.rs", "lib.rs", "__init__.pyi"}
)


def is_test_path(rel: str) -> bool:
    """Whether ``rel`` is a test file by its folders or name."""
    parts = rel.split("/")
    if any(p in TEST_DIRS for p in parts[:-1]):
        return True
    name = parts[-1]
    return bool(re.match(r"^(test_.*|.*_test\.\w+|conftest\.py|.*\.(test|spec)\.\w+|.*Tests?\.\w+)$", name))


@dataclass(frozen=True)
class CallContext:
    """What ranking needs of the call: its languages, whether it scopes tests, the
    identifier, and the files it reads (never named back to it)."""

    languages: frozenset[str] = frozenset()
    tests: bool = False
    name: str | None = None
    reads: frozenset[str] = frozenset()


def rank_definitions(paths: list[str], ctx: CallContext) -> list[str]:
    """Definition files best first: the query's language, then non-test files (tests only
    when the call scopes tests), then the defining module before a re-export hub
    (``__init__.py``, ``index.ts``, ``mod.rs``…), the project's own before fixtures/vendored
    code, shallow before deep; stable otherwise (the index's recency order)."""
    if not paths:
        return []
    several = len(paths) > 1

    def key(item: tuple[int, str]) -> tuple[int, int, int, int, int, int]:
        order, rel = item
        lang = code_language_of(rel)
        return (
            0 if not ctx.languages or lang in ctx.languages else 1,
            0 if ctx.tests == is_test_path(rel) else 1,
            1 if several and rel.rsplit("/", 1)[-1] in REEXPORT_NAMES else 0,
            1 if is_fixture(rel) else 0,
            rel.count("/"),
            order,
        )

    return [rel for _, rel in sorted(enumerate(paths), key=key)]


def rank_usages(paths: list[str], ctx: CallContext) -> list[str]:
    """Call sites best first: the query's language; the project's code before tests (tests
    first when the call scopes tests); fixtures/vendored last; otherwise the index's order
    (most uses first)."""

    def key(item: tuple[int, str]) -> tuple[int, int, int, int]:
        order, rel = item
        lang = code_language_of(rel)
        return (
            0 if not ctx.languages or lang in ctx.languages else 1,
            0 if ctx.tests == is_test_path(rel) else 1,
            1 if is_fixture(rel) else 0,
            order,
        )

    return [rel for _, rel in sorted(enumerate(paths), key=key)]


def resolve_symbols(
    candidates: list[Candidate], symbols: SymbolIndex, name: str, index: FileIndex, ctx: CallContext | None = None
) -> list[Target]:
    """Targets of the symbol candidates for identifier ``name``: the files the index lists,
    existing and inside the workspace, ranked (:func:`rank_definitions`, :func:`rank_usages`),
    best first; ``{name}`` in a reason becomes ``name``."""
    ctx = ctx or CallContext(name=name)
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if cand.symbol is None:
            continue
        try:
            if cand.symbol == "definitions":
                paths = rank_definitions(list(symbols.definitions(name))[:200], ctx)
            else:
                paths = rank_usages(list(symbols.usages(name, MAX_GLOB_MATCHES)), ctx)
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


class ContentSearch(Protocol):
    """What topic matching reads of the content index."""

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]: ...


#: Most content-index hits a topic candidate looks at.
TOPIC_POOL: Final = 200
#: Least share of the best BM25 score a topic match needs to be listed.
TOPIC_MIN_SHARE: Final = 0.5


def resolve_topics(
    candidates: list[Candidate], content: ContentSearch | None, words: list[str], index: FileIndex
) -> list[Target]:
    """Targets of the ``kind`` + ``match: terms`` candidates: of the content index's BM25
    matches for ``words``, those of the candidate's kind, scored ``prior × s / s_best``; a
    match under :data:`TOPIC_MIN_SHARE` of the best is dropped."""
    wanted = [c for c in candidates if c.kind is not None and c.match == "terms"]
    if not wanted or content is None or not words:
        return []
    hits = content.search(words, TOPIC_POOL)
    if not hits:
        return []
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if cand not in wanted:
            continue
        members = index.kind_members(cand.kind or "")
        ranked = [(p, sc) for p, sc in hits if p in members and not is_fixture(p)]
        if not ranked:
            continue
        best = ranked[0][1] or 1.0
        for rank, (rel, sc) in enumerate(ranked[:MAX_GLOB_MATCHES]):
            share = sc / best
            if share < TOPIC_MIN_SHARE or rel in seen or not index.exists(rel) or not index.inside(rel):
                continue
            seen.add(rel)
            score = cand.prior * PROVEN_LITERAL * share
            found.append((-score, order, rank, Target(rel, cand.reason, score)))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t for *_, t in found]


def resolve_results(
    candidates: list[Candidate],
    listed: list[str],
    index: FileIndex,
    prefer: Callable[[list[str]], list[str]],
    name: str | None = None,
) -> list[Target]:
    """Targets of the ``results`` candidates: the call's listed paths that exist (of the
    candidate's kind when it has one), in the order ``prefer`` gives them; ``{name}`` in a
    reason becomes the searched identifier."""
    wanted = [c for c in candidates if c.results]
    if not wanted or not listed:
        return []
    present = [p for p in listed if index.exists(p) and index.inside(p)]
    found: list[tuple[float, int, int, Target]] = []
    seen: set[str] = set()
    for order, cand in enumerate(candidates):
        if not cand.results:
            continue
        pool = present
        if cand.kind is not None:
            members = index.kind_members(cand.kind)
            pool = [p for p in pool if p in members]
        for rank, rel in enumerate(prefer(pool)[:MAX_GLOB_MATCHES]):
            if rel in seen:
                continue
            seen.add(rel)
            score = cand.prior * PROVEN_LITERAL * NEUTRAL_SCOPE
            reason = cand.reason.replace("{name}", name) if name else cand.reason.replace(" {name}", "")
            found.append((-score, order, rank, Target(rel, reason.replace("{name}", "it"), score)))
    found.sort(key=lambda t: (t[0], t[1], t[2]))
    return [t for *_, t in found]


def merge(*groups: list[Target]) -> list[Target]:
    """Targets of several resolutions, each path once (its best score), best first (stable)."""
    best: dict[str, tuple[int, Target]] = {}
    pos = 0
    for group in groups:
        for t in group:
            old = best.get(t.path)
            if old is None or t.score > old[1].score:
                best[t.path] = (old[0] if old else pos, t)
            pos += 1
    return [t for _, t in sorted(best.values(), key=lambda x: (-x[1].score, x[0]))]


def is_doc_path(rel: str) -> bool:
    """Whether ``rel`` is a documentation file by extension."""
    return rel.lower().endswith(DOC_EXTENSIONS)
