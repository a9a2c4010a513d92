"""The symbol cache's journal: the entries of the files changed since the symbol cache
(``cache.py``) was written, ``<cache_dir>/<slug>-<hash>.journal.json`` (slug and hash as the
cache's).

A session applies file changes one batch at a time (``WorkspaceGraph.apply``: a watched-file
batch, or the walk after ready of a tree outside git). Rewriting the whole symbol cache after
each is O(postings) (0.2 s on the synthetic 100k tree, 1.3–1.8 s on real ones); without it the
next session parsed the changed files again before ready and rewrote the whole cache after.
So the entries of the changed files — each file's ``(mtime_ns, size, inode)`` taken before it was
read, its definitions, tokens and whether it is generated, or ``None`` for a file that has no
entry now (deleted, no longer code, unreadable) — are written here, bound to the cache they
amend by its body's digest; the next session maps the cache and lays these over it
(``symbolpass.py``). A write costs O(the journal), never O(the cache): the journal holds at most
:data:`MAX_FILES` files (past it nothing more is journalled, and the next session parses what is
missing and writes the whole cache, which empties the journal), and a session that starts with
more than :data:`COMPACT_AT` files in it writes the whole cache after ready (the journal then
starts empty again).

**Untrusted** (a :class:`~dsh_sidecar.state.files.StateFile`: atomic 0600 writes under a lock,
at most :data:`MAX_BYTES`): a head line ``{"version", "root", "base", "digest"}`` (``digest``: the
BLAKE2b of the rest) and a JSON body ``{path: [mtime_ns, size, inode, generated, [names],
{token: count}] | null}``. Set aside: another workspace's head, a digest that does not match,
more than :data:`MAX_FILES` files, a path that is not a plain relative one, an integer out of its
column's range (or a bool), a name or token that is empty or holds a NUL. A journal whose
``base`` is not the digest of the cache read is ignored (the cache was written again since, by
this session or another). A forged journal within that can only give a file definitions and
tokens it does not have until that file changes (each entry is taken only when its stat is the
file's stat now), as a forged cache can.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.workspace.stats import Stat

log = logging.getLogger(__name__)

#: Format version of the journal.
VERSION: Final = 1
#: Most files a journal holds (past it nothing more is journalled: the next session parses them).
MAX_FILES: Final = 512
#: A session that starts with more files than this in the journal writes the whole cache again.
COMPACT_AT: Final = 128
#: Largest journal read or written, bytes.
MAX_BYTES: Final = 8 * 1024 * 1024
_I64: Final = 2**63
_U64: Final = 2**64
_U32: Final = 2**32

#: One file's entry, as the cache's (``cache.Entry``): ``(stat, definitions, {token: count}, generated)``.
Entry = tuple[Stat, list[str], dict[str, int], bool]
#: A journal's entries: a path's entry now, or ``None`` (it has none).
Entries = dict[str, Entry | None]


def _int(value: Any, low: int, high: int) -> int:
    if type(value) is not int or not low <= value < high:
        raise StateDocumentError("an integer out of its range")
    return value


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value or "\0" in value:
        raise StateDocumentError("a name that is empty or holds a NUL")
    return value


def _path(value: str) -> str:
    parts = value.split("/")
    if not value or "\0" in value or any(p in ("", ".", "..") for p in parts):
        raise StateDocumentError("a path that is not a plain relative one")
    return value


def _entry(value: Any) -> Entry | None:
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 6:
        raise StateDocumentError("an entry that is not a list of six")
    mtime, size, ino, generated, names, tokens = value
    if not isinstance(generated, bool) or not isinstance(names, list) or not isinstance(tokens, dict):
        raise StateDocumentError("an entry of the wrong shape")
    stat = (_int(mtime, -_I64, _I64), _int(size, 0, _I64), _int(ino, 0, _U64))
    counts = {_name(t): _int(n, 1, _U32) for t, n in tokens.items()}
    return stat, sorted(map(_name, names)), counts, generated


def _parse(root: str, base: str) -> Any:
    def parse(raw: bytes) -> Entries | None:
        files = columns.journal_files(
            raw, root=root, version=VERSION, bound={"base": base}, max_files=MAX_FILES, what="a journal"
        )
        return None if files is None else {_path(p): _entry(e) for p, e in files.items()}

    return parse


class SymbolJournal:
    """Read and write the journal of one workspace's symbol cache (module docstring)."""

    def __init__(self, path: Path, root: str) -> None:
        self.root = root
        self.path = path
        self.file = StateFile(self.path, max_bytes=MAX_BYTES, parse=_parse(self.root, ""))

    def load(self, base: str) -> Entries:
        """The entries journalled over the cache whose body's digest is ``base`` (``{}``: none,
        another cache's, or set aside)."""
        self.file.parse = _parse(self.root, base)
        try:
            found = self.file.read()
        except Exception as exc:  # a journal problem is only a few files parsed again
            log.warning("workspace symbol journal unreadable (%s); parsing those files", exc)
            return {}
        return found if isinstance(found, dict) else {}

    def save(self, base: str, entries: Entries) -> bool:
        """Write ``entries`` over the cache ``base``; ``False`` when nothing was written (too many
        files or bytes, an I/O error: the next session parses those files)."""
        if len(entries) > MAX_FILES:
            self.clear()
            return False
        files = {p: None if e is None else [*e[0], e[3], list(e[1]), e[2]] for p, e in entries.items()}
        raw = columns.journal_bytes(files, root=self.root, version=VERSION, bound={"base": base}, allow_nan=True)
        if len(raw) > MAX_BYTES:
            self.clear()
            return False
        return self.file.replace_or_warn(raw, "workspace symbol journal", log)

    def clear(self) -> None:
        """Forget the journal (its cache was written again, or it could not hold the changes)."""
        self.file.remove_or_note("workspace symbol journal", log)
