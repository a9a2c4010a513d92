"""The paths a search's result text listed: :func:`result_paths`; a result text some harnesses
wrap in JSON, read as the text it wraps: :func:`unwrapped`."""

from __future__ import annotations

import json
import re
from typing import Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.parse.tools import MAX_RESULT_CHARS, MAX_RESULT_PATHS

#: A hit line: ``path:line:text``, ``path:text`` (``-c`` counts, ``-l`` with text), or a context
#: line ``path-line-text`` (``-A``/``-B``/``-C``). The dash form needs its line number, so a
#: file name with a dash (``compile-test.cc:3``) is read whole.
_HIT_LINE = LazyPattern(r"^(?P<path>[^\s:][^:\n]*?)(?::(?P<line>\d+)[:-]|:|-(?P<context>\d+)-)")
_PATH_LIKE = LazyPattern(r"^[\w.@+~/-][\w./@+~ -]*$")
_BARE_NAME = LazyPattern(r"^[A-Za-z][\w.+-]{1,63}$")
_HAS_EXT_OR_DIR = LazyPattern(r"(?:^|/)[^/]*\.[A-Za-z0-9]{1,12}$|/")


#: A folder header of a recursive listing, the names under it relative to it: ``ls -R``'s
#: ``./pkg:``/``pkg/sub:``, Rovo Dev's ``expand_folder`` ``pkg/sub/:``.
_FOLDER_HEADER = LazyPattern(r"^(?P<dir>[\w.@+~/-]+?)/?:$")
#: A listing's head naming the folder its names are in: SWE-agent's ``Found 3 matches for "x" in
#: src:``, Gemini CLI's ``Directory listing for /w/src:``.
_PROSE_START = LazyPattern(r"^[A-Z][a-z]+ ")
_LISTING_IN = LazyPattern(r"\b(?:in|for)\s+['\"]?(?P<dir>[\w.@+~/-]+?)/?['\"]?:$")
#: A listing line's marks around the path: ``[DIR] sub`` (Gemini CLI), ``a.py (3 matches)``
#: (SWE-agent's ``search_dir``).
_ENTRY_MARK = LazyPattern(r"^\[(?:DIR|FILE)\]\s+", re.I)
_MATCH_COUNT = LazyPattern(r"\s+\(\d+ match(?:es)?\)$")
#: A labelled path: ``File: pkg/a.java``, ``Defined in file: pkg/a.java`` (a symbol tool's
#: answer), ``Path: …``.
_LABELLED = LazyPattern(r"^[A-Z][A-Za-z ]{0,30}:\s+(?P<path>\S+)$")
#: A path-valued field of a JSON answer (an MCP tool's ``"file_path": "src/a.ts"``, ``"path":
#: "src/a.ts#436-1706:…"``), read line by line (the text may be cut).
_JSON_PATH = LazyPattern(
    r'"(?:file_?[pP]ath|path|file|filename|relative_?[pP]ath|uri)"\s*:\s*"(?P<path>[^"#\n]{1,400})'
)


#: Longest result text read as JSON for the text it wraps (:func:`unwrapped`): one parse of at
#: most this many characters (about 0.4 ms); a longer one is read as it is.
MAX_WRAPPED_CHARS: Final = 200_000


def unwrapped(text: str | None) -> str | None:
    r"""A tool result's text as the agent read it: a result some harnesses return wrapped in
    JSON (``{"output": "a.py:1:x\nb.py:2:y", "exit_code": 0}``, or a JSON string) is the lines
    of its top-level string values, in order, followed by the JSON itself (its path fields stay
    readable: ``"file_path": …``); any other text is itself. Untrusted: parsed only when it
    starts as JSON and is at most :data:`MAX_WRAPPED_CHARS` long, nested values are not walked,
    the values read are cut at :data:`~.tools.MAX_RESULT_CHARS` characters, and what does not
    parse (cut, invalid, too deep) is read as it is. Never raises."""
    global _LAST_UNWRAPPED  # noqa: PLW0603 -- a one-entry memo, swapped whole
    if not text or len(text) > MAX_WRAPPED_CHARS or not text.lstrip().startswith(("{", '"')):
        return text
    last = _LAST_UNWRAPPED
    if last[0] is text:  # the same result object, read again for the same call
        return last[1]
    out = _unwrap(text)
    _LAST_UNWRAPPED = (text, out)
    return out


#: The last JSON-shaped result text :func:`unwrapped` read and what it read it as: a call's
#: result is read when the call is parsed and again for the session's evidence, and the one
#: ``str`` object of the call's params is parsed once (an identity test, never a comparison of
#: texts; at most :data:`MAX_WRAPPED_CHARS` characters kept).
_LAST_UNWRAPPED: tuple[str | None, str] = (None, "")


def _unwrap(text: str) -> str:
    """:func:`unwrapped` of a JSON-shaped text within the bound."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(value, dict):
        values = [v for v in value.values() if isinstance(v, str)]
    else:
        values = [value] if isinstance(value, str) else []
    wrapped = "\n".join(values)[:MAX_RESULT_CHARS]
    return f"{wrapped}\n{text}" if wrapped.strip() else text


def _as_path(cand: str) -> str | None:
    """``cand`` when it looks like a path (a folder separator or an extension, no spaces)."""
    cand = cand.strip()
    if cand and " " not in cand and _PATH_LIKE.match(cand) and _HAS_EXT_OR_DIR.search(cand):
        return cand
    return None


def result_paths(text: str | None, max_paths: int = MAX_RESULT_PATHS) -> list[str]:
    """Paths listed in a search's result text, first seen first, ``./`` stripped.

    Understood: ``Found N files`` lists and one-path-a-line output (glob, find, fd, ``rg -l``),
    ``path:line:text`` / ``path:text`` / ``path-line-text`` hit lines (rg, grep -rn, git grep),
    ripgrep's heading mode (a path line followed by ``line:text`` lines), recursive listings
    whose names are relative to a folder header (``ls -R``, Rovo Dev's ``expand_folder``, a
    listing's ``… in DIR:`` head), listing marks (``[DIR] x``, ``x.py (3 matches)``), labelled
    paths (``File: x``, ``Defined in file: x``) and JSON path fields. A line is taken as a path
    only when it looks like one (a folder separator or an extension, no spaces at its ends, no
    ``://``); headers, counts and code are skipped, and so is a path that ends where the tool
    cut its output (:data:`CUT_MARKS`: a fragment, not a file its hits name)."""
    if not text:
        return []
    out: dict[str, None] = {}
    hits: dict[str, str | None] = {}  # a hit line's path as :func:`_as_path` read it (one a line at most)
    folder: str | None = None  # the folder header the bare names below are in
    block_start = True
    for raw in text[:MAX_RESULT_CHARS].splitlines():
        line = raw.strip()
        if not line:
            folder, block_start = None, True
            continue
        at_start, block_start = block_start, False
        named = _header_folder(line, at_start)
        if named is not None:
            folder = named
            continue
        if '"' in line:  # a JSON path field's first character
            for m in _JSON_PATH.finditer(line):
                p = _as_path(m.group("path"))
                if p is not None:
                    _add(out, p)
        if line.startswith(("Found ", "No files", "No matches", "--", "(", "{", "}", '"')) or "://" in line:
            continue
        line = _unmarked(line)
        path = None
        if " " not in line and _PATH_LIKE.match(line) and (_HAS_EXT_OR_DIR.search(line) or _BARE_NAME.match(line)):
            path = line  # a bare name (LICENSE, Makefile) only means something if the file exists
            if folder and "/" not in path.rstrip("/"):
                path = f"{folder}/{path}"
        else:
            hit = _HIT_LINE.match(line)
            if hit and (hit.group("line") or hit.group("context") or ":" in line):
                named = hit.group("path")  # the same path on each of its hit lines: read once
                path = hits[named] if named in hits else hits.setdefault(named, _as_path(named))
            if path is None:
                labelled = _LABELLED.match(line)
                path = _as_path(labelled.group("path")) if labelled else None
        if path is not None:
            _add(out, path)
        if len(out) >= max_paths:
            break
    return list(out)[:max_paths]


def _header_folder(line: str, at_start: bool) -> str | None:
    """The folder a folder header or a listing's head puts the names below it in (``""``: the
    root), or ``None`` for any other line (``line``: stripped, not empty; ``at_start``: the
    first line of a block, where a bare ``name:`` is a header too)."""
    if line[-1] != ":":  # a header's, a listing head's last character
        return None
    head = _LISTING_IN.search(line) if _PROSE_START.match(line) else None
    header = _FOLDER_HEADER.match(line)
    if header and ("/" in header.group("dir") or header.group("dir") == "." or at_start):
        return _clean(header.group("dir"))
    if head is not None:
        return _clean(head.group("dir"))
    return None


def _unmarked(line: str) -> str:
    """``line`` without a listing mark before its path or a match count after it."""
    if line[0] == "[":  # the only place a listing mark is read
        line = _ENTRY_MARK.sub("", line)
    if line.endswith(("match)", "matches)")):  # the only place a match count is read
        line = _MATCH_COUNT.sub("", line)
    return line


def _clean(folder: str) -> str:
    while folder.startswith("./"):
        folder = folder[2:]
    return "" if folder in (".", "") else folder.rstrip("/")


#: The marks a tool leaves where it cut a long line (Rovo Dev's ``common/src/main/java/org/ap...``):
#: what comes before one is part of a path, never a whole one.
CUT_MARKS: Final = ("...", "\u2026")


#: A number (``1.2.3``): no path.
_NUMBER = LazyPattern(r"[\d.]+")


def _add(out: dict[str, None], path: str) -> None:
    while path.startswith("./"):
        path = path[2:]
    path = path.rstrip("/")
    if path and path not in out and not _NUMBER.fullmatch(path) and not path.endswith(CUT_MARKS):
        out.setdefault(path, None)


#: The first line of a listing of a folder: OpenHands' ``Here's the files and directories up to
#: 2 levels deep in src, excluding hidden items:``, Gemini CLI's ``Directory listing for /w/src:``.
_LISTING_HEAD = LazyPattern(
    r"(?i)\b(?:files and directories|directory listing|contents of (?:the )?(?:folder|directory))\b"
)


def folder_listing(result_text: str | None) -> bool:
    """Whether a view's result lists a folder (its first line says so)."""
    if not result_text:
        return False
    return bool(_LISTING_HEAD.search(result_text[:2000].lstrip().split("\n", 1)[0]))
