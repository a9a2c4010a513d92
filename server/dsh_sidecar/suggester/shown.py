"""What a call showed the agent: the workspace files its result text names, read the way the
evaluation reads them (``docs/corpus.md``, "Metric definitions", *what a call showed*), so the
suggester's "this would only repeat the listing" is the measured echo, not a guess at it.

A file is shown when a path-like token of the result names it: the path itself (``./`` and a
diff's ``a/``/``b/`` removed), an absolute path under the workspace root or a container's copy
of it (``/testbed/x.py``, ``/workspace/x.py``), the longest workspace path ending any other
absolute path with a folder in it (``/mnt/w/repo/src/x.ts`` → ``src/x.ts``; ``/usr/lib/setup.py``
is not the root ``setup.py``), or a bare name relative to a folder the call searched or listed,
or to the folder header above it (``./pkg:`` of ``ls -R``, ``pkg/:`` of a folder tree); never as
part of a longer name. The files the call opened or edited are shown too.

Bounded: the first :data:`MAX_SHOWN_CHARS` characters (what the evaluation stores of a result,
and what an agent reads first), each token a few dictionary reads of the listing (nothing grows
with the workspace): about 0.4 ms for a 2,000-character grep output on 100k files, where the
whole 20,000 characters a call may carry took 4 ms, twice the latency budget.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from typing import Final

from dsh_sidecar.suggester.candidates import FileIndex

#: Absolute folders agents' containers mount the repository at (``/testbed/x.py`` is ``x.py``).
CONTAINER_ROOTS: Final = ("/testbed", "/workspace")
#: Characters of a result read for the files it shows.
MAX_SHOWN_CHARS: Final = 2000
#: A listing of at most this many files can be echoed: a note naming only them repeats it.
ECHO_MAX_FILES: Final = 5
#: A listing of at least this many files is broad: a note on it has to rank it.
RANK_MIN_FILES: Final = 10

_TOKEN: Final = re.compile(r"[\w@+~.\-/]+")
_HEADER: Final = re.compile(r"^\s*(\S+?)/?:\s*$")
#: Where a header may end: a ``:`` with only blanks after it up to a line break (any that
#: ``str.splitlines`` breaks at) or the end (every header line has one; most results none).
_MAYBE_HEADER: Final = re.compile(r":\s*(?:[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]|\Z)")


class _Resolver:
    """Token → workspace file, over one listing (``index``) and one root prefix (``base``)."""

    def __init__(self, index: FileIndex, base: str) -> None:
        self.index = index
        self.base = base

    def folder(self, raw: str) -> str | None:
        """A folder as a header or scope names it, repo-relative (``""``: the root), or ``None``."""
        d = raw
        while d.startswith("./"):
            d = d[2:]
        for root in (self.base.rstrip("/"), *CONTAINER_ROOTS):
            if root and (d == root or d.startswith(root + "/")):
                d = d[len(root) + 1 :]
                break
        d = posixpath.normpath(d) if d not in ("", ".") else ""
        if d in ("", "."):
            return ""
        return d if self.index.has_dir(d) else None

    def file(self, token: str, dirs: Sequence[str]) -> str | None:
        tok = token
        while tok.startswith("./"):
            tok = tok[2:]
        if not tok or tok.endswith("/"):
            return None
        files = self.index.file_set  # what :meth:`FileIndex.exists` reads, without a call a token
        if tok in files:
            return tok
        if tok.startswith(("a/", "b/")) and tok[2:] in files:
            return tok[2:]
        if tok.startswith("/"):
            for root in (self.base.rstrip("/"), *CONTAINER_ROOTS):
                if root and tok.startswith(root + "/"):
                    rel = posixpath.normpath(tok[len(root) + 1 :])
                    return rel if rel in files else None
            parts = tok.split("/")
            if parts[-1] not in self.index.by_name:
                return None
            for k in range(max(1, len(parts) - 2 - self.index.depth), len(parts) - 1):
                rel = "/".join(parts[k:])
                if rel in files:
                    return rel
            return None
        # ``dirs`` are :meth:`folder`'s answers (normalised): one name is joined as it is
        plain = "/" not in tok and tok not in (".", "..")
        for d in dirs:
            if d:
                rel = f"{d}/{tok}" if plain and d[-1] != "/" else posixpath.normpath(posixpath.join(d, tok))
                if rel in files:
                    return rel
        return None


def listed_files(text: str, index: FileIndex, base: str = "", dirs: Iterable[str] = ()) -> list[str]:
    """The workspace files ``text`` names, first seen first, each once (module docstring).
    ``base`` is the workspace root as a prefix (``/ws/``), ``dirs`` the repo-relative folders
    bare names are relative to."""
    res = _Resolver(index, base)
    folders = [f for f in (res.folder(d) for d in dirs) if f]
    out: dict[str, None] = {}
    text = text[:MAX_SHOWN_CHARS]
    if not _MAYBE_HEADER.search(text):  # no header: the whole text is read against the same folders
        _read_block(text, folders, res, out)
        return list(out)
    where = folders
    block: list[str] = []  # the lines since the last header, read against ``where``
    for line in text.splitlines():
        m = _HEADER.match(line) if line.rstrip().endswith(":") else None  # a header ends so
        if m:
            _read_block("\n".join(block), where, res, out)
            block = []
            header = res.folder(m.group(1))
            where = [*folders, header] if header else folders
            continue
        block.append(line)
    _read_block("\n".join(block), where, res, out)
    return list(out)


def _read_block(text: str, where: Sequence[str], res: _Resolver, out: dict[str, None]) -> None:
    """Add to ``out`` the files the tokens of ``text`` (lines without a header) name, read
    against the folders ``where``. A token never spans a line break, so the lines are read as
    one text; a result repeats its tokens (the path on each hit line, ``self``, ``def``): each
    is read once, and resolved only when a listed file has its last name (any file a token resolves
    to ends with the token's last name: a word of code never reaches :meth:`_Resolver.file`)."""
    names = res.index.by_name
    for tok in dict.fromkeys(_TOKEN.findall(text)):
        if tok[-1] == "." or "/" in tok:  # ``x.py.`` and ``x.py`` both read (the same answer): rare
            tok = tok.rstrip(".")
            if tok.rpartition("/")[2] not in names:
                continue
        elif tok not in names:  # a word: most tokens
            continue
        p = res.file(tok, where)
        if p is not None:
            out.setdefault(p, None)
