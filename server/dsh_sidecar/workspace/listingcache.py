"""The last walk's listing, kept for the next session: ``<cache_dir>/<slug>-<hash>.listing.bin``
(slug and hash as the symbol cache's, ``cachenames.index_stem``).

A walk of a tree outside git takes one ``fstatat`` a file (0.35–0.4 s of CPU for 100k files,
two-thirds of it in the kernel) and a sort, and no directory record can spare it: editing a
file's contents changes the file's mtime, never its folder's, so only a ``stat`` of every file
tells an unchanged tree from an edited one. A later session therefore starts from the listing
the last one verified (its paths and every file's ``(mtime_ns, size, inode)`` and change time),
is ready from it and from the caches made for it (kinds, symbols, tables, content index: each
matches at once), and walks the tree again after it is ready (``builder.py``, "verification"),
applying what differs (a file added, deleted or edited between the sessions) through the
incremental path a ``didChangeWatchedFiles`` batch takes (``WorkspaceGraph.apply``).

Until that walk ends, the graph is *unverified* (``graph.verified`` is ``False``; ``dsh/status``
says ``"verified": false``): its listing is the last session's. What a note may see meanwhile: a
file deleted between the sessions is still listed, but a note never names it (every target is
checked to exist on disk while the listing is unverified: ``suggester/fileindex.py``,
:meth:`~dsh_sidecar.suggester.fileindex.FileIndex.inside`, and the task lead's ranking,
``suggester/lead/ranker.py``); a file added is not listed yet (no
note names it until the walk has added it); a file edited keeps its old symbols and content facts
until the walk re-reads it.

A git checkout keeps its listing the same way (``"source": "git"``): git's listing of it
(``recency.git_scan``: ``ls-files`` tracked and untracked, the log and ``status`` for each file's
change time, the work tree's pre-check, and one ``stat`` a file for the caches) costs ~0.7 s of
the process's CPU and ~0.5 s of git's on 100k files, all of it redone by the same scan after
ready (:func:`git_differences`) instead of before: git's own index cannot stand in for the stats
(it is refreshed only under a lock the sidecar does not take), and a file the work tree gained is
known only from ``ls-files --others``. A listing is taken only by a session whose tree is listed
the same way (a walk's by a tree outside git, git's by a checkout).

A session that changes files after that does not write the whole listing again: it journals
the changed files' rows over it (``listingjournal.py``, O(the journal)), and :meth:`ListingCache.load`
lays them over the listing it reads.

**Format**: the columnar format of ``state/columns.py``. The head, beside the format's own
fields: ``{"version", "root", "files", "source"}`` (F; ``source`` is ``"mtime"`` for a walk's
listing, ``"git"`` for git's; a head without it is a walk's). The body: ``mtime`` (ns), ``size`` (int64 × F),
``ino`` (uint64 × F), ``stamp`` (the change time the walk gave each file, the bits of a double,
× F), then the paths (F strings), sorted, each once.

**Untrusted**: a :class:`~dsh_sidecar.state.files.StateFile` (no symlink followed, a regular
file only, at most :func:`max_bytes`, atomic 0600 writes under a lock). Refused and set aside
before use: another workspace's or format's head, a count past :data:`MAX_FILES`, sections that
do not add up, a digest that does not match, a change time that is not finite, paths that are not
UTF-8 (a lone surrogate: the build from it failed and the session had no graph), paths not strictly
sorted, and any path that is not a plain relative one (absolute, an empty component, ``.`` or
``..``). A forged file within that can only list paths under the workspace that are not there
(each read goes through ``fsguard``; a note checks its target exists), list files the walk skips
(ignored ones: they are read as listed files are, inside the workspace only) or leave out files
that are, until the walk after ready replaces it. A git listing is taken only when its length
fits the checkout's index (``gitguard.listing_refusal``, from the index's head: a forged listing
of 249,044 rows for a 41-file checkout made the next session take 192 s to be ready).
"""

from __future__ import annotations

import logging
import math
import time
from array import array
from dataclasses import dataclass
from operator import itemgetter
from pathlib import Path
from typing import Any, Final, cast

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.workspace import recency
from dsh_sidecar.workspace.cachenames import LISTING_SUFFIX, cache_path
from dsh_sidecar.workspace.files import MAX_FILES, walk_files
from dsh_sidecar.workspace.listingjournal import COMPACT_AT, Changes, ListingJournal, lay_over
from dsh_sidecar.workspace.stats import FileStats, stat_files

log = logging.getLogger(__name__)

#: Format version of the file.
VERSION: Final = 1
#: Bytes a file of the listing may take at most beside its path (four 8-byte values).
PER_FILE_BYTES: Final = 32
#: Longest path kept, bytes (a longer one makes the listing not kept: the next session walks).
MAX_PATH_BYTES: Final = 4096
#: The suffix of the listing's journal (``listingjournal.py``).
JOURNAL_SUFFIX: Final = ".listing-journal.json"
#: The numeric columns, in body order.
NUMERIC: Final[tuple[tuple[str, columns.Code], ...]] = (("mtime", "q"), ("size", "q"), ("ino", "Q"), ("stamp", "q"))


def _unsafe(joined: str) -> bool:
    """Whether a path of the NUL-joined ``joined`` is not a plain relative POSIX one (absolute,
    an empty component, ``.`` or ``..``, a trailing ``/``): three substring searches over the
    components, every separator made a NUL (no regular expression over megabytes)."""
    parts = ("\0" + joined + "\0").replace("/", "\0")
    return "\0\0" in parts or "\0.\0" in parts or "\0..\0" in parts


def max_bytes(files: int = MAX_FILES) -> int:
    """The largest file kept for ``files`` files (head, columns and paths)."""
    return 8192 + files * (PER_FILE_BYTES + MAX_PATH_BYTES // 16)


@dataclass
class Listing:
    """A listing as a walk (or git) gave it: ``stats.files`` sorted, their stats and change
    times; ``source`` the graph's recency source it was made with (``"mtime"``: a walk,
    ``"git"``: git's listing and history)."""

    stats: FileStats
    stamps: list[float]
    source: str = "mtime"
    #: the digest of the kept file's body it was read from (``""``: not read from one)
    digest: str = ""


#: The sources a kept listing may come from (``WorkspaceGraph.time_source``).
SOURCES: Final = ("mtime", "git")


def _parse(root: str) -> Any:
    def parse(raw: bytes) -> Listing | None:
        found = columns.current_head(raw, root, VERSION, "a listing")
        if found is None:
            return None
        head, head_end = found
        n = columns.count(head.get("files"))
        source = head.get("source", "mtime")
        if source not in SOURCES:
            raise StateDocumentError("a listing of an unknown source")
        if n > MAX_FILES:
            raise StateDocumentError("more files than a listing holds")
        body = columns.body_of(raw, head_end)
        shape = [(code, n) for _, code in NUMERIC]
        lengths = columns.check_layout(head, body, shape, [n])
        # strict: a walk lists UTF-8 names only, and a lone surrogate cannot name a file here
        joined = str(body[-columns.padded(lengths[0]) :][: lengths[0]], "utf-8")
        if _unsafe(joined):
            raise StateDocumentError("a path that is not a plain relative one")
        numeric, (paths,) = columns.decode(body, shape, [n], lengths)
        if not all(map(str.__lt__, paths, paths[1:])):
            raise StateDocumentError("paths not sorted, or one twice")
        stats = FileStats(paths)
        for column, (name, code) in zip(numeric, NUMERIC[:3], strict=False):
            values = array(code)
            values.frombytes(column.cast("B"))
            setattr(stats, name, values)
        stamps = cast(list[float], numeric[3].cast("B").cast("d").tolist())
        if not all(map(math.isfinite, stamps)):
            raise StateDocumentError("a change time that is not a finite number")
        return Listing(stats, stamps, source, str(head.get("digest", "")))

    return parse


class ListingCache:
    """Load and save the verified listing of one workspace (module docstring)."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.root = str(root.resolve())
        self.path = cache_path(cache_dir, root).with_suffix(LISTING_SUFFIX)
        self.file = StateFile(self.path, max_bytes=max_bytes(), parse=_parse(self.root))
        self.journal = ListingJournal(cache_path(cache_dir, root).with_suffix(JOURNAL_SUFFIX), self.root)
        #: the digest and source of the listing on disk as this session read or wrote it
        #: (``""``: none known, so no journal either), and the changes journalled over it
        self.base, self.source, self.changes = "", "", cast(Changes, {})
        #: files in the journal when the listing was read (over :data:`COMPACT_AT`: write it whole)
        self.journalled = 0

    def load(self) -> Listing | None:
        """The listing last saved with its journal laid over it, or ``None`` (none, another
        format, set aside)."""
        try:
            found = self.file.read()
        except Exception as exc:  # a cache problem is only a walk before ready
            log.warning("workspace listing unreadable (%s); walking", exc)
            return None
        if not isinstance(found, Listing):
            return None
        self.base, self.source = found.digest, found.source
        self.changes = self.journal.load(found.digest, found.source) if found.digest else {}
        self.journalled = len(self.changes)
        if not self.changes:
            return found
        stats, stamps = lay_over(found.stats, found.stamps, self.changes)
        return Listing(stats, stamps, found.source, found.digest)

    def compact_due(self) -> bool:
        """Whether the listing read had more than :data:`COMPACT_AT` files journalled over it
        (then written whole once verified, which empties the journal)."""
        return self.journalled > COMPACT_AT

    def note(self, rows: Changes, source: str) -> bool:
        """Journal the rows of the files changed since (``listingjournal.py``) over the listing
        on disk: O(the journal). ``False`` when it cannot (no listing of ``source`` known to be
        on disk, more than the journal holds, an I/O error): the caller writes the whole listing."""
        if not self.base or source != self.source:
            return False
        changes = {**self.changes, **rows}
        if not self.journal.save(self.base, source, changes):
            return False
        self.changes = changes
        return True

    def save(self, stats: FileStats, stamps: list[float], source: str = "mtime") -> bool:
        """Keep a verified listing (``stats.files`` sorted, a change time each, listed the
        ``source`` way); ``False`` when nothing was written (an I/O error, or a listing this
        file cannot hold)."""
        files = stats.files
        if len(files) > MAX_FILES or len(stamps) != len(files) or not files or source not in SOURCES:
            return False
        if any(len(p) > MAX_PATH_BYTES // 4 for p in files) or _unsafe("\0".join(files)):
            return False
        head = {"version": VERSION, "root": self.root, "files": len(files), "source": source}
        body = [
            stats.mtime.tobytes(),
            stats.size.tobytes(),
            stats.ino.tobytes(),
            array("d", stamps).tobytes(),
        ]
        raw = columns.encode(head, body, [files])  # str lists and integer columns: cannot fail
        if len(raw) > max_bytes():
            return False
        if not self.file.replace_or_warn(raw, "workspace listing", log):
            return False
        self.base, self.source, self.changes, self.journalled = columns.head_of(raw)[0]["digest"], source, {}, 0
        self.journal.clear()
        return True

    def clear(self) -> None:
        """Forget the listing and its journal (the next session walks before it is ready)."""
        self.file.remove_or_note("workspace listing", log)
        self.journal.clear()
        self.base, self.source, self.changes, self.journalled = "", "", {}, 0


def walk_listing(root: Path) -> tuple[FileStats, list[float]]:
    """A walk of ``root`` (:func:`~dsh_sidecar.workspace.files.walk_files`): its files'
    stats in path order and each file's change time, aligned."""
    walked = FileStats([])
    pairs = walk_files(root, mtimes=True, stats=walked)
    # the listing's sort, done once for the stats, the paths and their times
    return walked.sort(list(map(itemgetter(1), pairs)))


#: Files compared per step of :func:`walk_differences` (each step a few C loops, ~1 ms; the GIL
#: is handed over between steps: the walk after ready runs beside the event loop's calls).
SLICE: Final = 8192


def walk_differences(before: FileStats, root: Path) -> tuple[list[str], Listing | None]:
    """Walk ``root`` and compare with ``before`` (a sorted listing with its stats): the paths
    added, removed or whose ``(mtime_ns, size, inode)`` changed, in path order, and the walk as
    a sorted :class:`Listing` when anything differs (``None`` when nothing does). The walk is
    compared in its own order, slice by slice through a map of ``before``'s paths, the GIL
    handed over between slices: no sort of 100k paths (one C call holding the GIL ~50 ms, what
    a call answered meanwhile would wait for) unless something changed."""
    walked = FileStats([])
    pairs = walk_files(root, mtimes=True, stats=walked)
    # the change times as a column, the walk's (path, time) pairs let go before the map of
    # ``before`` is made: 100k pairs are ~9 MiB of tuples and floats, and the two at once made
    # the peak of a warm start's memory (27.5 -> 20.9 MiB traced on 100k files)
    times = array("d", map(itemgetter(1), pairs))
    del pairs
    files = before.files
    where: dict[str, int] = {}
    for a in range(0, len(files), SLICE):
        where.update(zip(files[a : a + SLICE], range(a, a + SLICE)))
        time.sleep(0)
    changed: list[str] = []
    seen = 0
    got = walked.files
    for a in range(0, len(got), SLICE):
        b = min(a + SLICE, len(got))
        at = list(map(where.get, got[a:b]))
        seen += len(at) - at.count(None)
        if None not in at:
            idx = cast(list[int], at)
            if (
                array("q", map(before.mtime.__getitem__, idx)) == walked.mtime[a:b]
                and array("q", map(before.size.__getitem__, idx)) == walked.size[a:b]
                and array("Q", map(before.ino.__getitem__, idx)) == walked.ino[a:b]
            ):
                time.sleep(0)
                continue
        for j, i in zip(range(a, b), at, strict=True):
            was = None if i is None else (before.mtime[i], before.size[i], before.ino[i])
            if was != (walked.mtime[j], walked.size[j], walked.ino[j]):
                changed.append(got[j])
        time.sleep(0)
    if seen < len(files):  # some path of ``before`` was not walked: removed
        present = set(got)
        changed += [p for p in files if p not in present]
    if not changed:
        return [], None
    fresh, stamps = walked.sort(times)
    return sorted(set(changed)), Listing(fresh, stamps)


def git_listing(root: Path) -> Listing | None:
    """Git's listing of the checkout ``root`` as a build makes it (``recency.git_scan``: the
    work tree's pre-check, tracked and untracked files, each file's change time), sorted, with
    one ``stat`` a file (``stats.stat_files``, what the caches compare with); ``None`` when git
    cannot list it (the caller walks it, as a build does)."""
    scan = recency.git_scan(root)
    if scan is None:
        return None
    found, times = scan
    files = sorted(dict.fromkeys(found))[:MAX_FILES]  # git's two lists are sorted: a merge
    tget = times.get
    return Listing(stat_files(root, files), [tget(f, 0.0) for f in files], "git")


def listing_differences(before: Listing, now: Listing) -> tuple[list[str], dict[str, float]]:
    """The paths of two sorted listings that were added, removed or whose ``(mtime_ns, size,
    inode)`` changed, in path order; and the change time ``now`` gives each of its files whose
    time is not ``before``'s (a commit since, or a file changed). The same paths compare as
    columns (C loops) slice by slice, the GIL handed over between slices; other paths by name."""
    old, new = before.stats, now.stats
    changed: list[str] = []
    retimed: dict[str, float] = {}
    if old.files == new.files:
        for a in range(0, len(new.files), SLICE):
            b = a + SLICE
            if old.mtime[a:b] != new.mtime[a:b] or old.size[a:b] != new.size[a:b] or old.ino[a:b] != new.ino[a:b]:
                changed += [new.files[i] for i in range(a, min(b, len(new.files))) if old.at(i) != new.at(i)]
            if before.stamps[a:b] != now.stamps[a:b]:
                retimed.update(
                    (new.files[i], now.stamps[i])
                    for i in range(a, min(b, len(new.files)))
                    if before.stamps[i] != now.stamps[i]
                )
            time.sleep(0)
        return changed, retimed
    where = dict(zip(old.files, range(len(old.files))))
    for i, rel in enumerate(new.files):
        j = where.pop(rel, None)
        if j is None or old.at(j) != new.at(i):
            changed.append(rel)
        if j is None or before.stamps[j] != now.stamps[i]:
            retimed[rel] = now.stamps[i]
    changed += where  # listed before, not now: removed
    return sorted(changed), retimed
