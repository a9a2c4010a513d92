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
from collections.abc import Callable, Mapping
from itertools import islice
from typing import Final, Protocol

from dsh_sidecar.suggester.meanttables import Digest, MeantTables, core, ranking_order, stem, terms

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


#: Candidates of one closeness, in :func:`ranking_order`, and the digest they are read through
#: (``None``: few, read one by one).
Run = tuple[int, list[str], Digest | None]


def _runs_of(close: int | Callable[[str], int], values: list[str], digest: Digest | None) -> list[Run]:
    """The runs of one key's candidates: ``close`` their closeness, or a function of their last
    name (a folder's case)."""
    orders = digest.orders if digest is not None else {}
    if digest is None:
        for value in sorted(values, key=ranking_order):
            orders.setdefault(value.rpartition("/")[2], []).append(value)
    return [(close if isinstance(close, int) else close(last), run, digest) for last, run in orders.items()]


def _shared(words: frozenset[str], runs: list[Run]) -> list[Mapping[str, int]]:
    """For each run, its candidates whose folder has one of the guess's folder ``words``, with
    how many (``len(words & terms(folder))``): through the run's digest (O(the matches), once a
    digest), or one by one."""
    by_digest: dict[int, Mapping[str, int]] = {}
    out: list[Mapping[str, int]] = []
    for _, run, digest in runs:
        if digest is not None:
            if id(digest) not in by_digest:
                by_digest[id(digest)] = digest.shared(words)
            out.append(by_digest[id(digest)])
            continue
        found: dict[str, int] = {}
        for value in run:
            low = value.rpartition("/")[0].lower()
            if any(w in low for w in words) and (n := len(words & terms(low))):
                found[value] = n
        out.append(found)
    return out


def _select(guess: str, runs: list[Run], agree: bool) -> list[str]:
    """The best :data:`MAX_MEANT` candidates of ``runs`` for ``guess``: the closer name, then the
    more folder words shared with the guess, then the shorter path, then the path; with
    ``agree`` (a file meant), when several files answer a guess that names folders, only those
    sharing a folder word with it — the name alone does not tell which was meant
    (``lib/router/index.js`` is none of the other ``index.js`` files of unrelated folders) — and
    when more of them than a note names, only those sharing the most, when they are few
    enough, else none (every ``__snapshots__/jsfmt.spec.js.snap`` shares ``tests``,
    ``snapshots``). Each run is read to its first :data:`MAX_MEANT` candidates sharing no word,
    and through its digest for those that do: O(answer), not O(candidates)."""
    words = terms(_split(guess)[0])
    if not words:
        keyed = [(close, 0, *ranking_order(v)) for close, run, _ in runs for v in run[:MAX_MEANT]]
        return [key[3] for key in heapq.nsmallest(MAX_MEANT, keyed)]
    shared = _shared(words, runs)
    counted = [(close, found[v], v) for (close, run, _), found in zip(runs, shared) for v in _among(run, found)]
    if agree and sum(len(run) for _, run, _ in runs) > 1:
        if len(counted) > MAX_MEANT:
            best = max(n for _, n, _ in counted)
            counted = [c for c in counted if c[1] == best]
            if len(counted) > MAX_MEANT:
                return []
        keyed = [(close, -n, *ranking_order(v)) for close, n, v in counted]
    else:
        keyed = [(close, -n, *ranking_order(v)) for close, n, v in counted]
        for (close, run, _), found in zip(runs, shared):
            rest = (v for v in run if v not in found)
            keyed += [(close, 0, *ranking_order(v)) for v in islice(rest, MAX_MEANT)]
    return [key[3] for key in heapq.nsmallest(MAX_MEANT, keyed)]


def _among(run: list[str], found: Mapping[str, int]) -> list[str]:
    """The candidates of ``found`` that are of ``run`` (a digest's count covers all its runs)."""
    if len(found) <= len(run):
        last = run[0].rpartition("/")[2]
        return [v for v in found if v.rpartition("/")[2] == last]
    return [v for v in run if v in found]


def files_meant(guess: str, index: Listing) -> list[str]:
    """The listed files a missing file ``guess`` most likely meant, best first (module
    docstring); empty when none is close enough, or when ``guess`` is itself listed."""
    name = _split(guess)[1]
    if not name or guess.strip("/") in index.by_name.get(name, ()):
        return []  # no name, or the guessed file is there: no wrong guess
    tables = index.meant
    if tables is None:
        return []  # the tables are not built yet: the answer abstains
    runs: list[Run] = []
    for listed in _names_near(name, tables):
        close = _closeness(name, listed)
        paths = index.by_name.get(listed)
        if close is not None and paths:  # (the guess is none of them: it is not listed)
            runs += _runs_of(close, paths, tables.name_digest(listed, paths))
    return _select(guess, runs, agree=True)


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
    # the same name any case (0 the same, 1 another case), then one `s` apart (2): each key of
    # the table decides it for every folder listed under it
    low = name.lower()
    runs = _runs_of(lambda last: 0 if last == name else 1, tables.folders_named(low), tables.folder_digests.get(low))
    for other in (low + "s", low[:-1] if low.endswith("s") else ""):
        if other and len(min(low, other, key=len)) >= 3:
            runs += _runs_of(2, tables.folders_named(other), tables.folder_digests.get(other))
    return _select(guess, runs, agree=False)


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
