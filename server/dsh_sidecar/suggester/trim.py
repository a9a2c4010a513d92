"""Fewer targets where the session's evidence tells them apart: a Symbol note names the
definitions it has evidence for, not the padding beside them.

A Symbol note's targets are ordered by their support (``ranking.Scorer.support``: the target
defines the searched name or one searched before, it is a frame of a failing run's own code
path, its file name is a searched word, it lies beside a file the agent opened, the task ranks
it). When at least one target has support, a target with none is only there because the
resolver found it too (another file that mentions the name, another definition of it
elsewhere): nothing the session did points at it, and the agent reads the note's files in
order. Such targets leave the note (:func:`supported`). When no target has support the
evidence tells none apart, and the note keeps the resolver's order: nothing is trimmed on a
guess. No threshold is chosen: "some support" against "none" is the one line drawn.

Only Symbol notes (:data:`TRIMMED_INTENTS`): a Usage note's answer is the uses, which support
does not measure (the file defining the name has the most of it), a Test note's the tests, and
a project intent's targets keep the manifests' order. Chosen on the tune traces (trimming every
code intent lowered their useful-precision, Symbol alone did not; docs/corpus.md, "Unsupported
targets leave a Symbol note").

No ledger line is written for a trimmed target: the note still goes out, and its ``suggest``
line lists exactly the targets it names.
"""

from __future__ import annotations

from typing import Final, Protocol

from dsh_sidecar.suggester.candidates import Target

#: The intents whose notes are trimmed (module docstring).
TRIMMED_INTENTS: Final = frozenset({"Symbol"})


class Supports(Protocol):
    """What the trim reads of the call's scorer (``ranking.Scorer``)."""

    def support(self, path: str) -> float:
        """The session's evidence for ``path``."""
        ...


def supported(targets: list[Target], intent: str, scorer: Supports) -> list[Target]:
    """Of a Symbol note's ``targets`` (in order), those with support when any has some;
    otherwise ``targets`` unchanged (the same list). The order is kept."""
    if intent not in TRIMMED_INTENTS or len(targets) < 2:
        return targets
    support = [scorer.support(t.path) for t in targets]
    if max(support) <= 0:
        return targets
    return [t for t, s in zip(targets, support, strict=True) if s > 0]
