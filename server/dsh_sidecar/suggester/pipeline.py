"""The suggester's pipeline for one tool call, and the one place its decision takes effect.

:func:`decide` asks the triggers in order (``triggers/``); the first that answers takes the
call. Then: a dismissed family is suppressed, targets not prepared yet are ``not-ready``, the
trigger names its targets, the shared filters choose what is shown (``filters.py``), noise
control may suppress it, and the note is written (``notes.py``). :func:`deliver` applies the
decision: the counters, the ledger line, and for a note the noise state, the sticky section's
current intent and the learning window.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace

from dsh_protocol import AdditionalContext

from dsh_sidecar.suggester import filters
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Abstained, Classification, Decision, Note, Silent, Suppressed
from dsh_sidecar.suggester.notes import make_note
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.triggers import TRIGGERS, Trigger


def decide(q: Query, ctx: Context) -> Decision:
    """The decision for the (parsed, workspace-relative) call ``q``."""
    for trigger in TRIGGERS:
        with _failing_in(trigger):
            hit = trigger.detect(q, ctx)
        if hit is None:
            continue
        if not isinstance(hit, Classification):
            return hit
        with _failing_in(trigger):
            return _answer(trigger, hit, q, ctx)
    return Silent()


@contextmanager
def _failing_in(trigger: Trigger) -> Iterator[None]:
    """Name the trigger in an error it raises (the service fails open on it: one policy)."""
    try:
        yield
    except Exception as exc:
        exc.add_note(f"search-suggester: in the {trigger.name} trigger")
        raise


def _answer(trigger: Trigger, hit: Classification, q: Query, ctx: Context) -> Decision:
    """Dismissal, readiness, the trigger's targets, the filters, then the note."""
    if ctx.dismissals.family_dismissed(hit.intent):
        return Suppressed("dismissed", hit.intent)
    if ctx.prepared is None:
        prepared = ctx.service.wait_prepared()
        if prepared is None:
            return Suppressed("not-ready", hit.intent)
        ctx = replace(ctx, prepared=prepared)
    shown = filters.apply(trigger, hit, trigger.targets(q, hit, ctx), q, ctx)
    if not isinstance(shown, list):
        return shown
    return _note(trigger, hit, shown, q, ctx)


def _note(trigger: Trigger, hit: Classification, shown: list[Target], q: Query, ctx: Context) -> Decision:
    """Noise control, then the note; an abstention when no target's line fits in one."""
    state, turn, intent = ctx.state, ctx.params.turn, hit.intent
    if trigger.one_a_turn and state.script_turn == turn:
        return Suppressed("turn-cap", intent)
    key = tuple(t.path for t in shown)
    name = trigger.noted_name(q, hit)
    cfg = ctx.config
    reason = ctx.sinks.noise.check(state, intent, turn, key, cfg.cooldown_calls, cfg.max_notes_per_turn, name)
    if reason is not None:
        return Suppressed(reason, intent)
    # the most specific pack's wording (language packs load after the generic one)
    about = next((r.about for r in reversed(ctx.service.active_rows()[intent]) if r.about), None)
    note = make_note(intent, about, shown)
    if not note.source.targets:  # no target's line fits in a note (a path hundreds of characters long)
        return Abstained(intent, hit.k)
    return Note(intent, hit.k, note, key, name, trigger.one_a_turn)


def deliver(decision: Decision, ctx: Context) -> list[AdditionalContext]:
    """Apply ``decision`` to the call of ``ctx``; return the notes to send (the note, or none)."""
    sinks, params, state = ctx.sinks, ctx.params, ctx.state
    if isinstance(decision, Note):
        sinks.noise.record(state, decision.intent, params.turn, decision.shown, decision.name)
    if decision.counter is not None:
        sinks.counters[decision.counter] += 1
    line = decision.ledger_line()
    if line is not None:
        sinks.ledger.write(line)
    if not isinstance(decision, Note):
        return []
    sinks.section.noted(params.session_id, decision.intent)
    if ctx.config.learn:
        sinks.journal.open(params.session_id, decision.intent, decision.note.source.targets, state.calls)
    if decision.one_a_turn:
        state.script_turn = params.turn
    return [decision.note]
