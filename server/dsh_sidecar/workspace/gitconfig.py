r"""A git config file's text read as data, the way git reads it (git-config(1) "Syntax").

The one reader of the workspace's ``.git/config`` text: the hardened git runner reads the
``[include]`` paths from it before it lets git run (``gitguard.include_refusal``), and the
repository identity reads the remotes' URLs from it (``identity.remote_urls``). Nothing here
runs git, follows an include or reads a file: the callers read the (size-capped) text through
``fsguard``.

What is parsed as git's ``config.c`` does:

* ``[section]``, ``[section "subsection"]`` (the subsection case-sensitive, ``\"`` and ``\\``
  its only escapes) and the old ``[section.subsection]`` (lower-cased); section names and keys
  are case-insensitive (lower-cased here);
* ``key = value``, ``key=value``, and a bare ``key`` (the boolean true: value ``None``);
* values: quotes anywhere toggle quoting, an unquoted ``;`` or ``#`` starts a comment,
  ``\n \t \b \\ \"`` are escapes, a backslash-newline joins lines, unquoted whitespace at
  the ends is dropped and inside runs kept.

A UTF-8 byte order mark at the start is skipped, and git's end of file reads as a newline (a
final ``\`` joins nothing). Git keeps names and values in C strings: a NUL (in a quoted
subsection or a value) ends them, so ``[include "path\0"] x = f`` is git's ``include.path``;
names are split as ``parse_config_key`` does (section to the first dot, key after the last).

A line git would refuse (an unknown escape, an open quote, a broken section header) yields
no entry; the rest of the file is still read, since a caller must never fail on a hostile
config (git itself would refuse to run on it, and the callers then fall back).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

_ESCAPES: Final = {"n": "\n", "t": "\t", "b": "\b", "\\": "\\", '"': '"'}
#: ``[name "subsection"] rest`` and ``[name.sub] rest`` / ``[name] rest`` (one physical line; git
#: allows blanks, a lone CR among them, only between the name, which may be empty, and the quote).
#: Unambiguous: linear on any input.
_QUOTED_HEADER: Final = re.compile(r'\[([A-Za-z0-9.-]*)[ \t\r]+"((?:[^"\\\n]|\\[^\n])*)"\]')
_PLAIN_HEADER: Final = re.compile(r"\[([A-Za-z0-9.-]*)\]")
_KEY: Final = re.compile(r"([A-Za-z][A-Za-z0-9-]*)[ \t]*")


@dataclass(frozen=True)
class Entry:
    """One ``key = value`` of a config text: ``section`` and ``key`` lower-cased,
    ``subsection`` as written (``None`` when the section has none), ``value`` as git reads it
    (``None`` for a bare ``key``, git's boolean true)."""

    section: str
    subsection: str | None
    key: str
    value: str | None


def _value_at(text: str, i: int) -> tuple[str | None, int]:
    """The value that starts at ``text[i]`` (after the ``=``) as git's ``parse_value`` reads it,
    and the index after the newline that ends it (a backslash-newline continues it, but not
    inside a comment); ``None`` for a value git refuses (an unknown escape, an open quote)."""
    out: list[str] = []
    quoted = comment = bad = False
    spaces = size = 0  # size: characters of the value so far (git's `len`)
    n = len(text)
    while i < n:
        c = text[i]
        i += 1
        if c == "\n":
            return (None if quoted or bad else "".join(out)), i
        if comment or bad:
            continue
        if c in " \t\r" and not quoted:
            spaces += 1 if size else 0
            continue
        if not quoted and c in ";#":
            comment = True
            continue
        if spaces:
            out.append(" " * spaces)
            size += spaces
            spaces = 0
        if c == "\\":
            nxt = text[i] if i < n else ""
            i += 1
            if nxt in ("\n", ""):  # git reads the end of the file as a newline: a final `\` joins nothing
                continue
            if nxt == "\r" and text[i : i + 1] == "\n":
                i += 1
                continue
            esc = _ESCAPES.get(nxt)
            if esc is None:
                bad = True  # git: bad config line (the rest of the line is skipped here)
                continue
            out.append(esc)
            size += 1
        elif c == '"':
            quoted = not quoted
        else:
            out.append(c)
            size += 1
    return (None if quoted or bad else "".join(out)), n


def value(raw: str) -> str | None:
    """A config value as git reads it (``config.c`` ``parse_value``, rules in the module
    docstring); ``None`` for a value git refuses (an unknown escape, an open quote)."""
    return _value_at(raw + "\n", 0)[0]


def _subsection(raw: str) -> str:
    r"""A quoted subsection name without its escapes (git keeps the character after ``\``)."""
    return re.sub(r"\\(.)", r"\1", raw)


def _entry(head: str, key: str, val: str | None) -> Entry | None:
    """The entry git's callback sees for ``<head>.<key>``: git keeps names and values in C
    strings, so a NUL (possible only in a quoted subsection or a value) ends them there; the
    name is then split as ``parse_config_key`` splits it (the section up to the first dot, the
    key after the last, the subsection between). ``None`` for a name left without a dot."""
    name = f"{head}.{key}".partition("\0")[0]
    section, dot, rest = name.partition(".")
    if not dot:
        return None
    sub, dot, last = rest.rpartition(".")
    return Entry(section, sub if dot else None, last, None if val is None else val.partition("\0")[0])


def _line_end(text: str, i: int) -> int:
    """The index after the newline that ends the physical line holding ``text[i]``."""
    j = text.find("\n", i)
    return len(text) if j < 0 else j + 1


def entries(text: str) -> list[Entry]:
    """Every ``key = value`` of a config text, in file order (rules in the module docstring).
    Never raises; linear in the text's length."""
    out: list[Entry] = []
    head: str | None = None  # git's name so far: `section` or `section.subsection`
    i, n = (1 if text.startswith("\ufeff") else 0), len(text)  # git skips a UTF-8 byte order mark
    while i < n:
        while i < n and text[i] in " \t\r":
            i += 1
        if i >= n:
            break
        c = text[i]
        if c == "\n":
            i += 1
            continue
        if c in "#;":
            i = _line_end(text, i)
            continue
        if c == "[":
            quoted = _QUOTED_HEADER.match(text, i)
            plain = None if quoted is not None else _PLAIN_HEADER.match(text, i)
            if quoted is not None:
                head, i = f"{quoted.group(1).lower()}.{_subsection(quoted.group(2))}", quoted.end()
            elif plain is not None and plain.group(1):
                head, i = plain.group(1).lower(), plain.end()
            else:
                head = None  # a header git refuses: what follows belongs to no section
                i = _line_end(text, i)
            continue  # the rest of the line is read as a key line
        k = _KEY.match(text, i)
        if k is None:
            i = _line_end(text, i)
            continue
        i = k.end()
        if i < n and text[i] == "=":
            val, i = _value_at(text, i + 1)
            entry = _entry(head, k.group(1).lower(), val) if val is not None and head is not None else None
            if entry is not None:
                out.append(entry)
            continue
        if i >= n or text[i] in "\r\n#;":
            entry = _entry(head, k.group(1).lower(), None) if head is not None else None
            if entry is not None:
                out.append(entry)
        i = _line_end(text, i)  # a bare key's comment, or `key junk` (git refuses the line)
    return out
