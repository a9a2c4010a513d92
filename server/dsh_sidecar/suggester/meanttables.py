"""The lookups of the missing-path answer (``meant.py``) as tables kept with the file index
(:class:`~dsh_sidecar.suggester.fileindex.FileIndex`), so a call that missed is answered in
O(answer), not by a pass over every listed name and folder on the event loop.

:class:`MeantTables` holds:

- ``by_stem``: a basename's normalised stem (its last extension dropped, lower case,
  punctuation dropped: ``-JsonUtf8Writer.kt`` → ``jsonutf8writer``) → the listed basenames of it;
- ``by_core``: a test name's core (its stem less one test affix: ``LoggerTests.cs`` →
  ``logger``) → the listed test basenames of it (names that are no test name are left out);
- ``by_folder``: a folder's last name, lower case → every folder of that name holding a listed
  file at some depth (the root left out); one ``s`` apart is two lookups of this table;
- ``dirs``: the folders holding a listed file, sorted, for a prefix scan (``bisect``);
- ``name_digests`` and ``folder_digests``: for a basename listed in at least :data:`HEAVY`
  folders (``index.js``, ``__init__.py``) and a folder name at least that often (``tests``),
  what ranking its many candidates needs (:class:`Digest`: each exact name's candidates in the
  ranking's order, and the candidates by folder word), so a common name is answered in
  O(answer), not O(its candidates).

The first three are :class:`Keyed`: the keys' hashes as one sorted ``array`` of 64-bit
integers and the values (the index's own strings, shared) in the same order — 16 bytes a value,
no object per key (a dict of lists held ~160–270 bytes a file). A lookup bisects the hash and
reads its run; a value of another key of the same hash is told apart by the reader (``meant.py``
compares the names themselves), so a collision adds a candidate, never an answer.

Built after ready, on a thread of their own (``FileIndex.meant_soon``: one pass over the
basenames and the folders, ~0.6–0.9 s of CPU on 100k files, kept off every start's path to
ready; the answer abstains until they are in), carried through ``FileIndex.with_changes`` by
:meth:`MeantTables.with_changes` once built (an index not built yet carries "not built": its own
build covers the change): the
arrays and lists copied (pointers, C copies) only when a name or folder came or went, then
O(changed paths × their depth) insertions, so a call reading the old index never sees half a
change.
"""

from __future__ import annotations

import bisect
import heapq
import operator
import re
import time
import zlib
from array import array
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from collections.abc import Set as AbstractSet
from itertools import accumulate, repeat
from typing import Any, Final, TypeVar

_T = TypeVar("_T", bound=Any)

#: Test affixes of a file name's stem (lower case, punctuation dropped), longest first: a name
#: differing from another by one of them names the same unit's test or source.
TEST_AFFIXES: Final = ("tests", "test", "specs", "spec")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
#: Items one sort of a build sorts at a time (:func:`sorted_in_runs`).
RUN: Final = 4096
#: Fewest candidates of one key kept digested (:class:`Digest`): below it, reading them one by
#: one costs a few µs (a bound on the work of a lookup, not a rule of the answer: both read the
#: same candidates the same way).
HEAVY: Final = 32
_WORD = re.compile(r"[a-z0-9]+")


def stem(name: str) -> str:
    """``name`` without its last extension, lower case, punctuation dropped (``-JsonUtf8Writer.kt``
    → ``jsonutf8writer``)."""
    base = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return _NOT_ALNUM.sub("", base.lower())


def core(stem: str) -> str:
    """``stem`` without one test affix at either end (``testfoo``, ``footests`` → ``foo``)."""
    if "test" not in stem and "spec" not in stem:
        return stem  # (most names: every affix holds one of the two)
    for affix in TEST_AFFIXES:
        if stem.endswith(affix) and len(stem) > len(affix):
            return stem[: -len(affix)]
        if stem.startswith(affix) and len(stem) > len(affix):
            return stem[len(affix) :]
    return stem


def unplural(word: str) -> str:
    """``word`` less one plural ``s`` (words longer than three letters)."""
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def terms(folder: str) -> frozenset[str]:
    """The words of a folder path, lower case, one plural ``s`` dropped (``specs`` is ``spec``)."""
    return frozenset(unplural(w) for w in _WORD.findall(folder.lower()))


def ranking_order(value: str) -> tuple[int, str]:
    """Where a candidate of equal closeness and shared words ranks: the shorter path, then the
    path (``meant._ranked``)."""
    return value.count("/"), value


def sorted_in_runs(items: list[_T]) -> list[_T]:
    """``sorted(items)``, made of sorted runs of :data:`RUN` items merged: the GIL handed over
    between runs and during the merge (one C sort of 100,000 holds it tens of ms: a build after
    ready on its own thread would stop the event loop's calls that long)."""
    runs = []
    for i in range(0, len(items), RUN):
        runs.append(sorted(items[i : i + RUN]))
        time.sleep(0)
    return list(heapq.merge(*runs)) if len(runs) > 1 else (runs[0] if runs else [])


def key_hash(key: str) -> int:
    """A key's 64-bit hash, the same in every process (``hash`` of a string is not: the tables
    are kept between sessions, ``meantcache.py``): its UTF-8's CRC-32 and Adler-32 (C). Keys of
    the same hash are told apart by the readers (module docstring)."""
    data = key.encode("utf-8", "surrogatepass")
    return ((zlib.crc32(data) << 32) | zlib.adler32(data)) - (1 << 63)


_ENCODE: Final = operator.methodcaller("encode", "utf-8", "surrogatepass")
_LAST: Final = operator.methodcaller("rpartition", "/")


def key_hashes(keys: list[str]) -> list[int]:
    """``[key_hash(k) for k in keys]``, made by C calls alone (no Python frame a key), a run of
    :data:`RUN` keys at a time with the GIL handed over between runs."""
    out: list[int] = []
    for i in range(0, len(keys), RUN):
        data = list(map(_ENCODE, keys[i : i + RUN]))
        high = map(operator.lshift, map(zlib.crc32, data), repeat(32))
        out += map(operator.sub, map(operator.or_, high, map(zlib.adler32, data)), repeat(1 << 63))
        time.sleep(0)
    return out


def folder_keys(folders: list[str]) -> list[str]:
    """``[folder_key(f) for f in folders]``, by C calls alone (as :func:`key_hashes`)."""
    out: list[str] = []
    for i in range(0, len(folders), RUN):
        out += map(str.lower, map(operator.itemgetter(2), map(_LAST, folders[i : i + RUN])))
        time.sleep(0)
    return out


def ancestors(folder: str) -> Iterable[str]:
    """``folder`` and every folder above it, the root left out (``a/b`` → ``a/b``, ``a``)."""
    while folder:
        yield folder
        folder = folder.rpartition("/")[0]


def folder_key(folder: str) -> str:
    """The key of ``folder`` in ``by_folder``: its last name, lower case."""
    return folder.rpartition("/")[2].lower()


class Keyed:
    """Values by the hash of their key: ``hashes`` sorted (``array('q')``), ``items`` in the
    same order (module docstring)."""

    __slots__ = ("hashes", "items")

    def __init__(self, hashes: array[int], items: list[str]) -> None:
        self.hashes = hashes
        self.items = items

    @classmethod
    def of(cls, keys: list[str], items: list[str]) -> Keyed:
        """``items[i]`` under ``keys[i]``."""
        hashes = key_hashes(keys)
        order = [i for _, i in sorted_in_runs(list(zip(hashes, range(len(items)))))]  # (stable: ties by place)
        return cls(array("q", [hashes[i] for i in order]), [items[i] for i in order])

    def get(self, key: str) -> list[str]:
        """The values under ``key``'s hash (the reader tells another key's apart)."""
        h = key_hash(key)
        lo = bisect.bisect_left(self.hashes, h)
        hi = bisect.bisect_right(self.hashes, h, lo)
        return self.items[lo:hi]

    def rows(self) -> list[tuple[int, str]]:
        """``(hash, value)`` of every value, sorted: what two tables of one listing share."""
        return sorted(zip(self.hashes, self.items))

    def changed(self, came: Iterable[tuple[str, str]], went: Iterable[tuple[str, str]]) -> Keyed:
        """A copy with the ``(key, value)`` of ``went`` taken out and of ``came`` put in."""
        hashes, items = array("q", self.hashes), list(self.items)
        for key, value in went:
            h = key_hash(key)
            i = bisect.bisect_left(hashes, h)
            while i < len(hashes) and hashes[i] == h:
                if items[i] == value:
                    del hashes[i], items[i]
                    break
                i += 1
        for key, value in came:
            h = key_hash(key)
            i = bisect.bisect_right(hashes, h)
            hashes.insert(i, h)
            items.insert(i, value)
        return Keyed(hashes, items)


class Digest:
    """The candidates of one key, as the ranking reads them (``meant._select``): ``ranked``, the
    candidates in :func:`ranking_order`; ``orders``, those of each exact last name (a basename,
    a folder's name) in that order; ``folders``, their folders (the parent of each) lower case,
    joined by newlines in that order, and ``starts``, where each begins: a guess's folder words
    are found in it by ``str.find`` (C), each one's candidate by bisection — O(the matches), 4
    bytes a candidate and its folder's characters, no object a word; and ``source``,
    the candidates as they were listed (a digest of a name's files is used only while the index
    lists exactly those)."""

    __slots__ = ("folders", "orders", "ranked", "source", "starts")

    def __init__(self, source: list[str]) -> None:
        self.source = source
        self.ranked = sorted(source, key=ranking_order)
        self.orders: dict[str, list[str]] = {}
        lows = []
        for value in self.ranked:
            folder, _, last = value.rpartition("/")
            self.orders.setdefault(last, []).append(value)
            lows.append(folder.lower())
        self.folders = "\n".join(lows)
        self.starts = array("I", accumulate((len(f) + 1 for f in lows[:-1]), initial=0))

    @classmethod
    def of(cls, values: Iterable[str]) -> Digest:
        """The digest of ``values`` (paths of one basename, or folders of one lower-case name)."""
        return cls(list(values))

    def shared(self, words: Iterable[str]) -> dict[str, int]:
        """The candidates whose folder has a word whose :func:`unplural` is one of ``words``
        (the guess's :func:`terms`), with how many distinct ones (``len(terms(folder) &
        words)``): each form of a word (itself, one ``s`` more) found by ``str.find`` (C), kept
        where it is a whole word, its candidate found by bisection."""
        seen: dict[int, set[str]] = {}
        folders, starts = self.folders, self.starts
        for term in words:
            for form in (term, term + "s"):
                if unplural(form) != term:
                    continue
                i, n = folders.find(form), len(form)
                while i >= 0:
                    if (i == 0 or folders[i - 1] not in _ALNUM) and folders[i + n : i + n + 1] not in _ALNUM:
                        seen.setdefault(bisect.bisect_right(starts, i) - 1, set()).add(term)
                    i = folders.find(form, i + 1)
        return {self.ranked[at]: len(found) for at, found in seen.items()}


#: The characters of a folder word (``_WORD``; the end of the folders, an empty slice, is none).
_ALNUM: Final = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


Digests = dict[str, Digest]


def _digested(digests: Digests, keys: Iterable[str], values_of: Callable[[str], list[str]]) -> Digests:
    """``digests`` (copied when a key changes) with each of ``keys`` digested again from
    ``values_of(key)``, or dropped when it has fewer than :data:`HEAVY` values."""
    out = digests
    for key in keys:
        values = values_of(key)
        if len(values) < HEAVY and key not in out:
            continue
        out = dict(out) if out is digests else out
        if len(values) < HEAVY:
            del out[key]
        else:
            out[key] = Digest.of(values)
    return out


class MeantTables:
    """The missing-path answer's lookups of one listing (module docstring)."""

    __slots__ = ("by_core", "by_folder", "by_stem", "dirs", "folder_digests", "name_digests")

    def __init__(
        self,
        by_stem: Keyed,
        by_core: Keyed,
        by_folder: Keyed,
        dirs: list[str],
    ) -> None:
        self.by_stem = by_stem
        self.by_core = by_core
        self.by_folder = by_folder
        self.dirs = dirs
        self.name_digests: Digests = {}
        self.folder_digests: Digests = {}

    def name_digest(self, name: str, paths: list[str]) -> Digest | None:
        """The digest of the basename ``name`` when kept and made of ``paths`` (its files now:
        compared in C, the strings shared), else ``None`` (read them one by one)."""
        digest = self.name_digests.get(name)
        return digest if digest is not None and digest.source == paths else None

    def folders_named(self, key: str) -> list[str]:
        """The folders of ``by_folder`` whose last name is ``key`` in lower case (a folder of
        another name of the same hash left out)."""
        digest = self.folder_digests.get(key)
        if digest is not None:
            return digest.source
        return [f for f in self.by_folder.get(key) if folder_key(f) == key]

    @classmethod
    def of(
        cls, names: Collection[str], folders: Collection[str], paths_of: Mapping[str, list[str]] | None = None
    ) -> MeantTables:
        """The tables of a listing's basenames and of the folders holding its files (its
        ``by_name`` and ``by_dir`` keys); ``paths_of`` (its ``by_name``) gives the digests of the
        names listed in many folders (without it, none: the lookups read them one by one)."""
        listed = list(names)
        stems = list(map(stem, listed))
        cores = [(c, n) for s, n in zip(stems, listed) if (c := core(s)) != s]
        dirs = sorted_in_runs(list(folders))
        every = [f for f in dirs if f]
        above: set[str] = set()  # the folders holding no file of their own, only deeper ones
        for folder in dirs:
            for f in ancestors(folder.rpartition("/")[0]):
                if f in folders or f in above:
                    break  # (listed with its own files, or already with another's)
                above.add(f)
                every.append(f)
        keys = folder_keys(every)
        by_folder = Keyed.of(keys, every)
        tables = cls(Keyed.of(stems, listed), Keyed.of([c for c, _ in cores], [n for _, n in cores]), by_folder, dirs)
        if paths_of is not None:
            tables.digest_common(paths_of, keys)
        return tables

    def digest_common(self, paths_of: Mapping[str, list[str]], keys: list[str]) -> None:
        """Make the digests of the basenames of at least :data:`HEAVY` files (``paths_of``: the
        index's ``by_name``) and of the folder names (``keys``: ``by_folder``'s, any order) of at
        least as many folders."""
        self.name_digests = {n: Digest.of(p) for n, p in list(paths_of.items()) if len(p) >= HEAVY}
        common = [k for k, n in Counter(keys).items() if n >= HEAVY]
        self.folder_digests = {k: Digest.of(self.folders_named(k)) for k in common}

    def with_changes(
        self, came: Listed, went: Listed, paths_of: Mapping[str, list[str]] | None = None, touched: Iterable[str] = ()
    ) -> MeantTables:
        """New tables, this one's with what ``came`` listed and what ``went`` forgotten (each a
        :data:`Listed`), the digests of the basenames ``touched`` (files of them came or went)
        made again from ``paths_of`` (the new ``by_name``); this one is left as it is."""
        (names_in, dirs_in, folders_in), (names_out, dirs_out, folders_out) = came, went
        by_stem, by_core, by_folder = self.by_stem, self.by_core, self.by_folder
        if names_in or names_out:
            by_stem = by_stem.changed(_stems(names_in), _stems(names_out))
            by_core = by_core.changed(_cores(names_in), _cores(names_out))
        if folders_in or folders_out:
            by_folder = by_folder.changed(_folders(folders_in), _folders(folders_out))
        names = self.name_digests
        if paths_of is not None:
            names = _digested(names, set(touched), lambda n: list(paths_of.get(n, ())))
        out = MeantTables(by_stem, by_core, by_folder, _sorted_after(self.dirs, dirs_in, dirs_out))
        keys = {folder_key(f) for f in (*folders_in, *folders_out)}
        out.name_digests = names
        out.folder_digests = _digested(self.folder_digests, keys, out.folders_named)  # (read before it is set)
        return out


#: What a change listed or forgot, for :meth:`MeantTables.with_changes`: the basenames, the
#: folders holding a file directly (``by_name``/``by_dir`` keys), and the folders holding one
#: at any depth (the root left out), that came or went.
Listed = tuple[AbstractSet[str], AbstractSet[str], AbstractSet[str]]
NOTHING: Final[Listed] = (frozenset(), frozenset(), frozenset())


def _stems(names: Iterable[str]) -> list[tuple[str, str]]:
    return [(stem(n), n) for n in names]


def _cores(names: Iterable[str]) -> list[tuple[str, str]]:
    return [(c, n) for s, n in _stems(names) if (c := core(s)) != s]


def _folders(folders: Iterable[str]) -> list[tuple[str, str]]:
    return [(folder_key(f), f) for f in folders]


def _sorted_after(items: list[str], came: AbstractSet[str], went: AbstractSet[str]) -> list[str]:
    """``items`` (sorted) with ``went`` taken out and ``came`` put in, copied when either is
    not empty (one C copy of the pointers, then a bisection each)."""
    if not came and not went:
        return items
    out = list(items)
    for item in went:
        i = bisect.bisect_left(out, item)
        if i < len(out) and out[i] == item:
            del out[i]
    for item in came:
        i = bisect.bisect_left(out, item)
        if i == len(out) or out[i] != item:
            out.insert(i, item)
    return out
