"""The labelled calls read with the help-not-agreement rule: a label that expects only files the
call itself showed asks for an echo.

A labelled call (``corpus/intents/``) expects a note naming some files. What the call *showed*
is read as the trajectories read it (``docs/corpus.md``, "what a call showed"): the workspace
files its result text lists (bare names relative to the folders it ``cd``-ed into or listed,
the line's ``dirs``), plus the repository files it opened, searched inside or edited (the line's
``opens``); both written with the trajectories' shell reader when the corpus is built. When the call showed at most :data:`ECHO_MAX_FILES` files:

* every expected file among them — a note naming them repeats what the agent was just shown
  (an echo, the rule the trajectories are judged by): the label expects silence;
* some of them among them — the label keeps expecting the others, the files a note would add.

:func:`echo_aware` relabels the trace that way, so the labelled calls can be scored both as
labelled (agreement) and echo-aware (help); the trace files stay as they were labelled.

:func:`session_aware` is the reading the labelled-call bar is judged by (``docs/corpus.md``, "The
session-aware reading"). It reads the issue's *lead* definition — a note helps by naming what no
result so far had shown — on every label, two rules applied uniformly to every repository:

* **Session-aware echo**: a label expects only the files that neither its own call (the
  echo-aware rule above, at most :data:`ECHO_MAX_FILES` files) nor **any earlier call of the same
  session** (``sessionId``; every file it listed, opened, searched inside or edited, however many,
  as the trajectories' lead counts them) showed; when every expected file was shown, silence.
* **Ownership is answered by ownership files**: an Owner label's licence files (:data:`LICENCE`)
  are read as the workspace's ownership files (:data:`OWNERSHIP`, at the root or where code
  hosts look for a ``CODEOWNERS``: :data:`OWNERSHIP_DIRS`), or dropped when it has none; a
  label left with no file expects silence. A licence says under which terms, never who owns.
  The ownership rule applies first, then the session-aware echo."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from dsh_sidecar.evaluation.trace import TraceLine
from dsh_sidecar.evaluation.trajectories import ECHO_MAX_FILES
from dsh_sidecar.evaluation.trajectory_runs import FileIndex, listed_files


def listed_by(line: TraceLine, index: FileIndex) -> set[str]:
    """The workspace files the call's result text lists (read as the trajectories' are: bare
    names relative to the line's ``dirs`` and to the call's ``path`` input)."""
    result = line.params.get("result")
    text = result.get("text") if isinstance(result, dict) else None
    if not isinstance(text, str) or not text:
        return set()
    tool = line.params.get("tool")
    inp = tool.get("input") if isinstance(tool, dict) else None
    path = inp.get("path") if isinstance(inp, dict) else None
    dirs = list(line.dirs)
    if isinstance(path, str) and path.strip("/") in index.dirs:
        dirs.append(path.strip("/"))
    return set(listed_files(text, index, dirs))


def shown_files(line: TraceLine, index: FileIndex) -> set[str]:
    """What the call showed: the files its result lists and the files it opened, searched inside
    or edited (``line.opens``)."""
    return listed_by(line, index) | set(line.opens)


def echo_aware_line(line: TraceLine, index: FileIndex) -> TraceLine:
    """``line`` read echo-aware: silence when its call showed (among at most
    :data:`ECHO_MAX_FILES`) every file it expects, the files not shown when it showed some."""
    if line.intent is None or not line.targets:
        return line
    shown = shown_files(line, index)
    if not 1 <= len(shown) <= ECHO_MAX_FILES:
        return line
    return _unseen(line, shown)


def _unseen(line: TraceLine, seen: set[str]) -> TraceLine:
    """``line`` expecting only its targets not in ``seen``: silence when none is left."""
    rest = tuple(t for t in line.targets if t not in seen)
    if not rest:
        return TraceLine(line.params, None, (), line.opens, line.dirs)
    if len(rest) < len(line.targets):
        return TraceLine(line.params, line.intent, rest, line.opens, line.dirs)
    return line


def echo_aware(trace: Sequence[TraceLine], files: Iterable[str]) -> list[TraceLine]:
    """``trace`` with every label read echo-aware (:func:`echo_aware_line`)."""
    index = FileIndex(files)
    return [echo_aware_line(line, index) for line in trace]


#: A licence file's name, any case, with or without a suffix (``LICENSE``, ``LICENSE.md``,
#: ``LICENSE-MIT``, ``COPYING``, ``License``, ``UNLICENSE``).
LICENCE = re.compile(r"^(?:licen[cs]e|copying|unlicen[cs]e)(?:[-._][\w.-]+)?$", re.IGNORECASE)
#: An ownership file's name in its ecosystems' forms, any case, with or without an extension:
#: ``CODEOWNERS`` (GitHub, GitLab), ``OWNERS`` (Kubernetes, Chromium), ``MAINTAINERS`` (Linux,
#: Go projects), ``AUTHORS`` / ``CONTRIBUTORS`` (Python, C/C++, Go), ``CREDITS`` (PHP, Debian).
OWNERSHIP = re.compile(r"^(?:codeowners|owners|maintainers|authors|contributors|credits)(?:\.[\w.-]+)?$", re.IGNORECASE)
#: Where an ownership file counts: the root, and the folders GitHub and GitLab read a
#: ``CODEOWNERS`` from.
OWNERSHIP_DIRS = frozenset({"", ".github", ".gitlab", "docs", "doc"})


def _name(path: str) -> tuple[str, str]:
    folder, _, name = path.rpartition("/")
    return folder, name


def ownership_files(files: Iterable[str]) -> tuple[str, ...]:
    """The workspace's ownership files (:data:`OWNERSHIP` in :data:`OWNERSHIP_DIRS`), sorted."""
    out = []
    for f in files:
        folder, name = _name(f)
        if folder in OWNERSHIP_DIRS and OWNERSHIP.match(name):
            out.append(f)
    return tuple(sorted(out))


def owner_line(line: TraceLine, owners: Sequence[str]) -> TraceLine:
    """An Owner label with its licence files read as ``owners`` (dropped when there are none);
    silence when no file is left. Every other label as it is."""
    if line.intent != "Owner" or not any(LICENCE.match(_name(t)[1]) for t in line.targets):
        return line
    kept = [t for t in line.targets if not LICENCE.match(_name(t)[1])]
    kept += [o for o in owners if o not in kept]
    if not kept:
        return TraceLine(line.params, None, (), line.opens, line.dirs)
    return TraceLine(line.params, line.intent, tuple(kept), line.opens, line.dirs)


def session_aware_line(line: TraceLine, shown: set[str], earlier: set[str]) -> TraceLine:
    """``line`` expecting only the files neither its call (``shown``, counted when it holds 1 to
    :data:`ECHO_MAX_FILES` files) nor an earlier call of its session (``earlier``) showed."""
    if line.intent is None or not line.targets:
        return line
    return _unseen(line, earlier | shown if 1 <= len(shown) <= ECHO_MAX_FILES else earlier)


def session_aware(trace: Sequence[TraceLine], files: Iterable[str]) -> list[TraceLine]:
    """``trace`` with every label read session-aware: the ownership rule (:func:`owner_line`),
    then the session-aware echo (:func:`session_aware_line`), the calls of each ``sessionId`` in
    trace order."""
    files = list(files)
    index = FileIndex(files)
    owners = ownership_files(files)
    before: dict[str, set[str]] = {}
    out = []
    for line in trace:
        earlier = before.setdefault(str(line.params.get("sessionId") or ""), set())
        shown = shown_files(line, index)
        out.append(session_aware_line(owner_line(line, owners), shown, earlier))
        earlier |= shown
    return out
