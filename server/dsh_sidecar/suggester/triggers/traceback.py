"""A traceback: a command that is no search failed, printing the frames it ran through.

``parse.runs.traceback_frames`` reads the frames (Python, pytest, Node), innermost first; the note
names the project files among them (Symbol, through the ``frames`` candidates of its rows):
where the definition of what failed lives. Test files and the test tree are left out (the
failure is what they check, not where it is). Example: ``python run.py`` prints
``File "/testbed/pkg/core.py", line 9, in apply`` → Symbol, noted with ``pkg/core.py`` (its
reason names ``apply``).
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar, Final

from dsh_sidecar.escape import escape_controls
from dsh_sidecar.suggester.candidates import Target, in_test_tree, is_test_path
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Classification, Decision, Silent
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.triggers.base import best_candidate, claimed, named_targets, regular_file

INTENT = "Symbol"


class Traceback:
    """The second trigger: the frames of a failed run that are this project's files."""

    name: ClassVar[str] = "traceback"
    one_a_turn: ClassVar[bool] = False
    abstains: ClassVar[bool] = False
    recent_suppresses: ClassVar[bool] = True
    partly_read_known: ClassVar[bool] = False
    seen_suppresses: ClassVar[bool] = False

    def detect(self, q: Query, ctx: Context) -> Classification | Decision | None:
        """Symbol at the subject gate's score, with the frames' project files; silence when
        the rows have no ``frames`` candidate or no frame is a project file."""
        if not q.frames or ctx.prepared is None:
            return None
        if best_candidate(INTENT, ctx, lambda c: c.frames) is None:
            return Silent()
        hit = claimed(INTENT, ctx)
        if not isinstance(hit, Classification):
            return hit
        named = frame_files(q, ctx)
        # the dismissed files after the others (the filters drop them): the noted name, noise
        # control's key, is the first shown file's
        named = tuple(sorted(named, key=lambda pn: ctx.dismissals.path_dismissed(INTENT, pn[0])))
        return replace(hit, named=named) if named else Silent()

    def targets(self, q: Query, hit: Classification, ctx: Context) -> list[Target]:
        """The frames' files, innermost first, with the ``frames`` candidate's reason."""
        cand = best_candidate(INTENT, ctx, lambda c: c.frames)
        return named_targets(hit, cand) if cand is not None else []

    def never_named(self, q: Query) -> set[str]:
        """The files the call reads."""
        return set(q.reads)

    def noted_name(self, q: Query, hit: Classification) -> str | None:
        """The innermost frame's function."""
        return hit.named[0][1] if hit.named else None


#: Folders of installed third-party code: a frame there is a library's, not the agent's own
#: code path, even when an environment lives inside the workspace (``.venv/lib/…/site-packages``).
INSTALLED: Final = frozenset({"site-packages", "dist-packages", "node_modules", "vendor"})


def installed(rel: str) -> bool:
    """Whether the workspace path ``rel`` lies in a folder of installed packages."""
    return not INSTALLED.isdisjoint(rel.split("/")[:-1])


def plumbing(func: str) -> bool:
    """Whether a frame's function is import plumbing, not the failing code path: a module's
    top level (``<module>``, as Python prints it, or cut: ``<module>...``, ``...``) runs while
    a package is imported — the chain of ``__init__.py`` files from the agent's script to the
    module that failed to load. In the recorded runs' tune traces no such frame was ever a file
    the task changed (docs/SCHEME.md, "The agent's own code path")."""
    return func.startswith("<module>") or func.strip(".") == ""


def frame_files(q: Query, ctx: Context) -> tuple[tuple[str, str], ...]:
    """``(path, function)`` of the frames of the failing run's own code path that are project
    files inside the workspace, each once, innermost first: no test file, no import plumbing
    (:func:`plumbing`), no installed package (:func:`installed`), no file the session created
    (its own reproduction script); a name with control characters is shown nowhere raw."""
    assert ctx.prepared is not None
    index = ctx.prepared.index
    created = ctx.state.created
    found: dict[str, str] = {}
    seen: set[str] = set()
    for path, func in q.frames:
        if path in seen or plumbing(func):
            continue  # a recursion prints one frame many times
        seen.add(path)
        rel = ctx.paths.frame_path(path)
        if rel is None or rel in found or rel in created or is_test_path(rel) or in_test_tree(rel) or installed(rel):
            continue
        if not index.inside(rel):
            continue
        if escape_controls(rel) is not rel or not regular_file(index.root / rel):
            continue  # a name with controls is shown nowhere raw; a listing can be stale
        found[rel] = func
    return tuple(found.items())
