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

Built off the event loop where the index is built (one pass over the basenames and the
folders), carried through ``FileIndex.with_changes`` by :meth:`MeantTables.with_changes` in
O(changed paths × their depth): the dicts copied in slices (pointers), each changed entry's list
copied, never edited, so a call reading the old index never sees half a change.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
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


class MeantTables:
    """The missing-path answer's lookups of one listing (module docstring)."""

    __slots__ = ("by_core", "by_folder", "by_stem", "dirs")

    def __init__(
        self,
        by_stem: dict[str, list[str]],
        by_core: dict[str, list[str]],
        by_folder: dict[str, list[str]],
        dirs: list[str],
    ) -> None:
        self.by_stem = by_stem
        self.by_core = by_core
        self.by_folder = by_folder
        self.dirs = dirs

    @classmethod
    def of(cls, names: Iterable[str], folders: Iterable[str]) -> MeantTables:
        """The tables of a listing's basenames and of the folders holding its files (its
        ``by_name`` and ``by_dir`` keys)."""
        by_stem: dict[str, list[str]] = {}
        by_core: dict[str, list[str]] = {}
        for name in names:
            s = stem(name)
            by_stem.setdefault(s, []).append(name)
            c = core(s)
            if c != s:
                by_core.setdefault(c, []).append(name)
        dirs = sorted(folders)
        by_folder: dict[str, list[str]] = {}
        seen: set[str] = set()
        for folder in dirs:
            for f in ancestors(folder):
                if f in seen:
                    break  # (its ancestors too: seen with it)
                seen.add(f)
                by_folder.setdefault(folder_key(f), []).append(f)
        return cls(by_stem, by_core, by_folder, dirs)

    def with_changes(self, came: Listed, went: Listed) -> MeantTables:
        """New tables, this one's with what ``came`` listed and what ``went`` forgotten (each a
        :data:`Listed`); this one is left as it is."""
        (names_in, dirs_in, folders_in), (names_out, dirs_out, folders_out) = came, went
        by_stem, by_core, by_folder = self.by_stem, self.by_core, self.by_folder
        if names_in or names_out:
            by_stem, by_core = _copy(by_stem), _copy(by_core)
            for name in names_out:
                _drop(by_stem, by_core, name)
            for name in names_in:
                _put(by_stem, by_core, name)
        if folders_in or folders_out:
            by_folder = _copy(by_folder)
            for f in folders_out:
                key = folder_key(f)
                left = [g for g in by_folder.get(key, ()) if g != f]
                if left:
                    by_folder[key] = left
                else:
                    by_folder.pop(key, None)
            for f in folders_in:
                key = folder_key(f)
                by_folder[key] = [*by_folder.get(key, ()), f]
        return MeantTables(by_stem, by_core, by_folder, _sorted_after(self.dirs, dirs_in, dirs_out))


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


def _put(by_stem: dict[str, list[str]], by_core: dict[str, list[str]], name: str) -> None:
    """List the basename ``name`` in the stem and test-core tables (a list copied, not edited)."""
    s = stem(name)
    by_stem[s] = [*by_stem.get(s, ()), name]
    c = core(s)
    if c != s:
        by_core[c] = [*by_core.get(c, ()), name]


def _drop(by_stem: dict[str, list[str]], by_core: dict[str, list[str]], name: str) -> None:
    """Forget the basename ``name`` in the stem and test-core tables (a list copied, not edited)."""
    s = stem(name)
    c = core(s)
    for table, key in ((by_stem, s), (by_core, c)):
        if table is by_core and c == s:
            continue
        left = [n for n in table.get(key, ()) if n != name]
        if left:
            table[key] = left
        else:
            table.pop(key, None)


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
