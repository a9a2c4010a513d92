"""The suggester behind ``dsh/postExecute``: its lifecycle (plan: "The intents" … "The ledger").

One call → at most one note, decided by ``pipeline.py`` (read top to bottom there). This
module keeps what lives longer than a call: the active packs (activated once, thread-safe,
read again after ``dsh/toolsChanged``), the prepared targets (``prepared.py``, swapped in by a
preparation off the request path), the knowledge, dismissals, noise state, sticky section and
ledger, and the status. Fail-open (:func:`fail_open`, one policy for every entry point): an
internal error counts in ``errors``, logs a warning and answers silence.

Nothing here lists the workspace on a call or rebuilds an index inline: the targets are
prepared once the workspace graph's listing exists (:meth:`Suggester.prepare`, on the graph
builder's thread in the server) and re-prepared off the request path when files or content
facts change. A call that needs a part of the index still being built (``readiness.py``: the
targets, the symbol pass, the content index) is classified and held back as ``not-ready``,
after waiting for that part within its bound (:meth:`Suggester.wait_budget`: the call's own
``waitMs``, else ``firstCallWaitMs`` for the first such call of a start); the wait blocks the
calling thread, so a server runs a call that may wait off its event loop
(:meth:`Suggester.may_wait`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, ParamSpec, TypeVar, cast

from dsh_protocol import AdditionalContext, PostExecuteParams

from dsh_sidecar.suggester import ledger, pipeline, prepared, readiness, section, status
from dsh_sidecar.suggester.activation import ActivePacks, activate
from dsh_sidecar.suggester.asked import AskedMethods
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.config import SuggesterConfig
from dsh_sidecar.suggester.context import Context, Sinks
from dsh_sidecar.suggester.decision import Decision, Note, Suppressed
from dsh_sidecar.suggester.dismissals import Dismissals, iso_seconds
from dsh_sidecar.suggester.failopen import fail_open
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.suggester.lead.offer import TaskLeads
from dsh_sidecar.suggester.learning import Journal, graph_prover, seed
from dsh_sidecar.suggester.owednote import OwedNote
from dsh_sidecar.suggester.packs import CALL_BUDGET_S, LoadedPack
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.paths import WorkspacePaths
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.prepared import PreparedTargets, evidence_view
from dsh_sidecar.suggester.suppression import NoiseControl, SessionState
from dsh_sidecar.suggester.tablecache import TablesCache
from dsh_sidecar.workspace.identity import repository_identity

if TYPE_CHECKING:  # the event only: the projection imports the graph builder
    from dsh_sidecar.suggester import evidence
    from dsh_sidecar.workspace.projection import WorkspaceChange

log = logging.getLogger(__name__)

#: Pause between two looks at the index while a call waits for it, s (a look reads a few
#: flags: ~10 µs; a fresh server's first answer comes this much after the part it waited for)
WAIT_POLL_S: Final = 0.005

P = ParamSpec("P")
R = TypeVar("R")


class Suggester(AskedMethods):
    """The suggester for one workspace.

    ``root`` is the workspace folder (``None``: no workspace, always silent); ``dsh_home`` the
    state folder; ``sink`` receives each ledger line; ``clock`` returns epoch seconds.
    ``workspace`` returns the current workspace graph (``ports.WorkspaceView``, ``None`` while
    it lists), asked when needed: its listing, kinds and symbol index; without one the
    suggester lists the workspace itself when first prepared and Symbol/Usage use their pack's
    ``fallback`` paths. ``content`` is the content index (``ports.ContentView``) for facts and
    topic matches. ``background``: the owner prepares the targets off the request path (it
    calls :meth:`prepare` when the graph has listed the workspace, as the server does); else
    they are prepared on first use. ``indexing`` says whether the owner is still building the
    workspace index (the graph, its symbol pass, the content index, a change on its way): a
    part of it that is missing is *pending* only meanwhile (``readiness.py``); without it, a
    missing part never comes.
    """

    def __init__(
        self,
        root: Path | None,
        config: SuggesterConfig,
        dsh_home: Path,
        sink: Callable[[str], None] | None = None,
        clock: Callable[[], float] = time.time,
        workspace: Callable[[], WorkspaceView | None] | None = None,
        content: ContentView | None = None,
        background: bool = False,
        indexing: Callable[[], bool] | None = None,
        sink_thread: int | None = None,
        tables_cache: TablesCache | None = None,
    ) -> None:
        self.root = root.resolve() if root is not None else None
        self.tables_cache = tables_cache  # the listing's tables between sessions (tablecache.py)
        self.config = config
        self.dsh_home = dsh_home
        self.clock = clock
        # ``sink`` is called on ``sink_thread`` only (default: this one; ledger.Ledger)
        self.ledger = ledger.Ledger(self._ledger_path(config), sink, clock, owner=sink_thread)
        self.noise = NoiseControl()
        self.workspace = workspace
        self.content = content
        self.background = background
        self.indexing = indexing or (lambda: False)
        self.active: ActivePacks | None = None
        self.prepared: PreparedTargets | None = None
        self.counters: dict[str, int] = {"calls": 0, "notes": 0, "suppressed": 0, "abstained": 0, "errors": 0}
        self.activation_ms: float | None = None
        self._slow_call_reported = False
        self.identity = repository_identity(self.root) if self.root is not None else ""
        knowledge_path = (
            Path(config.persist_path).expanduser()
            if config.persist_path
            else dsh_home / "search-suggester" / "knowledge.json"
        )
        self.knowledge = Knowledge(knowledge_path, self.identity, clock)
        self.journal = Journal(self.knowledge, self.ledger.write)
        self.dismissals = Dismissals(self.knowledge, lambda: self.config.dismiss_ttl, clock, str(self.root or ""))
        self.section = section.StickySection(lambda: self.config.section_ttl, clock, self.ledger.write)
        self.leads = TaskLeads(self.ledger.write)
        self.sinks = Sinks(self.counters, self.ledger, self.noise, self.section, self.journal)
        self.proves: Callable[[str, str], bool] | None = None
        self.seeded = 0
        self._preparing = threading.Lock()
        #: one activation at a time: warm() on a worker thread and the first request may race
        self._activating = threading.Lock()
        #: bumped by :meth:`invalidate`; an activation begun before it is discarded, not installed
        self._generation = 0
        self._waited = False
        self.owed = OwedNote(self)  # the first call's note, when the index was not ready for it
        #: the last call's (snapshot, symbols, their symbol index, content, paths, evidence view): :meth:`_views`
        self._kept_views: tuple[Any, ...] | None = None

    def _ledger_path(self, config: SuggesterConfig) -> Path:
        return ledger.ledger_path(config.log_file, self.dsh_home)

    def _log(self, message: str) -> None:
        """Write a ledger line (any thread: the ledger hands the sink its lines on the thread
        that made it, ``ledger.Ledger``)."""
        self.ledger.write(message)

    # ------------------------------------------------------------------ the packs

    @property
    def rows(self) -> dict[str, list[CompiledRow]]:
        """The active rows per intent (``{}`` before activation)."""
        return self.active.rows if self.active is not None else {}

    @property
    def packs(self) -> list[LoadedPack]:
        """The active packs."""
        return self.active.packs if self.active is not None else []

    def activate(self) -> None:
        """Load the packs that apply and write the ``activated`` (or ``abstained
        foreign-workspace``) ledger line. Cheap (no listing); idempotent until :meth:`invalidate`;
        thread-safe (the lines are written once even when two threads ask at once)."""
        while self.active is None:
            with self._activating:
                if self.active is None:
                    self._activate(self._generation)

    def _activate(self, generation: int) -> None:
        if self.root is None:
            self.active = ActivePacks()
            self._log(ledger.abstained_foreign_workspace())
            return
        active = activate(self.root, self.dsh_home, self.config.builtin_packs)
        self.active = active
        if generation != self._generation:
            # invalidated while reading (a pack changed under us): discarded, the caller reads again
            self.active = None
            return
        for reason in active.refused:
            self._refuse(reason)
        if not active.rows:
            self._log(ledger.abstained_foreign_workspace())
            return
        ids = [p.pack.id for p in active.packs]
        self._log(ledger.activated(ids, len(active.rows), active.threshold))

    def _refuse(self, reason: str) -> None:
        if self.active is not None and reason not in self.active.refused:
            self.active.refused.append(reason)
        log.warning("search-suggester: pack refused: %s", reason)
        self._log(ledger.pack_refused(reason))

    @property
    def pack_errors(self) -> list[str]:
        """Why packs or candidates were refused."""
        return list(self.active.refused) if self.active is not None else []

    @fail_open(lambda: None, "activation failed; it is retried at the next call", forget_packs=True)
    def start(self) -> None:
        """Activate the packs now (no listing: a few ``stat`` calls and the packs read), so the
        ``activated`` or ``abstained foreign-workspace`` ledger line is the session's first: the
        front ends call it once ``initialize`` is answered (or on a thread of their own) and
        before they answer any call. Idempotent; fail-open (an error counts in ``errors`` and
        the activation is retried at the next call)."""
        if self.active is None:
            t0 = time.perf_counter()
            self.activate()
            self.activation_ms = round((time.perf_counter() - t0) * 1000, 1)

    @fail_open(lambda: None, "activation failed; it is retried at the next call", forget_packs=True)
    def warm(self) -> None:
        """Activate and prepare now (start-up, off the request path); fail-open."""
        t0 = time.perf_counter()
        self.activate()
        self.prepare()
        self.activation_ms = round((time.perf_counter() - t0) * 1000, 1)

    def reconfigure(self, config: SuggesterConfig) -> None:
        """Hot-reload the volatile knobs (every knob but ``persistPath``/``refreshOnBoot``):
        thresholds, caps and windows apply from the next call; ``logFile`` moves the ledger;
        ``builtinPacks`` re-activates the packs."""
        old, self.config = self.config, config
        if config.log_file != old.log_file:
            self.ledger.path = self._ledger_path(config)
        if config.builtin_packs != old.builtin_packs:
            self.invalidate()
            self.warm()

    def invalidate(self) -> None:
        """Forget the packs and cached lookups (``dsh/toolsChanged``); the prepared targets stay
        until the next preparation replaces them. An activation running on another thread
        when this is called is discarded and read again."""
        self._generation += 1
        self.active = None
        if self.prepared is not None:
            self.prepared.symbols.clear()
        self.section.invalidate()

    # ------------------------------------------------------------------ the prepared targets

    def _graph(self) -> WorkspaceView | None:
        """The current workspace graph (``None``: none, or it still lists)."""
        if self.workspace is None:
            return None
        try:
            return self.workspace()
        except Exception:
            log.warning("search-suggester: the workspace graph is unavailable", exc_info=True)
            return None

    def _listing_unverified(self) -> bool:
        """Whether the current graph's listing is a past session's, not walked again yet
        (``workspace/listingcache.py``)."""
        graph = self._graph()
        return graph is not None and getattr(graph, "verified", True) is False

    def _symbols(self) -> WorkspaceView | None:
        """The workspace graph once its symbol pass has finished, else ``None``."""
        graph = self._graph()
        return graph if graph is not None and graph.symbols is not None else None

    def prepare(self, graph: WorkspaceView | None = None) -> bool:
        """Resolve every intent's call-independent targets over the workspace listing (the
        graph's, else one listing of our own) and swap them in; ``False`` when there is
        nothing to prepare yet (no packs, or a graph source without a listing). Preparations
        from several threads (the graph's, the content index's) run one at a time, so the last
        one — with the newest listing and facts — is the one that stays."""
        with self._preparing:
            self.activate()
            if self.root is None or not self.rows:
                return False
            listed = prepared.listing(
                self.root, graph if graph is not None else self._graph(), self.workspace is not None
            )
            if listed is None:
                return False  # the server's graph is still listing: prepared when it is
            targets, refusals = prepared.prepare(
                self.root, self.rows, *listed, self.content, self.tables_cache, self._listing_unverified
            )
            for reason in refusals:
                self._refuse(reason)
            self.prepared = targets
            if self.tables_cache is not None:
                self.tables_cache.flush()  # a miss's file, once the targets are in
            self._seed_knowledge()
            return True

    def after_ready(self) -> None:
        """The workspace is ready: the missing-path tables built on a thread of their own."""
        if self.prepared is not None:
            self.prepared.index.meant_soon()

    def _seed_knowledge(self) -> None:
        """The offline seed (plan, "The learning") over the built-in packs' prepared targets of
        the intents no repo/user pack overrode; ``learn: false`` or ``seed: false`` skip it."""
        self.proves = graph_prover(self._graph()) or self.proves
        if not (self.config.learn and self.config.seed) or self.prepared is None:
            return
        builtin = {p.pack.id for p in self.packs if p.origin == "builtin"}
        ready = {
            intent: self.prepared.targets.get(intent, [])
            for intent, rows in self.rows.items()
            if rows and all(r.pack_id in builtin for r in rows)
        }
        self.seeded += seed(self.knowledge, ready, self.proves)

    def workspace_changed(self, change: WorkspaceChange) -> bool:
        """One batch of changed files, as the workspace applied it (``workspace/projection.py``):
        the prepared targets follow it in O(changed files) (``prepared.apply_change``: copy on
        write, swapped in whole), the paths it added or removed go to the tables' journal and
        the section is rebuilt at its next use; ``False`` when a full preparation must follow
        (everything changed, the docs roots may move). Off the request path (the targets thread)."""
        with self._preparing:
            old = self.prepared
            if change.full or old is None or self.active is None:
                return False
            applied = prepared.apply_change(old, change, self.rows)
            if applied is None:
                return False
            new, refusals = applied
            for reason in refusals:
                self._refuse(reason)
            self.prepared = new
            if self.tables_cache is not None:
                self.tables_cache.note(old.index, change)
        self.section.invalidate()
        return True

    def files_changed(self, changed: list[str] | None) -> None:
        """Files changed (``didChangeWatchedFiles``, already applied to the graph): the prepared
        targets follow ``changed`` (repo-relative paths) as :meth:`workspace_changed` follows a
        batch, which paths were added, removed or modified read from the graph's listing (their
        content facts and symbol names unknown here: the cached symbol lookups are dropped);
        ``None``, or no graph to read, prepares them all again. Called off the request path."""
        if self.active is None or self.prepared is None:
            return
        change = self._change_of(changed) if changed is not None else None
        if change is None or not self.workspace_changed(change):
            self.prepare()
            self.section.invalidate()
            return
        if self.prepared is not None:
            self.prepared.symbols.clear()

    def _change_of(self, changed: list[str]) -> WorkspaceChange | None:
        """The batch of ``changed`` paths as the graph now lists them, against the prepared
        index; ``None`` without a graph."""
        from dsh_sidecar.workspace.projection import WorkspaceChange

        graph, snapshot = self._graph(), self.prepared
        if graph is None or snapshot is None:
            return None
        kinds_now = graph.kind_map()
        added, removed, modified, kinds = set(), set(), set(), {}
        for path in changed:
            listed, known = path in kinds_now, snapshot.index.exists(path)
            if listed and not known:
                added.add(path)
            elif known and not listed:
                removed.add(path)
            elif listed:
                modified.add(path)
            if listed and kinds_now[path] != snapshot.index.kind(path):
                kinds[path] = kinds_now[path]
        return WorkspaceChange(
            added=frozenset(added),
            removed=frozenset(removed),
            modified=frozenset(modified),
            kinds=cast(Any, kinds),
        )

    # ------------------------------------------------------------------ the call (context.Service)

    @fail_open(list, "internal error; the call passes through silently")
    def post_execute(self, params: PostExecuteParams) -> list[AdditionalContext]:
        """At most one note for this tool call (``pipeline.py``). A call held back because a
        part of the index it needs is still being built waits for that part within
        :meth:`wait_budget` (blocking this thread) and is decided again."""
        self.counters["calls"] += 1
        self.ledger.drain()
        q = pipeline.read(params)
        if q is None:
            return []
        ctx = self._context(params)
        escapes = len(ctx.prepared.index.refused) if ctx.prepared is not None else 0
        with readiness.recording() as asked:
            decision = pipeline.run(q, ctx)
        parts = _held_for(decision, ctx, asked, q)
        first = params.wait_ms is None and not self._waited  # held back now: its note is owed
        if _not_ready(decision) or parts:
            budget = self.wait_budget(params)
            # the first call's wait is spent by the first call held back or seen without targets
            self._waited = True
            deadline = time.monotonic() + budget
            # wait for what the decision lacked, decide again on a new view; a part the new
            # decision lacks (the symbol pass, once the targets it waited for are prepared) is
            # waited for too, within the same budget. A part that finished since the view was
            # taken is waited for at once: the view is taken again, never given up on
            while parts and time.monotonic() < deadline and self._wait_for(parts, deadline - time.monotonic()):
                ctx = self._context(params)
                with readiness.recording() as asked:
                    decision = pipeline.decide(ctx.paths.relative(q), ctx)
                escapes = len(ctx.prepared.index.refused) if ctx.prepared is not None else 0
                parts = _held_for(decision, ctx, asked, q)
        if ctx.prepared is not None and len(ctx.prepared.index.refused) > escapes:
            # a name the call led to that resolves outside the workspace (a symlink): refused
            # like a pack's candidate, and said so once a preparation
            for rel in ctx.prepared.index.refused[escapes:]:
                self._refuse(f"candidate {rel}: resolves outside the workspace")
        return self.owed.settle(pipeline.deliver(decision, ctx), decision, q, params, first)

    def wait_budget(self, params: PostExecuteParams) -> float:
        """How long (s) this call may wait for the index it needs: its ``waitMs``; without one,
        ``firstCallWaitMs`` for the first call of this start held back by readiness, 0 after."""
        if params.wait_ms is not None:
            return params.wait_ms / 1000
        return 0.0 if self._waited else self.config.first_call_wait_ms / 1000

    @fail_open(lambda: False, "internal error reading the index's readiness; the call does not wait")
    def may_wait(self, params: PostExecuteParams) -> bool:
        """Whether :meth:`post_execute` may block for this call (a part of the index is still
        being built and the call has time to wait for it): a server then runs it off its
        event loop. Fails open (``False``): the call is answered at once."""
        return self.config.enabled and self.wait_budget(params) > 0 and bool(self.pending())

    def _wait_for(self, parts: set[str], budget_s: float) -> bool:
        """Block until none of ``parts`` is pending (``True``), at most ``budget_s`` seconds."""
        deadline = time.monotonic() + budget_s
        while parts & self.pending():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(WAIT_POLL_S, left))
        return True

    def pending(self) -> frozenset[str]:
        """The parts of the workspace index still being built (``readiness.py``): the targets
        before their first background preparation (an in-process suggester prepares them in the
        call; a workspace no pack applies to has none to prepare); the symbol pass while a graph
        source builds it; the content index until its first sync, and the targets prepared
        before it until they are prepared again. A part the owner no longer builds (a failed or
        cancelled build, no FTS5) is not pending: nothing is while the owner builds nothing."""
        if not self.indexing():
            return frozenset()
        out: set[str] = set()
        snapshot = self.prepared
        active = self.active
        if snapshot is None and self.background and self.root is not None and (active is None or active.rows):
            out.add(readiness.TARGETS)
        if self.workspace is not None and self._symbols() is None:
            out.add(readiness.SYMBOLS)
        content = self.content
        if content is not None and (content.pending or (snapshot is not None and snapshot.content_pending)):
            out.add(readiness.CONTENT)
        return frozenset(out)

    def _context(self, params: PostExecuteParams, state: SessionState | None = None) -> Context:
        """The call's snapshot of the prepared targets and the workspace (``context.py``);
        ``state``: the session's noise state (default: the call's session's). What is still being
        built is read first: a part it does not list is in the view taken after it."""
        pending = self.pending()
        snapshot = self.prepared
        symbols = self._symbols()
        paths, ws = self._views(snapshot, symbols, self.content)
        return Context(
            params,
            state if state is not None else self.noise.session(params.session_id),
            self.config,
            snapshot,
            paths,
            symbols,
            ws,
            self.content,
            self.knowledge,
            self.dismissals,
            self.sinks,
            self,
            pending,
        )

    def _views(
        self, snapshot: PreparedTargets | None, symbols: WorkspaceView | None, content: ContentView | None
    ) -> tuple[WorkspacePaths, evidence.Workspace]:
        """The call's path mappings and evidence view of these parts of the index, made again only
        when one is another object than the last call's (both only read the parts they were made of)."""
        index = symbols.symbols if symbols is not None else None  # the view holds the graph's symbol index
        kept = self._kept_views
        if kept is not None and kept[0] is snapshot and kept[1] is symbols and kept[2] is index and kept[3] is content:
            return kept[4], kept[5]
        paths = WorkspacePaths(self.root, snapshot.index if snapshot is not None else None)
        ws = evidence_view(snapshot, symbols, content)
        self._kept_views = (snapshot, symbols, index, content, paths, ws)  # one tuple: swapped whole, whichever thread
        return paths, ws

    def active_rows(self) -> dict[str, list[CompiledRow]]:
        """The active pack rows per intent, the packs activated first when they are not."""
        self.activate()
        return self.rows

    def prepared_now(self) -> PreparedTargets | None:
        """The prepared targets. Without a background preparation (no live graph builder) they
        are prepared now, on first use; with one, ``None`` until it has run (never waits: a
        call waits in :meth:`post_execute`, within its bound)."""
        if self.prepared is None and not self.background:
            self.prepare()
        return self.prepared

    def regex_budget_used(self) -> None:
        """Report, once a process, a call whose untrusted pack regexes used up their budget."""
        if not self._slow_call_reported:
            self._slow_call_reported = True
            self._refuse(
                f"untrusted pack regexes used the {CALL_BUDGET_S * 1000:g} ms budget of a call; "
                "the remaining signals count as no match"
            )

    @fail_open(lambda: None, "internal error building the section; none sent")
    def section_text(self, session_id: str | None) -> str | None:
        """The sticky section text (``section.py``), ``None`` when ``sectionMode`` is off or
        nothing applies to the workspace."""
        if self.config.section_mode != "sticky" or self.root is None:
            return None
        if not self.active_rows() or self.prepared_now() is None:
            return None
        return self.section.get(session_id, self._build_section)

    def _build_section(self, intent: str | None) -> str | None:
        self.proves = graph_prover(self._graph()) or self.proves
        assert self.prepared is not None
        learned = self.knowledge if self.config.learn else None
        return section.build(
            intent,
            self.prepared,
            self.rows,
            self.dismissals,
            learned,
            self.proves,
            self.config.max_targets,
            self.repo_prose,
        )

    def dismiss(self, family: str, path: str | None) -> tuple[str, str]:
        """Record a durable dismissal; return ``(record line, expiresAt ISO-8601)``. Raises
        ``ValueError`` for an unknown family (not one of the ten intents)."""
        record, expires = self.dismissals.dismiss(family, path)
        self.ledger.write(record)
        self.section.invalidate()  # the section must not keep listing what was dismissed
        return record, iso_seconds(expires)

    def flush(self) -> bool:
        """Write pending knowledge now (``shutdown``); see :meth:`Knowledge.flush_now`."""
        return self.knowledge.flush_now()

    # ------------------------------------------------------------------ status

    def learning_status(self) -> dict[str, object]:
        """Learning counters and the knowledge path (``status.py``)."""
        return status.learning_of(self)

    @property
    def ready(self) -> bool:
        """Whether the targets are prepared (or nothing is to prepare: no workspace, no pack)."""
        return self.prepared is not None or self.root is None or (self.active is not None and not self.active.rows)

    def status(self) -> dict[str, Any]:
        """Counters, packs and the ledger path for ``dsh/status`` (``status.py``)."""
        return status.status_of(self)


def _not_ready(decision: Decision) -> bool:
    """Whether ``decision`` holds a call back because a part of the index is still being built."""
    return isinstance(decision, Suppressed) and decision.reason == "not-ready"


def _held_for(decision: Decision, ctx: Context, asked: set[str], q: Query) -> set[str]:
    """The parts of the index being built when ``ctx`` was taken that ``decision`` lacked (what
    a call with time left waits for, then decides again): those its readiness asked for when it
    is held back as not ready; the targets when the view had none and no note came of it, for
    a search with patterns (``grep -r x pkg/``: without the listing its folder is missing, and
    it is no call the search trigger can read), or a call with its own ``waitMs`` naming
    anything a trigger reads against the listing (a script, a traceback's frames, a missing
    file a wrong guess looks for). An early read or ``ls`` without its own bound is answered at
    once: waiting each for the targets would cost it up to the first call's bound. Nothing
    otherwise."""
    if _not_ready(decision):
        return asked & ctx.pending
    if (
        readiness.TARGETS in ctx.pending
        and not isinstance(decision, Note)
        and (q.patterns or q.name_patterns or (ctx.params.wait_ms is not None and _names_anything(q)))
    ):
        return {readiness.TARGETS}
    return set()


def _names_anything(q: Query) -> bool:
    """Whether the call names a path, a pattern, a script or frames (``make build`` does not)."""
    return bool(q.patterns or q.name_patterns or q.scope or q.reads or q.keys or q.script_code or q.frames)
