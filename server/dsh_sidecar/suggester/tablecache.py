"""The suggester's listing tables kept for the next preparation of the same listing:
``<cache_dir>/<slug>-<hash>.tables.bin`` (slug and hash as the symbol cache's,
``workspace/cachenames.index_stem``).

A preparation's largest part on a large tree is one pass over the listing (``prepared.tables``):
the files of each name and of each folder, of each path kind, of ``code`` and of the facts a
name alone gives, the docs roots and their pages, about 1.4 µs a file in Python (0.13–0.19 s
for 100k files). They are a function of the listing (its paths in order and their kinds) and
of the rules that make them (``prepared.py``, ``workspace/facts.py`` and the names it reads from
``workspace/manifests.py``): a session whose
listing, kinds and rules have the digests the file was written for takes them back in C (a
slice of the listing per group), any other makes them and writes the file anew — unless the
tables' journal (``tablejournal.py``) says which paths a session added and removed since the
file's listing: the file is then taken for that listing and the journal laid over it. The content
index's facts are not in it (they change with contents; they are merged after, as before).

**Format**: the columnar format of ``state/columns.py``. The head, beside the format's own
fields: ``{"version", "root", "listing", "rules", "files", "names", "dirs", "groups",
"members", "roots"}`` (``listing``: the BLAKE2b of the paths and their kinds; ``rules``: of the
two modules' source; ``files`` F, ``names`` N, ``dirs`` D, ``groups`` G, ``members`` M,
``roots`` R the counts). The body: ``by_name`` (uint32 × F: positions in the listing, name by
name, each name's files in listing order), ``name_count`` (uint32 × N), ``by_dir`` (uint32 × F)
and ``dir_count`` (uint32 × D) likewise folder by folder, ``members`` (uint32 × M) and
``group_count`` (uint32 × G) the files of each kind or fact; then the strings: the names, the
folders (each with a ``/`` after it: the root folder is the empty string), the kinds and facts,
the docs roots. Each table keeps the order of its keys as made (the order a lookup over folders
answers in).

**Untrusted**: a :class:`~dsh_sidecar.state.files.StateFile` (no symlink followed, a regular
file only, at most :func:`max_bytes` for the listing it is read for, atomic 0600 writes under a
lock). Refused, and set aside, before anything is decoded: a head that is not this workspace's
or this format's, counts that are not integers or past their bounds (N, D ≤ F; G ≤
:data:`MAX_GROUPS`; M ≤ :data:`MEMBERS_PER_FILE` × F; R ≤ D), sections that do not add up to the
body, a digest that does not match; then, decoding: a string section that does not hold its
count, group counts that do not add up, a group key twice, an empty name or folder group (a
kind or fact group may be empty: ``docs-page`` of a tree without docs), a position past the
listing. A file of another listing, kinds or rules, an older version or another byte order is
no error: the tables are made again and the file replaced. A forged file within all of that can
only name listed files under wrong keys (what the user's own cache folder may say of the
user's own tree), never read a file, allocate past its bounds or fail the preparation.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.suggester import tablejournal
from dsh_sidecar.suggester.meantcache import MeantCache
from dsh_sidecar.suggester.tablejournal import Entries, GroupsOf, TablesJournal
from dsh_sidecar.workspace import facts as facts_module
from dsh_sidecar.workspace import manifests as manifests_module
from dsh_sidecar.workspace.cachenames import cache_path

if TYPE_CHECKING:
    from dsh_sidecar.suggester.fileindex import FileIndex
    from dsh_sidecar.workspace.projection import WorkspaceChange

log = logging.getLogger(__name__)

#: Format version of the file.
VERSION: Final = 1
#: The size model: bytes a file may take, fixed and per listed file (names and folders as
#: strings, ~4 positions of 4 bytes a file: 40–60 bytes a file measured).
BASE_BYTES: Final = 1024 * 1024
PER_FILE_BYTES: Final = 256
#: Most kinds and facts a listing's files are grouped under (the rules know a few dozen).
MAX_GROUPS: Final = 1024
#: Most group memberships a file may have (a kind, ``code``, a few facts).
MEMBERS_PER_FILE: Final = 16


def max_bytes(files: int) -> int:
    """The largest file written or read for a listing of ``files`` files."""
    return BASE_BYTES + PER_FILE_BYTES * max(0, files)


@dataclass
class ListingTables:
    """What one pass over a listing makes (``prepared.listing_tables``): its files by name and by
    folder, by kind and name-level fact (``docs-page`` and ``docs-home`` among them), each list
    in listing order, and the docs roots."""

    by_name: dict[str, list[str]] = field(default_factory=dict)
    by_dir: dict[str, list[str]] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    roots: frozenset[str] = frozenset()


def listing_digest(files: Sequence[str], kind_map: Mapping[str, str]) -> str:
    """The BLAKE2b of a listing's paths, in order, and of their kinds (``other`` when it has
    none)."""
    h = hashlib.blake2b(digest_size=20)
    h.update("\0".join(files).encode("utf-8", "surrogatepass"))
    h.update(b"\1" + "\0".join(map(kind_map.get, files, repeat("other"))).encode())
    return h.hexdigest()


@functools.cache
def rules_digest() -> str:
    """The BLAKE2b of the code that makes the tables (``prepared.py``, ``workspace/facts.py``
    and ``workspace/manifests.py``, whose lint and version-tool names the name-level facts
    read): other rules never take back tables the old ones made."""
    h = hashlib.blake2b(digest_size=20)
    sources = (Path(__file__).with_name("prepared.py"), Path(facts_module.__file__ or ""))
    for source in (*sources, Path(manifests_module.__file__ or "")):
        try:
            h.update(source.read_bytes())
        except OSError:
            return "unreadable"
    return h.hexdigest()


def _groups(table: Mapping[str, list[str]], where: Mapping[str, int]) -> tuple[bytes, bytes]:
    """A table's members (positions) and its group sizes, as column bytes."""
    members = list(map(where.__getitem__, chain.from_iterable(table.values())))
    return columns.column_bytes("I", members), columns.column_bytes("I", list(map(len, table.values())))


def encode(root: str, files: Sequence[str], digest: str, tables: ListingTables) -> bytes:
    """The file of ``tables`` made from ``files`` (whose :func:`listing_digest` is ``digest``)."""
    where = dict(zip(files, range(len(files))))
    sections = [
        *_groups(tables.by_name, where),
        *_groups(tables.by_dir, where),
        *_groups(tables.groups, where),
    ]
    head = {
        "version": VERSION,
        "root": root,
        "listing": digest,
        "rules": rules_digest(),
        "files": len(files),
        "names": len(tables.by_name),
        "dirs": len(tables.by_dir),
        "groups": len(tables.groups),
        "members": sum(map(len, tables.groups.values())),
        "roots": len(tables.roots),
    }
    strings = (list(tables.by_name), [d + "/" for d in tables.by_dir], list(tables.groups), sorted(tables.roots))
    return columns.encode(head, sections, strings)


def _table(keys: list[str], sizes: memoryview, members: list[str], empty: bool = False) -> dict[str, list[str]]:
    """``{key: its slice of members}``, the slices made in C; raises unless the sizes are
    positive (or zero, with ``empty``: a kind or fact group such as ``docs-page`` is written
    even when no file has it), add up to the members, and the keys are distinct."""
    if sum(sizes) != len(members) or (not empty and len(sizes) and min(sizes) == 0):
        raise StateDocumentError("group sizes do not add up")
    ends = list(accumulate(sizes))
    table = dict(zip(keys, map(members.__getitem__, map(slice, [0, *ends[:-1]], ends))))
    if len(table) != len(keys):
        raise StateDocumentError("a group key twice")
    return table


def _reader(root: str, files: Sequence[str], digest: str) -> Any:
    """The parser of a file read for the listing ``files`` (of :func:`listing_digest`
    ``digest``): its tables, or ``None`` when it was written for another listing or rules."""
    listed = len(files)

    def parse(raw: bytes) -> ListingTables | None:
        current = columns.current_head(raw, root, VERSION, "a tables file")
        if current is None:
            return None  # an older format of ours or another machine: made again, nothing set aside
        head, head_end = current
        if head.get("listing") != digest or head.get("rules") != rules_digest():
            return None  # another listing or rules: made again and written anew
        body = columns.body_of(raw, head_end)
        n, names, dirs, groups, members, roots = (
            columns.count(head.get(k)) for k in ("files", "names", "dirs", "groups", "members", "roots")
        )
        if (
            n != listed
            or names > n
            or dirs > n
            or groups > MAX_GROUPS
            or members > MEMBERS_PER_FILE * n
            or roots > dirs
        ):
            raise StateDocumentError("counts past the listing's bounds")
        numeric: list[tuple[columns.Code, int]] = [("I", n), ("I", names), ("I", n), ("I", dirs), ("I", members)]
        numeric.append(("I", groups))
        counts = [names, dirs, groups, roots]
        lengths = columns.check_layout(head, body, numeric, counts)
        ints, texts = columns.decode(body, numeric, counts, lengths)
        try:
            paths = [list(map(files.__getitem__, ints[k])) for k in (0, 2, 4)]
        except IndexError:
            raise StateDocumentError("a position past the listing") from None
        return ListingTables(
            by_name=_table(texts[0], ints[1], paths[0]),
            by_dir=_table([d[:-1] for d in texts[1]], ints[3], paths[1]),
            groups=_table(texts[2], ints[5], paths[2], empty=True),
            roots=frozenset(texts[3]),
        )

    return parse


class TablesCache:
    """Load and save the listing tables of one workspace (module docstring). ``last`` says what
    the last preparation found: ``None`` (none yet), ``"hit"``, ``"journal"`` (the file of an
    earlier listing with the journal of the paths added and removed since laid over it:
    ``tablejournal.py``), ``"miss"`` (made, then written), ``"unwritten"`` (made, not written:
    over the size model, or an I/O error). A miss's file is encoded at once (:meth:`save`,
    before the tables are handed to anyone) and written by :meth:`flush`, which the owner calls
    once the preparation is swapped in: the first one never waits for a disk's ``fsync``. The
    paths a session's batches add and remove go to the journal (:meth:`note`)."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.root = str(root.resolve())
        stem = cache_path(cache_dir, root)
        self.path = stem.with_suffix(".tables.bin")
        self.file = StateFile(self.path, max_bytes=BASE_BYTES)
        self.journal = TablesJournal(stem.with_suffix(".tables-journal.json"), self.root)
        self.last: str | None = None
        self._pending: bytes | None = None
        #: the missing-path tables of the listing, beside it (``meantcache.py``)
        self.meant = MeantCache(self.path.with_name(self.path.name.replace(".tables.bin", ".meant.bin")), self.root)
        self._pending_base = ""
        #: the digest of the listing the file on disk was made from ("": none known: not
        #: journalled), and the paths added and removed since (the journal's entries)
        self.base = ""
        self.entries: Entries = {}

    def load(
        self,
        files: Sequence[str],
        kind_map: Mapping[str, str],
        groups_of: GroupsOf | None = None,
        moves: Callable[[str], bool] | None = None,
    ) -> tuple[ListingTables | None, str]:
        """The tables of ``files`` (with the kinds ``kind_map``) when the file holds them, or
        holds those of the listing the journal amends (``groups_of``: the groups of one file,
        ``moves``: whether a path may move the docs roots, then the journal is not laid over),
        else ``None``; and the listing's digest (for :meth:`save`)."""
        self.base, self.entries = "", {}
        if groups_of is not None and moves is not None:
            base, entries = self.journal.load()
            tables = self._journalled(list(files), kind_map, base, entries, groups_of, moves) if entries else None
            if tables is not None:
                self.last, self.base, self.entries = "journal", base, entries
                digest = listing_digest(files, kind_map) if len(entries) > tablejournal.COMPACT_AT else ""
                if digest and self.save(files, digest, tables):  # written whole, the journal emptied
                    self.last = "journal"
                return tables, digest
        digest = listing_digest(files, kind_map)
        tables = self._read(files, digest)
        self.last = "hit" if tables is not None else None
        if tables is not None:
            self.base = digest
        return tables, digest

    def _read(self, files: Sequence[str], digest: str) -> ListingTables | None:
        self.file.max_bytes = max_bytes(len(files))
        self.file.parse = _reader(self.root, files, digest)
        try:
            tables: ListingTables | None = self.file.read()
        except Exception as exc:  # a cache problem is only a slower preparation
            log.warning("suggester tables unreadable (%s); making them", exc)
            tables = None
        return tables

    def _journalled(
        self,
        files: list[str],
        kind_map: Mapping[str, str],
        base: str,
        entries: Entries,
        groups_of: GroupsOf,
        moves: Callable[[str], bool],
    ) -> ListingTables | None:
        """The tables of ``files`` from the file of the listing ``base`` with ``entries`` laid
        over them (``tablejournal.py``), when that listing is the one they amend."""
        if any(map(moves, entries)):
            return None
        listing = tablejournal.base_listing(files, entries)
        if listing is None:
            return None
        kinds = dict(kind_map)
        kinds.update((rel, was) for rel, (was, _) in entries.items() if was is not None)
        if listing_digest(listing, kinds) != base:
            return None
        made = self._read(listing, base)
        if made is None:
            return None
        patched = tablejournal.patch(made.by_name, made.by_dir, made.groups, entries, kind_map, groups_of)
        if patched is None:
            log.warning("suggester tables journal does not fit its tables; making them")
            return None
        return ListingTables(patched[0], patched[1], made.groups, made.roots)

    def note(self, before: FileIndex, change: WorkspaceChange) -> None:
        """A batch the session applied to its tables (``prepared.apply_change``; ``before``: the
        file index it was applied to): the paths it added and removed (a path whose kind changed
        is both) written to the journal over the file on disk. Nothing when no file is known for
        this session's listing; a journal that cannot take them is removed (the next session
        makes the tables)."""
        if not self.base:
            return
        tablejournal.note(self.entries, *tablejournal.listing_moves(before, change))
        if len(self.entries) <= tablejournal.MAX_FILES and self.journal.save(self.base, self.entries):
            return
        self.base, self.entries = "", {}
        self.journal.clear()

    def save(self, files: Sequence[str], digest: str, tables: ListingTables) -> bool:
        """Encode ``tables`` (made from ``files``, of :func:`listing_digest` ``digest``) for
        :meth:`flush`; ``False`` (nothing to write) over the size model."""
        self.last, self._pending = "unwritten", None
        self.base, self.entries = "", {}  # the file on disk is not this listing's yet
        try:
            data = encode(self.root, files, digest, tables)
        except Exception as exc:  # a path not listed (a caller's bug): keep serving
            log.warning("suggester tables not written: %s", exc)
            return False
        if len(data) > max_bytes(len(files)):
            log.info("suggester tables not written: %d bytes > %d", len(data), max_bytes(len(files)))
            return False
        self._pending, self._pending_base = data, digest
        return True

    def flush(self) -> bool:
        """Write what :meth:`save` encoded, if anything; ``False`` on an I/O error (disk full,
        read-only cache, lock timeout: only a slower preparation next time). The journal of the
        file it replaces is removed after (a crash between the two leaves a journal of another
        base: not laid over)."""
        data, self._pending = self._pending, None
        if data is None:
            return False
        try:
            self.file.replace(data)
        except Exception as exc:
            log.warning("suggester tables not written: %s", exc)
            return False
        self.last = "journal" if self.last == "journal" else "miss"
        self.base, self.entries = self._pending_base, {}
        self.journal.clear()
        return True
