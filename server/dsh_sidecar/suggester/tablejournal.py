"""The listing tables' journal: the paths a session added to or removed from the listing since
the tables file (``tablecache.py``) was written, ``<cache_dir>/<slug>-<hash>.tables-journal.json``.

The tables file is keyed by the digest of the listing it was made from; a session that added or
removed one file leaves a listing of another digest, and the next session made the tables again
in one pass over every path (0.13–0.19 s of CPU on 100k files) and wrote the file again. Now a
session that applies such a batch (``prepared.apply_change``) keeps its net adds and removes
here, bound to the digest of the listing the tables file was made from (its ``base``), and the
next session takes the file back for that listing and lays the journal over the tables
(:func:`patch`), O(changed × log files) plus one ordered copy of a table whose keys moved.

How the next session knows the journal is the tables file's: it makes the base listing again
from its own listing and the journal (:func:`base_listing`: the added paths taken out, the
removed ones put back with the kinds they had) and takes the file only when that listing's
digest is the journal's ``base`` and the file's. Whatever a journal holds, the tables it gives
are those of a listing whose digest was checked: a forged or stale journal (another base, a
path it says was added and is not listed, a crash between the file's write and the journal's)
makes the tables again, never wrong ones. A path that may move the docs roots (a doc file, a
docs marker, a file in a folder named like docs) is never journalled (the preparation is made
whole then, and its file written); one in a journal read makes the tables again.

**Untrusted** (a :class:`~dsh_sidecar.state.files.StateFile`: atomic 0600 writes under a lock,
at most :data:`MAX_BYTES`): a head line ``{"version", "root", "base", "digest"}`` (``digest``:
the BLAKE2b of the rest) and a JSON body ``{path: [kind it had or null, listed now]}``. Set
aside: another workspace's head, a digest that does not match, a ``base`` that is not a digest,
more than :data:`MAX_FILES` paths, a path that is not a plain relative one, a kind that is not a
short string, an entry that says nothing changed.
"""

from __future__ import annotations

import bisect
import logging
import re
from collections.abc import Callable, Iterable, Mapping
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile

if TYPE_CHECKING:
    from dsh_sidecar.suggester.fileindex import FileIndex
    from dsh_sidecar.workspace.projection import WorkspaceChange

log = logging.getLogger(__name__)

#: Format version of the journal.
VERSION: Final = 1
#: Most paths a journal holds (past it the session's tables are made again by the next one).
MAX_FILES: Final = 512
#: A session that lays more paths than this over its tables writes them whole for its listing.
COMPACT_AT: Final = 128
#: Longest path and kind journalled, characters.
MAX_PATH_CHARS: Final = 1024
MAX_KIND_CHARS: Final = 64
#: Largest journal read or written, bytes.
MAX_BYTES: Final = 1024 * 1024
_DIGEST: Final = re.compile(r"[0-9a-f]{40}")

#: One path's entry: the kind it had in the base listing (``None``: not in it), and whether it
#: is in the listing now.
Entry = tuple[str | None, bool]
Entries = dict[str, Entry]


def _path(value: str) -> str:
    parts = value.split("/")
    if not value or len(value) > MAX_PATH_CHARS or "\0" in value or any(p in ("", ".", "..") for p in parts):
        raise StateDocumentError("a path that is not a plain relative one")
    return value


def _entry(value: Any) -> Entry:
    if not isinstance(value, list) or len(value) != 2 or type(value[1]) is not bool:
        raise StateDocumentError("an entry that is not [kind or null, bool]")
    was, now = value
    if was is not None and (not isinstance(was, str) or not 0 < len(was) <= MAX_KIND_CHARS):
        raise StateDocumentError("a kind that is not a short string")
    if was is None and not now:
        raise StateDocumentError("an entry that says nothing changed")
    return was, now


def _parse(root: str) -> Callable[[bytes], tuple[str, Entries]]:
    def parse(raw: bytes) -> tuple[str, Entries]:
        files = columns.journal_files(
            raw, root=root, version=VERSION, bound={}, max_files=MAX_FILES, what="a tables journal"
        )
        base = columns.head_of(raw)[0].get("base")
        if files is None or not isinstance(base, str) or not _DIGEST.fullmatch(base):
            raise StateDocumentError("a base that is not a digest")
        return base, {_path(p): _entry(e) for p, e in files.items()}

    return parse


class TablesJournal:
    """Read and write the tables' journal of one workspace (module docstring)."""

    def __init__(self, path: Path, root: str) -> None:
        self.root = root
        self.file = StateFile(path, max_bytes=MAX_BYTES, parse=_parse(root))

    def load(self) -> tuple[str, Entries]:
        """The base digest and the entries journalled (``("", {})``: none, or set aside)."""
        try:
            found = self.file.read()
        except Exception as exc:  # a journal problem is only the tables made again
            log.warning("suggester tables journal unreadable (%s); making them", exc)
            return "", {}
        return found if isinstance(found, tuple) else ("", {})

    def save(self, base: str, entries: Entries) -> bool:
        """Write ``entries`` over the tables of the listing ``base``; ``False`` when nothing was
        written (too many paths, too long, an I/O error: the next session makes the tables)."""
        if len(entries) > MAX_FILES or any(len(p) > MAX_PATH_CHARS for p in entries):
            return False
        body = {p: [was, now] for p, (was, now) in entries.items()}
        raw = columns.journal_bytes(body, root=self.root, version=VERSION, bound={"base": base}, allow_nan=False)
        if len(raw) > MAX_BYTES:
            return False
        return self.file.replace_or_warn(raw, "suggester tables journal", log)

    def clear(self) -> None:
        """Forget the journal (the tables file was written again)."""
        self.file.remove_or_note("suggester tables journal", log)


def note(entries: Entries, added: Iterable[str], removed: Mapping[str, str]) -> None:
    """Lay one batch over ``entries`` (in place): ``added`` paths now listed, ``removed`` ones
    (with the kind each had before the batch) no longer listed; a path whose kind changed is
    both. What the base listing held is kept: a path added then removed is forgotten, one
    removed then added again is the base's kind and listed."""
    for rel, kind in removed.items():
        was = entries[rel][0] if rel in entries else kind
        if was is None:
            del entries[rel]
        else:
            entries[rel] = (was, False)
    for rel in added:
        entries[rel] = (entries[rel][0] if rel in entries else None, True)


def base_listing(files: list[str], entries: Entries) -> list[str] | None:
    """The sorted listing the journal ``entries`` amend, made from the sorted listing ``files``
    they lead to: ``None`` when they do not fit it (a path listed now that is not in ``files``,
    one gone that is)."""
    base = list(files)
    for rel, (_, now) in entries.items():
        if now:
            i = bisect.bisect_left(base, rel)
            if i == len(base) or base[i] != rel:
                return None
            del base[i]
    for rel, (was, now) in entries.items():
        if was is not None:
            i = bisect.bisect_left(base, rel)
            if not now and i < len(base) and base[i] == rel:
                return None
            base.insert(i, rel)
    return base


#: ``(path, kind) -> the groups (kinds and name-level facts) a listed file is in``.
GroupsOf = Callable[[str, str], Iterable[str]]


def patch(
    by_name: dict[str, list[str]],
    by_dir: dict[str, list[str]],
    groups: dict[str, list[str]],
    entries: Entries,
    kinds: Mapping[str, str],
    groups_of: GroupsOf,
) -> tuple[dict[str, list[str]], dict[str, list[str]]] | None:
    """Lay ``entries`` over the tables of their base listing (each list sorted, as the listing;
    ``groups`` changed in place): each path taken out of its name's, folder's and groups' lists
    with the kind it had, each path listed now put in with its kind in ``kinds``; a list left
    empty goes with its key. The name and folder tables with their keys in the order of their
    first files, as one pass over the new listing makes them; ``None`` when the tables do not
    hold what the base listing does (a path to take out that is not there, one to put in that
    is)."""
    names: set[str] = set()
    dirs: set[str] = set()
    try:
        for rel, (was, _) in entries.items():
            folder, _, name = rel.rpartition("/")
            if was is not None:
                _take(by_name, name, rel, names)
                _take(by_dir, folder, rel, dirs)
                for group in groups_of(rel, was):
                    _take(groups, group, rel, None)
        for rel, (_, now) in entries.items():
            if now:
                folder, _, name = rel.rpartition("/")
                _put(by_name, name, rel, names)
                _put(by_dir, folder, rel, dirs)
                for group in groups_of(rel, kinds.get(rel, "other")):
                    _put(groups, group, rel, None)
    except LookupError:
        return None
    return _ordered(by_name, names), _ordered(by_dir, dirs)


def _take(table: dict[str, list[str]], key: str, rel: str, moved: set[str] | None) -> None:
    """``rel`` out of ``table[key]`` (the key out when it was its last); ``moved``: the keys
    whose first file changed. Raises ``LookupError`` when it is not there."""
    paths = table[key]
    i = bisect.bisect_left(paths, rel)
    if i == len(paths) or paths[i] != rel:
        raise LookupError(rel)
    del paths[i]
    if not paths:
        del table[key]
    if moved is not None and i == 0:
        moved.add(key)


def _put(table: dict[str, list[str]], key: str, rel: str, moved: set[str] | None) -> None:
    """``rel`` into ``table[key]`` in order (the key made when new); ``moved`` as :func:`_take`.
    Raises ``LookupError`` when it is there already."""
    paths = table.get(key)
    if paths is None:
        table[key] = [rel]
        i = 0
    else:
        i = bisect.bisect_left(paths, rel)
        if i < len(paths) and paths[i] == rel:
            raise LookupError(rel)
        paths.insert(i, rel)
    if moved is not None and i == 0:
        moved.add(key)


def _ordered(table: dict[str, list[str]], moved: set[str]) -> dict[str, list[str]]:
    """``table`` with its keys in the order of their first files when the keys in ``moved``
    (whose first file changed, or new) may have left it; the others kept their order. The
    passes over every key are C loops (``map``, ``zip``): a new name on 100k files is a few
    milliseconds, not a Python step a key."""
    moved &= table.keys()
    if not moved:
        return table
    keys = list(table)
    firsts = list(map(itemgetter(0), table.values()))
    for key in moved:
        i = keys.index(key)
        del keys[i], firsts[i]
    for key in sorted(moved, key=lambda k: table[k][0]):
        i = bisect.bisect_left(firsts, table[key][0])
        firsts.insert(i, table[key][0])
        keys.insert(i, key)
    if keys == list(table):
        return table
    return dict(zip(keys, map(table.__getitem__, keys)))


def listing_moves(before: FileIndex, change: WorkspaceChange) -> tuple[set[str], dict[str, str]]:
    """What a batch did to the listing the tables are made of (``tablecache.TablesCache.note``):
    the paths listed now that were not, or under another kind; and the paths no longer listed
    or under another kind, each with the kind it had."""
    removed = {p: before.kind(p) for p in change.removed if before.exists(p)}
    for rel, kind in change.kinds.items():
        if rel not in change.added and before.exists(rel) and before.kind(rel) != kind:
            removed[rel] = before.kind(rel)
    return {p for p in change.added if not before.exists(p)} | (removed.keys() - change.removed), removed
