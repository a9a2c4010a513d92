"""A tool call → the probe: which tool class it is and the text its signals read.

Tool inputs (issue #2): ``grep {pattern, path?, glob?}``, ``glob {pattern, path?}``,
``read {path}`` (also ``file_path``), ``bash {command}``, ``edit``/``write {path}``; names
are case-insensitive (``Grep`` = ``grep``). A ``bash`` call counts only when it is
search-shaped (``grep``, ``rg``, ``ag``, ``ack``, ``git grep``, ``find``, ``fd``, ``ls``,
``git ls-files``, ``locate``); other commands are ignored.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Final

from dsh_sidecar.suggester.identifier import search_pattern

#: Tool names that only teach (never trigger a note): a note after an edit is too late.
WRITE_TOOLS: Final = frozenset({"edit", "write", "multiedit", "rawwrite", "raw_write", "notebookedit", "apply_patch"})
#: Aliases of the four search-class tools.
TOOL_ALIASES: Final = {
    "grep": "grep",
    "search": "grep",
    "rg": "grep",
    "ripgrep": "grep",
    "glob": "glob",
    "find": "glob",
    "ls": "glob",
    "list": "glob",
    "read": "read",
    "view": "read",
    "cat": "read",
    "open": "read",
    "bash": "bash",
    "shell": "bash",
    "exec": "bash",
    "run": "bash",
}
_SEARCH_COMMANDS: Final = frozenset(
    {"grep", "egrep", "fgrep", "rg", "ag", "ack", "find", "fd", "fdfind", "ls", "locate", "tree"}
)
#: Longest probe text looked at, characters (signals read the head of a huge input).
MAX_PROBE_CHARS: Final = 4000


@dataclass
class Probe:
    """``tool`` is ``grep``/``glob``/``read``/``bash`` (search class), ``write`` (learning
    only) or ``other``; ``text`` is what signals match; ``paths`` the files it names;
    ``query`` the search pattern alone (grep pattern, or the pattern argument of a
    search-shaped shell command), from which the Symbol/Usage identifier is read."""

    tool: str
    text: str = ""
    paths: list[str] = field(default_factory=list)
    query: str = ""


def _s(value: Any) -> str:
    return value[:MAX_PROBE_CHARS] if isinstance(value, str) else ""


def _first_path(inp: dict[str, Any]) -> str:
    for key in ("path", "file_path", "filePath", "filename", "file"):
        if isinstance(inp.get(key), str):
            return inp[key][:MAX_PROBE_CHARS]
    return ""


def search_shaped(command: str) -> bool:
    """Whether a shell command is a search: any pipeline segment starting with a search tool."""
    for segment in re.split(r"\|\||&&|[|;]", command):
        try:
            words = shlex.split(segment, posix=True)
        except ValueError:
            words = segment.split()
        while words and ("=" in words[0] and not words[0].startswith("-")):
            words = words[1:]  # VAR=value prefixes
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        if head in _SEARCH_COMMANDS:
            return True
        if head == "git" and len(words) > 1 and words[1] in ("grep", "ls-files", "log"):
            return True
    return False


def make_probe(name: str, inp: dict[str, Any]) -> Probe:
    """Classify one tool call (see module docstring)."""
    tool = name.strip().lower()
    if tool in WRITE_TOOLS:
        path = _first_path(inp)
        return Probe("write", path, [path] if path else [])
    tool = TOOL_ALIASES.get(tool, "other")
    if tool == "grep":
        parts = [
            _s(inp.get("pattern")),
            _s(inp.get("query")),
            _s(inp.get("glob")),
            _s(inp.get("path")),
            _s(inp.get("include")),
        ]
        return Probe(
            "grep",
            " ".join(p for p in parts if p),
            [p for p in [_s(inp.get("path"))] if p],
            search_pattern("grep", inp)[:MAX_PROBE_CHARS],
        )
    if tool == "glob":
        parts = [_s(inp.get("pattern")), _s(inp.get("path"))]
        return Probe("glob", " ".join(p for p in parts if p))
    if tool == "read":
        path = _first_path(inp)
        return Probe("read", path, [path] if path else [])
    if tool == "bash":
        command = _s(inp.get("command")) or _s(inp.get("cmd"))
        if command and search_shaped(command):
            return Probe("bash", command, query=search_pattern("bash", inp, command)[:MAX_PROBE_CHARS])
        return Probe("other", command)
    return Probe("other")
