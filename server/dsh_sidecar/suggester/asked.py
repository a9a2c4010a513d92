"""The suggester asked, not called: ``where_is`` (MCP, a free-text question included), the task
lead of a session and its free-text ranking. None of them is a tool call of the agent: no
session noise control, no learning; the task lead writes its offer's ledger line."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, cast

from dsh_protocol import AdditionalContext, PostExecuteParams

from dsh_sidecar.escape import display_name, escape_controls, for_model
from dsh_sidecar.suggester import ledger, readiness
from dsh_sidecar.suggester.activation import ActivePacks
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Abstained, Classification
from dsh_sidecar.suggester.dismissals import Dismissals
from dsh_sidecar.suggester.failopen import fail_open
from dsh_sidecar.suggester.lead.offer import LEAD_ABOUT, LEAD_INTENT, TaskLeads
from dsh_sidecar.suggester.notes import shown_field
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.prepared import PreparedTargets
from dsh_sidecar.suggester.session import MAX_TASK_FILES, TaskEvidence
from dsh_sidecar.suggester.suppression import NoiseControl, SessionState
from dsh_sidecar.suggester.triggers import TRIGGERS


@dataclass(frozen=True)
class ShownTarget:
    """A target of :meth:`Suggester.where_is` as the model reads it: the path escaped, its
    display form (escaped, quoted when not plain), the reason (the repository pack's quoted)."""

    path: str
    display: str
    reason: str


@dataclass(frozen=True)
class WhereIs:
    """:meth:`Suggester.where_is`'s answer, every text escaped (``about`` quoted when it is the
    repository pack's prose); ``ready`` false when a part of the index the answer needs is
    still being built (then ``targets`` is empty)."""

    intent: str
    k: float
    about: str | None
    targets: list[ShownTarget]
    ready: bool = True


class Asking(Protocol):
    """What the asked methods read of the suggester (:class:`~.service.Suggester`)."""

    config: SuggesterConfig
    root: Path | None
    content: ContentView | None
    dismissals: Dismissals
    leads: TaskLeads
    noise: NoiseControl
    active: ActivePacks | None
    counters: dict[str, int]

    @property
    def rows(self) -> Mapping[str, list[CompiledRow]]: ...

    def _context(self, params: PostExecuteParams, state: SessionState | None = None) -> Context: ...

    def prepared_now(self) -> PreparedTargets | None: ...

    def _symbols(self) -> WorkspaceView | None: ...

    def repo_prose(self, intent: str) -> bool: ...


class AskedMethods:
    """The asked methods of :class:`~.service.Suggester` (a mixin: ``self`` is the suggester)."""

    @fail_open(lambda: None, "internal error in where_is; no answer")
    def where_is(self: Asking, tool: str, tool_input: dict[str, Any]) -> WhereIs | None:
        """The suggester on demand (MCP ``where_is``): the intent, its gate score, its ``about``
        and up to ``maxTargets`` targets for one tool call (a free-text question included), every
        text as the model may read it; ``None`` when it is no search or no intent crosses.

        It shares the call's stages that depend on the query alone (``pipeline.py``, the search
        trigger): a read with nothing searched is no search, the classification, readiness (a
        part of the index still being built names nothing: ``targets`` empty), the resolution,
        dismissed paths, and the call's own files never named back (a dismissed family silences the
        notes of the agent's calls, not an explicit question). It shares none
        of what depends on a session (the recent filter, noise control) or on the note's length,
        and writes no ledger line and teaches nothing: asking is not a tool call of the agent.
        """
        params = PostExecuteParams(session_id="where-is", turn=0, tool=cast(Any, {"name": tool, "input": tool_input}))
        ctx = self._context(params, SessionState())
        q = ctx.paths.relative(parse_call(tool, tool_input))
        search = TRIGGERS[-1]
        with readiness.recording():
            hit = search.detect(q, ctx)
            if isinstance(hit, Abstained) and hit.reason == ledger.NO_COMPANIONS:
                hit = Classification(hit.intent, hit.k)  # "a listing that found nothing": a question has no results
            if not isinstance(hit, Classification):
                return None
            if ctx.prepared is None:
                ctx = replace(ctx, prepared=self.prepared_now())
            ready = not readiness.missing(hit.intent, q, ctx)
            found = search.targets(q, hit, ctx) if ready else []
        never = search.never_named(q)
        targets = [t for t in found if t.path not in never and not self.dismissals.path_dismissed(hit.intent, t.path)]
        about = next((r.about for r in reversed(self.rows.get(hit.intent, ())) if r.about), None)
        prose = self.repo_prose(hit.intent)
        return WhereIs(
            intent=for_model(hit.intent),
            k=hit.k,
            about=shown_field(about, prose) if about is not None else None,
            targets=[
                ShownTarget(escape_controls(t.path), display_name(t.path), shown_field(t.reason, prose))
                for t in targets[: self.config.max_targets]
            ],
            ready=ready,
        )

    @fail_open(lambda: None, "internal error in the task lead; none offered")
    def task_lead(self: Asking, session_id: str, task: str) -> AdditionalContext | None:
        """The task lead of ``session_id`` (``lead/offer.py``): the files the task text points
        to, as one labelled note, once per session; ``None`` while ``taskLead`` is off, without
        a workspace, and for every silence (each a ledger line). The ranking's best
        :data:`~.session.MAX_TASK_FILES` files and the text's identifiers become the session's
        task evidence (``session.TaskEvidence``), which its later notes are ordered and judged
        by. Bounded work (one pass over the listing at most): a server runs it off its event
        loop."""
        if not self.config.task_lead or self.root is None:
            return None
        graph = self._symbols()
        content = self.content
        ready = graph is not None and not (content is not None and content.pending)
        answer = self.leads.offer(session_id, task, cast(Any, graph), cast(Any, content), ready, keep=MAX_TASK_FILES)
        if answer.ranked or answer.names:
            # one assignment: a call decided meanwhile on the loop sees the old or the new
            evidence = TaskEvidence.of((lead.path for lead in answer.ranked), answer.names)
            self.noise.session(session_id).evidence.task = evidence
        return answer.note

    def lead_where_is(self: Asking, text: str) -> WhereIs | None:
        """A free-text ``where_is`` that no intent answers, when ``taskLead`` is on: the task
        lead's ranking of ``text`` as the intent ``Task`` (no session, no ledger line)."""
        if not self.config.task_lead or self.root is None:
            return None
        leads = self.leads.rank_only(text, cast(Any, self._symbols()), cast(Any, self.content), self.config.max_targets)
        if not leads:
            return None
        return WhereIs(
            intent=LEAD_INTENT,
            k=1.0,
            about=for_model(LEAD_ABOUT),
            targets=[ShownTarget(escape_controls(t.path), display_name(t.path), for_model(t.reason)) for t in leads],
            ready=True,
        )

    def repo_prose(self: Asking, intent: str) -> bool:
        """Whether ``intent``'s ``about`` and reasons are the repository pack's prose."""
        active = self.active
        return active is not None and intent in active.repo_prose
