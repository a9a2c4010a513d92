"""The suggester's pipeline for one tool call, and the one place its decision takes effect.

:func:`deliver` applies a :mod:`~dsh_sidecar.suggester.decision`: the counters, the ledger line,
and for a note the noise state, the sticky section's current intent and the learning window.
"""

from __future__ import annotations

from dataclasses import dataclass

from dsh_protocol import AdditionalContext, PostExecuteParams

from dsh_sidecar.suggester.decision import Decision, Note
from dsh_sidecar.suggester.learning import Journal
from dsh_sidecar.suggester.ledger import Ledger
from dsh_sidecar.suggester.noise import NoiseControl, SessionState
from dsh_sidecar.suggester.section import StickySection


@dataclass(frozen=True)
class Sinks:
    """What a decision changes: the status counters, the ledger, noise control's per-session
    state, the sticky section and the learning journal."""

    counters: dict[str, int]
    ledger: Ledger
    noise: NoiseControl
    section: StickySection
    journal: Journal


def deliver(
    decision: Decision, params: PostExecuteParams, state: SessionState, sinks: Sinks, learn: bool
) -> list[AdditionalContext]:
    """Apply ``decision`` for the call ``params`` of the session whose noise state is
    ``state``; return the notes to send (the note, or nothing)."""
    if isinstance(decision, Note):
        sinks.noise.record(state, decision.intent, params.turn, decision.shown, decision.name)
    if decision.counter is not None:
        sinks.counters[decision.counter] += 1
    line = decision.ledger_line()
    if line is not None:
        sinks.ledger.write(line)
    if not isinstance(decision, Note):
        return []
    targets = decision.note.source.targets
    sinks.section.noted(params.session_id, decision.intent)
    if learn:
        sinks.journal.open(params.session_id, decision.intent, targets, state.calls)
    if decision.one_a_turn:
        state.script_turn = params.turn
    return [decision.note]
