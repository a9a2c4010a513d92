"""The suggester's part of ``dsh/status``: its counters, packs, readiness, ledger path and what
it has learnt (read from :class:`~dsh_sidecar.suggester.service.Suggester`, never changed)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from dsh_sidecar.suggester.activation import ActivePacks
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.suggester.lead.offer import TaskLeads
from dsh_sidecar.suggester.learning import Journal
from dsh_sidecar.suggester.ledger import Ledger
from dsh_sidecar.suggester.packs import LoadedPack
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.prepared import PreparedTargets
from dsh_sidecar.suggester.section import StickySection
from dsh_sidecar.suggester.suppression import NoiseControl
from dsh_sidecar.suggester.tablecache import TablesCache


class Reported(Protocol):
    """What the status reads of the suggester (:class:`~.service.Suggester`)."""

    config: SuggesterConfig
    root: Path | None
    content: ContentView | None
    active: ActivePacks | None
    prepared: PreparedTargets | None
    counters: dict[str, int]
    activation_ms: float | None
    noise: NoiseControl
    ledger: Ledger
    knowledge: Knowledge
    journal: Journal
    section: StickySection
    leads: TaskLeads
    identity: str
    seeded: int
    tables_cache: TablesCache | None

    @property
    def rows(self) -> Mapping[str, list[CompiledRow]]: ...

    @property
    def packs(self) -> list[LoadedPack]: ...

    @property
    def pack_errors(self) -> list[str]: ...

    def start(self) -> None: ...

    def pending(self) -> frozenset[str]: ...

    def _symbols(self) -> WorkspaceView | None: ...


def learning_of(suggester: Reported) -> dict[str, object]:
    """Learning counters and the knowledge path."""
    return {
        "knowledge": str(suggester.knowledge.path) if suggester.knowledge.path else None,
        "repository": suggester.identity,
        "rows": len(suggester.knowledge.rows),
        "seeded": suggester.seeded,
        "followed": suggester.journal.followed,
        "ignored": suggester.journal.ignored,
        "openWindows": suggester.journal.open_windows(),
        "dismissals": len(suggester.knowledge.active_dismissals()),
        "sectionRebuilds": suggester.section.rebuilds,
        "warnings": suggester.knowledge.warnings,
    }


def status_of(suggester: Reported) -> dict[str, Any]:
    """Counters, packs and the ledger path for ``dsh/status``.

    The pack activation (cheap: no listing) is finished first when it is still running in
    the background, so ``intents`` lists what the packs answer as soon as the server is up;
    ``activation`` is ``"done"``, ``"pending"`` when it could not finish (its error is
    logged and it is retried at the next call), or ``"off"`` while ``enabled`` is false
    (nothing is activated then)."""
    content = suggester.content
    if suggester.active is None and suggester.config.enabled:
        suggester.start()  # a failure counts in errors, as at any other entry point
    suggester.ledger.drain()
    return {
        "enabled": suggester.config.enabled,
        "workspace": str(suggester.root) if suggester.root else None,
        "activation": "done" if suggester.active is not None else ("pending" if suggester.config.enabled else "off"),
        "packs": [{"id": p.pack.id, "origin": p.origin} for p in suggester.packs],
        "packErrors": suggester.pack_errors,
        "intents": [i for i in INTENTS if i in suggester.rows],
        "symbolIndex": suggester._symbols() is not None,
        "prepared": suggester.prepared is not None,
        # the missing-path answer's tables built, or none to build (they are built after ready, off
        # the loop: the answer abstains until then; asked here, a build not started is started)
        "missingPathTables": suggester.prepared is None or suggester.prepared.index.meant_soon() is not None,
        # the parts of the index a note may still wait for (readiness.py): empty = ready
        "pending": sorted(suggester.pending()),
        "activationMs": suggester.activation_ms,
        "counters": dict(suggester.counters),
        "sessions": suggester.noise.count(),
        "ledger": str(suggester.ledger.path) if suggester.ledger.path else None,
        "learning": learning_of(suggester),
        "taskLead": {
            "on": suggester.config.task_lead,
            "offers": suggester.leads.offers,
            "silences": suggester.leads.silences,
        },
        "contentIndex": content.status() if content is not None else None,
        "tablesCache": suggester.tables_cache.last if suggester.tables_cache is not None else None,
        # the missing-path tables of the last build: taken back ("hit") or built ("miss", "unwritten")
        "meantCache": suggester.tables_cache.meant.last if suggester.tables_cache is not None else None,
    }
