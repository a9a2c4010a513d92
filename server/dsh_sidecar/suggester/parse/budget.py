"""bashlex under a work budget: :func:`parse_bounded`, the only way ``shell.py`` calls it.

bashlex (0.18) can loop forever. Its word expansion (``subst._expandwordinternal``) skips a
single-quoted part of a word with ``string.find("'", i) + 1`` where ``i`` is the opening quote
itself, so the quoted text is expanded as if it were not quoted; a ``${`` in it with no ``}``
after it makes ``subst._paramexpand`` return ``find("}") + 1`` = ``0`` — the scan restarts at
the start of the word, appends one more parameter node, and never ends (a 20-byte line,
``5&c']${[Y>$Y'9{&b`3``, ran 77–121 s and took 17 GB before being killed). A word that is
quoted whole (``'${'``) takes another branch and is fine, and an unquoted ``${`` without its
``}`` is refused by the tokenizer, which is why short fuzzing lines, not agents' lines, found it.

Two guards, installed into bashlex once (:func:`install`), hold for every parse:

* **progress**: ``_paramexpand`` must return an index past the one it was given (its caller's
  loop moves forward only through it or by at least one character itself), else the parse is
  refused (:class:`ParseRefused`); the known loop then ends on its first turn;
* **a work budget**: every character the tokenizer reads (``tokenizer._getc``, also when a
  ``$(…)`` is read again by the recursive parse of its expansion) and every syntax node built
  (``ast.node``) costs one unit; a parse that spends more than its budget is refused. Every loop
  of bashlex either reads a character, builds a node, or moves forward through its text (the
  LR parser shifts read tokens and reduces to nodes), so no input can make it work past the
  budget, whatever bashlex does wrong next. The budget is :data:`UNITS_PER_CHAR` units a
  character of the line plus :data:`BASE_UNITS`, at most :data:`MAX_UNITS`: fuzzing
  (``bench/shell_fuzz.py``) and the recorded lines (``docs/SCHEME.md``, "The query model's
  bounds") say what real parses spend.

* **parsers started**: bashlex starts a parser for each top-level command of a line (on the
  rest of the text) and for each command substitution it expands (``$(…)``, backquotes), and
  a parser's start costs far more than a unit (its tokenizer, a copy of the LR parser: 0.3-0.5
  ms on a busy machine, ~100-300 units' worth of reading). A parse may start at most
  :data:`MAX_PARSERS`; one more is refused. Substitutions inside one double-quoted word are one
  shell token (the head's token bound does not cut them) and nest one level (the nesting bound
  lets them through): ``python3 -c "`*`*…"`` started 1,600 parsers within 8,192 units and held
  the event loop 0.45-0.65 s a call.

A refused line is split by ``shell.py``'s ``shlex`` fallback, as a line bashlex refuses is.
The budget is per thread (a parse on one thread never charges another's).
"""

from __future__ import annotations

import threading
from typing import Any, Final

#: Units a character of the parsed line may cost (see the module docstring). Of 300,000 fuzzed
#: lines (``bench/shell_fuzz.py``) and the 5,503 recorded agent lines, none that bashlex parses or
#: refuses by itself spent more than 6 units a character (a one-character line; 3 for the
#: recorded ones); a line nesting ``$(`` the 8 levels ``shell.MAX_SHELL_NESTING`` lets through is
#: read again at each level: 9 units a character. Past this budget a parse is refused.
UNITS_PER_CHAR: Final = 16
#: Units every parse may spend besides (the parser's start and end).
BASE_UNITS: Final = 200
#: Most units any parse may spend, whatever the line's length: twice the costliest recorded
#: line (a ``python3 -c "…"`` script of 4,000 characters spent 4,016 units, 3-45 ms on a busy
#: machine). A line past it (8 nested ``$(`` around 3 KB would spend 27,000) is refused.
MAX_UNITS: Final = 8192


#: Most bashlex parsers a parse may start (the line's own, one per further top-level command and
#: one per command substitution expanded): the 5,607 recorded lines start at most 8 (a multi-line
#: script of top-level commands; 5,135 start one), fuzzed lines of 24 characters at most 12.
MAX_PARSERS: Final = 64


class ParseRefused(Exception):
    """A parse that spent its budget or stopped moving forward."""


_STATE = threading.local()
_INSTALL_LOCK = threading.Lock()
_installed = False


def _charge() -> None:
    """Spend one unit of the running parse's budget (nothing outside :func:`parse_bounded`)."""
    left: int | None = getattr(_STATE, "left", None)
    if left is None:
        return
    if left <= 0:
        raise ParseRefused("over budget")
    _STATE.left = left - 1


def _start_parser() -> None:
    """Count a parser the running parse starts (nothing outside :func:`parse_bounded`)."""
    left: int | None = getattr(_STATE, "parsers", None)
    if left is None:
        return
    if left <= 0:
        raise ParseRefused("too many parsers")
    _STATE.parsers = left - 1


def spent() -> int:
    """Units the last :func:`parse_bounded` of this thread spent (for the fuzzer and tests)."""
    return int(getattr(_STATE, "spent", 0))


def install() -> None:
    """Put the guards into bashlex (once per process; idempotent, thread-safe)."""
    global _installed
    if _installed:
        return
    with _INSTALL_LOCK:
        if _installed:
            return
        from dsh_sidecar.suggester.parse.lalr import import_bashlex

        import_bashlex()  # its parse tables read, not built (lalr.py), when it is not imported yet
        from bashlex import ast, parser, subst, tokenizer

        getc = tokenizer.tokenizer._getc
        parser_init = parser._parser.__init__
        node_init = ast.node.__init__
        paramexpand = subst._paramexpand

        def counted_getc(self: Any, *args: Any, **kwargs: Any) -> Any:
            _charge()
            return getc(self, *args, **kwargs)

        def counted_node(self: Any, **kwargs: Any) -> None:
            _charge()
            node_init(self, **kwargs)

        def counted_parser(self: Any, *args: Any, **kwargs: Any) -> None:
            _start_parser()
            parser_init(self, *args, **kwargs)

        def forward_paramexpand(parserobj: Any, string: str, sindex: int) -> Any:
            node, end = paramexpand(parserobj, string, sindex)
            if end <= sindex:
                raise ParseRefused("word expansion went back")
            return node, end

        tokenizer.tokenizer._getc = counted_getc
        ast.node.__init__ = counted_node
        parser._parser.__init__ = counted_parser
        subst._paramexpand = forward_paramexpand
        _installed = True


def budget_for(line: str) -> int:
    """The units a parse of ``line`` may spend: :data:`UNITS_PER_CHAR` a character and
    :data:`BASE_UNITS`, at most :data:`MAX_UNITS`."""
    return min(UNITS_PER_CHAR * len(line) + BASE_UNITS, MAX_UNITS)


def parse_bounded(line: str, budget: int | None = None) -> list[Any]:
    """``bashlex.parse(line)`` within ``budget`` units (default :func:`budget_for`) and
    :data:`MAX_PARSERS` parsers: its trees, or :class:`ParseRefused` (or bashlex's own errors)
    — never more work than the budget."""
    install()
    import bashlex

    units = budget_for(line) if budget is None else budget
    _STATE.left = units
    _STATE.parsers = MAX_PARSERS
    try:
        return list(bashlex.parse(line))
    finally:
        left = getattr(_STATE, "left", 0) or 0
        _STATE.spent = units - left
        _STATE.left = _STATE.parsers = None
