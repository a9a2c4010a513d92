"""Where a wrong guess most likely meant: the workspace files a missing path stands for.

A call that reads, lists or searches a path this workspace does not have (``cat
moshi/src/main/java/com/squareup/moshi/JsonUtf8Writer.kt`` where the file is
``-JsonUtf8Writer.kt``, ``ls tests`` where the folder is ``test/``, SWE-agent's ``find_file
FooTests.cs`` finding nothing) was hunting something the repository keeps under another name.
:func:`files_meant` answers a missing **file** with the listed files of the same name under
another folder, or of a name that differs only by case, punctuation (a leading ``-``, ``_``
against ``-``), or extension, and a test name by another test name of the same unit
(``test_x.py`` for ``x_test.py``, ``FooTest.java`` for ``FooTests.java``; not the unit's
source) — never a file the call named itself. :func:`folders_meant` answers a
missing **folder** with the listed folders of the same last name at another depth, any case, or
one ``s`` apart (``test`` for ``tests``, ``example`` for ``examples``). Both rank their answers
by the path terms of the guess: the closer name first, then the more folder words the guess and
the answer share (``moshi/src/main`` beside ``moshi/…``), then the shorter path; a guess that
names folders and matches several files keeps those sharing a folder word with it (a common
name alone does not say which was meant).

Pure: the file index is passed in, nothing is read. The lookups are the tables kept with the
index (``meanttables.py``: the basenames by normalised stem and by test core, the folders by
last name, the sorted folders), so a call that missed costs O(its answer), not a pass over every
listed name and folder.
"""

from __future__ import annotations

import bisect
import heapq
import re
from collections.abc import Callable, Iterable
from typing import Final, Protocol

from dsh_sidecar.suggester.meanttables import Keyed, MeantTables, core, folder_key, stem

#: The reason phrase of a target a missing path meant (a note's line, and the mark that tells
#: such a target from others: ``confidence.py`` does not score these notes).
REASON: Final = "where the missing path most likely is"
#: Most answers kept for one guess (the note names at most a few of them).
MAX_MEANT: Final = 8
#: Most files of a folder meant that are looked at (:func:`files_under`).
MAX_UNDER: Final = 200
#: Most matches of the content index a search scoped to a missing folder is answered from.
MAX_SEARCHED: Final = 50
#: Fewest letters and digits of a stem (or test core) that stands for a name (``a.js``, ``t``
#: and a name in another script, whose stem is empty, do not).
MIN_STEM: Final = 3
_WORD = re.compile(r"[a-z0-9]+")


class Listing(Protocol):
    """What is read of the file index: its files by basename and by folder, and the tables
    kept with them (``meanttables.py``)."""

    by_name: dict[str, list[str]]
    by_dir: dict[str, list[str]]

    @property
    def meant(self) -> MeantTables | None: ...

    def has_dir(self, rel: str) -> bool: ...


def _split(path: str) -> tuple[str, str]:
    folder, _, name = path.strip("/").rpartition("/")
    return folder, name


def _terms(folder: str) -> frozenset[str]:
    """The words of a folder path, lower case, one plural ``s`` dropped (``specs`` is ``spec``)."""
    return frozenset(_unplural(w) for w in _WORD.findall(folder.lower()))


def _sharing(terms: frozenset[str]) -> Callable[[str], int]:
    """How many of the folder words ``terms`` the folder of a path has: ``len(terms &
    _terms(folder))``, counted on the folder's words as found. A term is the word itself or
    the word less its plural ``s`` (``_terms``), so it is found as one of the (at most two)
    words it is made of; and a folder whose lower-case path holds no term at all is not parsed
    (most of a common name's many folders)."""
    if not terms:
        return _none_shared
    forms = [tuple(w for w in (t, t + "s") if _unplural(w) == t) for t in terms]

    def shared(path: str) -> int:
        low = _split(path)[0].lower()
        if not any(t in low for t in terms):
            return 0
        words = set(_WORD.findall(low))
        return sum(1 for made in forms if not words.isdisjoint(made))

    return shared


def _none_shared(path: str) -> int:
    return 0


def _unplural(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def _closeness(guess: str, name: str) -> int | None:
    """How close a listed basename is to the guessed one: 0 the same name, 1 the same stem
    (case, punctuation or extension apart), 2 a test affix apart; ``None``: not the name meant."""
    if name == guess:
        return 0
    mine, other = stem(guess), stem(name)
    if len(mine) < MIN_STEM:
        return None  # too short to stand for a name (`a.js`, `t`)
    if mine == other:
        return 1
    my_core, other_core = core(mine), core(other)
    if my_core != mine and other_core != other:  # both test names: the same unit's test
        return 2 if other_core == my_core and len(my_core) >= MIN_STEM else None
    return None


def _names_near(name: str, tables: MeantTables) -> list[str]:
    """The listed basenames that may be close to ``name`` (:func:`_closeness` decides): the
    same normalised stem, and the same test core when ``name`` is a test name. A stem or core
    too short to stand for a name (:func:`_closeness`) looks nothing up: every name of a tree
    named in another script (``文档.md``: stem ``""``) shares it, and none of them can be meant."""
    mine = stem(name)
    if len(mine) < MIN_STEM:
        return [name]
    near = [name, *tables.by_stem.get(mine)]
    my_core = core(mine)
    if my_core != mine and len(my_core) >= MIN_STEM:
        near += tables.by_core.get(my_core)
    return list(dict.fromkeys(near))


def _ranked(guess: str, found: Iterable[tuple[int, str]]) -> list[str]:
    """``found`` (closeness, path) best first: the closer name, then the more folder words shared
    with the guess, then the shorter path."""
    shared = _sharing(_terms(_split(guess)[0]))
    if shared is _none_shared:  # (the common `ls tests`: no folder word to count)
        keyed = [(close, 0, path.count("/"), path) for close, path in found]
    else:
        keyed = [(close, -shared(path), path.count("/"), path) for close, path in found]
    return [key[3] for key in heapq.nsmallest(MAX_MEANT, keyed)]


def _agreeing(guess: str, found: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``found``, or when several files answer a guess that names folders, those that share a
    folder word with it: the name alone does not tell which was meant (``lib/router/index.js``
    is none of the other ``index.js`` files of unrelated folders); more of them than a note
    names, only those sharing the most, when they are few enough, else none."""
    terms = _terms(_split(guess)[0])
    if len(found) <= 1 or not terms:
        return found
    sharing = _sharing(terms)
    shared = [(sharing(p), c, p) for c, p in found]
    found = [(c, p) for n, c, p in shared if n]
    if len(found) <= MAX_MEANT:
        return found
    # a name in more folders than a note names: only the files sharing the most folder words,
    # when they are few (every `__snapshots__/jsfmt.spec.js.snap` shares `tests`, `snapshots`)
    best = max(n for n, _, _ in shared)
    top = [(c, p) for n, c, p in shared if n == best]
    return top if len(top) <= MAX_MEANT else []


def files_meant(guess: str, index: Listing) -> list[str]:
    """The listed files a missing file ``guess`` most likely meant, best first (module
    docstring); empty when none is close enough, or when ``guess`` is itself listed."""
    name = _split(guess)[1]
    if not name or guess.strip("/") in index.by_name.get(name, ()):
        return []  # no name, or the guessed file is there: no wrong guess
    tables = index.meant
    if tables is None:
        return []  # the tables are not built yet: the answer abstains
    found: list[tuple[int, str]] = []
    for listed in _names_near(name, tables):
        close = _closeness(name, listed)
        if close is not None:
            found.extend((close, p) for p in index.by_name.get(listed, ()) if p != guess.strip("/"))
    return _ranked(guess, _agreeing(guess, found))


def folders_meant(guess: str, index: Listing) -> list[str]:
    """The listed folders a missing folder ``guess`` most likely meant, best first (module
    docstring); empty when none is close enough."""
    guess = guess.strip("/")
    name = _split(guess)[1]
    if not name or name in (".", ".."):
        return []
    tables = index.meant
    if tables is None or index.has_dir(guess):
        return []  # not built yet (abstains), or the guessed folder is there: no wrong guess
    low, by_folder = name.lower(), tables.by_folder
    # the same name any case (0 the same, 1 another case), then one `s` apart (2), as
    # `_folder_closeness` says: each key of the table decides it for every folder listed under it
    found = [(0 if f.rpartition("/")[2] == name else 1, f) for f in _named(by_folder, low)]
    for other in (low + "s", low[:-1] if low.endswith("s") else ""):
        if other and len(min(low, other, key=len)) >= 3:
            found += [(2, f) for f in _named(by_folder, other)]
    return _ranked(guess, found)


def _named(by_folder: Keyed, key: str) -> list[str]:
    """The folders of ``by_folder`` whose last name is ``key`` in lower case (a folder of another
    name of the same hash left out)."""
    return [f for f in by_folder.get(key) if folder_key(f) == key]


def files_under(folder: str, index: Listing) -> list[str]:
    """The listed files at or below ``folder``, folder by folder in sorted order, at most
    :data:`MAX_UNDER`."""
    folder, tables = folder.strip("/"), index.meant
    if tables is None:
        return []  # the tables are not built yet: the answer abstains
    dirs, prefix = tables.dirs, folder + "/"
    out: list[str] = list(index.by_dir.get(folder, ()))
    i = bisect.bisect_left(dirs, prefix)
    while len(out) < MAX_UNDER and i < len(dirs) and dirs[i].startswith(prefix):
        out.extend(index.by_dir.get(dirs[i], ()))
        i += 1
    return out[:MAX_UNDER]
