"""A search: grep, glob, find, ls, a read, or a shell line of them.

The first intent, in priority order, whose gate crosses its threshold wins (``classify.py``:
the pack rows' regex signals plus the structural evidence of the call, ``evidence/``); its
targets come from :func:`~dsh_sidecar.suggester.resolve.resolve`. A listing that found nothing
abstains: what it looks for does not exist here. Example: ``grep -rn __version__`` → Version
(a pack signal and the structural evidence), noted with the package's ``__init__.py``.
"""

from __future__ import annotations

import re
from typing import ClassVar

from dsh_sidecar.suggester import evidence, ledger, toolconfig
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.classify import CompiledRow, classify, searches_untrusted
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Abstained, Classification, Decision, Silent, Suppressed
from dsh_sidecar.suggester.packs import CALL_BUDGET_S, RegexBudget, use_budget
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.readiness import TARGETS
from dsh_sidecar.suggester.resolve import Sources, resolve


class Search:
    """The last trigger: every search-class call with something to search for."""

    name: ClassVar[str] = "search"
    one_a_turn: ClassVar[bool] = False
    abstains: ClassVar[bool] = True
    recent_suppresses: ClassVar[bool] = True
    partly_read_known: ClassVar[bool] = True
    seen_suppresses: ClassVar[bool] = False

    def detect(self, q: Query, ctx: Context) -> Classification | Decision | None:
        """The classified intent; silence when no intent crosses its gate. A read (``Read``,
        ``cat``, ``head``…) with nothing searched ends a search: it teaches, never notes."""
        if not q.search or not (q.patterns or q.name_patterns or q.scope or q.keys):
            return None
        rows = ctx.service.active_rows()
        if not rows:
            return Silent()
        hit, exhausted = classify_call(q, rows, ctx.config.bias, ctx.evidence)
        if exhausted:
            ctx.service.regex_budget_used()
        if hit is None:
            hit = _before_the_listing(q, rows, ctx)
            if hit is None:
                return _missing_folder(q, rows, ctx)
        if q.listing and not q.result_paths and ctx.prepared is not None:
            return Abstained(hit.intent, hit.k)  # a listing that found nothing
        if hit.intent not in NAME_INTENTS:
            if q.outside:
                return Suppressed(ledger.OUTSIDE, hit.intent)  # it searched no file of the workspace
            if _edits_what_it_searches(q, ctx):
                return Suppressed(ledger.EDITING, hit.intent)
        return hit

    def targets(self, q: Query, hit: Classification, ctx: Context) -> list[Target]:
        """The call's resolved targets (``resolve.py``)."""
        assert ctx.prepared is not None
        knowledge = ctx.knowledge if ctx.config.learn else None
        sources = Sources(ctx.prepared, ctx.service.active_rows(), ctx.symbols, ctx.content, knowledge)
        targets = resolve(q, hit.intent, sources)
        if hit.intent in toolconfig.INTENTS:
            tools = toolconfig.asked(q, is_file=ctx.evidence.is_file)
            shown = [*q.result_paths, *(s for s in q.scope if s)]
            ranked = toolconfig.rank(tools, targets, ctx.evidence, ctx.content, shown)
            if ranked is not None:
                return ranked
        return targets

    def never_named(self, q: Query) -> set[str]:
        """The files the call reads."""
        return set(q.reads)

    def noted_name(self, q: Query, hit: Classification) -> str | None:
        """The searched identifier of a Symbol or Usage note."""
        return q.identifier if hit.intent in ("Symbol", "Usage") else None


#: The intents that ask about a code name (its definition, its uses): a shell line that edits a
#: file may still ask where else the name is used.
NAME_INTENTS = frozenset({"Symbol", "Usage"})


def _edits_what_it_searches(q: Query, ctx: Context) -> bool:
    """Whether the shell line changes a file it also searches or reads (``sed -i … pom.xml &&
    grep javaVersion pom.xml``): it makes an edit and checks it, it asks nothing about where
    the project keeps its configuration, version or docs (the file is the one it is changing)."""
    if not q.writes:
        return False
    written = {ctx.paths.written_path(w) for w in q.writes}
    return any(p and p in written for p in (*q.scope, *q.reads))


#: A scope spelt so that the workspace's listing cannot say it is missing: it leaves the
#: workspace (a ``..`` part: ``..``, ``../<the workspace>``) or the shell expands it (``~``,
#: ``$VAR``, a glob or a brace).
_UNRESOLVED = re.compile(r"(?:^|/)\.\.(?:/|$)|^~|[$*?\[{]")


def _before_the_listing(q: Query, rows: dict[str, list[CompiledRow]], ctx: Context) -> Classification | None:
    """A search no intent crosses on a view taken before the listing (the targets still being
    prepared, ``readiness.TARGETS``): its structural evidence, and whether the paths it searched
    are here (``abstained missing-folder|missing-file``), cannot be read yet; its words can. The
    intent they alone cross (pack signals, no evidence: what ``missing-folder`` names too) is
    the call's on that view, and a note of it needs the listing: held back (``suppressed
    not-ready <intent>``, ``pipeline._answer``), it waits within its bound and is decided again.
    ``None`` when the words cross nothing (nothing recognised: silence), the view has the listing
    or nothing is preparing it (an in-process suggester prepares on first use), or a path it
    searched is one the listing cannot tell (:data:`_UNRESOLVED`)."""
    if ctx.prepared is not None or TARGETS not in ctx.pending:
        return None
    if any(_UNRESOLVED.search(s) for s in q.scope):
        return None
    hit, _ = classify_call(q, rows, ctx.config.bias, None)
    return hit


def _missing_folder(q: Query, rows: dict[str, list[CompiledRow]], ctx: Context) -> Decision:
    """A search no intent crosses: silence (no abstention: nothing was recognised), unless it
    searched only folders or files the workspace does not have and its words alone cross an
    intent's gate — then that intent abstains (the evidence ruled every intent out: nothing
    there to name), as ``missing-file`` when the call asked about every path it named by name
    (``Query.entries``: ``ls CODEOWNERS``, ``grep -n x mypy.ini``), else as ``missing-folder``
    (it searched within one: ``grep -r x cmake``, ``find cmake``, ``ls cmake/``); a scope outside
    the workspace or left to the shell is not known to be missing (:data:`_UNRESOLVED`):
    silence."""
    if ctx.prepared is None or not evidence.missing_scope(q, ctx.evidence):
        return Silent()
    if any(_UNRESOLVED.search(s) for s in q.scope):
        return Silent()  # outside or unexpanded: not known to be missing
    hit, _ = classify_call(q, rows, ctx.config.bias, None)
    if hit is None:
        return Silent()
    files = all(s in q.entries for s in q.scope)
    return Abstained(hit.intent, hit.k, ledger.MISSING_FILE if files else ledger.MISSING_FOLDER)


def classify_call(
    q: Query, rows: dict[str, list[CompiledRow]], bias: float, ws: evidence.Workspace | None
) -> tuple[Classification | None, bool]:
    """``(classification or None, whether untrusted regexes used up the call's budget)``;
    ``ws`` ``None``: the pack signals alone, without the call's structural evidence. The
    budget is set up only when a repo/user row can be searched (the built-in rows' ``re``
    patterns and the evidence never read it)."""
    ev = evidence.weights(q, ws) if ws is not None else {}
    if not searches_untrusted(rows, q.tool):
        hit = classify(q, rows, bias, ev)
        return (Classification(*hit) if hit is not None else None), False
    with use_budget(RegexBudget(CALL_BUDGET_S)) as budget:
        hit = classify(q, rows, bias, ev)
    exhausted = budget is not None and budget.exhausted
    return (Classification(*hit) if hit is not None else None), exhausted
