"""The asked methods of :class:`~dsh_sidecar.sidecar.Sidecar`: what a client asks the suggester for
outside a tool call — ``where_is`` (MCP), ``dsh/taskLead``, ``dsh/dismiss`` and
``dsh/assembleSection`` — each with its event-loop form, which waits for a pending projection off
the loop (owed.py) and hands the ledger lines it wrote to the sink on the loop's thread."""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING, Any, Final

from dsh_protocol import (
    AssembleSectionResult,
    DismissParams,
    DismissResult,
    Section,
    TaskLeadParams,
    TaskLeadResult,
)

from dsh_sidecar.errors import RequestError
from dsh_sidecar.sidecar.owed import TOOL_CALL_WAIT_S
from dsh_sidecar.suggester.query import QUESTION_TOOL
from dsh_sidecar.suggester.section import SECTION_NAME, SECTION_ORDER

if TYPE_CHECKING:
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.sidecar.owed import PromptIndex
    from dsh_sidecar.suggester import Suggester

#: Longest wait of a blocking section or task-lead call for the projection, s (a server's: owed.py).
SECTION_WAIT_S: Final = 5.0
#: Seconds the synchronous ``where_is`` (no event loop: a test, a one-shot caller) waits for a
#: pending projection; the MCP tool waits at most ``owed.TOOL_CALL_WAIT_S`` (:meth:`where_is_async`).
WHERE_IS_WAIT_S: Final = 60.0
#: The ``index`` line of a ``where_is`` answered while the workspace index is still being built.
INDEX_BUILDING: Final = "still building: ask again in a few seconds for the whole answer"


class AskedMethods:
    """The asked methods of the composition root, on the suggester and the projection's
    readiness it holds (which :class:`~dsh_sidecar.sidecar.Sidecar` sets)."""

    config: SidecarConfig
    suggester: Suggester
    force_suggester: bool
    _answered: threading.Event
    _closing: threading.Event

    if TYPE_CHECKING:  # the composition root's own

        @property
        def prompt_index(self) -> PromptIndex: ...
        def projection_pending(self) -> bool: ...
        def section_pending(self) -> bool: ...
        def wait_for_graph(self, timeout_s: float) -> bool: ...
        def drain_ledger(self) -> None: ...

    async def where_is_async(self, tool: str, tool_input: dict[str, Any]) -> dict[str, Any]:
        """:meth:`where_is` for an event loop (the MCP tool), decided on a worker thread: a tool
        call is never held for the workspace build. It waits (off the loop) at most
        :data:`.owed.TOOL_CALL_WAIT_S` (5 s) or what is left of the start's first-call window
        (``suggester.firstCallWaitMs``) if longer; an index still being built then answers from
        what is ready, with ``index`` :data:`INDEX_BUILDING`."""
        whole = await self.prompt_index.ready(TOOL_CALL_WAIT_S)
        # off the loop, as dsh/taskLead and every tool's CPU work: the classification, the
        # resolution (and, with a task lead, free text ranked as a task: one pass over the listing)
        answer = await asyncio.to_thread(self.where_is, tool, tool_input, 0.0)
        if not whole:
            answer["index"] = INDEX_BUILDING
        return answer

    def where_is(self, tool: str, tool_input: dict[str, Any], wait_s: float = WHERE_IS_WAIT_S) -> dict[str, Any]:
        """The suggester on demand (MCP ``where_is``), whatever ``suggester.enabled`` says:
        ``{intent, k, about, targets: [{path, display, reason}]}``, or ``{intent: None, targets:
        []}`` when no intent applies; every text escaped by the suggester (the repository pack's
        prose quoted). No ledger line, no cooldown: asking is not a tool call. Waits up to
        ``wait_s`` seconds for a pending projection (an event loop waits off its thread first
        and passes ``0``)."""
        if self.projection_pending():
            # asked on demand before (or without) the background projection: answer from all of it
            self.wait_for_graph(wait_s)
        hit = self.suggester.where_is(tool, tool_input)
        self._answered.set()
        if hit is None and tool == QUESTION_TOOL and isinstance(tool_input.get("query"), str):
            hit = self.suggester.lead_where_is(tool_input["query"])  # free text no intent answers
        if hit is None:
            return {"intent": None, "targets": []}
        answer = {
            "intent": hit.intent,
            "k": round(hit.k, 4),
            "about": hit.about,
            "targets": [{"path": t.path, "display": t.display, "reason": t.reason} for t in hit.targets],
        }
        if not hit.ready:  # a part of the index the answer needs is still being built
            answer["index"] = INDEX_BUILDING
        return answer

    def task_lead(self, params: TaskLeadParams, wait_s: float = SECTION_WAIT_S) -> TaskLeadResult:
        """``dsh/taskLead``: the files the task text points to, one labelled note once per
        session (``suggester/lead/offer.py``); silence while the suggester or ``taskLead`` is
        off. Waits up to ``wait_s`` seconds for a pending projection, then ranks (bounded
        work, one pass over the listing at most): an event loop calls :meth:`task_lead_async`."""
        if not (self.config.suggester.enabled or self.force_suggester) or not self.config.suggester.task_lead:
            return TaskLeadResult()
        if self.projection_pending():
            self.wait_for_graph(wait_s)
        note = self.suggester.task_lead(params.session_id or "dsh", params.task)
        return TaskLeadResult(additional_contexts=[note] if note is not None else [])

    async def task_lead_async(self, params: TaskLeadParams) -> TaskLeadResult:
        """:meth:`task_lead` for an event loop: a task that finds a start's first build running
        past the first-call window is owed to its session and answered empty (owed.py); the
        ranking (about a second on 100k files) runs on a worker thread, so the loop answers every
        ``dsh/postExecute`` meanwhile; its ledger lines then go to the sink on the loop's thread."""
        if not (self.config.suggester.enabled or self.force_suggester) or not self.config.suggester.task_lead:
            return TaskLeadResult()
        if not await self.prompt_index.ready():
            owed_to = params.session_id or "dsh"
            self.prompt_index.owe(owed_to, params.task, self.suggester.task_lead, self._closing, self.suggester)
            return TaskLeadResult()
        try:
            return await asyncio.to_thread(self.task_lead, params, 0.0)
        finally:
            self.drain_ledger()

    def dismiss(self, params: DismissParams) -> DismissResult:
        """``dsh/dismiss``. Raises :class:`RequestError` naming ``family`` or ``path`` for an
        unknown family or a path outside the workspace."""
        try:
            record, expires = self.suggester.dismiss(params.family, params.path)
        except RequestError:
            raise
        except ValueError as exc:  # the suggester's dismissals still raise ValueError for these
            raise RequestError(str(exc)) from None
        return DismissResult(record=record, expires_at=expires)

    async def dismiss_async(self, params: DismissParams) -> DismissResult:
        """:meth:`dismiss` for an event loop: the knowledge write (which may wait for another
        sidecar's lock) runs on a worker thread; its ``dismissed`` ledger line then reaches the
        sink on the loop's thread."""
        try:
            return await asyncio.to_thread(self.dismiss, params)
        finally:
            self.drain_ledger()

    async def assemble_section_async(self, session_id: str | None = None) -> AssembleSectionResult:
        """:meth:`assemble_section` for an event loop: ``section: null`` while a start's first build
        runs past the first-call window (waited off the loop), never a half-built one (owed.py)."""
        if self.section_pending() and not await self.prompt_index.ready():
            return AssembleSectionResult(section=None)
        return self.assemble_section(session_id, wait_s=0.0)

    def assemble_section(self, session_id: str | None = None, wait_s: float = SECTION_WAIT_S) -> AssembleSectionResult:
        """``dsh/assembleSection``: the sticky section of ``session_id``'s current intent;
        ``section: null`` while sticky mode (or the suggester) is off or nothing applies. Waits
        up to ``wait_s`` seconds for a pending projection (as :meth:`where_is`)."""
        self._answered.set()  # a session's start: answered at once or after a bounded wait
        if not (self.config.suggester.enabled or self.force_suggester):
            return AssembleSectionResult(section=None)
        if self.config.suggester.section_mode != "sticky":
            return AssembleSectionResult(section=None)  # at once: no wait for the projection
        if self.projection_pending():
            self.wait_for_graph(wait_s)  # the section (session start) lists the whole projection
        text = self.suggester.section_text(session_id)  # escaped as it is written (suggester/section.py)
        if text is None:
            return AssembleSectionResult(section=None)
        return AssembleSectionResult(section=Section(name=SECTION_NAME, order=SECTION_ORDER, text=text))
