"""The first note of a start, owed when the index was not ready for it.

A start's first call held back because a part of the workspace index it needs was still being
built (``suppressed not-ready``, after waiting ``firstCallWaitMs``: 500 ms, which a loaded
machine's build of even a small repository outlasts) had nothing owing it later, where the
sticky section and the task lead are owed (``sidecar/owed.py``): the first note was lost. It is
now owed to its session: the session's first later call that finds the index ready and has no
note of its own decides the owed call again, on that moment's index and that call's session
and output, so a note already made useless meanwhile (its target read since, ``recent``; or
shown by that call, ``echo``) is not given; a note given says so in the ledger (``owed
not-ready <intent>``, before its ``suggest`` line). One note is owed per start (the first
call's), decided once.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from dsh_sidecar.suggester import pipeline
from dsh_sidecar.suggester.decision import Decision, Note, Suppressed

if TYPE_CHECKING:
    from dsh_protocol import AdditionalContext, PostExecuteParams

    from dsh_sidecar.suggester.context import Context
    from dsh_sidecar.suggester.parse import Query

#: The ledger line of an owed note given: ``owed not-ready <intent>``.
OWED_PREFIX = "owed not-ready"


@dataclass(frozen=True)
class Owed:
    """The first call held back: its session and its parsed call."""

    session_id: str
    q: Query


class Service(Protocol):
    """What :class:`OwedNote` reads of its suggester (``service.Suggester``)."""

    def pending(self) -> frozenset[str]: ...

    def _context(self, params: PostExecuteParams) -> Context: ...


class OwedNote:
    """The first note of ``service``'s start, owed while the index it needs is built."""

    def __init__(self, service: Service) -> None:
        self.service = service
        self._owed: Owed | None = None
        self._owed_once = False
        self._lock = threading.Lock()

    def settle(
        self, notes: list[AdditionalContext], decision: Decision, q: Query, params: PostExecuteParams, first: bool
    ) -> list[AdditionalContext]:
        """The answer of a call decided as ``decision`` with ``notes``: owe its note when it
        is the start's first call held back by readiness within the first call's wait
        (``first``); else, for a later call of the owed session with no note of its own once
        nothing is being built, the owed note when it still adds something (:meth:`_give`)."""
        with self._lock:
            if first and not self._owed_once and _not_ready(decision):
                self._owed, self._owed_once = Owed(params.session_id, q), True
                return notes
            owed = self._owed
            if owed is None or owed.session_id != params.session_id or self.service.pending():
                return notes
            self._owed = None  # decided once: given now, or no longer worth giving
        return notes or self._give(owed, params)

    def _give(self, owed: Owed, params: PostExecuteParams) -> list[AdditionalContext]:
        """The owed call decided again on this moment's index, with the session and the output
        of the call ``params`` (what it showed, what the session read since): its note, or none."""
        ctx = self.service._context(params)
        decision = pipeline.decide(ctx.paths.relative(owed.q), ctx)
        if not isinstance(decision, Note):
            return []
        ctx.sinks.ledger.write(f"{OWED_PREFIX} {decision.intent}")
        return pipeline.deliver(decision, ctx)


def _not_ready(decision: Decision) -> bool:
    """Whether ``decision`` holds a call back because a part of the index is still being built."""
    return isinstance(decision, Suppressed) and decision.reason == "not-ready"
