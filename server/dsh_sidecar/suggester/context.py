"""What the stages of one call read: :class:`Context`, built once per call by the service.

One snapshot per call: the prepared targets, the workspace paths and the evidence view are
taken when the call starts, so every stage of the call sees the same workspace even when a
preparation on another thread swaps in a new one meanwhile. What was still being built is read
just before them (:attr:`Context.pending`), so a call is judged ready on that same view: a part
that finishes while the call decides is not in its view, and still counts as missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from dsh_protocol import PostExecuteParams

from dsh_sidecar.suggester import evidence
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.dismissals import Dismissals
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.suggester.learning import Journal
from dsh_sidecar.suggester.ledger import Ledger
from dsh_sidecar.suggester.paths import WorkspacePaths
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.prepared import PreparedTargets
from dsh_sidecar.suggester.ranking import CallScorer
from dsh_sidecar.suggester.section import StickySection
from dsh_sidecar.suggester.suppression import NoiseControl, SessionState


@dataclass(frozen=True)
class Sinks:
    """What a decision changes: the status counters, the ledger, noise control's per-session
    state, the sticky section and the learning journal."""

    counters: dict[str, int]
    ledger: Ledger
    noise: NoiseControl
    section: StickySection
    journal: Journal


class Service(Protocol):
    """What a call may ask of the suggester that owns it (its lifecycle stays there)."""

    def active_rows(self) -> dict[str, list[CompiledRow]]:
        """The active pack rows per intent, the packs activated first when they are not."""
        ...

    def prepared_now(self) -> PreparedTargets | None:
        """The prepared targets, prepared now when no background preparation makes them;
        ``None`` while the background one has not finished (never waits)."""
        ...

    def pending(self) -> frozenset[str]:
        """The parts of the workspace index still being built (``readiness.py``: targets,
        symbols, content); a part that will never come is not pending."""
        ...

    def repo_prose(self, intent: str) -> bool:
        """Whether ``intent``'s ``about`` and reasons are the repository pack's prose (quoted
        wherever they are shown: ``notes.py``)."""
        ...

    def regex_budget_used(self) -> None:
        """Report that a call's untrusted pack regexes used up their time (once a process)."""
        ...


@dataclass(frozen=True)
class Context:
    """One call's view of the suggester: the call and its session's noise state, the config,
    the prepared targets (``None`` before the first preparation) and what maps and reads the
    workspace, the knowledge and dismissals, the sinks a decision goes to, the service, and the
    parts of the index still being built when the view was taken."""

    params: PostExecuteParams
    state: SessionState
    config: SuggesterConfig
    prepared: PreparedTargets | None
    paths: WorkspacePaths
    #: the workspace graph once its symbol index is built, else ``None``
    symbols: WorkspaceView | None
    evidence: evidence.Workspace
    content: ContentView | None
    knowledge: Knowledge
    dismissals: Dismissals
    sinks: Sinks
    service: Service
    #: the parts of the index being built when this view was taken (``Service.pending``, read
    #: before the view): the parts the call may wait for. A part not in it is in the view (or
    #: never comes); one that finishes after it is in a later view, not in this one
    pending: frozenset[str] = frozenset()
    #: the call's scorer of targets, shared by its ranking and its note's confidence (one call)
    scorers: CallScorer = field(default_factory=CallScorer, compare=False, repr=False)
