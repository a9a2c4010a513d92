"""A script: Python the agent writes to a file or runs inline, using names of this project.

``parse.runs.script_names`` reads the imported names a script uses; the note names where they are
defined (Symbol, through the ``symbol: definitions`` candidates of its rows), in the order the
script uses them, one file a name. An agent writes such a script to reproduce what it was
asked to fix, so the definitions it calls are where the fix starts. One such note a turn
(``suppressed turn-cap Symbol`` after it): the first script of a task reproduces it, later
ones try what the agent found meanwhile (the tallies: docs/SCHEME.md, "Classification").
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import ClassVar

from dsh_sidecar.escape import escape_controls
from dsh_sidecar.suggester.candidates import (
    CallContext,
    FileIndex,
    Target,
    in_test_tree,
    is_test_path,
    rank_definitions,
)
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Classification, Decision, Silent, Suppressed
from dsh_sidecar.suggester.packs import Candidate
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import WorkspaceView
from dsh_sidecar.suggester.readiness import SYMBOLS, asked
from dsh_sidecar.suggester.triggers.base import best_candidate, claimed, named_targets, regular_file

log = logging.getLogger(__name__)

INTENT = "Symbol"


class Script:
    """The third trigger: the definitions a reproduction script calls. A session that has
    changed a workspace file writes scripts to check its own change: they are not asked."""

    name: ClassVar[str] = "script"
    one_a_turn: ClassVar[bool] = True
    abstains: ClassVar[bool] = False
    recent_suppresses: ClassVar[bool] = True
    partly_read_known: ClassVar[bool] = False
    seen_suppresses: ClassVar[bool] = False

    def detect(self, q: Query, ctx: Context) -> Classification | Decision | None:
        """Symbol at the subject gate's score, with the definition file of each name; silence
        without a ``definitions`` candidate, a symbol index or a name defined here; held back
        (``not-ready``) while the symbol index of a script using this project is being built."""
        if not q.script_code or ctx.prepared is None or ctx.state.edited:
            return None
        if best_candidate(INTENT, ctx, _definitions) is None:
            return Silent()
        hit = claimed(INTENT, ctx)
        if not isinstance(hit, Classification):
            return hit
        if ctx.symbols is None:
            index = ctx.prepared.index
            ours = any(python_package(index, module.split(".", 1)[0]) for module, _ in q.script)
            if not (ours and SYMBOLS in ctx.pending):  # (the pass as it was when the call took its view)
                return Silent()
            asked(SYMBOLS)
            return Suppressed("not-ready", INTENT)
        named = definition_files(q, ctx, ctx.symbols)
        # the dismissed files after the others (the filters drop them): the noted name, noise
        # control's key, is the first shown file's
        named = tuple(sorted(named, key=lambda pn: ctx.dismissals.path_dismissed(INTENT, pn[0])))
        return replace(hit, named=named) if named else Silent()

    def targets(self, q: Query, hit: Classification, ctx: Context) -> list[Target]:
        """The definition files, in the script's order, with the candidate's reason."""
        cand = best_candidate(INTENT, ctx, _definitions)
        return named_targets(hit, cand) if cand is not None else []

    def never_named(self, q: Query) -> set[str]:
        """The files the call reads (a write's own file)."""
        return set(q.reads)

    def noted_name(self, q: Query, hit: Classification) -> str | None:
        """The first name the script uses."""
        return hit.named[0][1] if hit.named else None


def _definitions(cand: Candidate) -> bool:
    return bool(cand.symbol == "definitions")


def definition_files(q: Query, ctx: Context, symbols: WorkspaceView) -> tuple[tuple[str, str], ...]:
    """``(path, name)``: for each ``(module, name)`` the script uses whose module's top package
    is this workspace's (:func:`python_package`) and does not hold the written file (a module
    importing its siblings asks nothing), the symbol index's Python, non-test definition file
    inside that package, best first (:func:`script_order`, then :func:`rank_definitions`)."""
    assert ctx.prepared is not None
    index = ctx.prepared.index
    written = ctx.paths.written_path(q.script_path) if q.script_path else None
    call = CallContext(languages=frozenset({"python"}))
    found: dict[str, str] = {}
    for module, name in q.script:
        package = python_package(index, module.split(".", 1)[0])
        if package is None or (written is not None and written.startswith(package + "/")):
            continue
        try:
            defs = list(symbols.definitions(name))[:200]
        except Exception:  # the graph is another core: a failure there is silence here
            log.warning("search-suggester: symbol index lookup failed for %r", name, exc_info=True)
            continue
        own = [d for d in defs if isinstance(d, str) and _python_in(d, package)]
        here = package.rsplit("/", 1)[0] + "/" if "/" in package else ""
        path = here + module.replace(".", "/")
        ranked = script_order(rank_definitions(own, call), path if path != package else None, name)
        best = next((d for d in ranked if _shown(d, index, written)), None)
        if best is not None and best not in found and escape_controls(best) is best:
            found[best] = name
    return tuple(found.items())


def _python_in(path: str, package: str) -> bool:
    """A Python, non-test file of ``package`` (a folder, or a module file without ``.py``)."""
    return (
        (path.startswith(package + "/") or path == package + ".py")
        and path.endswith(".py")
        and not is_test_path(path)
        and not in_test_tree(path)
    )


def _shown(path: str, index: FileIndex, written: str | None) -> bool:
    """A listed regular file inside the workspace, and not the script itself."""
    return index.exists(path) and index.inside(path) and path != written and regular_file(index.root / path)


def python_package(index: FileIndex, top: str) -> str | None:
    """The folder (or module file without ``.py``) of the top-level Python package ``top`` in
    this workspace: ``top/`` or ``src/top/`` with an ``__init__.py``, or a top-level ``top.py``;
    ``None`` when ``top`` is no package here (the standard library, an installed dependency)."""
    if not top.isidentifier():
        return None
    for folder in (top, f"src/{top}"):
        if index.exists(f"{folder}/__init__.py"):
            return folder
    return top if index.exists(f"{top}.py") else None


def script_order(paths: list[str], module: str | None, name: str) -> list[str]:
    """Definition files of a script's ``name`` (stable sort): those in the imported ``module``
    path (``a/b.py``, ``a/b/__init__.py``, below ``a/b/``) first, then those whose file name is
    the name in any case (``merge.py`` for ``merge``, ``dataset.py`` for ``Dataset``: modules
    are commonly named after what they define)."""

    def key(d: str) -> tuple[int, int]:
        inside = module is not None and (d in (module + ".py", module + "/__init__.py") or d.startswith(module + "/"))
        return (0 if inside else 1, 0 if d.rsplit("/", 1)[-1][:-3].lower() == name.lower() else 1)

    return sorted(paths, key=key)
