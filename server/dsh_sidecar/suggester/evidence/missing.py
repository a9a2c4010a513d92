"""Wrong guesses of a path: what a call that missed named and the workspace does not have, and
the files it most likely meant (``suggester/meant.py`` ranks the names; this module reads the
call). A read, listing or search of a missing path, answered with where it most likely is
(module docstring of ``evidence``, "Wrong guesses")."""

from __future__ import annotations

from typing import Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.candidates import in_test_tree, is_test_path
from dsh_sidecar.suggester.evidence.vocabulary import Workspace
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.workspace.kinds import code_language_of

__all__ = ["guessed", "meant", "meant_intent", "missing_scope"]


def missing_scope(q: Query, ws: Workspace) -> bool:
    """Whether ``q`` searches only folders the workspace does not have (none of its scope is a
    file or folder here): there is nothing there to name."""
    folders = [s for s in q.scope if not (s and ws.is_file(s))]
    return len(folders) == len(q.scope) > 0 and all(f and not ws.is_dir(f) for f in folders)


#: The commands of a bash call that look at a path (read, list or search it), nothing else.
_LOOKS: Final = frozenset(
    {"ls", "cat", "head", "tail", "less", "more", "tree", "find", "fd", "grep", "rg", "ag", "wc", "nl"}
)


def guessed(q: Query, ws: Workspace) -> tuple[list[str], list[str]]:
    """The paths a call that missed named and this workspace does not have, as ``(files,
    folders)``: a read or listing that failed or found nothing, a search scoped only to missing
    folders, a ``find -name``/``find_file``/glob of a literal name that matched nothing. Empty
    when any path it named is here (its result answered it) or its result shows a path."""
    if q.result_paths or q.question or q.tool not in ("read", "bash", "glob", "grep"):
        return [], []
    if q.tool == "bash" and not set(q.commands) <= _LOOKS:
        return [], []
    folders = [p for p in q.scope if p and p != "."]
    names = [n.removeprefix("**/").removeprefix("./") for n in q.name_patterns if not n.startswith("!")]
    literal = [n for n in names if n and not any(c in n for c in "*?[{")]
    if any(_listed_in(n, folders, ws) for n in literal):
        return [], []  # a file of that name is where it looked: its other filters left it out
    # a listing by name guessed the name (where it looked may be right); else the paths named
    paths = [*q.reads, *literal] if literal else [*q.reads, *folders]
    if not paths or any(ws.is_file(p) or (p not in literal and ws.is_dir(p)) for p in paths):
        return [], []
    if not (q.is_error or q.listing or q.tool == "read" or missing_scope(q, ws)):
        return [], []
    files = [p for p in paths if "." in p.rsplit("/", 1)[-1].lstrip(".")]
    return files, [p for p in paths if p not in files]


def _listed_in(name: str, folders: list[str], ws: Workspace) -> bool:
    """Whether a listed file or folder of ``name`` (``a/b`` read as a path's tail) lies in one of
    the ``folders`` a listing looked in (the whole tree when it names none)."""
    tail = name.strip("/")
    last = tail.rsplit("/", 1)[-1]
    found = [p for p in [*ws.named(last), *ws.folders_meant(last)] if p == tail or p.endswith("/" + tail)]
    where = [f.strip("/") + "/" for f in folders if f.strip("/") not in ("", ".")]
    return any(not where or p.startswith(tuple(where)) for p in found)


def meant_intent(q: Query, ws: Workspace) -> str | None:
    """The intent of :func:`meant`, or ``None``."""
    found = meant(q, ws)
    return None if found is None else found[0]


def meant(q: Query, ws: Workspace) -> tuple[str, list[str]] | None:
    """A missing path the workspace has under another name (:mod:`..meant`), as ``(intent,
    files)``: a missing file → the files it most likely meant, Test when the guess or the best
    of them is a test file, Symbol when it is code; a missing folder searched → the files the
    call's words find in the folders it most likely meant, or whose path names it (``search_dir
    gtest cmake`` → the ``CMakeLists.txt`` that mention ``gtest``); a missing folder listed → the
    test files of the test folder it meant. Test when those files are tests; ``None`` when
    nothing close is here (the repository may simply have none)."""
    files, folders = guessed(q, ws)
    found = list(dict.fromkeys(m for f in files for m in ws.files_meant(f)))
    if found:
        if any(is_test_path(f) for f in files) or is_test_path(found[0]):
            return "Test", found
        return ("Symbol", found) if code_language_of(found[0]) else None
    if not folders:
        return None
    if q.patterns:
        found = _searched_meant(q, ws, folders)
    else:
        meant_folders = [m for f in folders for m in ws.folders_meant(f)[:1]]
        found = [p for m in meant_folders for p in ws.files_under(m) if is_test_path(p)]
    return ("Test", found) if found and in_test_tree(found[0]) else None


def _searched_meant(q: Query, ws: Workspace, folders: list[str]) -> list[str]:
    """The files a search scoped to missing ``folders`` finds where it most likely meant: the
    content index's matches of its words inside the folders meant, or whose path holds a
    missing folder's name (lower case), in the index's order."""
    words = [w for p in q.patterns for w in _WORDS_OF.findall(p)]
    if not words:
        return []
    meant_folders = tuple(m + "/" for f in folders for m in ws.folders_meant(f))
    names = [f.strip("/").rsplit("/", 1)[-1].lower() for f in folders]
    names = [n for n in names if len(n) >= 3]
    hits = ws.search(words)
    return [p for p in hits if p.startswith(meant_folders) or any(n in p.lower() for n in names)]


#: The words of a search pattern the content index is asked for (regex syntax left out).
_WORDS_OF: Final = LazyPattern(r"[A-Za-z_][A-Za-z0-9_]{2,}")
