"""Regular expressions compiled on first use (:class:`LazyPattern`).

A module that compiles dozens of patterns at import pays for all of them in every process that
imports it (the MCP server's start, before its first note), though one request uses a few. A
:class:`LazyPattern` compiles with :func:`re.compile` the first time it matches, then holds the
compiled pattern: the same matches, the same errors (a bad pattern fails at its first use
instead of at import, so keep a test that uses each). For trusted, built-in patterns only:
untrusted ones go through RE2 (``suggester/packs.py``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from typing import AnyStr, Generic

__all__ = ["LazyPattern"]


class LazyPattern(Generic[AnyStr]):
    """``re.compile(pattern, flags)`` deferred to the first match; :attr:`pattern` and
    :attr:`flags` (as given) need no compilation."""

    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: AnyStr, flags: int = 0) -> None:
        self.pattern: AnyStr = pattern
        self.flags = int(flags)
        self._compiled: re.Pattern[AnyStr] | None = None

    @property
    def compiled(self) -> re.Pattern[AnyStr]:
        """The compiled pattern (compiled now on first use)."""
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(self.pattern, self.flags)
        return compiled

    def search(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        compiled = self._compiled  # read directly: the property's call costs as much as a short match
        return (compiled if compiled is not None else self.compiled).search(string, pos, endpos)

    def match(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        compiled = self._compiled  # read directly: the property's call costs as much as a short match
        return (compiled if compiled is not None else self.compiled).match(string, pos, endpos)

    def fullmatch(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> re.Match[AnyStr] | None:
        compiled = self._compiled  # read directly: the property's call costs as much as a short match
        return (compiled if compiled is not None else self.compiled).fullmatch(string, pos, endpos)

    def finditer(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> Iterator[re.Match[AnyStr]]:
        return self.compiled.finditer(string, pos, endpos)

    def findall(self, string: AnyStr, pos: int = 0, endpos: int = sys.maxsize) -> list[AnyStr]:
        return self.compiled.findall(string, pos, endpos)

    def split(self, string: AnyStr, maxsplit: int = 0) -> list[AnyStr]:
        return self.compiled.split(string, maxsplit)

    def sub(self, repl: AnyStr | Callable[[re.Match[AnyStr]], AnyStr], string: AnyStr, count: int = 0) -> AnyStr:
        return self.compiled.sub(repl, string, count)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags})"
