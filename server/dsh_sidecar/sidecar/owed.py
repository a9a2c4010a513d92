"""What a prompt-path call could not wait for: the first-call window of a start and the task
leads owed to sessions.

A harness holds the user's turn while it waits for the sticky section (``dsh/assembleSection``,
the MCP ``session_start``) or the task lead (``dsh/taskLead``, the MCP ``session_start`` with
the prompt). Both answer from the whole workspace index, which a large repository builds for
seconds; neither waits for that build longer than the first note does
(``suggester.firstCallWaitMs``), measured from the first such call of a start
(:class:`FirstCallWindow`), and neither is answered from a half-built index. A section not sent
comes with the next request for it (DeepSeek Harness assembles the system prompt before each
model step; the MCP server owes it to the session, ``mcp/hooks.py``). A task lead is asked once
per session, so one not given is owed (:class:`OwedLeads`): ranked on a thread once the index
is built, then added to the session's next ``dsh/postExecute`` answer that has no note of its
own (the seed's one note per tool call), the MCP ``post_tool_use`` being one.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from typing import Final

from dsh_protocol import AdditionalContext

#: Most sessions a lead is owed to (or held ready for) at once; the oldest are dropped first.
MAX_OWED: Final = 256


class FirstCallWindow:
    """The wait for the workspace index that the prompt-path calls of one start share: the
    first opens a window of ``wait_s`` seconds, and each call may wait for what is left of it
    (so a section and a task lead asked for the same first prompt wait ``wait_s`` together, not
    each); once it has passed, no call waits. Thread-safe."""

    def __init__(self) -> None:
        self._until: float | None = None
        self._lock = threading.Lock()

    def left(self, wait_s: float) -> float:
        """Seconds this call may still wait (``wait_s``: the window's length if it opens now)."""
        now = time.monotonic()
        with self._lock:
            if self._until is None:
                self._until = now + max(0.0, wait_s)
            return max(0.0, self._until - now)


class OwedLeads:
    """The task leads owed to sessions (their ``taskLead`` came while the index was being
    built): the task text until it is ranked (:meth:`tasks`, :meth:`settle`), then the note
    until a call of the session takes it (:meth:`take`). At most ``limit`` sessions of each,
    the oldest dropped first. Thread-safe (the ranking runs on a thread, the calls on the
    event loop)."""

    def __init__(self, limit: int = MAX_OWED) -> None:
        self.limit = limit
        self._tasks: OrderedDict[str, str] = OrderedDict()
        self._ready: OrderedDict[str, AdditionalContext] = OrderedDict()
        self._lock = threading.Lock()

    def owe(self, session_id: str, task: str) -> None:
        """``session_id``'s lead for ``task`` was not given (a later task of the session replaces
        an earlier one still owed)."""
        with self._lock:
            self._tasks.pop(session_id, None)
            self._tasks[session_id] = task
            while len(self._tasks) > self.limit:
                self._tasks.popitem(last=False)

    def tasks(self) -> list[tuple[str, str]]:
        """The owed ``(session, task)`` pairs not ranked yet, oldest first; each is handed out
        once (a later :meth:`owe` hands it out again)."""
        with self._lock:
            pending = list(self._tasks.items())
            self._tasks.clear()
            return pending

    def settle(self, session_id: str, note: AdditionalContext | None) -> None:
        """The ranking of ``session_id``'s owed task gave ``note`` (``None``: silence, nothing
        more is owed)."""
        if note is None:
            return
        with self._lock:
            self._ready.pop(session_id, None)
            self._ready[session_id] = note
            while len(self._ready) > self.limit:
                self._ready.popitem(last=False)

    def take(self, session_id: str) -> AdditionalContext | None:
        """``session_id``'s ready lead, once (``None``: none ready)."""
        if not self._ready:  # the common case, without the lock
            return None
        with self._lock:
            return self._ready.pop(session_id, None)

    def waiting(self) -> bool:
        """Whether a task is owed and not ranked yet."""
        with self._lock:
            return bool(self._tasks)
