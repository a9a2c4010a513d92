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
- ``dirs``: the folders holding a listed file, sorted, for a prefix scan (``bisect``).

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
import re
import time
from array import array
from collections.abc import Collection, Iterable
from collections.abc import Set as AbstractSet
from typing import Any, Final, TypeVar

_T = TypeVar("_T", bound=Any)

#: Test affixes of a file name's stem (lower case, punctuation dropped), longest first: a name
#: differing from another by one of them names the same unit's test or source.
TEST_AFFIXES: Final = ("tests", "test", "specs", "spec")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")
#: Items one sort of a build sorts at a time (:func:`sorted_in_runs`).
RUN: Final = 4096


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


def sorted_in_runs(items: list[_T]) -> list[_T]:
    """``sorted(items)``, made of sorted runs of :data:`RUN` items merged: the GIL handed over
    between runs and during the merge (one C sort of 100,000 holds it tens of ms: a build after
    ready on its own thread would stop the event loop's calls that long)."""
    runs = []
    for i in range(0, len(items), RUN):
        runs.append(sorted(items[i : i + RUN]))
        time.sleep(0)
    return list(heapq.merge(*runs)) if len(runs) > 1 else (runs[0] if runs else [])


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
        hashes = list(map(hash, keys))
        order = [i for _, i in sorted_in_runs(list(zip(hashes, range(len(items)))))]  # (stable: ties by place)
        return cls(array("q", [hashes[i] for i in order]), [items[i] for i in order])

    def get(self, key: str) -> list[str]:
        """The values under ``key``'s hash (the reader tells another key's apart)."""
        h = hash(key)
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
            h = hash(key)
            i = bisect.bisect_left(hashes, h)
            while i < len(hashes) and hashes[i] == h:
                if items[i] == value:
                    del hashes[i], items[i]
                    break
                i += 1
        for key, value in came:
            h = hash(key)
            i = bisect.bisect_right(hashes, h)
            hashes.insert(i, h)
            items.insert(i, value)
        return Keyed(hashes, items)


class MeantTables:
    """The missing-path answer's lookups of one listing (module docstring)."""

    __slots__ = ("by_core", "by_folder", "by_stem", "dirs")

    def __init__(self, by_stem: Keyed, by_core: Keyed, by_folder: Keyed, dirs: list[str]) -> None:
        self.by_stem = by_stem
        self.by_core = by_core
        self.by_folder = by_folder
        self.dirs = dirs

    @classmethod
    def of(cls, names: Collection[str], folders: Collection[str]) -> MeantTables:
        """The tables of a listing's basenames and of the folders holding its files (its
        ``by_name`` and ``by_dir`` keys)."""
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
        return cls(
            Keyed.of(stems, listed),
            Keyed.of([c for c, _ in cores], [n for _, n in cores]),
            Keyed.of(list(map(folder_key, every)), every),
            dirs,
        )

    def with_changes(self, came: Listed, went: Listed) -> MeantTables:
        """New tables, this one's with what ``came`` listed and what ``went`` forgotten (each a
        :data:`Listed`); this one is left as it is."""
        (names_in, dirs_in, folders_in), (names_out, dirs_out, folders_out) = came, went
        by_stem, by_core, by_folder = self.by_stem, self.by_core, self.by_folder
        if names_in or names_out:
            by_stem = by_stem.changed(_stems(names_in), _stems(names_out))
            by_core = by_core.changed(_cores(names_in), _cores(names_out))
        if folders_in or folders_out:
            by_folder = by_folder.changed(_folders(folders_in), _folders(folders_out))
        return MeantTables(by_stem, by_core, by_folder, _sorted_after(self.dirs, dirs_in, dirs_out))


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
