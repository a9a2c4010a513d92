"""The task lead offered once per session (``docs/SCHEME.md``, "The task lead").

The harness knows the task before the agent's first search: Claude Code's ``UserPromptSubmit``
hook carries the prompt, DeepSeek Harness's first step carries the first user message, an MCP
client may ask ``where_is`` with free text. :class:`TaskLeads` ranks the workspace against that
text (``mentions.py``, ``ranker.py``) and offers the top files **once per session**, as a
labelled note of the intent ``Task``: the same form, bounds and escaping as every note
(``notes.make_note``: each path escaped as a name, ``escape.escape_controls``, at most 600 characters and five
targets). The task text itself never reaches the model from here: only workspace paths and the
ranker's fixed reasons, in which the text's own names are escaped too.

Every offer and every silence after a session's text arrives is one ledger line::

    lead offered <n> targets <path>[,<path>…]
    lead silent <reason>

``reason``: ``not-ready`` (the symbol pass or the content index does not cover the workspace
yet: no guess), ``no-mentions`` (the text names nothing to rank by), ``nothing-found``. A
session asked again after its offer gets nothing and no line (once means once).

Bounds: the text is cut to :data:`~dsh_sidecar.suggester.lead.mentions.MAX_TASK_CHARS` before
it is read, every mention list is bounded, the ranker's loops are bounded by counts (one pass
over the listing at most), and the caller runs it off its event loop.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Final

from dsh_protocol import AdditionalContext

from dsh_sidecar.recent import remember
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.notes import make_note

if TYPE_CHECKING:  # the ranking's modules load with the first offer (a hook's note does not wait for them)
    from dsh_sidecar.suggester.lead.ranker import Lead, LeadContent, LeadWorkspace

#: The intent a task lead is labelled with.
LEAD_INTENT: Final = "Task"
#: What the note's heading says the files are for.
LEAD_ABOUT: Final = "the code this task is about"
#: Most sessions whose offer is remembered (the oldest forgotten first).
MAX_SESSIONS: Final = 1024


def offered(targets: list[str]) -> str:
    """``lead offered <n> targets <path>[,<path>…]``."""
    return f"lead offered {len(targets)} targets {','.join(targets)}"


def silent(reason: str) -> str:
    """``lead silent <reason>``."""
    return f"lead silent {reason}"


@dataclass(frozen=True)
class LeadAnswer:
    """What one ask gave: the note (``None``: silence), the ranked files, and the ledger line
    written (``None``: none, an already-offered session); ``ranked``: the ranking beyond the
    note, best first (up to the ``keep`` asked for, the session's task evidence), and
    ``names``: the code identifiers the text names."""

    note: AdditionalContext | None
    leads: tuple[Lead, ...]
    line: str | None
    ranked: tuple[Lead, ...] = ()
    names: tuple[str, ...] = ()


def lead_note(leads: list[Lead]) -> AdditionalContext | None:
    """The labelled note naming ``leads`` (``None`` when none fits)."""
    targets = [Target(lead.path, lead.reason, lead.score) for lead in leads]
    note = make_note(LEAD_INTENT, LEAD_ABOUT, targets)
    return note if note.source.targets else None


class TaskLeads:
    """The sessions offered a lead so far, and the offer itself. Thread-safe (the owner runs
    :meth:`offer` on a worker thread)."""

    def __init__(self, write: Callable[[str], object]) -> None:
        self.write = write
        self._offered: OrderedDict[str, None] = OrderedDict()
        self._lock = threading.Lock()
        self.offers = 0
        self.silences = 0

    def seen(self, session_id: str) -> bool:
        """Whether ``session_id`` had its offer (or its silence) already."""
        with self._lock:
            return session_id in self._offered

    def _claim(self, session_id: str) -> bool:
        with self._lock:
            if session_id in self._offered:
                return False
            remember(self._offered, session_id, None, MAX_SESSIONS)
            return True

    def _release(self, session_id: str) -> None:
        with self._lock:
            self._offered.pop(session_id, None)

    def offer(
        self,
        session_id: str,
        task: str,
        workspace: LeadWorkspace | None,
        content: LeadContent | None,
        ready: bool,
        limit: int | None = None,
        keep: int = 0,
    ) -> LeadAnswer:
        """Rank ``workspace`` against ``task`` and offer the top ``limit`` files (default
        :data:`~.ranker.MAX_LEAD`), once per ``session_id``. ``ready``: the index covers the
        workspace (else ``not-ready``, and the session may ask again). ``keep``: how many of the
        ranking's best files the answer carries (``ranked``; the ranking is cut after sorting,
        so its first ``limit`` are the offer's)."""
        from dsh_sidecar.suggester.lead.mentions import mentions
        from dsh_sidecar.suggester.lead.ranker import DEFAULT_WEIGHTS, MAX_LEAD, rank

        if not self._claim(session_id):
            return LeadAnswer(None, (), None)
        limit = MAX_LEAD if limit is None else limit
        m = mentions(task)
        names = tuple(dict.fromkeys(m.subject + m.identifiers))
        if m.empty:
            return self._silent("no-mentions")
        if not ready or workspace is None or workspace.symbols is None:
            self._release(session_id)  # not this session's fault: a later ask may find the index
            return self._silent("not-ready")
        n = max(limit, keep)
        try:
            ranked = rank(m, workspace, content, DEFAULT_WEIGHTS, n)
        except RuntimeError:  # the index changed under the ranking (a refresh): once more
            ranked = rank(m, workspace, content, DEFAULT_WEIGHTS, n)
        leads = ranked[:limit]
        note = lead_note(leads) if leads else None
        if note is None:
            return replace(self._silent("nothing-found"), names=names)
        line = offered(note.source.targets)
        self.offers += 1
        self.write(line)
        return LeadAnswer(note, tuple(leads), line, tuple(ranked[:keep]), names)

    def rank_only(
        self, text: str, workspace: LeadWorkspace | None, content: LeadContent | None, limit: int | None = None
    ) -> list[Lead]:
        """The ranking of ``text`` without an offer (``where_is`` with free text): no session,
        no ledger line; ``[]`` while the symbol index is missing."""
        from dsh_sidecar.suggester.lead.mentions import mentions
        from dsh_sidecar.suggester.lead.ranker import DEFAULT_WEIGHTS, MAX_LEAD, rank

        if workspace is None or workspace.symbols is None:
            return []
        m = mentions(text)
        return [] if m.empty else rank(m, workspace, content, DEFAULT_WEIGHTS, MAX_LEAD if limit is None else limit)

    def _silent(self, reason: str) -> LeadAnswer:
        line = silent(reason)
        self.silences += 1
        self.write(line)
        return LeadAnswer(None, (), line)
