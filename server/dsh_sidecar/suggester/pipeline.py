"""The suggester's pipeline for one tool call, read top to bottom.

:func:`read` parses the call (``parse/``). :func:`run` then, in order: makes its paths
workspace-relative (``paths.py``); learns from it (:func:`observe`: the learning windows it
closes, the files it read or wrote); asks the triggers in order (``triggers/``), the first
that answers taking the call; suppresses a dismissed family, and a call that needs a part of
the workspace index still being built (``readiness.py``) as ``not-ready``; lets the trigger
name its targets (a search: ``resolve.py``, ranked by what was learned); passes them through
the shared filters (``filters.py``), noise control (``suppression.py``) and, for a code intent,
the note's confidence (``confidence.py``); and writes the note (``notes.py``). :func:`deliver`
applies the decision (``decision.py``): the counters, the ledger line, and for a note the noise
state, the sticky section's current intent and the learning window.
"""

from __future__ import annotations

from dataclasses import replace

from dsh_protocol import AdditionalContext, PostExecuteParams

from dsh_sidecar.suggester import confidence, filters, readiness, shown, suppression
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Abstained, Classification, Decision, Note, Silent, Suppressed
from dsh_sidecar.suggester.notes import make_note
from dsh_sidecar.suggester.parse import PATCHED, Query, parse_call
from dsh_sidecar.suggester.parse.results import unwrapped
from dsh_sidecar.suggester.triggers import TRIGGERS, Trigger
from dsh_sidecar.suggester.triggers.traceback import frame_files


def read(params: PostExecuteParams) -> Query | None:
    """The call as a query; ``None`` for a question (asked through ``where_is``, never as an
    agent's tool call)."""
    result = params.result
    q = parse_call(
        params.tool.name,
        params.tool.input,
        unwrapped(result.text) if result is not None else None,
        bool(result.is_error) if result is not None else False,
    )
    return None if q.question else q


def run(q: Query, ctx: Context) -> Decision:
    """The decision for the call ``q`` (module docstring)."""
    # a failed write tool changed nothing; a failed shell line may have written before the
    # part that failed (``sed -i … && python r.py``), so its writes count
    written = (list(q.reads) if q.tool == "write" and not q.is_error else []) + [w for w in q.writes if w != PATCHED]
    q = ctx.paths.relative(q)
    observe(q, written, ctx)
    return decide(q, ctx)


def observe(q: Query, written: list[str], ctx: Context) -> None:
    """What the call teaches, note or not: the learning windows it closes (it touches a noted
    target, or the window passed), the files it read (recent), the workspace files it changed
    (``written``, as the call spelt them; a patch's files are unknown: ``PATCHED``)."""
    state, cfg = ctx.state, ctx.config
    state.calls += 1
    if cfg.learn and ctx.sinks.journal.observe(
        ctx.params.session_id, ctx.paths.touched(q), state.calls, cfg.learn_window
    ):
        ctx.knowledge.flush_soon()
    if q.tool in ("write", "read") or q.reads:
        # an edit is no reading of the whole file: what it searches next may be named
        state.touch(q.reads, cfg.recent_window, whole=not q.partial and q.tool != "write")
    changed: list[str] = []
    if ctx.prepared is not None:
        for path in written:
            rel = ctx.paths.written_path(path)
            if rel is not None:
                state.wrote(rel, ctx.prepared.index.exists(rel))
                changed.append(rel)
        if PATCHED in q.writes:
            state.edited = True
    _evidence(q, changed, ctx)


def _evidence(q: Query, changed: list[str], ctx: Context) -> None:
    """The session's evidence (``session.py``): what the call showed (its result's workspace
    files, read as the evaluation reads them, and the files it opened or changed), the files it
    opened or changed, what it searched for, and a failing run's own code path."""
    ev = ctx.state.evidence
    if ctx.prepared is None:
        ev.showed([])
        return
    index = ctx.prepared.index
    result = ctx.params.result
    text = (unwrapped(result.text) if result is not None else None) or ""  # a JSON-wrapped result: the text it wraps
    folders = [s for s in q.scope if s and not index.exists(s)]
    # a file read, or searched inside (its lines are printed), was opened
    opened = [p for p in dict.fromkeys(q.reads + q.scope) if p and index.exists(p)]
    edited = [p for p in changed if index.exists(p)]
    listed = shown.listed_files(text, index, ctx.paths.base, folders) if text else []
    ev.showed(list(dict.fromkeys(listed + opened + edited)))
    ev.opened_files(opened)
    ev.opened_files(edited, edit=True)
    if q.search and q.tool != "read" and (q.patterns or q.name_patterns):
        ev.searched(q.identifier, q.terms)
    if q.frames:  # a failing run: its own code path (no import plumbing, no script of its own)
        ev.failed_in([path for path, _ in frame_files(q, ctx)])


def decide(q: Query, ctx: Context) -> Decision:
    """The decision for the (parsed, workspace-relative) call ``q``: the first trigger that
    answers takes it. Its reads of the knowledge (the dismissals, the learned rows) check the
    knowledge file once, at the first (a call decided again after a wait checks again)."""
    knowledge = ctx.knowledge
    knowledge.begin_call()
    try:
        for trigger in TRIGGERS:
            try:  # a try, not a context manager: every call passes each trigger, most say nothing
                hit = trigger.detect(q, ctx)
                if hit is None:
                    continue
                if not isinstance(hit, Classification):
                    return hit
                return _answer(trigger, hit, q, ctx)
            except Exception as exc:
                _failing_in(trigger, exc)
                raise
        return Silent()
    finally:
        knowledge.end_call()


def _failing_in(trigger: Trigger, exc: Exception) -> None:
    """Name the trigger in an error it raised (the service fails open on it: one policy)."""
    exc.add_note(f"in the {trigger.name} trigger")


def _answer(trigger: Trigger, hit: Classification, q: Query, ctx: Context) -> Decision:
    """Dismissal, readiness, the trigger's targets, the filters, then the note."""
    if ctx.dismissals.family_dismissed(hit.intent):
        return Suppressed("dismissed", hit.intent)
    if ctx.prepared is None:
        prepared = ctx.service.prepared_now()
        if prepared is not None:
            ctx = replace(ctx, prepared=prepared)
    if readiness.missing(hit.intent, q, ctx):  # never guess before the index covers the call
        return Suppressed("not-ready", hit.intent)
    chosen = filters.apply(trigger, hit, trigger.targets(q, hit, ctx), q, ctx)
    if not isinstance(chosen, list):
        return chosen
    return _note(trigger, hit, chosen, q, ctx)


def _note(trigger: Trigger, hit: Classification, shown: list[Target], q: Query, ctx: Context) -> Decision:
    """Noise control, the note's confidence (``confidence.py``), then the note; an abstention
    when no target's line fits in one."""
    intent = hit.intent
    key = tuple(t.path for t in shown)
    name = trigger.noted_name(q, hit)
    reason = suppression.check(ctx.state, intent, ctx.params.turn, key, ctx.config, name, trigger.one_a_turn)
    if reason is not None:
        return Suppressed(reason, intent)
    state = ctx.state
    judged = confidence.assess(
        trigger.name,
        intent,
        shown,
        q,
        state.evidence,
        ctx.symbols,
        ctx.scorers,
        edited=state.edited,
        said=len(state.notes),
    )
    if judged is not None and judged.value < ctx.config.min_confidence:
        return Suppressed("low-confidence", intent)  # the evidence says it would rarely help
    # the most specific pack's wording (language packs load after the generic one)
    about = next((r.about for r in reversed(ctx.service.active_rows()[intent]) if r.about), None)
    note = make_note(intent, about, shown, ctx.service.repo_prose(intent))
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
