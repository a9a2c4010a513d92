"""The query model's value: :class:`Query`, what one tool call searches for, where, and what
its result listed. Frozen: a stage that needs other values makes a new one
(``dataclasses.replace``); its list and set fields are never changed after the parse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from dsh_sidecar.suggester.parse.patterns import GLOB, code_shaped, names
from dsh_sidecar.suggester.parse.runs import script_names
from dsh_sidecar.suggester.parse.tools import QUESTION_TOOL

T = TypeVar("T")


class _once(Generic[T]):  # noqa: N801 -- a decorator, as functools.cached_property
    """``functools.cached_property`` without its lock (Python 3.11 takes one at every first read,
    and a query is new on every call): the value is computed at the first read and kept in the
    instance's ``__dict__``, which later reads find first. Two threads reading a new query at
    once both compute the same value."""

    def __init__(self, fn: Callable[[Any], T]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __get__(self, obj: Any, cls: Any = None) -> T:
        if obj is None:
            return self  # type: ignore[return-value]
        value: T = self.fn(obj)
        obj.__dict__[self.name] = value  # a frozen dataclass refuses setattr, not its __dict__
        return value


@dataclass(frozen=True)
class Query:
    """What one tool call asks (``parse/__init__.py``). Paths are as the call spelt them
    (``./`` stripped, ``cd`` applied); ``WorkspacePaths.relative`` makes absolute ones
    repo-relative, in a new query: a query is never changed once parsed."""

    tool: str  # grep | glob | read | bash (search class) | write (learning only) | other
    text: str = ""
    patterns: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)
    literals: list[str] = field(default_factory=list)
    name_patterns: list[str] = field(default_factory=list)
    scope: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)
    flags: set[str] = field(default_factory=set)
    languages: set[str] = field(default_factory=set)
    result_paths: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)  # jq/yq filter keys (``.version`` → version)
    is_error: bool = False
    #: a listing (glob, find, fd, ls) whose result text was given: an empty result then means
    #: the thing looked for does not exist
    listing: bool = False
    #: the reads are slices (``head``, ``tail``, ``sed -n``, a Read with offset/limit), not whole files
    partial: bool = False
    #: ``(path, function)`` of each traceback frame in the output of a command that is no
    #: search (``runs.traceback_frames``), innermost first
    frames: list[tuple[str, str]] = field(default_factory=list)
    #: a free-text question (MCP ``where_is`` query, ``tools.QUESTION_TOOL``), not a tool call:
    #: only code-shaped tokens are identifiers
    question: bool = False
    #: a Python script: the whole text of a ``.py`` file the call writes (``content``/
    #: ``file_text``/``contents``) or the code it runs inline (``python -c CODE``), at most
    #: ``runs.MAX_SCRIPT_CHARS`` (parsed only when asked: :attr:`script`)
    script_code: str = ""
    #: the file :attr:`script_code` is written to, as the call names it (``""``: run inline)
    script_path: str = ""
    #: files a shell command changes: ``sed -i``/``perl -i`` operands, ``>``/``>>`` targets;
    #: ``runs.PATCHED`` when it applies a patch (``git apply``, ``patch``: files unknown)
    writes: list[str] = field(default_factory=list)
    #: a symbol lookup (a tool resolving a name in its own code index: ``get_class_info``,
    #: an LSP definition…), read as the search it stands for: its answer is the symbol itself,
    #: not the lines a text search matched
    lookup: bool = False
    #: the search printed something (a result text that is neither empty nor an error)
    matched: bool = False
    #: the scope paths the call asked about by name, not searched within: an ``ls`` operand
    #: (``ls CODEOWNERS``: the entry itself, whatever it is), a file operand of a grep that does
    #: not recurse (``grep -n x mypy.ini``); a missing one is a missing file, a missing path
    #: searched within (``grep -r``, ``find``, ``rg``, ``ls DIR/``, a tool's ``path``) a
    #: missing folder (``triggers/search.py``)
    entries: list[str] = field(default_factory=list)
    #: every path the call searches and reads lies outside the workspace (``grep -v x /tmp/list``): set
    #: by ``WorkspacePaths.relative``, which drops such paths
    outside: bool = False

    @property
    def search(self) -> bool:
        """Whether the call is search-class (may trigger a note)."""
        return self.tool in ("grep", "glob", "read", "bash", QUESTION_TOOL) and bool(self.text)

    @property
    def script(self) -> list[tuple[str, str]]:
        """``(module, name)`` of the imported names :attr:`script_code` uses
        (``runs.script_names``; parsed at each access, so the caller asks only when it will
        use them)."""
        return script_names(self.script_code) if self.script_code else []

    @_once
    def identifier(self) -> str | None:
        """The identifier searched for (``patterns.identifier`` of the first pattern with one; of a
        question, its first code-shaped token — ``snake_case``, ``CamelCase``, dotted — or its
        only word). Read once per query (the query never changes), though every stage asks."""
        if self.question:
            return next((t for t in self.terms if code_shaped(t)), self.terms[0] if len(self.terms) == 1 else None)
        for p in self.patterns:
            name = names(p)[0]
            if name is not None:
                return name
        return None

    @_once
    def definition_keyword(self) -> str | None:
        """The definition keyword of the first pattern with one (``class``, ``def``, ``func``…),
        if any (``patterns.names``, the same reading as :attr:`identifier`'s)."""
        for p in self.patterns:
            keyword = names(p)[1]
            if keyword is not None:
                return keyword
        return None

    def touched(self) -> list[str]:
        """Every path the call names: reads, scope and name patterns that are plain paths."""
        return self.reads + [s for s in self.scope if not GLOB.search(s)]
