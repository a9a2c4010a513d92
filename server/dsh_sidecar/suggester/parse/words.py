"""The words of tool names and input keys, and their readings remembered between tool calls.

A harness sends the same few tool names and input keys on every call (``Grep`` with
``pattern``, ``Read`` with ``file_path``), and reading one (splitting its words, looking each up
in the role tables) costs more than the rest of the call's parse. A :class:`TableMemo` keeps
each string's reading, computed against the tables it is given: when any table is another object
than the one the readings were made against (``bench/tool_roles.py`` swaps the tables to hold an
agent family out), every reading is dropped. Bounded: strings longer than :data:`MAX_KEY_CHARS`
are read each time and never kept, and the whole memo is emptied when it holds
:data:`MAX_ENTRIES` (the strings are the client's, untrusted). A name or key longer than
:data:`MAX_NAME_CHARS` has no words at all: it is refused before any splitting, so its reading
costs nothing however long the client made it."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar

from dsh_sidecar.lazyre import LazyPattern

#: Longest string whose reading is kept, characters.
MAX_KEY_CHARS: Final = 80
#: Longest tool name or input key that is read for words, characters (the wire's bound on a
#: tool's name, ``ToolCall.name``; real names and keys are a few words). A longer one is no name
#: a harness gives a tool: it has no words, so it decides no role.
MAX_NAME_CHARS: Final = 200
#: Most readings kept at once.
MAX_ENTRIES: Final = 2048

T = TypeVar("T")

_PLURALS: Final = {"directories": "directory", "entries": "entry"}
_CAMEL = LazyPattern(r"([a-z0-9])([A-Z])")


def name_words(name: str) -> list[str]:
    """The words of a tool's name or a field's key: the tool's own name of an MCP tool
    (``mcp__srv__find-nodes`` → ``find``, ``nodes``), split at ``_``, ``-``, ``.``, ``/`` and
    camel-case humps, lower case; none for a name over :data:`MAX_NAME_CHARS`."""
    if len(name) > MAX_NAME_CHARS:
        return []
    base = name.rsplit("__", 1)[-1]
    base = _CAMEL.sub(r"\1_\2", base)
    return [w for w in re.split(r"[^A-Za-z0-9]+", base.lower()) if w]


def singular(word: str, table: dict[str, Any]) -> str:
    """``word``, or its singular when that is a word of ``table`` (``patterns``, ``callers``)."""
    if word in _PLURALS:
        return _PLURALS[word]
    if len(word) > 3 and word.endswith("s") and word not in table and word[:-1] in table:
        return word[:-1]
    return word


class TableMemo(Generic[T]):
    """``read(key)`` of each short ``key``, kept while the tables stay the same objects."""

    def __init__(self, read: Callable[[str], T]) -> None:
        self._read = read
        self._tables: tuple[Any, ...] = ()
        self._kept: dict[str, T] = {}

    def __call__(self, key: str, tables: tuple[Any, ...]) -> T:
        if len(key) > MAX_KEY_CHARS:
            return self._read(key)
        if tables != self._tables:  # the same objects compare equal at once; equal tables read alike
            self._tables = tables
            self._kept = {}
        kept = self._kept
        try:
            return kept[key]
        except KeyError:
            pass
        value = self._read(key)
        if len(kept) >= MAX_ENTRIES:
            kept.clear()
        kept[key] = value
        return value
