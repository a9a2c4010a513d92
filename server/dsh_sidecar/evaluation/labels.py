"""The labelled calls read with the help-not-agreement rule: a label that expects only files the
call itself showed asks for an echo.

A labelled call (``corpus/intents/``) expects a note naming some files. When the call's own
result already listed every one of them, among at most :data:`ECHO_MAX_FILES` files of the
workspace, a note naming them repeats what the agent was just shown: under the rule the
trajectories are judged by (``docs/corpus.md``, "echo"), the right answer there is silence.
:func:`echo_aware` relabels those calls as expecting silence, so the labelled calls can be
scored both as labelled (agreement) and echo-aware (help); the trace files stay as they were
labelled."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from dsh_sidecar.evaluation.trace import TraceLine
from dsh_sidecar.evaluation.trajectories import is_echo
from dsh_sidecar.evaluation.trajectory_runs import FileIndex, listed_files


def shown_files(line: TraceLine, index: FileIndex) -> set[str]:
    """The workspace files the call's result text lists (read as the trajectories' are, with the
    call's ``path`` input as the folder bare names are relative to)."""
    result = line.params.get("result")
    text = result.get("text") if isinstance(result, dict) else None
    if not isinstance(text, str) or not text:
        return set()
    tool = line.params.get("tool")
    inp = tool.get("input") if isinstance(tool, dict) else None
    path = inp.get("path") if isinstance(inp, dict) else None
    dirs = [path.strip("/")] if isinstance(path, str) and path.strip("/") in index.dirs else []
    return set(listed_files(text, index, dirs))


def echo_aware(trace: Sequence[TraceLine], files: Iterable[str]) -> list[TraceLine]:
    """``trace`` with every label that expects only files its call showed (at most
    :data:`ECHO_MAX_FILES` of them) turned into an expected silence."""
    index = FileIndex(files)
    out: list[TraceLine] = []
    for line in trace:
        if line.intent is not None and line.targets and is_echo(line.targets, shown_files(line, index)):
            out.append(TraceLine(line.params, None, ()))
            continue
        out.append(line)
    return out
