"""What a search pattern says: its fixed parts, terms, literals and identifier.

A pattern's **fixed parts** (:func:`fixed_parts`) are the literal runs of a regex in the dialect
of the tool: ERE/PCRE for ``rg``/``grep -E``/``-P`` and the grep tool, BRE for plain ``grep``,
none for ``-F``. The **terms** are identifiers of at least :data:`MIN_CHARS` characters, stop
words dropped; the **literals** are fixed parts holding a space or punctuation and at least
:data:`MIN_LITERAL_CHARS` characters (message strings); the **identifier** is the name after a
definition keyword, else the most identifier-like term.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from typing import Final

#: Shortest identifier looked up (shorter tokens are noise: ``id``, ``db``…).
MIN_CHARS: Final = 3
#: Longest identifier looked up.
MAX_CHARS: Final = 100
#: Shortest literal (message-like fixed part) kept, characters.
MIN_LITERAL_CHARS: Final = 8

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
    "object",
    "let",
    "var",
    "val",
    # the C family declares a function by its return type: the types that are only ever one
    # (``void setStrictness``, C++ ``auto join(``) stand for a definition keyword
    "void",
    "auto",
)
DEFINITION = re.compile(
    r"\b(?:async\s+)?(?:export\s+)?(?:pub(?:\([^)]*\))?\s+)?(" + "|".join(DEFINITION_KEYWORDS) + r")(?:<[^>]*>)?\s+"
    r"(?:\([^)]*\)\s*)?(?:\*\s*)?([A-Za-z_][A-Za-z0-9_]*)"
)
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_HUMP = re.compile(r"[a-z0-9][A-Z]")
#: Words never taken for an identifier (keywords, shell words, common English).
STOP_WORDS: Final = frozenset(DEFINITION_KEYWORDS) | frozenset(
    {
        "import",
        "from",
        "return",
        "self",
        "this",
        "async",
        "await",
        "pub",
        "new",
        "the",
        "and",
        "for",
        "not",
        "with",
        "None",
        "null",
        "nil",
        "true",
        "false",
        "True",
        "False",
        "grep",
        "git",
        "def",
        "public",
        "private",
        "static",
        "export",
        "default",
        "raise",
        "throw",
        "print",
    }
)

#: Shell glob characters: a path with one names files by pattern.
GLOB = re.compile(r"[*?\[]")


# ---------------------------------------------------------------------------- regex → fixed parts


class _Runs:
    """The literal runs found so far and the run being read."""

    def __init__(self) -> None:
        self.runs: list[str] = []
        self.cur: list[str] = []

    def cut(self) -> None:
        if self.cur:
            self.runs.append("".join(self.cur))
            self.cur.clear()


#: Longest pattern whose fixed parts are kept (:func:`fixed_parts`), characters.
MEMO_PATTERN_CHARS: Final = 1000
#: Most patterns whose fixed parts are kept at once (least recently used dropped first).
MEMO_PATTERNS: Final = 1024


def fixed_parts(pattern: str, dialect: str = "ere") -> list[str]:
    r"""The literal runs of ``pattern`` (what any match must contain, per alternative).

    ``dialect``: ``ere`` (ERE/PCRE/Rust regex: ``| ( ) + ? { }`` are operators), ``bre`` (POSIX
    basic: ``\| \( \) \{ \}`` are operators, ``+ ? | ( )`` literal), ``fixed`` (the whole
    pattern is one literal). Escapes of punctuation are literals (``\.`` → ``.``); classes
    (``\s``, ``\w``, ``[…]``), ``.``, anchors and groups end a run; a quantified character is
    dropped from its run (``colou?r`` → ``colo``, ``r``). Runs are stripped; empty ones dropped.
    """
    if dialect == "fixed":
        return [pattern] if pattern.strip() else []
    if len(pattern) > MEMO_PATTERN_CHARS:
        return _fixed_parts(pattern, dialect)
    return list(_kept_fixed_parts(pattern, dialect))  # a copy: the kept tuple is shared


@functools.lru_cache(maxsize=MEMO_PATTERNS)
def _kept_fixed_parts(pattern: str, dialect: str) -> tuple[str, ...]:
    """:func:`fixed_parts` of a pattern, kept: a call reads its pattern's parts three times
    (its terms, its identifier, its definition keyword), and agents search the same words
    again."""
    return tuple(_fixed_parts(pattern, dialect))


def _fixed_parts(pattern: str, dialect: str) -> list[str]:
    runs = _Runs()
    i, n = 0, len(pattern)
    ops = "|()+?{}*" if dialect == "ere" else "*"
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            i = _escape(pattern, i, dialect, runs)
        elif c == "[":
            runs.cut()
            i = _class_end(pattern, i)
        elif c in ".^$":
            runs.cut()
            i += 1
        elif c in ops:
            i = _operator(pattern, i, dialect, runs)
        else:
            runs.cur.append(c)
            i += 1
    runs.cut()
    return [r.strip() for r in runs.runs if r.strip()]


def _escape(pattern: str, i: int, dialect: str, runs: _Runs) -> int:
    r"""Read the escape at ``i``; return the index after it. A BRE operator (``\|``, ``\(``,
    ``\{…\}``) or a class/anchor (``\s``, ``\b``) ends the run; escaped punctuation is a literal."""
    d = pattern[i + 1]
    if dialect == "bre" and d in "|(){}+?":
        runs.cut()
        if d == "{":
            close = pattern.find("\\}", i)
            return close + 2 if close >= 0 else len(pattern)
        return i + 2
    if d.isalnum():  # \s \w \d \b \n …: a class or an anchor
        runs.cut()
        return i + 2
    runs.cur.append(d)
    return i + 2


def _class_end(pattern: str, i: int) -> int:
    """The index after the bracket expression starting at ``i`` (``[^]…]`` included)."""
    n = len(pattern)
    j = i + 1
    if j < n and pattern[j] == "^":
        j += 1
    if j < n and pattern[j] == "]":
        j += 1
    close = pattern.find("]", j)
    return close + 1 if close >= 0 else n


def _operator(pattern: str, i: int, dialect: str, runs: _Runs) -> int:
    """Read the operator at ``i``; return the index after it. A quantifier drops the character
    it repeats from the run; an ERE interval ``{m,n}`` is read whole."""
    c = pattern[i]
    if c in "*+?" and runs.cur:
        runs.cur.pop()  # the quantified character is optional/repeated: not fixed
    if c == "{" and dialect == "ere":
        close = pattern.find("}", i)
        if close > i and re.fullmatch(r"\{\d*,?\d*\}", pattern[i : close + 1]):
            if runs.cur:
                runs.cur.pop()
            runs.cut()
            return close + 1
    runs.cut()
    return i + 1


def plain(pattern: str) -> str:
    """``pattern`` with regex syntax turned into spaces (for keyword + name matching)."""
    return " ".join(fixed_parts(pattern[:1000], "ere")) or pattern[:1000]


def terms_of(parts: Iterable[str]) -> list[str]:
    """Identifier-like tokens of ``parts`` (≥ :data:`MIN_CHARS`, stop words dropped), in order, once each."""
    out: dict[str, None] = {}
    for part in parts:
        for t in _TOKEN.findall(part):
            if MIN_CHARS <= len(t) <= MAX_CHARS and t not in STOP_WORDS and not t.isdigit():
                out.setdefault(t, None)
    return list(out)


def literals_of(parts: Iterable[str]) -> list[str]:
    """Message-like fixed parts: at least :data:`MIN_LITERAL_CHARS` characters with a space
    (``"connection refused"``, ``"could not find %s"``)."""
    out = []
    for p in parts:
        words = [t for t in _TOKEN.findall(p) if t not in STOP_WORDS]
        if len(p) >= MIN_LITERAL_CHARS and " " in p.strip() and len(words) >= 2:
            out.append(p)
    return out


def words_of(pattern: str, dialect: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``(terms, literals)`` of a searched pattern: :func:`terms_of` and :func:`literals_of` of
    its :func:`fixed_parts` in ``dialect``; kept per pattern and dialect as the parts are."""
    if len(pattern) > MEMO_PATTERN_CHARS:
        return _words_of(pattern, dialect)
    return _kept_words_of(pattern, dialect)


@functools.lru_cache(maxsize=MEMO_PATTERNS)
def _kept_words_of(pattern: str, dialect: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return _words_of(pattern, dialect)


def _words_of(pattern: str, dialect: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    parts = fixed_parts(pattern, dialect)
    return tuple(terms_of(parts)), tuple(literals_of(parts))


def identifier(pattern: str) -> str | None:
    """The identifier ``pattern`` searches for, or ``None`` when it names none: the name after
    a definition keyword (``class Session`` → ``Session``), else the first token with an
    underscore or an inner capital, else the first term."""
    return names(pattern)[0]


def names(pattern: str) -> tuple[str | None, str | None]:
    """``(identifier, definition keyword)`` of ``pattern``: :func:`identifier`, and the keyword
    of its definition (``class Session`` → ``class``; its name of :data:`MIN_CHARS` to
    :data:`MAX_CHARS` characters, a stop word too) or ``None``. One reading of the pattern
    answers both (they search its plain text for the same definition); kept per pattern as
    :func:`fixed_parts` is (agents search the same words again)."""
    if len(pattern) > MEMO_PATTERN_CHARS:
        return _names(pattern)
    return _kept_names(pattern)


@functools.lru_cache(maxsize=MEMO_PATTERNS)
def _kept_names(pattern: str) -> tuple[str | None, str | None]:
    return _names(pattern)


def _names(pattern: str) -> tuple[str | None, str | None]:
    if not pattern:
        return None, None
    text = plain(pattern)
    m = DEFINITION.search(text)
    keyword = None
    if m and MIN_CHARS <= len(m.group(2)) <= MAX_CHARS:
        keyword = m.group(1)
        if m.group(2) not in STOP_WORDS:
            return m.group(2), keyword
    tokens = terms_of([text])
    for t in tokens:
        if "_" in t.strip("_") or _HUMP.search(t):
            return t, keyword
    return (tokens[0] if tokens else None), keyword


def code_shaped(token: str) -> bool:
    """Whether a word of a question is a code name: an underscore inside, an inner capital
    (``LatexPrinter``, ``getUser``) or a dotted/``::`` path."""
    return (
        "_" in token.strip("_")
        or bool(_HUMP.search(token))
        or "." in token
        or "::" in token
        or token != token.strip("_")
    )
