"""The kept listing's journal: the files a session changed since the listing
(``listingcache.py``) was written, ``<cache_dir>/<slug>-<hash>.listing-journal.json``.

A session that applies file changes (a watched-file batch, the walk after ready) keeps what they
did for the next session. Rewriting the whole listing for that is O(files) (a copy of the
listing's columns under the graph's lock and a write of every path: 35–77 + 71–83 ms on 100k
files at load 30, once a second of a burst); the changed files alone — each one's
``(mtime_ns, size, inode)`` and change time, or ``None`` for a file no longer listed — are
written here instead, bound to the listing they amend by its body's digest, and the next session
lays them over the listing it reads (:func:`lay_over`), O(files + changed). A write costs
O(the journal): it holds at most :data:`MAX_FILES` files (past it the whole listing is written,
which empties the journal), and a session that starts with more than :data:`COMPACT_AT` in it
writes the whole listing once verified.

**Untrusted** (a :class:`~dsh_sidecar.state.files.StateFile`: atomic 0600 writes under a lock,
at most :data:`MAX_BYTES`): a head line ``{"version", "root", "base", "source", "digest"}``
(``digest``: the BLAKE2b of the rest) and a JSON body ``{path: [mtime_ns, size, inode,
stamp] | null}``. Set aside: another workspace's head, a digest that does not match, more than
:data:`MAX_FILES` files, a path that is not a plain relative one or too long, an integer out of
its column's range (or a bool), a change time that is not a finite number. A journal whose
``base`` is not the digest of the listing read, or of another ``source``, is ignored (the
listing was written again since). A forged journal within that can only do what a forged listing
can: list paths under the workspace that are not there, or leave out some that are, until the
walk after ready replaces it (``listingcache.py``).
"""

from __future__ import annotations

import bisect
import logging
import math
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.workspace.stats import FileStats

log = logging.getLogger(__name__)

#: Format version of the journal.
VERSION: Final = 1
#: Most files a journal holds (past it the whole listing is written).
MAX_FILES: Final = 512
#: A session that starts with more files than this in the journal writes the whole listing.
COMPACT_AT: Final = 128
#: Longest path journalled, characters (the listing's own bound: ``listingcache.MAX_PATH_BYTES // 4``).
MAX_PATH_CHARS: Final = 1024
#: Largest journal read or written, bytes (512 paths of 1,024 characters, four numbers each).
MAX_BYTES: Final = 4 * 1024 * 1024
_I64: Final = 2**63
_U64: Final = 2**64

#: One file's entry: ``(mtime_ns, size, inode, stamp)`` (size -1: listed, but it could not be
#: stat'ed), or ``None``: not listed.
Row = tuple[int, int, int, float]
Changes = dict[str, Row | None]


def _int(value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value < high:
        raise StateDocumentError("an integer out of its range")
    return value


def _path(value: str) -> str:
    parts = value.split("/")
    if not value or len(value) > MAX_PATH_CHARS or "\0" in value or any(p in ("", ".", "..") for p in parts):
        raise StateDocumentError("a path that is not a plain relative one")
    return value


def _row(value: Any) -> Row | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 4:
        raise StateDocumentError("an entry that is not a list of four")
    mtime, size, ino, stamp = value
    if type(stamp) not in (int, float) or not math.isfinite(stamp):
        raise StateDocumentError("a change time that is not a finite number")
    return _int(mtime, -_I64, _I64), _int(size, -1, _I64), _int(ino, 0, _U64), float(stamp)


def _parse(root: str, base: str, source: str) -> Any:
    def parse(raw: bytes) -> Changes | None:
        bound = {"base": base, "source": source}  # another listing's: nothing to set aside
        files = columns.journal_files(
            raw, root=root, version=VERSION, bound=bound, max_files=MAX_FILES, what="a listing journal"
        )
        return None if files is None else {_path(p): _row(e) for p, e in files.items()}

    return parse


class ListingJournal:
    """Read and write the journal of one workspace's kept listing (module docstring)."""

    def __init__(self, path: Path, root: str) -> None:
        self.root = root
        self.path = path
        self.file = StateFile(self.path, max_bytes=MAX_BYTES, parse=_parse(root, "", ""))

    def load(self, base: str, source: str) -> Changes:
        """The changes journalled over the listing whose body's digest is ``base``, listed the
        ``source`` way (``{}``: none, another listing's, or set aside)."""
        self.file.parse = _parse(self.root, base, source)
        try:
            found = self.file.read()
        except Exception as exc:  # a journal problem is only a few more differences after ready
            log.warning("workspace listing journal unreadable (%s); the walk after ready finds them", exc)
            return {}
        return found if isinstance(found, dict) else {}

    def save(self, base: str, source: str, changes: Changes) -> bool:
        """Write ``changes`` over the listing ``base``; ``False`` when nothing was written (too
        many files, a path too long, too many bytes, an I/O error: the caller writes the whole
        listing)."""
        if len(changes) > MAX_FILES or any(len(p) > MAX_PATH_CHARS for p in changes):
            return False
        files = {p: None if r is None else list(r) for p, r in changes.items()}
        bound = {"base": base, "source": source}
        raw = columns.journal_bytes(files, root=self.root, version=VERSION, bound=bound, allow_nan=False)
        if len(raw) > MAX_BYTES:
            return False
        return self.file.replace_or_warn(raw, "workspace listing journal", log)

    def clear(self) -> None:
        """Forget the journal (its listing was written again)."""
        self.file.remove_or_note("workspace listing journal", log)


def rows_of(
    stats: FileStats | None, files: list[str], times: Mapping[str, float], paths: Iterable[str]
) -> Changes | None:
    """The row of each of ``paths`` in the sorted listing ``files`` with its ``stats`` and the
    change times ``times`` (``None``: not listed); ``None`` when the stats are not taken for that
    listing as it is (none, or another list's). O(k log n)."""
    if stats is None or stats.files is not files:
        return None
    rows: Changes = {}
    for rel in paths:
        i = bisect.bisect_left(files, rel)
        here = i < len(files) and files[i] == rel
        rows[rel] = (stats.mtime[i], stats.size[i], stats.ino[i], times.get(rel, 0.0)) if here else None
    return rows


def lay_over(stats: FileStats, stamps: list[float], changes: Changes) -> tuple[FileStats, list[float]]:
    """The listing ``stats``/``stamps`` (sorted) with ``changes`` laid over it, in new columns:
    a path with a row listed (added in order, or its row replaced), a path with ``None`` taken
    out. O(files + changed log files)."""
    out = stats.copy(list(stats.files))
    times = list(stamps)
    files = out.files
    for rel in sorted(changes):
        row = changes[rel]
        i = bisect.bisect_left(files, rel)
        here = i < len(files) and files[i] == rel
        if row is None:
            if here:
                del files[i], times[i]
                out.delete(i)
            continue
        mtime, size, ino, stamp = row
        if not here:
            files.insert(i, rel)
            times.insert(i, stamp)
            out.mtime.insert(i, mtime)
            out.size.insert(i, size)
            out.ino.insert(i, ino)
        else:
            times[i] = stamp
            out.mtime[i], out.size[i], out.ino[i] = mtime, size, ino
    return out, times
