"""The workspace's files as the suggester resolves candidates against them (:class:`FileIndex`):
a basename index that answers a glob without walking the tree, the files of each path kind,
folders, and the updates of a listing that changed (copied in slices, so a big workspace never
holds the GIL for one long copy).
"""

from __future__ import annotations

import bisect
import fnmatch
import functools
import logging
import os
import re
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TypeVar

from dsh_sidecar.suggester.meanttables import NOTHING, Listed, MeantTables, ancestors
from dsh_sidecar.workspace import fsguard
from dsh_sidecar.workspace.kinds import TEST_DIRS
from dsh_sidecar.workspace.wildmatch import alternation_matcher, glob_spec, ignore_matcher, include_alternation

if TYPE_CHECKING:
    from dsh_sidecar.suggester.meantcache import MeantCache

log = logging.getLogger(__name__)

#: Path matches and names scanned all globs of one activation may spend (≈ 0.5–2 s on this machine
#: class; bench/attacks.py measures the 1,000-candidate case).
MAX_GLOB_WORK: Final = 300_000
#: Most files one glob or symbol candidate expands to.
MAX_GLOB_MATCHES: Final = 20
#: Most files whose content one ``contains`` candidate reads.
MAX_CONTAINS_READS: Final = 200
#: Largest file whose content a ``contains`` check reads, bytes (bigger files are skipped).
MAX_CONTAINS_BYTES: Final = 512 * 1024


GLOB_CHARS = re.compile(r"[*?\[]")


def glob_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a path matches the gitwildmatch glob ``pattern`` (RE2: an untrusted glob cannot
    backtrack). A built-in pack's glob is matched by the alternation pathspec made of it when
    the packs were generated (``dsh_packs/parsed.py``'s ``GLOBS``: the same matcher, without
    importing pathspec on a start's path); any other is made now."""
    alternation = _builtin_globs().get(pattern)
    match = alternation_matcher(alternation) if alternation is not None else None
    return match if match is not None else ignore_matcher(glob_spec(pattern))


@functools.cache
def _builtin_globs() -> dict[str, str]:
    from dsh_packs.parsed import GLOBS  # the built-in packs' data, imported by their activation

    return GLOBS


def builtin_glob_alternations(packs: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """``{glob: alternation}`` of every glob candidate of the built-in ``packs`` (their parsed
    documents) that :func:`ignore_matcher` matches as one alternation, as pathspec makes it
    now: what ``packs/generate_parsed.py`` writes as ``GLOBS``."""
    globs = sorted(
        {
            cand["path"]
            for pack in packs.values()
            for row in pack.get("intents", {}).values()
            for cand in row.get("candidates", [])
            if isinstance(cand.get("path"), str) and GLOB_CHARS.search(cand["path"])
        }
    )
    out = {}
    for glob in globs:
        alternation = include_alternation(glob_spec(glob))
        if alternation is not None and alternation_matcher(alternation) is not None:
            out[glob] = alternation
    return out


#: Least share of source files that makes a folder a code folder (:meth:`FileIndex.code_folder`).
CODE_SHARE: Final = 0.5


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
        self._unbuilt()
        #: Most ``/`` in one listed path (no longer suffix of a path can be a listed file).
        self.depth = max((rel.count("/") for rel in self.files), default=0)
        self.refused: list[str] = []
        self._inside: dict[str, bool] = {}
        #: whether the listing is a past session's, not yet walked again
        #: (``workspace/listingcache.py``): :meth:`inside` then checks the file is there
        self.unverified: Callable[[], bool] = _never
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

    @classmethod
    def of_tables(
        cls, root: Path, files: list[str], by_name: dict[str, list[str]], by_dir: dict[str, list[str]]
    ) -> FileIndex:
        """The index of ``files`` (kept, not copied) whose per-name and per-folder lists a pass
        over them already made (``prepared.tables``): the same index as ``FileIndex(root, files)``."""
        index = cls.__new__(cls)
        index.root = root
        index.files = files
        index.file_set = frozenset(files)
        index.by_name = by_name
        index.by_dir = by_dir
        index.names = sorted(by_name)
        index._unbuilt()
        index.depth = max((folder.count("/") + 1 for folder in by_dir if folder), default=0)
        index.refused = []
        index._inside = {}
        index.unverified = _never
        index._sorted = sorted(files)
        index.glob_work = 0
        index.glob_cut = False
        index.kinds = {}
        index.facts = {}
        index._members = {}
        index.contains_seen = {}
        return index

    def _unbuilt(self) -> None:
        #: the missing-path answer's lookups (``meanttables.py``) as ``(edits, tables)``: built
        #: after ready off the event loop (:meth:`meant_soon`), current while ``edits`` is
        #: :attr:`_edits` (the in-place :meth:`add`/:meth:`remove` made); ``None`` until built
        self._meant: tuple[int, MeantTables] | None = None
        self._edits = 0
        self._building = False
        self.meant_cache: MeantCache | None = getattr(self, "meant_cache", None)

    @property
    def meant(self) -> MeantTables | None:
        """The missing-path answer's tables of this listing; ``None`` while not built (the answer
        abstains)."""
        built = self._meant
        return built[1] if built is not None and built[0] == self._edits else None

    def build_meant(self) -> MeantTables:
        """Build the tables of this listing now and publish them (one assignment of a finished
        tuple); again when an :meth:`add`/:meth:`remove` came meanwhile."""
        while True:
            edits = self._edits
            names, folders = tuple(self.by_name), frozenset(self.by_dir)  # (one C copy each)
            if self.meant_cache is not None:  # kept between sessions (``meantcache.py``)
                tables = self.meant_cache.tables(list(self.names), folders, self.by_name)
            else:
                tables = MeantTables.of(names, folders, self.by_name)
            self._meant = (edits, tables)
            if self._edits == edits:
                return tables

    def meant_soon(self) -> MeantTables | None:
        """:attr:`meant`; when not built, its build started on a daemon thread (once) and
        ``None`` meanwhile."""
        tables = self.meant
        if tables is None and not self._building:
            self._building = True
            threading.Thread(target=self._build_quietly, name="dsh-meant-tables", daemon=True).start()
        return tables

    def _build_quietly(self) -> None:
        try:
            self.build_meant()
        except Exception as exc:  # the answer abstains
            log.warning("missing-path tables not built: %s", exc)
        finally:
            self._building = False  # (tables made stale meanwhile: the next use builds again)

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
        new.root, new.meant_cache = self.root, self.meant_cache
        new.unverified = self.unverified
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
            new._unbuilt()
            tables = self.meant
            new._meant = (0, tables) if tables is not None else None
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
        new.by_name, new.by_dir, new.names = self._names_after(gone, added)
        new.depth = max([self.depth, *(rel.count("/") for rel in added)])
        new._unbuilt()
        tables = self.meant  # not built: the new index's own build (after ready) covers the change
        if tables is not None:
            touched = {rel.rpartition("/")[2] for rel in (*added, *gone)}
            new._meant = (0, tables.with_changes(self._unheld(added), new._unheld(gone), new.by_name, touched))
        return new

    def _unheld(self, paths: Iterable[str]) -> Listed:
        """What of ``paths`` this index holds no file of: their basenames, the folders holding
        them directly and those holding them at any depth. Asked of the index before ``paths``
        are listed, it is what listing them brings; asked after they are forgotten, what
        forgetting them took."""
        names: set[str] = set()
        dirs: set[str] = set()
        folders: set[str] = set()
        for rel in paths:
            folder, _, name = rel.rpartition("/")
            if name not in self.by_name:
                names.add(name)
            if folder not in self.by_dir:
                dirs.add(folder)
            for f in ancestors(folder):
                if f in folders or self._holds(f):
                    break  # (and every folder above it)
                folders.add(f)
        return names, dirs, folders

    def _holds(self, folder: str) -> bool:
        """Whether a listed file lies at some depth below ``folder`` (the listing's order)."""
        prefix = folder + "/"
        i = bisect.bisect_left(self._sorted, prefix)
        return i < len(self._sorted) and self._sorted[i].startswith(prefix)

    def _names_after(
        self, gone: AbstractSet[str], added: list[str]
    ) -> tuple[dict[str, list[str]], dict[str, list[str]], list[str]]:
        """The per-name and per-folder lists and the sorted names with ``gone`` forgotten and
        ``added`` listed (the tables copied in slices, a changed list copied, not edited)."""
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
        return by_name, by_dir, names

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
        tables = self.meant
        came = self._unheld([rel]) if tables is not None else NOTHING
        if self.files is not self._sorted:  # (one list after with_changes: listed once, below)
            self.files.append(rel)
        self.file_set = self.file_set | {rel}
        folder, _, name = rel.rpartition("/")
        if name not in self.by_name:
            bisect.insort(self.names, name)
        self.by_name.setdefault(name, []).append(rel)
        self.by_dir.setdefault(folder, []).append(rel)
        bisect.insort(self._sorted, rel)
        self._inside.pop(rel, None)
        self._edited(tables.with_changes(came, NOTHING, self.by_name, (name,)) if tables is not None else None)

    def remove(self, rel: str) -> None:
        """Forget a deleted file."""
        if rel not in self.file_set:
            return
        self.file_set = self.file_set - {rel}
        self.files.remove(rel)
        folder, _, name = rel.rpartition("/")
        for table, key in ((self.by_name, name), (self.by_dir, folder)):
            listed = table.get(key)
            if listed is not None and rel in listed:
                listed.remove(rel)
                if not listed:  # its last file: the name or folder goes, as in with_changes
                    del table[key]
        if name not in self.by_name:
            i = bisect.bisect_left(self.names, name)
            if i < len(self.names) and self.names[i] == name:
                del self.names[i]
        if rel in self._sorted:
            self._sorted.remove(rel)
        self._inside.pop(rel, None)
        tables = self.meant
        went = self._unheld([rel]) if tables is not None else NOTHING
        self._edited(tables.with_changes(NOTHING, went, self.by_name, (name,)) if tables is not None else None)

    def _edited(self, tables: MeantTables | None) -> None:
        """An in-place change is made: tables built before it are stale (a build running
        meanwhile builds again), ``tables`` (those of the changed listing) published."""
        self._edits += 1
        if tables is not None:
            self._meant = (self._edits, tables)

    def _names_like(self, segment: str) -> list[str]:
        """Basenames matching one glob segment: a literal prefix is looked up by bisection."""
        cut = GLOB_CHARS.search(segment)
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
        if folder and not GLOB_CHARS.search(folder):  # docs/*.md, .github/workflows/*.yml
            return self.by_dir.get(folder, [])
        if folder.startswith("**/") and not GLOB_CHARS.search(folder[3:]) and GLOB_CHARS.search(last):
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
        pool = self._pool(pattern.lstrip("/"))
        if self.glob_work + len(pool) > MAX_GLOB_WORK:
            self.glob_cut = True
            return []
        if not pool:
            return []  # no file to match: no spec compiled
        self.glob_work += len(pool)
        match = glob_matcher(pattern)  # one RE2 match per path
        return sorted(p for p in pool if match(p))

    def exists(self, rel: str) -> bool:
        """Whether ``rel`` is a listed file."""
        return rel in self.file_set

    def inside(self, rel: str) -> bool:
        """Whether ``rel`` resolves inside the workspace as its files are read
        (``fsguard.resolves_inside``: a symlink pointing out, or into ``.git``, is refused,
        remembered in :attr:`refused`). Answers are cached per path. While the listing is
        :attr:`unverified` (a past session's), a path that is not there now (deleted since:
        ``lstat`` fails) is not inside, and that answer is not kept (the walk after ready drops
        the path from the listing)."""
        known = self._inside.get(rel)
        if known is not None:
            return known
        if self.unverified() and not os.path.lexists(self.root / rel):
            return False
        ok = self._inside[rel] = self._check_inside(rel)
        return ok

    def inside_now(self, rel: str) -> bool:
        """:meth:`inside` asked again, not from the cache, of a path a note (or ``where_is``) is
        about to name: a file swapped for a link into ``.git`` or out of the tree after the
        cached answer (MCP has no file-change events) is named by nothing. A refusal is kept;
        a path that no longer resolves at all (deleted since) is still named as before. One
        ``openat2`` a path with no link on the way (``fsguard.resolves_inside_now``), whatever
        the size of the listing (bench/named_now.py)."""
        if fsguard.resolves_inside_now(self.root, rel):
            return True
        self._inside[rel] = False
        if rel not in self.refused:
            self.refused.append(rel)
        return False

    def _check_inside(self, rel: str) -> bool:
        if fsguard.resolves_inside(self.root, rel):  # not out of the tree, nor into .git
            return True
        if rel not in self.refused:
            self.refused.append(rel)
        return False


def _never() -> bool:
    return False


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


@functools.lru_cache(maxsize=4096)
def is_fixture(rel: str) -> bool:
    """Whether ``rel`` lies in a fixture/example/vendor folder (``tests/data/`` included; names
    in any case; the last 4,096 paths' answers kept)."""
    parts = [p.lower() for p in rel.split("/")[:-1]]
    if any(p in FIXTURE_DIRS for p in parts):
        return True
    return any(parts[i] in ("tests", "test") and parts[i + 1] == "data" for i in range(len(parts) - 1))


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
