"""What the suggester decided about one call: one frozen value per outcome.

The pipeline (``pipeline.run``) returns exactly one of :class:`Note`, :class:`Suppressed`,
:class:`Abstained` or :class:`Silent`; ``pipeline.deliver`` applies it (counters, ledger,
noise state, section, learning). Each value knows its counter and its ledger line; the line's
wording stays in ``ledger.py``, the one module that spells ledger messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from dsh_protocol import AdditionalContext

from dsh_sidecar.suggester import ledger


@dataclass(frozen=True)
class Classification:
    """An intent a trigger recognised in the call, with its gate score ``k``. A trigger that
    finds its files while recognising the call (a traceback's frames, a script's names) keeps
    them in ``named``: ``(path, the name it defines or runs)``, best first."""

    intent: str
    k: float
    named: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Note:
    """A note goes out: ``note`` (its text and the targets it lists) for ``intent`` at ``k``.

    ``shown`` are the targets chosen before the note was cut to fit (noise control's key),
    ``name`` the searched identifier the note is about (another name is another note), and
    ``one_a_turn`` marks a trigger allowed one note a turn (the reproduction script)."""

    counter: ClassVar[str] = "notes"
    intent: str
    k: float
    note: AdditionalContext
    shown: tuple[str, ...]
    name: str | None = None
    one_a_turn: bool = False

    def ledger_line(self) -> str:
        """``suggest <intent> <k> <n> targets <paths>``."""
        return ledger.suggest(self.intent, self.k, list(self.note.source.targets))


@dataclass(frozen=True)
class Suppressed:
    """A note was due but noise control, a dismissal or readiness held it back, or it would
    have added nothing (``echo``, ``unranked``: ``ranking.py``)."""

    counter: ClassVar[str] = "suppressed"
    reason: str
    intent: str

    def ledger_line(self) -> str:
        """``suppressed <reason> <intent>``."""
        return ledger.suppressed(self.reason, self.intent)


@dataclass(frozen=True)
class Abstained:
    """The intent crossed its gate but the workspace has nothing to name for it
    (``no-companions``), or the call searched only folders the workspace does not have
    (``missing-folder``) or named only files it does not have (``missing-file``)."""

    counter: ClassVar[str] = "abstained"
    intent: str
    k: float
    reason: str = ledger.NO_COMPANIONS

    def ledger_line(self) -> str:
        """``abstained <reason> <intent> <k>``."""
        return ledger.abstained(self.reason, self.intent, self.k)


@dataclass(frozen=True)
class Silent:
    """Nothing to say and nothing to record, because nothing was abstained from
    (docs/SCHEME.md, "Ledger lines": what is no abstention): not a search-class call, a search
    whose words cross no intent's gate, a failed run or script whose files are none of the
    project's, or any call in a workspace no pack applies to (its one ``abstained
    foreign-workspace`` line is written at activation)."""

    counter: ClassVar[str | None] = None

    def ledger_line(self) -> None:
        """No ledger line."""
        return None


Decision = Note | Suppressed | Abstained | Silent
