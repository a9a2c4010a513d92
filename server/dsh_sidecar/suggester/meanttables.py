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

Each key holds its one value as a string, or a list of its values (:func:`values` reads
either). Built off the event loop where the index is built (one pass over the basenames and the
folders), carried through ``FileIndex.with_changes`` by :meth:`MeantTables.with_changes` in
O(changed paths × their depth): the dicts copied in slices (pointers), each changed entry's list
copied, never edited, so a call reading the old index never sees half a change.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Collection, Iterable, Sequence
from collections.abc import Set as AbstractSet
from typing import Final, TypeVar

from dsh_sidecar.workspace.heap import sliced_dict

#: Test affixes of a file name's stem (lower case, punctuation dropped), longest first: a name
#: differing from another by one of them names the same unit's test or source.
TEST_AFFIXES: Final = ("tests", "test", "specs", "spec")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


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


def ancestors(folder: str) -> Iterable[str]:
    """``folder`` and every folder above it, the root left out (``a/b`` → ``a/b``, ``a``)."""
    while folder:
        yield folder
        folder = folder.rpartition("/")[0]


def folder_key(folder: str) -> str:
    """The key of ``folder`` in ``by_folder``: its last name, lower case."""
    return folder.rpartition("/")[2].lower()


#: A table: a key → the one value of it (a string: most keys have one, and a list of one costs
#: ~90 bytes more a key), or the list of its values.
Table = dict[str, str | list[str]]


def values(table: Table, key: str) -> Sequence[str]:
    """The values of ``key`` in ``table`` (empty when it has none)."""
    found = table.get(key)
    if found is None:
        return ()
    return (found,) if isinstance(found, str) else found


class MeantTables:
    """The missing-path answer's lookups of one listing (module docstring)."""

    __slots__ = ("by_core", "by_folder", "by_stem", "dirs")

    def __init__(self, by_stem: Table, by_core: Table, by_folder: Table, dirs: list[str]) -> None:
        self.by_stem = by_stem
        self.by_core = by_core
        self.by_folder = by_folder
        self.dirs = dirs

    @classmethod
    def of(cls, names: Iterable[str], folders: Collection[str]) -> MeantTables:
        """The tables of a listing's basenames and of the folders holding its files (its
        ``by_name`` and ``by_dir`` keys)."""
        by_stem: Table = {}
        by_core: Table = {}
        for name in names:
            s = stem(name)
            _grow(by_stem, s, name)
            c = core(s)
            if c != s:
                _grow(by_core, c, name)
        dirs = sorted(folders)
        by_folder: Table = {}
        above: set[str] = set()  # folders holding no file of their own, only deeper ones
        for folder in dirs:
            if folder:
                _grow(by_folder, folder_key(folder), folder)
            for f in ancestors(folder.rpartition("/")[0]):
                if f in folders or f in above:
                    break  # (listed with its own folders, or already with theirs)
                above.add(f)
                _grow(by_folder, folder_key(f), f)
        return cls(by_stem, by_core, by_folder, dirs)

    def with_changes(self, came: Listed, went: Listed) -> MeantTables:
        """New tables, this one's with what ``came`` listed and what ``went`` forgotten (each a
        :data:`Listed`); this one is left as it is."""
        (names_in, dirs_in, folders_in), (names_out, dirs_out, folders_out) = came, went
        by_stem, by_core, by_folder = self.by_stem, self.by_core, self.by_folder
        if names_in or names_out:
            by_stem, by_core = _copy(by_stem), _copy(by_core)
            for name in names_out:
                s = stem(name)
                _remove(by_stem, s, name)
                if core(s) != s:
                    _remove(by_core, core(s), name)
            for name in names_in:
                s = stem(name)
                _add(by_stem, s, name)
                if core(s) != s:
                    _add(by_core, core(s), name)
        if folders_in or folders_out:
            by_folder = _copy(by_folder)
            for f in folders_out:
                _remove(by_folder, folder_key(f), f)
            for f in folders_in:
                _add(by_folder, folder_key(f), f)
        return MeantTables(by_stem, by_core, by_folder, _sorted_after(self.dirs, dirs_in, dirs_out))


def _grow(table: Table, key: str, value: str) -> None:
    """Add ``value`` to ``key`` while the table is built (its lists are not shared yet)."""
    found = table.get(key)
    if found is None:
        table[key] = value
    elif isinstance(found, str):
        table[key] = [found, value]
    else:
        found.append(value)


def _add(table: Table, key: str, value: str) -> None:
    """Add ``value`` to ``key`` of a table copied for a change (a list copied, not edited)."""
    found = table.get(key)
    table[key] = value if found is None else [*values(table, key), value]


def _remove(table: Table, key: str, value: str) -> None:
    """Take ``value`` from ``key`` of a table copied for a change (a list copied, not edited)."""
    left = [v for v in values(table, key) if v != value]
    if not left:
        table.pop(key, None)
    else:
        table[key] = left[0] if len(left) == 1 else left


#: What a change listed or forgot, for :meth:`MeantTables.with_changes`: the basenames, the
#: folders holding a file directly (``by_name``/``by_dir`` keys), and the folders holding one
#: at any depth (the root left out), that came or went.
Listed = tuple[AbstractSet[str], AbstractSet[str], AbstractSet[str]]
NOTHING: Final[Listed] = (frozenset(), frozenset(), frozenset())


_V = TypeVar("_V")


def _copy(table: dict[str, _V]) -> dict[str, _V]:
    """A copy of ``table`` made slice by slice (``workspace/heap.sliced_dict``: the interpreter
    can switch threads between slices)."""
    return sliced_dict(list(table), list(table.values()))


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
