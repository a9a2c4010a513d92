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
own (the seed's one note per tool call), the MCP ``post_tool_use`` being one. Only a start's
first build is waited for so: once the index has been whole (:class:`PromptIndex`), a refresh or
a rebuild answers from the whole index it has until the new one is published.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any, Final, Protocol

from dsh_protocol import AdditionalContext

from dsh_sidecar.recent import remember
from dsh_sidecar.suggester.failopen import Entry, failing_open

log = logging.getLogger(__name__)

#: Most sessions a lead is owed to (or held ready for) at once; the oldest are dropped first.
MAX_OWED: Final = 256
#: Longest wait (s) of the owed leads' ranking thread for the index, per look.
OWED_POLL_S: Final = 1.0
#: Seconds after which the owed leads' thread stops waiting for an index that is still not
#: whole (a 200k-file tree is built in about a minute) and drops what is owed.
OWED_GIVE_UP_S: Final = 600.0

#: Most waits one :meth:`PromptIndex.ready` call starts or joins (a shared wait that ended
#: before the call's own bound is followed by another, never a loop).
WAIT_ROUNDS: Final = 3
#: Shortest rest (s) worth another wait after a shared one ended: calls that joined a wait a
#: moment after it started (a loaded machine spreads 20 concurrent calls over tens of ms) are
#: answered with it, not each after a wait of its few milliseconds more on another thread.
MIN_REWAIT_S: Final = 0.25
#: Longest wait (s) of a tool call the model made (MCP ``where_is``) for the workspace index:
#: longer than the prompt path's first-call window (a small repository on a loaded machine
#: indexes past 500 ms, and an empty answer asks the model for another call), never a build's.
TOOL_CALL_WAIT_S: Final = 5.0

#: What the fail-open log line says when adding an owed task lead to a call's answer raised.
OWED_LEAD_FAILED: Final = "internal error taking the owed task lead; the call passes through silently"
#: What it says when passing a taken owed lead's ledger line on raised (the lead is still given).
OWED_LEDGER_FAILED: Final = "internal error passing the owed task lead's ledger line on; the lead is given"
#: What it says when owing a task lead to its session (or starting its ranking) raised.
OWING_LEAD_FAILED: Final = "internal error owing the task lead; the task is answered silently"

Rank = Callable[[str, str], "AdditionalContext | None"]


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


class IndexOwner(Protocol):
    """What :class:`PromptIndex` reads of its sidecar."""

    config: Any  # its ``suggester.first_call_wait_ms``: the first-call window's length

    def projection_pending(self) -> bool: ...

    def wait_for_graph(self, timeout_s: float) -> bool: ...


class PromptIndex:
    """The workspace index as the prompt-path calls of ``owner`` see it (the first-call window,
    whole once), and the task leads owed to sessions (:attr:`owed`)."""

    def __init__(self, owner: IndexOwner) -> None:
        self.owner = owner
        self.window = FirstCallWindow()
        self.owed = OwedLeads()
        self._whole = False
        #: the one wait for the projection the calls of the window await (:meth:`ready`)
        self._waiter: asyncio.Future[bool] | None = None

    def lead_for(self, session_id: str, suggester: Entry, drain: Callable[[], None]) -> list[AdditionalContext]:
        """The task lead owed to ``session_id`` as a call's answer (``[]``: none ready), taken
        once; ``drain`` passes its ledger line on (written on the ranking thread). A step of the
        suggester's answer: under its fail-open (an error counts in ``suggester``'s ``errors``,
        the call passes through silently). A lead once taken is given: an error passing its
        ledger line on fails open on its own, and the lead goes with the answer all the same."""
        if not self.owed.any_ready():
            return []  # the common case: no closure and no fail-open frame a call

        def take() -> list[AdditionalContext]:
            lead = self.owed.take(session_id)
            if lead is None:
                return []
            failing_open(suggester, OWED_LEDGER_FAILED, lambda: None, drain)
            return [lead]

        return failing_open(suggester, OWED_LEAD_FAILED, list, take)

    def owe(self, session_id: str, task: str, rank: Rank, closing: threading.Event, suggester: Entry) -> None:
        """Owe ``session_id`` the lead for ``task`` and rank it with ``rank`` once the index is
        whole (:meth:`OwedLeads.owe`, :meth:`OwedLeads.rank_later`). A step of the suggester's
        answer to a task: under its fail-open (an error counts in ``suggester``'s ``errors``,
        and the task is answered empty as when it is owed)."""

        def owe_and_rank() -> None:
            self.owed.owe(session_id, task)
            self.owed.rank_later(self, rank, closing)

        failing_open(suggester, OWING_LEAD_FAILED, lambda: None, owe_and_rank)

    def pending(self) -> bool:
        """Whether the projection is being built."""
        return self.owner.projection_pending()

    def wait(self, timeout_s: float) -> bool:
        """Block until the projection is built (``True``), at most ``timeout_s``."""
        return self.owner.wait_for_graph(timeout_s)

    def whole(self) -> bool:
        """Whether the index has been whole: built now, or built once before (a refresh or a
        rebuild after that answers from the whole index it has until the new one is published,
        never from a half-built one)."""
        if not self._whole and not self.pending():
            self._whole = True
        return self._whole

    async def ready(self, at_least_s: float = 0.0) -> bool:
        """For a call on an event loop: whether the index is whole (:meth:`whole`), after
        waiting (off the loop) for what is left of the first-call window when it is not, or
        ``at_least_s`` when that is longer (a tool call the model made: ``where_is``). The
        calls waiting at once share one wait on one thread (:attr:`_waiter`), each awaiting it
        for what is left of its own bound: a thread each filled the loop's default executor, so
        concurrent calls waited in batches, one window each."""
        if self.whole():
            return True
        loop = asyncio.get_running_loop()
        wait_s = max(self.window.left(self.owner.config.suggester.first_call_wait_ms / 1000), at_least_s)
        deadline = loop.time() + wait_s
        for round_ in range(WAIT_ROUNDS):  # a shared wait that ended before this call's bound
            left = deadline - loop.time()
            if left <= (MIN_REWAIT_S if round_ else 0) or self.whole():
                break
            waiter = self._waiter
            if waiter is None or waiter.done() or waiter.get_loop() is not loop:
                waiter = self._waiter = asyncio.ensure_future(asyncio.to_thread(self.wait, left))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(waiter), left)
        return self.whole()


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
        self._thread: threading.Thread | None = None

    def owe(self, session_id: str, task: str) -> None:
        """``session_id``'s lead for ``task`` was not given (a later task of the session replaces
        an earlier one still owed). Only the head the lead reads is kept: the wire takes 200,000
        characters a task, and 256 owed tasks of emoji held 205 MB until the index was built."""
        from dsh_sidecar.suggester.lead.mentions import MAX_TASK_CHARS  # loaded with the suggester

        with self._lock:
            remember(self._tasks, session_id, task[:MAX_TASK_CHARS], self.limit)

    def tasks(self) -> list[tuple[str, str]]:
        """The owed ``(session, task)`` pairs not ranked yet, oldest first; each is handed out
        once (a later :meth:`owe` hands it out again)."""
        with self._lock:
            return self._hand_out()

    def _hand_out(self) -> list[tuple[str, str]]:
        """:meth:`tasks`; the caller holds the lock."""
        pending = list(self._tasks.items())
        self._tasks.clear()
        return pending

    def settle(self, session_id: str, note: AdditionalContext | None) -> None:
        """The ranking of ``session_id``'s owed task gave ``note`` (``None``: silence, nothing
        more is owed)."""
        if note is None:
            return
        with self._lock:
            remember(self._ready, session_id, note, self.limit)

    def any_ready(self) -> bool:
        """Whether a lead is ready for some session (read without the lock: :meth:`take` of a
        lead settled meanwhile waits for the session's next call, as it would a moment later)."""
        return bool(self._ready)

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

    def rank_later(self, index: PromptIndex, rank: Rank, closing: threading.Event) -> None:
        """Rank the owed tasks with ``rank(session, task)`` on a thread once ``index`` is whole
        (the thread starts unless it runs; it ends when nothing is owed, when ``closing`` is set,
        or after :data:`OWED_GIVE_UP_S` without a whole index: what is owed is then dropped)."""
        with self._lock:
            if self._thread is not None:
                return
            args = (index, rank, closing)
            self._thread = threading.Thread(target=self._rank, args=args, name="dsh-owed-leads", daemon=True)
            self._thread.start()

    def _rank(self, index: PromptIndex, rank: Rank, closing: threading.Event) -> None:
        give_up = time.monotonic() + OWED_GIVE_UP_S
        try:
            while not closing.is_set():
                if not index.whole():
                    if time.monotonic() > give_up:
                        self.tasks()
                        log.info("search-suggester: owed task leads dropped: the index was not built in time")
                    elif not index.wait(OWED_POLL_S) or not index.whole():
                        closing.wait(0.1)
                        continue
                with self._lock:  # nothing owed: the thread ends under the lock, or an owe() now would wait for it
                    owed = self._hand_out()
                    if not owed:
                        self._thread = None
                        return
                for session_id, task in owed:
                    if closing.is_set():
                        return
                    self.settle(session_id, rank(session_id, task))
        finally:
            with self._lock:
                if self._thread is threading.current_thread():
                    self._thread = None

    def join(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for the ranking thread to stop (it may be ranking: the
        content index, RE2)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)
