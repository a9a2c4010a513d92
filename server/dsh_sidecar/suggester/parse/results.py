"""The paths a search's result text listed: :func:`result_paths`."""

from __future__ import annotations

import re

from dsh_sidecar.suggester.parse.tools import MAX_RESULT_CHARS, MAX_RESULT_PATHS

_HIT_LINE = re.compile(r"^(?P<path>[^\s:][^:\n]*?)(?::(?P<line>\d+))?[:-](?:\d+[:-])?")
_PATH_LIKE = re.compile(r"^[\w.@+~/-][\w./@+~ -]*$")
_BARE_NAME = re.compile(r"^[A-Za-z][\w.+-]{1,63}$")
_HAS_EXT_OR_DIR = re.compile(r"(?:^|/)[^/]*\.[A-Za-z0-9]{1,12}$|/")


def result_paths(text: str | None, max_paths: int = MAX_RESULT_PATHS) -> list[str]:
    """Paths listed in a search's result text, first seen first, ``./`` stripped.

    Understood: ``Found N files`` lists and one-path-a-line output (glob, find, fd, ``rg -l``),
    ``path:line:text`` / ``path:text`` / ``path-line-text`` hit lines (rg, grep -rn, git grep),
    and ripgrep's heading mode (a path line followed by ``line:text`` lines). A line is taken as
    a path only when it looks like one (a folder separator or an extension, no spaces at its
    ends, no ``://``); headers, counts and code are skipped."""
    if not text:
        return []
    out: dict[str, None] = {}
    for raw in text[:MAX_RESULT_CHARS].splitlines():
        line = raw.strip()
        if not line or line.startswith(("Found ", "No files", "No matches", "--", "(")) or "://" in line:
            continue
        path = None
        if _PATH_LIKE.match(line) and " " not in line and (_HAS_EXT_OR_DIR.search(line) or _BARE_NAME.match(line)):
            path = line  # a bare name (LICENSE, Makefile) only means something if the file exists
        else:
            m = _HIT_LINE.match(line)
            if m and (m.group("line") or ":" in line):
                cand = m.group("path").strip()
                if _PATH_LIKE.match(cand) and _HAS_EXT_OR_DIR.search(cand) and " " not in cand:
                    path = cand
        if path is None:
            continue
        while path.startswith("./"):
            path = path[2:]
        path = path.rstrip("/")
        if path and not re.fullmatch(r"[\d.]+", path):
            out.setdefault(path, None)
            if len(out) >= max_paths:
                break
    return list(out)
