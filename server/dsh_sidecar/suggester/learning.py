"""Learning (plan, "The learning"): two deterministic, LLM-free layers over the knowledge file
(``knowledge.py``); the suggester core holds the knowledge, the journal and the dismissals
itself and calls the functions here.

**Offline seed** (:func:`seed`): at load, every resolved target of a *built-in* pack candidate
gets a row with seed pseudo-count 1.0 (the plan's "canonical candidates (prior 1.0)"), 2.0 when
the workspace graph proves it ("a proven candidate is seeded twice"). It never overwrites an
existing row and does not save: the next real write persists it. ``learn: false`` or
``seed: false`` switch it off.

**Online** (:class:`Journal`): a delivered note opens a window of ``learnWindow`` calls in its
session. A later call in the window that touches a listed target — reads it, edits it, greps
inside it (the grep's path, or a search-shaped bash naming the file) — closes it as
``followed <intent> <path>``: that row's ``followed`` += 1, and the other listed targets,
passed over, get ``ignored`` += 1 (no ledger line for them). A window whose calls all passed
untouched closes as ``ignored <intent>`` (``ignored`` += 1 on every listed target). So a row's
``followed + ignored`` is the number of closed windows that listed it. No timers: windows are
checked on the session's next call.

**Ranking** (:func:`learned_factor`, :func:`rank`): a target's score is
``prior × literal × scope × f`` where ``prior × literal × scope`` is the resolver's score and
``f = (1 + seed + followed) / (2 + seed + followed + ignored)`` — the Laplace-smoothed follow
rate per listing (a click-through rate), with the seed counted as pseudo-follows. Unknown rows score ``f = 0.5``; a seeded row
``2/3`` (``3/4`` proven); each follow raises it, each ignore lowers it. Ties keep pack order.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Final

from dsh_sidecar.recent import remember
from dsh_sidecar.suggester import ledger
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.knowledge import Knowledge, Row
from dsh_sidecar.suggester.ports import WorkspaceView
from dsh_sidecar.workspace.graph import PROOF_BASE, PROOF_KIND

#: Seed pseudo-count of a built-in pack candidate (plan: "canonical candidates (prior 1.0)").
SEED_CANONICAL: Final = 1.0
#: Seed pseudo-count of a candidate the graph proves (plan: "a proven candidate is seeded twice").
SEED_PROVEN: Final = 2.0
#: Most open windows per session (the oldest is dropped, unresolved).
MAX_WINDOWS: Final = 16
#: Most sessions with open windows (least recently used dropped).
MAX_SESSIONS: Final = 256


#: Workspace-graph node kinds each intent expects (ours; kinds of ``workspace/kinds.py``): a
#: target whose node has one of them is *proven* (plan: "the node exists, its kind matches").
EXPECTED_KINDS: Final[dict[str, tuple[str, ...]]] = {
    "Version": ("manifest", "source"),
    "Path": ("source", "config"),
    "Ledger": ("doc", "config", "source"),
    "Config": ("config", "manifest"),
    "Dependency": ("manifest", "lock"),
    "Test": ("test", "config"),
    "Symbol": ("source",),
    "Doc": ("doc",),
    "Usage": ("source", "test"),
    "Owner": ("doc", "other", "config"),
}


def graph_prover(graph: WorkspaceView | None) -> Callable[[str, str], bool] | None:
    """``proves(intent, path)`` over ``graph``: the node exists and its kind is one the intent
    expects (``proof ≥ PROOF_BASE + PROOF_KIND``, see ``workspace/graph.py``); ``None`` with no
    graph or an empty one."""
    if graph is None or not graph.files:
        return None
    bar = PROOF_BASE + PROOF_KIND

    def proves(intent: str, path: str) -> bool:
        return graph.proof(path, EXPECTED_KINDS.get(intent, ())) >= bar - 1e-9

    return proves


def learned_factor(row: Row | None) -> float:
    """``f = (1 + seed + followed) / (2 + seed + followed + ignored)``; 0.5 without a row."""
    if row is None:
        return 0.5
    return (1.0 + row.seed + row.followed) / (2.0 + row.seed + row.followed + row.ignored)


def rank(intent: str, targets: list[Target], knowledge: Knowledge) -> list[Target]:
    """``targets`` re-scored by ``score × f`` and sorted best first (stable: ties keep order)."""
    knowledge.ensure()
    rows = knowledge.rows
    scored = [replace(t, score=t.score * learned_factor(rows.get((intent, t.path)))) for t in targets]
    return sorted(scored, key=lambda t: -t.score)


def seed(knowledge: Knowledge, targets: dict[str, list[Target]], proves: Callable[[str, str], bool] | None) -> int:
    """Seed ``targets`` (``{intent: built-in pack targets}``); return the rows inserted."""
    inserted = 0
    for intent, ts in targets.items():
        for t in ts:
            proven = proves is not None and proves(intent, t.path)
            inserted += knowledge.seed(intent, t.path, SEED_PROVEN if proven else SEED_CANONICAL)
    return inserted


@dataclass
class Window:
    """One note's learning window: its intent, listed targets and the call that opened it."""

    intent: str
    targets: tuple[str, ...]
    opened_at: int


class Journal:
    """Open learning windows per session. ``write`` receives each ledger message."""

    def __init__(self, knowledge: Knowledge, write: Callable[[str], object]) -> None:
        self.knowledge = knowledge
        self.write = write
        self._sessions: OrderedDict[str, list[Window]] = OrderedDict()
        self.followed = 0
        self.ignored = 0

    def open(self, session_id: str, intent: str, targets: Iterable[str], call_index: int) -> None:
        """A note listing ``targets`` was delivered at ``call_index`` of ``session_id``."""
        windows = self._sessions.get(session_id, [])
        windows.append(Window(intent, tuple(targets), call_index))
        del windows[:-MAX_WINDOWS]
        remember(self._sessions, session_id, windows, MAX_SESSIONS)

    def observe(self, session_id: str, touched: set[str], call_index: int, window: int) -> bool:
        """Close the session's windows this call resolves; ``True`` when anything was learned.

        Order per window: past ``window`` calls → ``ignored``; else a touched target → ``followed``.
        """
        windows = self._sessions.get(session_id)
        if not windows:
            return False
        learned = False
        for w in list(windows):
            if call_index - w.opened_at > window:
                windows.remove(w)
                for p in w.targets:
                    self.knowledge.record(w.intent, p, ignored=1)
                self.ignored += 1
                self.write(ledger.ignored(w.intent))
                learned = True
                continue
            hit = next((p for p in w.targets if p in touched), None)
            if hit is not None:
                windows.remove(w)
                self.knowledge.record(w.intent, hit, followed=1)
                for p in w.targets:
                    if p != hit:  # listed beside the followed one and passed over
                        self.knowledge.record(w.intent, p, ignored=1)
                self.followed += 1
                self.write(ledger.followed(w.intent, hit))
                learned = True
        if not windows:
            self._sessions.pop(session_id, None)
        return learned

    def open_windows(self) -> int:
        """Windows still open, all sessions."""
        return sum(len(ws) for ws in self._sessions.values())
