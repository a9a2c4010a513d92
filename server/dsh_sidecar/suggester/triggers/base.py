"""The shape of a trigger: what recognises a call's intent and names its targets.

A trigger is one kind of call the suggester answers (a wrong guess, a traceback, a script, a
search). ``TRIGGERS`` (``__init__.py``) asks them in order; the first whose :meth:`Trigger.detect`
answers takes the call. The shared stages around it (dismissals, readiness, ``filters.py``,
noise control, the note and its ledger line) are the pipeline's, written once; what differs
between triggers is data on the trigger: what the call's own paths are never named back, how
"recently read" applies, and whether finding nothing to name is an abstention.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Protocol

from dsh_sidecar.suggester import evidence
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Classification, Decision, Silent
from dsh_sidecar.suggester.gate import gate
from dsh_sidecar.suggester.packs import Candidate
from dsh_sidecar.suggester.parse import Query


class Trigger(Protocol):
    """One kind of call the suggester answers."""

    #: the trigger's name in logs
    name: ClassVar[str]
    #: at most one such note per (session, turn): ``suppressed turn-cap`` after it
    one_a_turn: ClassVar[bool]
    #: nothing left to name after the filters is ``abstained no-companions`` (else silence)
    abstains: ClassVar[bool]
    #: the best target known (read recently) suppresses the note as ``recent``; else the known
    #: targets are only left out
    recent_suppresses: ClassVar[bool]
    #: a file read in part (``head``, ``sed -n``, an offset) counts as known too, unless the
    #: call itself names it (searches in it or lists it)
    partly_read_known: ClassVar[bool]
    #: the best target shown by an earlier call of the session (listed, opened or edited)
    #: suppresses the note as ``seen``: the agent was shown where the intent lives
    seen_suppresses: ClassVar[bool]

    def detect(self, q: Query, ctx: Context) -> Classification | Decision | None:
        """``None``: not this trigger's call (the next one is asked). A decision: its call,
        already decided (silence, or a listing that found nothing). A classification: its
        intent and gate score, resolved next by :meth:`targets`."""
        ...

    def targets(self, q: Query, hit: Classification, ctx: Context) -> list[Target]:
        """The targets of ``hit``, best first, before the shared filters."""
        ...

    def never_named(self, q: Query) -> set[str]:
        """Paths of the call never named back to it."""
        ...

    def noted_name(self, q: Query, hit: Classification) -> str | None:
        """The name a note is about, for noise control (another name is another note)."""
        ...


def subject_gate(intent: str, ctx: Context) -> float | None:
    """The gate score of a trigger whose evidence is a subject rule's weight (the call itself
    names where the intent lives), or ``None`` when the intent has no active rows or the score
    stays under their lowest threshold. Activates the packs."""
    rows = ctx.service.active_rows().get(intent)
    if not rows:
        return None
    k = gate(evidence.SUBJECT, ctx.config.bias)
    return k if k >= min(r.threshold for r in rows) else None


def claimed(intent: str, ctx: Context) -> Classification | Silent:
    """A special trigger's classification of a call it claims: ``intent`` at the subject
    gate's score, or silence when the gate does not cross (:func:`subject_gate`)."""
    k = subject_gate(intent, ctx)
    return Silent() if k is None else Classification(intent, k)


def regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file now (``stat`` following links; never opened): a
    listing can be stale, and a name a run printed can be a folder or a link out."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def best_candidate(intent: str, ctx: Context, wanted: Callable[[Candidate], bool]) -> Candidate | None:
    """The highest-prior candidate of ``intent``'s active rows that ``wanted`` accepts (its
    reason and prior are the note's); ``None`` when none does. Activates the packs."""
    cands = [c for r in ctx.service.active_rows().get(intent, []) for c in r.candidates if wanted(c)]
    return max(cands, key=lambda c: c.prior) if cands else None


def named_targets(hit: Classification, cand: Candidate) -> list[Target]:
    """``hit.named`` as targets with ``cand``'s reason (``{name}``: each file's name) and prior."""
    return [Target(rel, cand.reason.replace("{name}", name), cand.prior, cand.symbol) for rel, name in hit.named]
