"""Noise control (plan, "The gate"): when a note that is due is suppressed (ledger
``suppressed <reason> <intent>``): cooldown, dedupe, per-turn cap; and the session state the
already-recent filter (``filters.py``) reads.

State is per session (``sessionId``): a call counter, the notes delivered (call index, intent,
target set), notes per turn, and the files the agent read recently (a bounded window of calls).

Both the cooldown and the dedupe are keyed by **(intent, target set)** — and the searched
name, when the note is about one — not by intent alone: a Symbol note about one name never
silences the lookup of another name.

* ``dedupe`` — the same intent with the same target set was already delivered in the session;
* ``cooldown`` — a note of the same intent led by the same target was delivered within
  ``cooldownCalls`` calls (the agent has just been told where that lives);
* ``turn-cap`` — ``maxNotesPerTurn`` notes already went out in this (session, turn), or a
  trigger allowed one note a turn (the reproduction script) already had it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Final

from dsh_sidecar.recent import remember
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.session import SessionEvidence

#: Most sessions tracked at once (least recently used dropped).
MAX_SESSIONS: Final = 256


@dataclass
class SessionState:
    """What noise control remembers of one session."""

    calls: int = 0
    notes: deque[tuple[int, str, tuple[str, ...]]] = field(default_factory=lambda: deque(maxlen=MAX_NOTES_KEPT))
    delivered: set[tuple[str, tuple[str, ...]]] = field(default_factory=set)
    notes_in_turn: dict[int, int] = field(default_factory=dict)
    recent: deque[tuple[int, str]] = field(default_factory=deque)
    whole: set[str] = field(default_factory=set)  # of the recent reads, those of whole files
    #: the session has changed a file of the workspace (an edit or write of a listed file): the
    #: agent knows where it works, and a script it writes now checks its own change
    edited: bool = False
    #: files the session created (written while not listed): rewriting its own script is no
    #: edit of the workspace, whether or not the listing has caught up with it (at most
    #: ``MAX_RECENT`` kept)
    created: set[str] = field(default_factory=set)
    #: the turn of the last note of a one-a-turn trigger (``triggers/script.py``)
    script_turn: int | None = None
    #: what the session was shown, opened and searched for (``session.py``)
    evidence: SessionEvidence = field(default_factory=SessionEvidence)

    def wrote(self, path: str, listed: bool) -> None:
        """Remember a write of ``path`` (``listed``: a file of the workspace's listing)."""
        if path in self.created:
            return
        if listed:
            self.edited = True
        elif len(self.created) < MAX_RECENT:
            self.created.add(path)

    def touch(self, paths: list[str], window: int, whole: bool = True) -> None:
        """Remember that the current call read ``paths`` (``whole``: entire files, not a
        ``head``/``sed -n``/offset slice); forget reads older than ``window``."""
        for p in paths:
            p = p.lstrip("./")
            self.recent.append((self.calls, p))
            if whole:
                self.whole.add(p)
        while self.recent and self.recent[0][0] <= self.calls - window:
            self.recent.popleft()
        if len(self.whole) > MAX_RECENT:
            self.whole &= self.recently_read()
        while len(self.recent) > MAX_RECENT:
            self.recent.popleft()

    def recently_read(self) -> set[str]:
        """Paths read within the window."""
        return {p for _, p in self.recent}

    def wholly_read(self) -> set[str]:
        """Paths read whole within the window."""
        return self.whole & self.recently_read()


#: Notes remembered per session for the cooldown (older ones are past any window anyway).
MAX_NOTES_KEPT: Final = 256
#: Most recent reads remembered per session.
MAX_RECENT: Final = 4096
#: Calls within which the same (intent, target set) is one note (``dedupe``); ours, chosen on
#: the tune split of the evaluation corpus (docs/SCHEME.md).
DEDUPE_CALLS: Final = 50
#: Most delivered (intent, target set) pairs remembered per session for the dedupe.
MAX_DELIVERED: Final = 4096


class NoiseControl:
    """Per-session noise state, bounded to :data:`MAX_SESSIONS` sessions. Thread-safe lookup
    (the task lead sets a session's task evidence from a worker thread)."""

    def __init__(self) -> None:
        self._sessions: OrderedDict[str, SessionState] = OrderedDict()
        self._lock = threading.Lock()

    def session(self, session_id: str) -> SessionState:
        """The state of ``session_id`` (created on first use)."""
        with self._lock:
            state = self._sessions.get(session_id)
            if state is None:
                state = SessionState()
            remember(self._sessions, session_id, state, MAX_SESSIONS)
            return state

    @staticmethod
    def check(
        state: SessionState,
        intent: str,
        turn: int,
        targets: tuple[str, ...],
        cooldown_calls: int,
        max_per_turn: int,
        name: str | None = None,
    ) -> str | None:
        """The suppression reason for a note, or ``None`` when it may go out. ``name`` is the
        searched identifier (a note about another name is another note).

        Reasons, in this order: ``dedupe``, ``cooldown``, ``turn-cap`` (module docstring).
        """
        key = targets + ((name,) if name else ())
        for call, i, ts in reversed(state.notes):
            if state.calls - call > DEDUPE_CALLS:
                break
            if i == intent and ts == key:
                return "dedupe"
        lead = targets[0] if targets else None
        for call, i, ts in reversed(state.notes):
            if state.calls - call > cooldown_calls:
                break
            if i == intent and lead is not None and ts and lead == ts[0] and ts[-1:] == ((name,) if name else ts[-1:]):
                return "cooldown"
        if state.notes_in_turn.get(turn, 0) >= max_per_turn:
            return "turn-cap"
        return None

    def record(
        self, state: SessionState, intent: str, turn: int, targets: tuple[str, ...], name: str | None = None
    ) -> None:
        """Remember a delivered note (about ``name``, when it names one)."""
        key = targets + ((name,) if name else ())
        state.notes.append((state.calls, intent, key))
        if len(state.delivered) < MAX_DELIVERED:
            state.delivered.add((intent, key))
        state.notes_in_turn[turn] = state.notes_in_turn.get(turn, 0) + 1
        if len(state.notes_in_turn) > 64:
            for old in sorted(state.notes_in_turn)[:-32]:
                del state.notes_in_turn[old]

    def count(self) -> int:
        """Sessions tracked."""
        return len(self._sessions)


def check(
    state: SessionState,
    intent: str,
    turn: int,
    targets: tuple[str, ...],
    config: SuggesterConfig,
    name: str | None = None,
    one_a_turn: bool = False,
) -> str | None:
    """The suppression reason for a note about to go out, or ``None``: ``turn-cap`` for a
    one-a-turn trigger that already noted in this turn, then :meth:`NoiseControl.check`'s."""
    if one_a_turn and state.script_turn == turn:
        return "turn-cap"
    return NoiseControl.check(state, intent, turn, targets, config.cooldown_calls, config.max_notes_per_turn, name)
