"""The identifier a search-class call looks for: ``grep "class Session"`` → ``Session``,
``rg -n "def merge_setting"`` → ``merge_setting``, ``git grep TruncateRunes`` →
``TruncateRunes``. The Symbol and Usage intents look it up in the workspace symbol index.

The search pattern is read from the tool input (``grep {pattern}``) or from the arguments of
a search-shaped shell command (the first positional argument, or ``-e PATTERN``); regex
syntax is stripped, then a definition keyword names the identifier that follows it, else the
most identifier-like token is taken (one with an underscore or an inner capital, else the
first token of at least :data:`MIN_CHARS` characters that is not a keyword).
"""

from __future__ import annotations

import re
import shlex
from typing import Final

#: Shortest identifier looked up (shorter tokens are noise: ``id``, ``db``…).
MIN_CHARS: Final = 3
#: Longest identifier looked up.
MAX_CHARS: Final = 100
#: Search commands whose first positional argument is the pattern.
_PATTERN_COMMANDS: Final = frozenset({"grep", "egrep", "fgrep", "rg", "ag", "ack"})
#: Options of those commands that take a value (skipped with their value).
_OPTS_WITH_VALUE: Final = frozenset(
    {
        "-A",
        "-B",
        "-C",
        "-m",
        "-g",
        "-t",
        "-T",
        "-f",
        "--glob",
        "--type",
        "--type-not",
        "--max-count",
        "--include",
        "--exclude",
        "--exclude-dir",
        "--context",
        "--after-context",
        "--before-context",
        "--max-depth",
        "--iglob",
        "-d",
        "--color",
        "--colour",
    }
)
#: Keywords that introduce a definition in the mainstream languages.
DEFINITION_KEYWORDS: Final = (
    "class",
    "def",
    "fn",
    "func",
    "function",
    "struct",
    "interface",
    "trait",
    "enum",
    "type",
    "const",
    "impl",
    "module",
    "mod",
    "record",
    "protocol",
    "typealias",
)
_DEF = re.compile(
    r"\b(?:async\s+)?(?:" + "|".join(DEFINITION_KEYWORDS) + r")\s+(?:\([^)]*\)\s*)?(?:\*\s*)?([A-Za-z_][A-Za-z0-9_]*)"
)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_STOP: Final = frozenset(DEFINITION_KEYWORDS) | frozenset(
    {
        "import",
        "from",
        "return",
        "self",
        "this",
        "async",
        "await",
        "pub",
        "let",
        "var",
        "new",
        "the",
        "and",
        "for",
        "not",
        "None",
        "null",
        "true",
        "false",
        "True",
        "False",
        "grep",
        "git",
        "rg",
    }
)


def search_pattern(tool: str, inp: dict[str, object], command: str = "") -> str:
    """The pattern a ``grep`` call or a search-shaped ``bash`` command searches for ('' if none)."""
    if tool == "grep":
        for key in ("pattern", "query", "regex"):
            value = inp.get(key)
            if isinstance(value, str):
                return value
        return ""
    if tool != "bash" or not command:
        return ""
    for segment in _SEGMENTS.split(command):
        try:
            words = shlex.split(segment, posix=True)
        except ValueError:
            words = segment.split()
        while words and "=" in words[0] and not words[0].startswith("-"):
            words = words[1:]
        if not words:
            continue
        head = words[0].rsplit("/", 1)[-1]
        args = words[1:]
        if head == "git" and args[:1] == ["grep"]:
            args = args[1:]
        elif head not in _PATTERN_COMMANDS:
            continue
        skip = False
        for i, word in enumerate(args):
            if skip:
                skip = False
                continue
            if word in ("-e", "--regexp") and i + 1 < len(args):
                return args[i + 1]
            if word.startswith("--regexp="):
                return word.split("=", 1)[1]
            if word in _OPTS_WITH_VALUE:
                skip = True
                continue
            if word.startswith("-") and word != "-":
                continue
            return word
    return ""


_CLASSES = re.compile(r"\\[sSbBdDwW][+*?]?")
_ESCAPED = re.compile(r"\\(.)")
_ANCHORS = re.compile(r"\.[*+?]|[\^$]")
_SEGMENTS = re.compile(r"\|\||&&|[|;]")
_HUMP = re.compile(r"[a-z0-9][A-Z]")


def _plain(pattern: str) -> str:
    text = _CLASSES.sub(" ", pattern)  # classes → separators
    text = _ESCAPED.sub(r"\1", text)  # escaped literals → literals
    return _ANCHORS.sub(" ", text)


def identifier(pattern: str) -> str | None:
    """The identifier ``pattern`` searches for, or ``None`` when it names none."""
    if not pattern:
        return None
    text = _plain(pattern[:1000])
    m = _DEF.search(text)
    if m and MIN_CHARS <= len(m.group(1)) <= MAX_CHARS:
        return m.group(1)
    tokens = [t for t in _TOKEN.findall(text) if len(t) >= MIN_CHARS and len(t) <= MAX_CHARS and t not in _STOP]
    for t in tokens:
        if "_" in t.strip("_") or _HUMP.search(t):
            return t
    return tokens[0] if tokens else None
