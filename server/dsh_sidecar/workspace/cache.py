"""The on-disk cache of the symbol index: ``$DSH_HOME/workspace/<slug>-<hash>.json``.

Only the symbol pass is cached here: re-parsing with tree-sitter costs 7–18× more than reading
the cache back (bench/workspace.py prints both); the content index keeps its own rows
(``fts.py``), and the listing is taken again each build (it is what tells a cache is current).

The document (format :data:`CACHE_VERSION`) holds the indexed files in columns, one entry per
column per file, so that reading it back is a few JSON arrays, not one object per file: a head
line ``{"version", "root", "digest"}`` (``digest``: the BLAKE2b of the rest), then the columns
``paths``, ``mtime`` (ns), ``size``, ``ino``, ``generated`` (0/1), ``ndefs`` and ``defs`` (the
names each defines), ``ntokens``, ``tokens`` and ``counts`` (each file's identifier tokens and how
often each occurs), the lists of names and tokens flat (:class:`SymbolEntries`). A file whose ``(mtime_ns, size, inode)`` still match
is taken from the cache without being read; any other is parsed again; a session on an
unchanged tree reads every entry back at once (:meth:`SymbolEntries.index`).

It is untrusted state: a :class:`~dsh_sidecar.state.files.StateFile` (atomic, 0600, locked,
refused past :data:`MAX_CACHE_BYTES`); a document that is not JSON, not of this workspace,
whose columns are not the types and lengths above, with an integer out of range, or whose
digest does not match, is set aside and the index is built from scratch (a cold start, never
a failure); an older format of ours is ignored.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import accumulate
from pathlib import Path
from typing import Any, Final

from dsh_sidecar.state.files import MAX_INT, StateDocumentError, StateFile, atomic_write_bytes
from dsh_sidecar.workspace.heap import collections_paused
from dsh_sidecar.workspace.stats import Stat
from dsh_sidecar.workspace.symbols import FileSymbols, SymbolIndex

log = logging.getLogger(__name__)

#: Format version of the cache document.
CACHE_VERSION: Final = 4
#: Largest cache written or read, bytes.
MAX_CACHE_BYTES: Final = 64 * 1024 * 1024
#: The columns of the document.
COLUMNS: Final = ("paths", "mtime", "size", "ino", "generated", "ndefs", "defs", "ntokens", "tokens", "counts")
#: Largest unsigned 64-bit value (an inode number).
_MAX_U64: Final = 2**64 - 1

#: One file's cache entry: ``(stat, definitions, {token: count}, generated)``.
Entry = tuple[Stat, list[str], dict[str, int], bool]


def cache_path(cache_dir: Path, root: Path) -> Path:
    """``<cache_dir>/<slug>-<hash>.json``: slug = the folder name lower-cased to
    ``[a-z0-9-]``, hash = the first 12 hex digits of SHA-1 of the resolved root path."""
    resolved = str(root.resolve())
    slug = re.sub(r"[^a-z0-9]+", "-", root.name.lower()).strip("-") or "workspace"
    return cache_dir / f"{slug}-{hashlib.sha1(os.fsencode(resolved)).hexdigest()[:12]}.json"


@dataclass
class SymbolEntries:
    """The entries of a cache document, by column (:data:`COLUMNS`): position ``i`` of ``paths``,
    ``mtime``, ``size``, ``ino``, ``generated``, ``ndefs`` and ``ntokens`` is one file; ``defs``,
    ``tokens`` and ``counts`` hold every file's names and tokens one after the other (the
    ``i``-th file's are the ``ndefs[i]`` / ``ntokens[i]`` after those of the files before it):
    flat lists of strings and numbers, which JSON reads back without a container per file."""

    paths: list[str] = field(default_factory=list)
    mtime: list[int] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    ino: list[int] = field(default_factory=list)
    generated: list[int] = field(default_factory=list)
    ndefs: list[int] = field(default_factory=list)
    defs: list[str] = field(default_factory=list)
    ntokens: list[int] = field(default_factory=list)
    tokens: list[str] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)
    _where: dict[str, int] | None = None
    _offsets: tuple[list[int], list[int]] | None = None

    def __len__(self) -> int:
        return len(self.paths)

    def position(self, rel: str) -> int | None:
        """Where ``rel``'s entry is (``None``: it has none)."""
        if self._where is None:
            self._where = {p: i for i, p in enumerate(self.paths)}
        return self._where.get(rel)

    def offsets(self) -> tuple[list[int], list[int]]:
        """Where each file's names and tokens start in ``defs`` and ``tokens`` (and, last, the
        lengths of those columns)."""
        if self._offsets is None:
            self._offsets = (list(accumulate(self.ndefs, initial=0)), list(accumulate(self.ntokens, initial=0)))
        return self._offsets

    def stat(self, i: int) -> Stat:
        """The stat the ``i``-th entry was made from."""
        return self.mtime[i], self.size[i], self.ino[i]

    def _parts(self, i: int) -> tuple[list[str], dict[str, int]]:
        d, t = self.offsets()
        return self.defs[d[i] : d[i + 1]], dict(zip(self.tokens[t[i] : t[i + 1]], self.counts[t[i] : t[i + 1]]))

    def entry(self, i: int) -> Entry:
        """The ``i``-th entry."""
        defs, tokens = self._parts(i)
        return self.stat(i), defs, tokens, bool(self.generated[i])

    def symbols(self, i: int) -> FileSymbols:
        """The ``i``-th file's symbols, as the cache gives them."""
        if self.generated[i]:
            return FileSymbols(generated=True, parser="cache")
        defs, tokens = self._parts(i)
        return FileSymbols(frozenset(defs), tokens, parser="cache")

    def index(self) -> SymbolIndex:
        """A symbol index of every entry (the whole cache was current): built from the columns."""
        d, t = self.offsets()
        with collections_paused():  # tens of thousands of long-lived tables, no cycle
            return SymbolIndex.from_columns(self.paths, self.defs, d, self.tokens, self.counts, t, self.generated)

    @classmethod
    def of(cls, entries: Iterable[tuple[str, Entry]]) -> SymbolEntries:
        """The columns of ``(path, entry)`` pairs."""
        out = cls()
        for rel, (st, defs, tokens, generated) in entries:
            out.paths.append(rel)
            out.mtime.append(st[0])
            out.size.append(st[1])
            out.ino.append(st[2])
            out.generated.append(1 if generated else 0)
            out.ndefs.append(len(defs))
            out.defs += defs
            out.ntokens.append(len(tokens))
            out.tokens += tokens
            out.counts += tokens.values()
        return out


def _ints(values: Any, low: int, high: int) -> bool:
    """Whether ``values`` is a list of integers within ``[low, high]`` (checked in C: ``map``)."""
    return (
        isinstance(values, list)
        and set(map(type, values)) <= {int}
        and (not values or low <= min(values) and max(values) <= high)
    )


def _strs(values: Any) -> bool:
    return isinstance(values, list) and set(map(type, values)) <= {str}


def _validate(root: str) -> Any:
    def check(doc: Any) -> SymbolEntries | None:
        if not isinstance(doc, dict) or doc.get("root") != root:
            raise ValueError("not a symbol cache of this workspace")
        if doc.get("version") != CACHE_VERSION:
            if isinstance(doc.get("version"), int) and doc["version"] < CACHE_VERSION:
                return None  # an older format of ours: a cold start, nothing to set aside
            raise ValueError("not a symbol cache of this format")
        if not _strs(doc.get("paths")) or len(set(doc["paths"])) != len(doc["paths"]):
            raise ValueError("paths must be distinct strings")
        n = len(doc["paths"])
        per_file = all(
            _ints(doc.get(c), 0, high) and len(doc[c]) == n
            for c, high in (("mtime", MAX_INT), ("size", MAX_INT), ("ino", _MAX_U64), ("generated", 1))
        ) and all(_ints(doc.get(c), 0, MAX_INT) and len(doc[c]) == n for c in ("ndefs", "ntokens"))
        ok = (
            per_file
            and _strs(doc.get("defs"))
            and _strs(doc.get("tokens"))
            and _ints(doc.get("counts"), 1, MAX_INT)
            and sum(doc["ndefs"]) == len(doc["defs"])
            and sum(doc["ntokens"]) == len(doc["tokens"]) == len(doc["counts"])
        )
        if not ok:
            raise ValueError("columns of the wrong type or length")
        return SymbolEntries(**{c: doc[c] for c in COLUMNS})

    return check


def _digest(body: bytes) -> str:
    return hashlib.blake2b(body, digest_size=20).hexdigest()


def _parse(raw: bytes) -> Any:
    """A cache document: its head line (``version``, ``root``, ``digest``: the BLAKE2b of the
    rest) and its columns, as one object; a digest that does not match raises. No non-finite
    numbers; the other bounds are the validator's."""

    def constant(name: str) -> Any:
        raise StateDocumentError(f"non-finite number {name}")

    head_end = raw.find(b"\n")
    try:
        if head_end < 0:  # one document: an older format (or anything else): the validator says
            return json.loads(raw, parse_constant=constant)
        head = json.loads(raw[:head_end], parse_constant=constant)
        if not isinstance(head, dict) or head.get("version") != CACHE_VERSION:
            return head  # a foreign or older document: the validator says which
        body = raw[head_end + 1 :]
        if head.get("digest") != _digest(body):
            raise StateDocumentError("digest mismatch")
        columns = json.loads(body, parse_constant=constant)
    except RecursionError:
        raise StateDocumentError("nested too deeply") from None
    if not isinstance(columns, dict):
        raise StateDocumentError("columns must be an object")
    return {**columns, "version": head["version"], "root": head.get("root")}


class SymbolCache:
    """Load and save the per-file symbol entries of one workspace."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.root = str(root.resolve())
        self.path = cache_path(cache_dir, root)
        self.file = StateFile(self.path, validate=_validate(self.root), max_bytes=MAX_CACHE_BYTES, parse=_parse)

    def load(self) -> SymbolEntries:
        """The cached entries (none when absent, corrupt, foreign or unreadable)."""
        try:
            with collections_paused():  # the columns: long-lived, no cycle
                return self.file.read() or SymbolEntries()
        except Exception as exc:  # a cache problem is only a slower start
            log.warning("workspace symbol cache unreadable (%s); indexing from scratch", exc)
            return SymbolEntries()

    def save(self, entries: SymbolEntries) -> bool:
        """Write the entries; ``False`` (nothing written) when too big or on an I/O error."""
        body = json.dumps({c: getattr(entries, c) for c in COLUMNS}, separators=(",", ":")).encode()
        head = {"version": CACHE_VERSION, "root": self.root, "digest": _digest(body)}
        data = json.dumps(head, separators=(",", ":")).encode() + b"\n" + body
        if len(data) > MAX_CACHE_BYTES:
            log.info("workspace symbol cache not written: %d bytes > %d", len(data), MAX_CACHE_BYTES)
            return False
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            with self.file.lock:
                atomic_write_bytes(self.path, data)
            return True
        except Exception as exc:  # disk full, read-only home, lock timeout: keep serving
            log.warning("workspace symbol cache not written: %s", exc)
            return False
