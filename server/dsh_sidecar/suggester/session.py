"""The session's evidence: what the agent has been shown, opened, edited and searched for, and
the frames of its own failing runs — what a note's targets are scored against (``ranking.py``)
and what tells a note that adds information from one that repeats (``filters.py``).

Kept per session beside the noise state (``suppression.SessionState.evidence``), bounded: the
files shown so far (:data:`MAX_SEEN`), and the last :data:`MAX_RECENT` files opened or edited,
names searched and frame files. Updated once per call (``pipeline.observe``), before the call
is decided; :attr:`SessionEvidence.current` is what the call being decided showed.

**The task** (:class:`TaskEvidence`), when the session's task text arrived (``dsh/taskLead``
with ``taskLead`` on): the task lead's ranking of the workspace against it, cut to the first
:data:`MAX_TASK_FILES` files, and the code identifiers the text names (at most
:data:`MAX_TASK_NAMES`). Set once per session, read by every later call's note
(``ranking.py``, ``confidence.py``); a session without a task text has none, and its notes
are decided exactly as before.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Final

#: Most files remembered as shown in one session (a set: what a lead is measured against).
MAX_SEEN: Final = 8192
#: Most recent files opened/edited, searched names and frame files remembered.
MAX_RECENT: Final = 32
#: Most files of the task lead's ranking a session keeps (best first).
MAX_TASK_FILES: Final = 20
#: Most identifiers of the task text a session keeps.
MAX_TASK_NAMES: Final = 200


@dataclass(frozen=True)
class TaskEvidence:
    """What the session's task text points to: ``ranks`` maps each of the task lead's best
    files to its place in that ranking (0 the best; at most :data:`MAX_TASK_FILES` files),
    ``names`` the code identifiers the text names (at most :data:`MAX_TASK_NAMES`)."""

    ranks: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    names: frozenset[str] = frozenset()

    @classmethod
    def of(cls, ranked: Iterable[str], names: Iterable[str]) -> TaskEvidence:
        """The evidence of a ranking (``ranked``, best first; each file once) and the text's
        identifiers, both cut to their bounds."""
        ranks: dict[str, int] = {}
        for path in ranked:
            if len(ranks) >= MAX_TASK_FILES:
                break
            ranks.setdefault(path, len(ranks))
        kept: list[str] = []
        for name in names:
            if len(kept) >= MAX_TASK_NAMES:
                break
            kept.append(name)
        return cls(MappingProxyType(ranks), frozenset(kept))

    def rank(self, path: str) -> int | None:
        """``path``'s place in the task's ranking (0 the best), ``None`` outside its top."""
        return self.ranks.get(path)


def _push(items: deque[str], value: str) -> None:
    """Move ``value`` to the recent end of ``items`` (each value once)."""
    if value in items:
        items.remove(value)
    items.append(value)


@dataclass
class SessionEvidence:
    """What one session has seen and asked (module docstring)."""

    #: every workspace file a result showed (listed, opened or edited), up to :data:`MAX_SEEN`
    seen: set[str] = field(default_factory=set)
    #: the workspace files the current call showed (its listing, the files it opened)
    current: frozenset[str] = frozenset()
    #: workspace files the agent opened or edited, most recent last
    opened: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_RECENT))
    #: workspace files it edited, most recent last
    edited: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_RECENT))
    #: identifiers it searched for, most recent last
    names: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_RECENT))
    #: words it searched for (patterns' words, file-name words), most recent last
    terms: deque[str] = field(default_factory=lambda: deque(maxlen=4 * MAX_RECENT))
    #: the files of its failing runs' own code path (``triggers/traceback.py``), most recent last
    frames: deque[str] = field(default_factory=lambda: deque(maxlen=MAX_RECENT))
    #: what the session's task text points to (``None``: no task text arrived)
    task: TaskEvidence | None = None

    def showed(self, files: list[str]) -> None:
        """The current call showed ``files`` (its listing and the files it opened)."""
        self.current = frozenset(files)
        for f in files:
            if len(self.seen) >= MAX_SEEN:
                break
            self.seen.add(f)

    def opened_files(self, files: list[str], edit: bool = False) -> None:
        """The current call opened (``edit``: changed) ``files``."""
        for f in files:
            _push(self.opened, f)
            if edit:
                _push(self.edited, f)

    def searched(self, name: str | None, terms: list[str]) -> None:
        """The current call searched for identifier ``name`` and ``terms``."""
        if name:
            _push(self.names, name)
        for t in terms:
            _push(self.terms, t.lower())

    def failed_in(self, files: list[str]) -> None:
        """A failing run's own code path went through ``files`` (innermost first)."""
        for f in reversed(files):
            _push(self.frames, f)
