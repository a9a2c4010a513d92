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
labelled (agreement) and echo-aware (help; the reading the issue's bar is judged by); the trace
files stay as they were labelled."""

from __future__ import annotations

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
    rest = tuple(t for t in line.targets if t not in shown)
    if not rest:
        return TraceLine(line.params, None, (), line.opens, line.dirs)
    if len(rest) < len(line.targets):
        return TraceLine(line.params, line.intent, rest, line.opens, line.dirs)
    return line


def echo_aware(trace: Sequence[TraceLine], files: Iterable[str]) -> list[TraceLine]:
    """``trace`` with every label read echo-aware (:func:`echo_aware_line`)."""
    index = FileIndex(files)
    return [echo_aware_line(line, index) for line in trace]
