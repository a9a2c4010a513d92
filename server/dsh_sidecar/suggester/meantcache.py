"""The missing-path answer's tables (``meanttables.py``) kept for the next session of the same
listing: ``<cache_dir>/<slug>-<hash>.meant.bin`` (slug and hash as the listing tables',
``tablecache.py``), beside them and with the same safety.

Building the tables costs one pass over the basenames and the folders and three sorts of their
keys' hashes (``MeantTables.of``: ~1.5–2 s of one thread's CPU on 100k files at load 8–10,
most of it the sorts); a later session of an unchanged tree takes back the sorted hash columns
and the order of their values, and checks them (below) instead of sorting. The digests of the
common names (``meanttables.Digest``) are made again (a few ms), the sorted folders too.

**Format**: the columnar format of ``state/columns.py``. The head, beside the format's own
fields: ``{"version", "root", "rules", "names", "listing", "cores", "folders"}`` (``rules``: the
BLAKE2b of ``meanttables.py``'s source; ``names`` N the basenames; ``listing`` the BLAKE2b of
the sorted basenames and of the folders holding files; ``cores`` C the test names;
``folders`` F the folders at any depth). The body: ``by_stem``'s hashes (int64 × N) and its
values as positions in the sorted basenames (uint32 × N), ``by_core``'s likewise (× C),
``by_folder``'s hashes (int64 × F); then the strings: its folders, in its order.

**Untrusted**: a :class:`~dsh_sidecar.state.files.StateFile` (no symlink followed, a regular
file only, at most :func:`max_bytes`, atomic 0600 writes under a lock). Refused and set aside
before anything is decoded: a head of another workspace or format, counts that are not
integers or past their bounds (C ≤ N, F ≤ :data:`FOLDERS_PER_FILE` × N + the folders), sections
that do not add up to the body, a digest that does not match. Then every entry is checked
against the listing it is read for, so that a forged file within all of that is made again,
never read as tables a build would not make: the positions are each basename once (the test
names: exactly those with a test core), the folders are exactly the listing's folders at any
depth, each once, and every hash is the one of its value's key (:func:`~dsh_sidecar.suggester.
meanttables.key_hash` of its stem, core, or lower-case last name), in sorted order — the
per-key passes of a build (stems, cores: ~0.3 s on 100k), without its sorts. A file of another
listing or rules, or an older version, is no error: the tables are built and the file replaced.
"""

from __future__ import annotations

import hashlib
import logging
import operator
from array import array
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.suggester import meanttables
from dsh_sidecar.suggester.meanttables import (
    Keyed,
    MeantTables,
    ancestors,
    core,
    folder_keys,
    key_hashes,
    sorted_in_runs,
    stem,
)
from dsh_sidecar.workspace.cachenames import cache_path

log = logging.getLogger(__name__)

#: Format version of the file.
VERSION: Final = 1
#: The size model: bytes fixed, per basename (two hashes, two positions) and per folder
#: holding files (its ancestors' hashes and strings: a path's bytes, bounded generously).
BASE_BYTES: Final = 1024 * 1024
PER_NAME_BYTES: Final = 32
PER_FOLDER_BYTES: Final = 1024
#: Most folders at any depth per folder holding a file (its ancestors).
FOLDERS_PER_FILE: Final = 64


def max_bytes(names: int, folders: int) -> int:
    """The largest file written or read for a listing of ``names`` basenames and ``folders``
    folders holding files."""
    return BASE_BYTES + PER_NAME_BYTES * names + PER_FOLDER_BYTES * folders


def rules_digest() -> str:
    """The BLAKE2b of the code that makes the tables (``meanttables.py``)."""
    try:
        return hashlib.blake2b(Path(meanttables.__file__).read_bytes(), digest_size=20).hexdigest()
    except OSError:
        return "unreadable"


def listing_digest(names: Sequence[str], dirs: Sequence[str]) -> str:
    """The BLAKE2b of the sorted basenames and of the sorted folders holding files."""
    h = hashlib.blake2b(digest_size=20)
    h.update("\0".join(names).encode("utf-8", "surrogatepass"))
    h.update(b"\1" + "\0".join(dirs).encode("utf-8", "surrogatepass"))
    return h.hexdigest()


def every_folder(folders: Collection[str]) -> list[str]:
    """The folders holding files and every folder above them, the root left out (``by_folder``'s
    values, as ``MeantTables.of`` makes them)."""
    every = [f for f in folders if f]
    above: set[str] = set()
    for folder in folders:
        for f in ancestors(folder.rpartition("/")[0]):
            if f in folders or f in above:
                break
            above.add(f)
            every.append(f)
    return every


def encode(root: str, names: Sequence[str], digest: str, tables: MeantTables) -> bytes:
    """The file of ``tables``, made from the sorted basenames ``names`` (:func:`listing_digest`
    ``digest``)."""
    where = dict(zip(names, range(len(names))))
    sections = [
        columns.column_bytes("q", tables.by_stem.hashes),
        columns.column_bytes("I", list(map(where.__getitem__, tables.by_stem.items))),
        columns.column_bytes("q", tables.by_core.hashes),
        columns.column_bytes("I", list(map(where.__getitem__, tables.by_core.items))),
        columns.column_bytes("q", tables.by_folder.hashes),
    ]
    head = {
        "version": VERSION,
        "root": root,
        "rules": rules_digest(),
        "listing": digest,
        "names": len(names),
        "cores": len(tables.by_core.items),
        "folders": len(tables.by_folder.items),
    }
    return columns.encode(head, sections, [tables.by_folder.items])


def _keyed(hashes: memoryview, items: list[str], keys: list[str]) -> Keyed:
    """The table of ``items`` under ``keys`` (one each) with the stored ``hashes``; raises
    unless they are the keys' hashes, sorted."""
    stored = array("q", hashes)
    if stored != array("q", key_hashes(keys)) or any(map(operator.gt, stored, stored[1:])):
        raise StateDocumentError("a hash that is not its key's, or out of order")
    return Keyed(stored, items)


def _checked(
    names: Sequence[str], folders: Collection[str], dirs: list[str], ints: list[memoryview], kept: list[str]
) -> tuple[MeantTables, list[str]]:
    """The tables the decoded columns ``ints`` and folders ``kept`` hold, each entry checked
    against the listing (module docstring), and ``by_folder``'s keys; raises on the first entry
    that is not a build's."""
    n = len(names)
    stem_at, core_at = list(ints[1]), list(ints[3])  # (sets, not sorts: no long C call holds the GIL)
    if len(set(stem_at)) != n or (n and max(stem_at) >= n):
        raise StateDocumentError("the basenames are not each listed once")
    stems = list(map(stem, names))
    tested = {i for i, s in enumerate(stems) if core(s) != s}
    if len(core_at) != len(tested) or set(core_at) != tested:
        raise StateDocumentError("the test names are not each listed once")
    every = every_folder(folders)
    if len(kept) != len(every) or set(kept) != set(every):
        raise StateDocumentError("the folders are not the listing's")
    keys = folder_keys(kept)
    tables = MeantTables(
        _keyed(ints[0], list(map(names.__getitem__, stem_at)), list(map(stems.__getitem__, stem_at))),
        _keyed(ints[2], list(map(names.__getitem__, core_at)), [core(s) for s in map(stems.__getitem__, core_at)]),
        _keyed(ints[4], kept, keys),
        dirs,
    )
    return tables, keys


def _reader(root: str, names: Sequence[str], folders: Collection[str], dirs: list[str], digest: str) -> Any:
    """The parser of a file read for the listing of the sorted basenames ``names`` and the
    folders holding files ``folders``: its checked tables, or ``None`` when it was written for
    another listing or rules."""

    def parse(raw: bytes) -> tuple[MeantTables, list[str]] | None:
        current = columns.current_head(raw, root, VERSION, "a missing-path tables file")
        if current is None:
            return None
        head, head_end = current
        if head.get("listing") != digest or head.get("rules") != rules_digest():
            return None
        body = columns.body_of(raw, head_end)
        n, cores, kept = (columns.count(head.get(k)) for k in ("names", "cores", "folders"))
        if n != len(names) or cores > n or kept > FOLDERS_PER_FILE * n + len(folders):
            raise StateDocumentError("counts past the listing's bounds")
        numeric: list[tuple[columns.Code, int]] = [("q", n), ("I", n), ("q", cores), ("I", cores), ("q", kept)]
        lengths = columns.check_layout(head, body, numeric, [kept])
        ints, texts = columns.decode(body, numeric, [kept], lengths)
        return _checked(names, folders, dirs, ints, texts[0])

    return parse


class MeantCache:
    """Load and save one workspace's missing-path tables (module docstring). ``last``: ``None``
    (nothing asked yet), ``"hit"``, ``"miss"`` (built, then written), ``"unwritten"`` (built,
    not written: over the size model, or an I/O error)."""

    def __init__(self, path: Path, root: str) -> None:
        self.root = root
        self.path = path
        self.file = StateFile(self.path, max_bytes=BASE_BYTES)
        self.last: str | None = None

    @classmethod
    def of(cls, cache_dir: Path, root: Path) -> MeantCache:
        """The cache of the workspace ``root`` in ``cache_dir``."""
        return cls(cache_path(cache_dir, root).with_suffix(".meant.bin"), str(root.resolve()))

    def tables(self, names: Sequence[str], folders: Collection[str], paths_of: Mapping[str, list[str]]) -> MeantTables:
        """The tables of the listing of the sorted basenames ``names``, the folders holding
        files ``folders`` and the files of each name ``paths_of``: taken back from the file when
        it holds them, else built and the file written (on the caller's thread: the build's)."""
        dirs = sorted_in_runs(list(folders))
        digest = listing_digest(names, dirs)
        self.file.max_bytes = max_bytes(len(names), len(folders))
        self.file.parse = _reader(self.root, names, folders, dirs, digest)
        try:
            tables = self.file.read()
        except Exception as exc:  # a cache problem is only a slower build
            log.warning("missing-path tables unreadable (%s); building them", exc)
            tables = None
        if isinstance(tables, tuple):  # (the tables, their folders' keys)
            tables[0].digest_common(paths_of, tables[1])
            self.last = "hit"
            return tables[0]
        tables = MeantTables.of(names, folders, paths_of)
        self.last = "miss" if self._write(names, digest, tables) else "unwritten"
        return tables

    def _write(self, names: Sequence[str], digest: str, tables: MeantTables) -> bool:
        try:
            data = encode(self.root, names, digest, tables)
            if len(data) > self.file.max_bytes:
                log.info("missing-path tables not written: %d bytes > %d", len(data), self.file.max_bytes)
                return False
            self.file.replace(data)
        except Exception as exc:  # disk full, read-only cache, lock timeout: a build next time
            log.warning("missing-path tables not written: %s", exc)
            return False
        return True
