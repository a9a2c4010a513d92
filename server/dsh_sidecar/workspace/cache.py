"""The on-disk cache of the symbol index: ``$DSH_CACHE_DIR/workspace/<slug>-<hash>.json`` (the
name of every format: ``cachedir.py`` finds a cache's workspace in its JSON head line).

Only the symbol pass is cached here: re-parsing with tree-sitter costs 7–18× more than reading
the cache back (bench/workspace.py prints both); the content index keeps its own rows
(``fts.py``), and the listing is taken again each build (it is what tells a cache is current).

**Format** (:data:`CACHE_VERSION`): a head line, JSON, padded with spaces to a multiple of 8
bytes, then a binary body in sections, each padded with zeros to a multiple of 8 bytes. The head
is ``{"version", "root", "byteorder", "digest", "files", "defs", "vocab", "postings",
"strings"}``: ``digest`` the BLAKE2b of the body; ``files`` (F), ``defs`` (D), ``vocab`` (V)
and ``postings`` (P) the counts of the columns; ``strings`` the byte lengths of the three string
sections. The body, in order (:data:`NUMERIC`, then the strings): ``mtime`` (ns), ``size``
(int64 × F), ``ino`` (uint64 × F), ``ndefs``, ``ntokens``, ``length`` (uint32 × F: how many tokens, how many occurrences); each file's tokens
``tokens`` (uint32 × P: positions in the vocabulary) and ``counts`` (uint32 × P); the same
postings token by token, ``npost`` (uint32 × V: how many files each token has), ``pfiles``
(uint32 × P: positions of files) and ``pcounts`` (uint32 × P); ``generated`` (uint8 × F, 0/1);
then ``paths`` (F), ``defs`` (D: the names each file defines, one after the other) and ``vocab``
(V: every identifier token once), each UTF-8 joined by NUL. File ``i``'s names are the
``ndefs[i]`` after those of the files before it; its tokens and their counts likewise
(``ntokens``) (:class:`SymbolEntries`). Integers are in the writer's byte order (a cache of
another byte order is a cold start); the numeric columns are used in place (``memoryview``),
not copied.

A file whose ``(mtime_ns, size, inode)`` still match is taken from the cache without being
read; any other is parsed again. A session on an unchanged tree maps the cache rather than
rebuilding it (:meth:`SymbolEntries.index`): the definitions and each file's names and length
are made at once, the usages stay in the token-by-token columns until a token is asked for
(``symbols.CachedPostings``), so a warm start costs O(files), not O(postings).

**Size model**: a cache may take :data:`BASE_BYTES` plus :data:`PER_FILE_BYTES` for each file it
holds, at most :data:`CEILING_BYTES` (:func:`max_cache_bytes`). Real repositories need ~16 bytes
a token of a file (both layouts of the postings) and their strings: 2.6 KB a file on a 20k-file
mix of real repositories (sympy, astropy, keras, prettier, dubbo, …; the JSON columns of the
previous format took 2.0 KB there, 2.7–3.6 KB on others), the synthetic tree of the benches
~140 bytes. A larger cache is not written (a cold start next time).

It is untrusted state: a :class:`~dsh_sidecar.state.files.StateFile` (atomic, 0600, locked,
refused past the size model for the listing it is read for), in the columnar format of
``state/columns.py`` (the suggester's listing tables use the same). Before anything is decoded the
head is checked against the file and the listing (:func:`_layout`): every count a non-negative
integer, at most :data:`FILES_SLACK` × the listing's code files (plus 1,024) files, at most
:func:`strings_bound` names and vocabulary strings (:data:`STRINGS_BASE` plus
:data:`STRINGS_PER_FILE` a file: a workspace's vocabulary grows slower than its files, so a small
repository has many strings a file — 680 in a two-file one, 130 in requests — and a large one few,
3–80 measured on 365 real checkouts; the writer keeps to the same bound), each string section
holding exactly its count of non-empty strings, and the sections adding up to the body's
length to the byte; then the digest. Decoding such a file allocates the strings it declares
and nothing more (the integers are read in place). Paths that repeat, per-file counts that do
not add up to the declared ones, or a ``generated`` flag other than 0/1 set the file aside too
and the index is built from scratch (a cold start, never a failure); an older format of ours
is ignored. Positions are not checked one by one (a pass over every posting of a warm start):
one past the vocabulary or the files reads as no token, no file.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import accumulate, chain, repeat
from pathlib import Path
from typing import Any, Final, Literal

from dsh_sidecar.state import columns
from dsh_sidecar.state.files import StateDocumentError, StateFile
from dsh_sidecar.workspace.cachenames import cache_path
from dsh_sidecar.workspace.heap import collections_paused
from dsh_sidecar.workspace.journal import Entries, SymbolJournal
from dsh_sidecar.workspace.stats import Stat
from dsh_sidecar.workspace.symbols import CachedColumns, CachedPostings, FileSymbols, SymbolIndex

log = logging.getLogger(__name__)

#: Format version of the cache document.
CACHE_VERSION: Final = 6
#: The size model (module docstring): bytes a cache may take, fixed and per file held, and its
#: hard ceiling.
BASE_BYTES: Final = 1024 * 1024
PER_FILE_BYTES: Final = 8 * 1024
CEILING_BYTES: Final = 256 * 1024 * 1024
#: A cache read for a listing of n code files may hold up to ``FILES_SLACK * n + 1024`` files
#: (files deleted since it was written stay in it until the next save).
FILES_SLACK: Final = 2
#: Most names and vocabulary strings a cache may hold: a fixed allowance and so many a file it
#: holds (:func:`strings_bound`). 365 real checkouts (two files to 5k) need at most 110k beyond
#: 33 a file; the allowance bounds what a forged head makes the reader allocate (a forged cache
#: at the bound for a one-file listing: 197k strings, 23 MiB of memory).
STRINGS_BASE: Final = 128 * 1024
STRINGS_PER_FILE: Final = 64
#: The numeric columns: name, ``array`` type code, and whether it has one value per file
#: (else one per posting), in body order.
NUMERIC: Final[tuple[tuple[str, Literal["q", "Q", "I", "B"], Literal["files", "postings", "vocab"]], ...]] = (
    ("mtime", "q", "files"),
    ("size", "q", "files"),
    ("ino", "Q", "files"),
    ("ndefs", "I", "files"),
    ("ntokens", "I", "files"),
    ("length", "I", "files"),
    ("tokens", "I", "postings"),
    ("counts", "I", "postings"),
    ("npost", "I", "vocab"),
    ("pfiles", "I", "postings"),
    ("pcounts", "I", "postings"),
    ("generated", "B", "files"),
)
#: The string sections, in body order.
STRINGS: Final = ("paths", "defs", "vocab")
#: Lists per step of a join (:func:`_flat`).
_SLICE: Final = 65536
_MAX_U32: Final = 2**32 - 1

#: One file's cache entry: ``(stat, definitions, {token: count}, generated)``.
Entry = tuple[Stat, list[str], dict[str, int], bool]


def max_cache_bytes(files: int) -> int:
    """The largest cache of ``files`` files written or read (the size model)."""
    return min(CEILING_BYTES, BASE_BYTES + PER_FILE_BYTES * max(0, files))


def strings_bound(files: int) -> int:
    """The most names and vocabulary strings a cache of ``files`` files may hold (written or
    read)."""
    return STRINGS_BASE + STRINGS_PER_FILE * max(0, files)


def _files_bound(listed: int) -> int:
    return FILES_SLACK * max(0, listed) + 1024


@dataclass
class SymbolEntries:
    """The entries of a cache, by column (module docstring): position ``i`` of ``paths``,
    ``mtime``, ``size``, ``ino``, ``generated``, ``ndefs`` and ``ntokens`` is one file; ``defs``,
    ``tokens`` and ``counts`` hold every file's names and tokens one after the other, the
    tokens as positions in ``vocab``. The integer columns are lists or ``memoryview`` s of the
    file read (both index and slice alike)."""

    paths: list[str] = field(default_factory=list)
    mtime: Any = field(default_factory=list)
    size: Any = field(default_factory=list)
    ino: Any = field(default_factory=list)
    generated: Any = field(default_factory=list)
    ndefs: Any = field(default_factory=list)
    defs: list[str] = field(default_factory=list)
    ntokens: Any = field(default_factory=list)
    tokens: Any = field(default_factory=list)
    counts: Any = field(default_factory=list)
    length: Any = field(default_factory=list)
    vocab: list[str] = field(default_factory=list)
    npost: Any = field(default_factory=list)
    pfiles: Any = field(default_factory=list)
    pcounts: Any = field(default_factory=list)
    #: the digest of the file's body these entries were read from (a journal amends it)
    digest: str = ""
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
        a, b = t[i], t[i + 1]
        try:
            tokens = dict(zip(map(self.vocab.__getitem__, self.tokens[a:b]), self.counts[a:b]))
        except IndexError:  # a forged file's position past the vocabulary: no tokens
            tokens = {}
        return self.defs[d[i] : d[i + 1]], tokens

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
        """A symbol index of every entry (the whole cache was current), on the columns: the
        usages stay in the file's inverted columns until asked for (``CachedPostings``)."""
        d, t = self.offsets()
        with collections_paused(freeze=True):  # tens of thousands of long-lived tables, no cycle
            return SymbolIndex.from_cache(
                CachedColumns(self.paths, self.defs, d, self.vocab, self.tokens, t, self.length, self.generated),
                CachedPostings(self.paths, self.vocab, self.npost, self.pfiles, self.pcounts),
            )

    @classmethod
    def of(cls, entries: Iterable[tuple[str, Entry]]) -> SymbolEntries:
        """The columns of ``(path, entry)`` pairs (names with a NUL, which the format cannot
        hold and no identifier has, are left out; tokens are ``symbols.TOKEN_RE`` identifiers)."""
        out = cls()
        ids: dict[str, int] = {}
        intern = ids.setdefault
        for rel, (st, defs, tokens, generated) in entries:
            out.paths.append(rel)
            out.mtime.append(st[0])
            out.size.append(st[1])
            out.ino.append(st[2])
            out.generated.append(1 if generated else 0)
            names = [n for n in defs if "\0" not in n] if "\0" in "".join(defs) else defs
            out.ndefs.append(len(names))
            out.defs += names
            out.ntokens.append(len(tokens))  # identifiers (symbols.TOKEN_RE): never a NUL
            out.tokens += [intern(t, len(ids)) for t in tokens]
            out.counts += tokens.values()
            out.length.append(min(sum(tokens.values()), _MAX_U32))
        out.vocab = list(ids)
        return out

    def encode(self, root: str) -> bytes:
        """The cache file of these entries (module docstring)."""
        if len(self.npost) != len(self.vocab):  # entries made by :meth:`of`: the inverted columns
            with collections_paused():  # a list a token, of ints: no cycle (the collector's full
                # passes over the server's heap held the GIL for up to ~100 ms a time here)
                inverted = _inverted(len(self.vocab), self.ntokens, self.tokens, self.counts)
            self.npost, self.pfiles, self.pcounts = inverted
        # a slice at a time (columns.column_bytes): one C call over 3M postings held the GIL ~50 ms
        sections = [columns.column_bytes(code, getattr(self, name)) for name, code, _ in NUMERIC]
        head = {
            "version": CACHE_VERSION,
            "root": root,
            "files": len(self.paths),
            "defs": len(self.defs),
            "vocab": len(self.vocab),
            "postings": len(self.tokens),
        }
        return columns.encode(head, sections, (self.paths, self.defs, self.vocab))


def _inverted(
    vocab: int, ntokens: Sequence[int], tokens: Sequence[int], counts: Sequence[int]
) -> tuple[list[int], list[int], list[int]]:
    """The postings of every vocabulary token, token by token (its files in file order):
    ``npost``, ``pfiles``, ``pcounts`` of the module docstring."""
    files: list[list[int]] = [[] for _ in range(vocab)]
    times: list[list[int]] = [[] for _ in range(vocab)]
    at = 0
    for f, n in enumerate(ntokens):
        if n:  # the appends made in C (map over list.append), not a loop step a posting
            ids = tokens[at : at + n]
            any(map(list.append, map(files.__getitem__, ids), repeat(f, n)))
            any(map(list.append, map(times.__getitem__, ids), counts[at : at + n]))
            at += n
    return list(map(len, files)), _flat(files), _flat(times)


def _flat(lists: list[list[int]]) -> list[int]:
    """``lists`` joined, :data:`_SLICE` lists at a time (between two the interpreter can switch
    threads: the write runs after the index is published, beside requests)."""
    out: list[int] = []
    for i in range(0, len(lists), _SLICE // 64):
        out.extend(chain.from_iterable(lists[i : i + _SLICE // 64]))
    return out


def _layout(head: dict[str, Any], listed: int) -> tuple[list[tuple[Any, int]], list[int]]:
    """The structural pre-check (module docstring): the declared counts against the listing of
    ``listed`` code files, then the sections against the body (``columns.check_layout``: their
    lengths to the byte, then the digest), before anything is decoded. Returns the integer
    columns' ``(type code, values)`` and the string sections' counts."""
    files, defs, vocab, postings = (columns.count(head.get(k)) for k in ("files", "defs", "vocab", "postings"))
    columns.string_lengths(head, 3)
    if files > _files_bound(listed):
        raise StateDocumentError(f"{files} files cached for a listing of {listed}")
    if defs + vocab > strings_bound(files):
        raise StateDocumentError(f"{defs + vocab} strings for {files} files")
    per = {"files": files, "postings": postings, "vocab": vocab}
    numeric = [(code, per[unit]) for _, code, unit in NUMERIC]
    return numeric, [files, defs, vocab]


def _decode(body: memoryview, numeric: list[tuple[Any, int]], strings: list[int], lengths: list[int]) -> dict[str, Any]:
    """The columns of a body whose layout :func:`_layout` accepted, by name."""
    ints, texts = columns.decode(body, numeric, strings, lengths)
    return {
        **{name: col for (name, _, _), col in zip(NUMERIC, ints, strict=True)},
        **dict(zip(STRINGS, texts, strict=True)),
    }


def _reader(root: str, listed: int) -> Any:
    """The parser of a cache file read for a listing of ``listed`` code files."""

    def parse(raw: bytes) -> SymbolEntries | None:
        current = columns.current_head(raw, root, CACHE_VERSION, "a symbol cache")
        if current is None:
            return None  # an older format of ours or another byte order: a cold start
        head, head_end = current
        body = columns.body_of(raw, head_end)
        numeric, strings = _layout(head, listed)
        lengths = columns.check_layout(head, body, numeric, strings)
        out = _decode(body, numeric, strings, lengths)
        files, defs, postings = strings[0], strings[1], numeric[6][1]
        if len(set(out["paths"])) != files:
            raise StateDocumentError("paths must be distinct")
        if sum(out["ndefs"]) != defs or sum(out["ntokens"]) != postings:
            raise StateDocumentError("per-file counts do not add up")
        if out["generated"].tobytes().translate(None, b"\0\1"):
            raise StateDocumentError("generated must be 0 or 1")
        return SymbolEntries(**out, digest=head["digest"])

    return parse


class SymbolCache:
    """Load and save the per-file symbol entries of one workspace, and the journal of the files
    changed since they were written (``journal.py``)."""

    def __init__(self, cache_dir: Path, root: Path) -> None:
        self.root = str(root.resolve())
        self.path = cache_path(cache_dir, root)
        self.file = StateFile(self.path, max_bytes=max_cache_bytes(0), parse=_reader(self.root, 0))
        self.journal = SymbolJournal(self.path.with_suffix(".journal.json"), self.root)
        #: the digest of the body of the cache on disk, as this process last read or wrote it
        #: (``""``: none, so no journal either)
        self.base = ""
        #: the journal read over that cache (taken by the symbol pass; gone once the cache is
        #: written again), and the entries of the files this session changed since
        self.overlay: Entries = {}
        self.changed: Entries = {}
        self._state = threading.Lock()

    def load(self, listed: int) -> SymbolEntries:
        """The cached entries, read for a listing of ``listed`` code files (none when absent,
        corrupt, foreign, unreadable or too large for it); :attr:`overlay` then holds the journal
        over them."""
        bound = _files_bound(listed)
        self.file.max_bytes = max_cache_bytes(bound)
        self.file.parse = _reader(self.root, listed)
        try:
            with collections_paused():  # the columns: long-lived, no cycle
                entries = self.file.read() or SymbolEntries()
        except Exception as exc:  # a cache problem is only a slower start
            log.warning("workspace symbol cache unreadable (%s); indexing from scratch", exc)
            entries = SymbolEntries()
        with self._state:
            self.base = entries.digest
            self.overlay = self.journal.load(entries.digest) if entries.digest else {}
            self.changed = {}
        return entries

    def save(self, entries: SymbolEntries) -> bool:
        """Write the entries; ``False`` (nothing written) when over the size model or the
        strings' bound (which the reader would refuse) or on an I/O error. The journal then
        holds this session's changes only, over the cache written."""
        strings, bound = len(entries.defs) + len(entries.vocab), strings_bound(len(entries))
        if strings > bound:
            log.info("workspace symbol cache not written: %d strings > %d", strings, bound)
            return False
        data = entries.encode(self.root)
        cap = max_cache_bytes(len(entries))
        if len(data) > cap:
            log.info("workspace symbol cache not written: %d bytes > %d", len(data), cap)
            return False
        with self._state:
            try:
                self.file.replace(data)
            except Exception as exc:  # disk full, read-only home, lock timeout: keep serving
                log.warning("workspace symbol cache not written: %s", exc)
                return False
            self.base, self.overlay = columns.head_of(data)[0]["digest"], {}
            self._write_journal()
            return True

    def note(self, changed: Entries) -> None:
        """Record the entries of files a session changed (written by :meth:`keep`)."""
        with self._state:
            self.changed.update(changed)

    def keep(self) -> bool:
        """Write the journal: the one read and this session's changes, over the cache on disk
        (O(the journal)); ``False`` when nothing was written."""
        with self._state:
            return self._write_journal()

    def _write_journal(self) -> bool:
        if not self.base:
            return False
        entries = {**self.overlay, **self.changed}
        if not entries:
            self.journal.clear()
            return True
        return self.journal.save(self.base, entries)
