"""What a listing's files are on disk now: each listed file's ``(mtime_ns, size, inode)``, taken
once per build and shared by everything that keeps a per-file cache (the symbol cache, the
content index): a file whose three values are those its cache entry was made from is not read
again, and a listing whose values all match is not even compared row by row (its
:meth:`FileStats.fingerprint`).

The values are those of the file a reader opens: ``stat`` following a symlink (a walk's
``lstat`` of a regular file is the same); a file that cannot be stat'ed (gone, a dangling link)
has none (:meth:`FileStats.get` is ``None``). They are kept in columns (``array``), aligned with
the sorted listing, so a 100k-file listing costs 2.4 MB instead of 100k tuples; the owner drops
them once its caches are synced.

The fingerprint is a digest of digests: one per run of :data:`DIGEST_RUN` files (their paths and
three columns), kept until a change touches that run, so a file edited in place costs one run's
digest again (O(run)), not the whole listing's (~25 ms on 100k files): the content index keeps
its stored fingerprint current after each batch of changes that way (``fts.py``). A file added
or removed shifts every later run, whose digests are made again.
"""

from __future__ import annotations

import bisect
import hashlib
import os
from array import array
from collections.abc import Sequence
from operator import attrgetter
from pathlib import Path
from typing import Final

#: The stat triple of one file: ``(mtime_ns, size, inode)``.
Stat = tuple[int, int, int]

#: Files a run digest of :meth:`FileStats.fingerprint` covers (~0.25 ms of digest a run).
DIGEST_RUN: Final = 1024

#: Marks a file that could not be stat'ed (no real file has a negative size).
_MISSING: Final = -1
_MTIME, _SIZE, _INO = (attrgetter(f) for f in ("st_mtime_ns", "st_size", "st_ino"))


class FileStats:
    """``(mtime_ns, size, inode)`` per file of a sorted listing (module docstring)."""

    __slots__ = ("_fingerprint", "_runs", "files", "ino", "mtime", "size")

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.mtime = array("q")
        self.size = array("q")
        self.ino = array("Q")
        self._fingerprint: str | None = None
        #: the digests of the runs of :data:`DIGEST_RUN` files made so far (``None``: to make)
        self._runs: list[bytes | None] = []

    def extend(self, stats: list[os.stat_result | None]) -> None:
        """The stats of the next files (``None``: could not be stat'ed), the columns filled in
        C loops (``map``), not a method call a file."""
        self._changed_from(len(self))
        if None in stats:  # (rare: a dangling symlink, a file gone meanwhile)
            for st in stats:
                self.append(st)
            return
        self.mtime.extend(array("q", map(_MTIME, stats)))
        self.size.extend(array("q", map(_SIZE, stats)))
        self.ino.extend(array("Q", map(_INO, stats)))

    def append(self, st: os.stat_result | None) -> None:
        """The next file's stat (``None``: it could not be stat'ed)."""
        self._changed_from(len(self))
        if st is None:
            self.mtime.append(0)
            self.size.append(_MISSING)
            self.ino.append(0)
        else:
            self.mtime.append(st.st_mtime_ns)
            self.size.append(st.st_size)
            self.ino.append(st.st_ino)

    def __len__(self) -> int:
        return len(self.size)

    def copy(self, files: list[str] | None = None, digests: bool = False) -> FileStats:
        """These stats with columns of their own (over ``files``, else the same listing); with
        ``digests``, the run digests made so far too (``files`` must then be equal to these)."""
        out = FileStats(self.files if files is None else files)
        out.mtime, out.size, out.ino = array("q", self.mtime), array("q", self.size), array("Q", self.ino)
        if digests:
            out._runs, out._fingerprint = list(self._runs), self._fingerprint
        return out

    def insert(self, i: int, st: os.stat_result | None) -> None:
        """The stat of a file now at position ``i`` of the listing (inserted there already)."""
        self.mtime.insert(i, 0 if st is None else st.st_mtime_ns)
        self.size.insert(i, _MISSING if st is None else st.st_size)
        self.ino.insert(i, 0 if st is None else st.st_ino)
        self._changed_from(i)

    def put(self, i: int, st: os.stat_result | None) -> None:
        """The stat of the ``i``-th file, changed."""
        self.mtime[i] = 0 if st is None else st.st_mtime_ns
        self.size[i] = _MISSING if st is None else st.st_size
        self.ino[i] = 0 if st is None else st.st_ino
        self._changed_at(i)

    def delete(self, i: int) -> None:
        """Forget the ``i``-th file's stat (the file was taken out of the listing)."""
        del self.mtime[i], self.size[i], self.ino[i]
        self._changed_from(i)

    def set(self, rel: str, st: Stat | None) -> None:
        """``rel`` listed with the stat ``st`` (``None``: could not be stat'ed): its stat
        replaced, or the path inserted in order into :attr:`files` (this object's own list)."""
        i = bisect.bisect_left(self.files, rel)
        mtime, size, ino = (0, _MISSING, 0) if st is None else st
        if i < len(self.files) and self.files[i] == rel:
            self.mtime[i], self.size[i], self.ino[i] = mtime, size, ino
            self._changed_at(i)
            return
        self.files.insert(i, rel)
        self.mtime.insert(i, mtime)
        self.size.insert(i, size)
        self.ino.insert(i, ino)
        self._changed_from(i)

    def remove(self, rel: str) -> None:
        """``rel`` taken out of :attr:`files` (this object's own list) with its stat, if listed."""
        i = bisect.bisect_left(self.files, rel)
        if i < len(self.files) and self.files[i] == rel:
            del self.files[i]
            self.delete(i)

    def _changed_at(self, i: int) -> None:
        """The ``i``-th file's stat changed: its run's digest is made again."""
        self._fingerprint = None
        if i // DIGEST_RUN < len(self._runs):
            self._runs[i // DIGEST_RUN] = None

    def _changed_from(self, i: int) -> None:
        """Files from the ``i``-th on moved (one added or taken out there): every later run's
        digest is made again."""
        self._fingerprint = None
        del self._runs[i // DIGEST_RUN :]

    def at(self, i: int) -> Stat | None:
        """The stat of the ``i``-th file of the listing."""
        size = self.size[i]
        return None if size == _MISSING else (self.mtime[i], size, self.ino[i])

    def get(self, rel: str) -> Stat | None:
        """The stat of ``rel``; ``None`` when it is not listed or could not be stat'ed."""
        i = bisect.bisect_left(self.files, rel)
        if i == len(self.files) or self.files[i] != rel:
            return None
        return self.at(i)

    def select(self, files: list[str]) -> FileStats:
        """The stats of ``files`` (sorted; each one of this listing's: a walk's, in its order),
        aligned with them: the columns permuted at once (C loops: ``map``)."""
        out = FileStats(files)
        if files == self.files:  # in this order already (``sort``): the columns as they are
            out.mtime, out.size, out.ino = self.mtime, self.size, self.ino
            return out
        order = sorted(range(len(self.files)), key=self.files.__getitem__)
        if list(map(self.files.__getitem__, order)) != files:  # another listing: by path
            where = dict(zip(self.files, range(len(self.files))))
            order = [where.get(rel, -1) for rel in files]
            if -1 in order:  # a path the walk did not take: no stat
                order = [len(self.files) if i == -1 else i for i in order]
                self.append(None)
        out.mtime = array("q", map(self.mtime.__getitem__, order))
        out.size = array("q", map(self.size.__getitem__, order))
        out.ino = array("Q", map(self.ino.__getitem__, order))
        return out

    def sort(self, aligned: Sequence[float]) -> tuple[FileStats, list[float]]:
        """These stats over the listing in path order (a walk's: ``sorted`` of it), the columns
        and ``aligned`` (a value a file, in the walk's order: its change time) permuted alike:
        one sort of positions, so that the listing needs no sort after it
        (``WorkspaceGraph.from_listing``) and :meth:`select` has nothing to do."""
        order = sorted(range(len(self.files)), key=self.files.__getitem__)
        out = FileStats(list(map(self.files.__getitem__, order)))
        out.mtime = array("q", map(self.mtime.__getitem__, order))
        out.size = array("q", map(self.size.__getitem__, order))
        out.ino = array("Q", map(self.ino.__getitem__, order))
        return out, list(map(aligned.__getitem__, order))

    def fingerprint(self) -> str:
        """One digest of the listing and every file's stat (BLAKE2b, module docstring): equal
        fingerprints mean the same paths with the same ``(mtime_ns, size, inode)`` each. Only
        the runs changed since the last call are digested again."""
        if self._fingerprint is None:
            runs = self._runs
            count = max(len(self.files), len(self))
            del runs[-(-count // DIGEST_RUN) :]
            for r in range(-(-count // DIGEST_RUN)):
                if r == len(runs):
                    runs.append(None)
                if runs[r] is None:
                    runs[r] = self._run_digest(r * DIGEST_RUN, (r + 1) * DIGEST_RUN)
            h = hashlib.blake2b(f"{len(self.files)},{len(self)};".encode(), digest_size=20)
            for digest in runs:
                h.update(digest or b"")
            self._fingerprint = h.hexdigest()
        return self._fingerprint

    def _run_digest(self, a: int, b: int) -> bytes:
        """The digest of the files ``a:b`` (their paths, then each column's slice)."""
        h = hashlib.blake2b("\0".join(self.files[a:b]).encode("utf-8", "surrogatepass"), digest_size=20)
        for column in (self.mtime, self.size, self.ino):
            h.update(b"\1")
            h.update(column[a:b])
        return h.digest()


def stat_of(path: str) -> os.stat_result | None:
    """``os.stat`` (following a symlink), ``None`` when it fails."""
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


#: Files stat'ed per batch by :func:`stat_files` (a batch's ``os.stat_result`` objects, ~200 bytes
#: each, are held until its columns are filled: 100k at once were ~25 MiB of a warm start's peak).
STAT_BATCH: Final = 4096


def stat_files(root: Path, files: list[str]) -> FileStats:
    """The stats of the sorted listing ``files`` under ``root``, one ``stat`` each."""
    out = FileStats(files)
    base = str(root) + os.sep
    for a in range(0, len(files), STAT_BATCH):
        out.extend([stat_of(base + rel) for rel in files[a : a + STAT_BATCH]])
    return out
