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

Pure: the file index is passed in, nothing is read; the work is one pass over the index's
basenames (or folders), bounded by the index itself, and only for a call that missed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final, Protocol

#: The reason phrase of a target a missing path meant (a note's line, and the mark that tells
#: such a target from others: ``confidence.py`` does not score these notes).
REASON: Final = "where the missing path most likely is"
#: Most answers kept for one guess (the note names at most a few of them).
MAX_MEANT: Final = 8
#: Most files of a folder meant that are looked at (:func:`files_under`).
MAX_UNDER: Final = 200
#: Most matches of the content index a search scoped to a missing folder is answered from.
MAX_SEARCHED: Final = 50
#: Test affixes of a file name's stem (lower case, punctuation dropped), longest first: a name
#: differing from another by one of them names the same unit's test or source.
_TEST_AFFIXES: Final = ("tests", "test", "specs", "spec")
_WORD = re.compile(r"[a-z0-9]+")
_NOT_ALNUM = re.compile(r"[^a-z0-9]")


class Listing(Protocol):
    """What is read of the file index: its files by basename and by folder."""

    by_name: dict[str, list[str]]
    by_dir: dict[str, list[str]]


def _split(path: str) -> tuple[str, str]:
    folder, _, name = path.strip("/").rpartition("/")
    return folder, name


def _stem(name: str) -> str:
    """``name`` without its last extension, lower case, punctuation dropped (``-JsonUtf8Writer.kt``
    → ``jsonutf8writer``)."""
    base = name.rsplit(".", 1)[0] if "." in name.lstrip(".") else name
    return _NOT_ALNUM.sub("", base.lower())


def _core(stem: str) -> str:
    """``stem`` without one test affix at either end (``testfoo``, ``footests`` → ``foo``)."""
    for affix in _TEST_AFFIXES:
        if stem.endswith(affix) and len(stem) > len(affix):
            return stem[: -len(affix)]
        if stem.startswith(affix) and len(stem) > len(affix):
            return stem[len(affix) :]
    return stem


def _terms(folder: str) -> frozenset[str]:
    """The words of a folder path, lower case, one plural ``s`` dropped (``specs`` is ``spec``)."""
    return frozenset(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in _WORD.findall(folder.lower()))


def _closeness(guess: str, name: str) -> int | None:
    """How close a listed basename is to the guessed one: 0 the same name, 1 the same stem
    (case, punctuation or extension apart), 2 a test affix apart; ``None``: not the name meant."""
    if name == guess:
        return 0
    stem, other = _stem(guess), _stem(name)
    if len(stem) < 3:
        return None  # too short to stand for a name (`a.js`, `t`)
    if stem == other:
        return 1
    core, other_core = _core(stem), _core(other)
    if core != stem and other_core != other:  # both test names: the same unit's test
        return 2 if other_core == core and len(core) >= 3 else None
    return None


def _ranked(guess: str, found: Iterable[tuple[int, str]]) -> list[str]:
    """``found`` (closeness, path) best first: the closer name, then the more folder words shared
    with the guess, then the shorter path."""
    terms = _terms(_split(guess)[0])

    def key(item: tuple[int, str]) -> tuple[int, int, int, str]:
        close, path = item
        return (close, -len(terms & _terms(_split(path)[0])), path.count("/"), path)

    return [path for _, path in sorted(found, key=key)][:MAX_MEANT]


def _agreeing(guess: str, found: list[tuple[int, str]]) -> list[tuple[int, str]]:
    """``found``, or when several files answer a guess that names folders, those that share a
    folder word with it: the name alone does not tell which was meant (``lib/router/index.js``
    is none of the other ``index.js`` files of unrelated folders); more of them than a note
    names, only those sharing the most, when they are few enough, else none."""
    terms = _terms(_split(guess)[0])
    if len(found) <= 1 or not terms:
        return found
    shared = [(len(terms & _terms(_split(p)[0])), c, p) for c, p in found]
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
    found: list[tuple[int, str]] = []
    for listed, paths in index.by_name.items():
        close = _closeness(name, listed)
        if close is not None:
            found.extend((close, p) for p in paths if p != guess.strip("/"))
    return _ranked(guess, _agreeing(guess, found))


def _folders(index: Listing) -> set[str]:
    """Every folder holding a listed file at some depth (the root left out)."""
    out: set[str] = set()
    for folder in index.by_dir:
        while folder and folder not in out:
            out.add(folder)
            folder = folder.rpartition("/")[0]
    return out


def _folder_closeness(guess: str, name: str) -> int | None:
    """0 the same folder name, 1 another case, 2 one ``s`` apart; ``None`` otherwise."""
    if name == guess:
        return 0
    low, other = guess.lower(), name.lower()
    if low == other:
        return 1
    if len(min(low, other, key=len)) >= 3 and (low + "s" == other or other + "s" == low):
        return 2
    return None


def folders_meant(guess: str, index: Listing) -> list[str]:
    """The listed folders a missing folder ``guess`` most likely meant, best first (module
    docstring); empty when none is close enough."""
    guess = guess.strip("/")
    name = _split(guess)[1]
    if not name or name in (".", ".."):
        return []
    found: list[tuple[int, str]] = []
    for folder in _folders(index):
        if folder == guess:
            return []  # the guessed folder is there: no wrong guess
        close = _folder_closeness(name, _split(folder)[1])
        if close is not None:
            found.append((close, folder))
    return _ranked(guess, found)


def files_under(folder: str, index: Listing) -> list[str]:
    """The listed files at or below ``folder``, folder by folder in sorted order, at most
    :data:`MAX_UNDER`."""
    folder = folder.strip("/")
    out: list[str] = []
    for d in sorted(d for d in index.by_dir if d == folder or d.startswith(folder + "/")):
        out.extend(index.by_dir[d])
        if len(out) >= MAX_UNDER:
            break
    return out[:MAX_UNDER]
