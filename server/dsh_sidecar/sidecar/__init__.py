"""The composition root: builds the three cores from one config and answers each method.

Knows nothing of JSON-RPC: the server's handlers validate params into protocol models, call
one method here, and send back ``.wire()`` of the result. The CLI uses the same object.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any

from dsh_protocol import PostExecuteParams, PostExecuteResult

from dsh_sidecar.bandit import StrategyBandit
from dsh_sidecar.config import SidecarConfig, dsh_home, overlay_config
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.paths import workspace_cache
from dsh_sidecar.redact import Redactor
from dsh_sidecar.router import Router
from dsh_sidecar.router.sharing import share_router
from dsh_sidecar.runstate import RunFile
from dsh_sidecar.sidecar.asked import AskedMethods
from dsh_sidecar.sidecar.fleetexit import FleetExit
from dsh_sidecar.sidecar.owed import PromptIndex
from dsh_sidecar.sidecar.search import SearchMethods, build_search_models
from dsh_sidecar.sidecar.status import StatusMethods
from dsh_sidecar.state.fleet import open_state
from dsh_sidecar.suggester import Suggester, SuggesterConfig
from dsh_sidecar.suggester.config import STRUCTURAL_KEYS
from dsh_sidecar.suggester.query import warm_shell_parser
from dsh_sidecar.suggester.tablecache import TablesCache
from dsh_sidecar.workspace import WorkspaceGraph, fsguard
from dsh_sidecar.workspace.cachenames import index_stem
from dsh_sidecar.workspace.identity import fleet_identity
from dsh_sidecar.workspace.projection import WorkspaceProjection

log = logging.getLogger(__name__)
#: Where the bandit seed's ``[bandit-search]`` lines are logged, at INFO (a server's stderr
#: shows them with ``--log-level INFO``; the client gets them as ``window/logMessage``).
bandit_log = logging.getLogger("dsh_sidecar.bandit")

#: Longest wait (s) of the search path's preparation for the workspace projection it lets go
#: first (graph, content index, the suggester's targets: a 200k-file tree lists and indexes its
#: symbols in about this long, bench/build_pauses.py).
WARM_AFTER_GRAPH_S = 60.0
#: Seconds the search path's preparation lets pass after the projection is built: the calls a
#: client held back until then (a `dsh/status` poll for ready, a waiting where_is) come first.
WARM_AFTER_READY_S = 0.5
#: Longest wait (s) of the search path's preparation for the server's first answered call: a
#: harness calls its hooks as soon as the server is up (Claude Code's SessionStart, the first
#: PostToolUse), and the preparation's imports (the shell parser, httpx: ~0.2 s of CPU) would
#: take the GIL from those first answers (bench/mcp_start.py).
WARM_AFTER_FIRST_CALL_S = 1.0
#: Longest wait at exit for a cancelled workspace build to stop, s (:meth:`Sidecar.aclose`).
QUIESCE_S = 2.0

LogSink = Callable[[str], None]


def _no_sink(line: str) -> None:
    """The log sink of a sidecar nobody reads the lines of (an MCP server)."""


class Sidecar(AskedMethods, SearchMethods, StatusMethods):
    """The router, the bandit and the suggester for one workspace.

    ``log_sink`` receives every seed log line (bandit) and ledger line (suggester);
    ``force_suggester`` runs the suggester even when ``suggester.enabled`` is false (the CLI's
    ``suggest`` command); ``echo_stderr`` false keeps the bandit's seed line out of the process's
    log (logged at INFO otherwise, on the ``dsh_sidecar.bandit`` logger: a server's stderr with
    ``--log-level INFO``; the CLI shows it with ``--verbose`` through ``log_sink``); ``warm_search`` (the LSP and MCP
    servers) imports the search path's libraries and builds its HTTP client and bandit
    generators on a ``dsh-search-prepare`` thread at once, instead of in the first search;
    ``docs_root`` is the project whose docs the offline docs index holds (default: ``workspace``);
    ``server_kind`` (``serve``, ``mcp``) announces a running server in ``$DSH_HOME/run/`` for
    ``dsh-search status`` (:mod:`dsh_sidecar.runstate`). With the suggester on, its packs are
    activated here and its ``activated`` (or ``abstained foreign-workspace``) ledger line written
    before anything else of it; ``start_suggester`` false leaves that to the owner, which calls
    :meth:`start_suggester` (a front end whose construction is on the ``initialize`` reply's path
    runs it on a thread: every call waits for the activation, so the line still comes first).
    ``sink_thread`` (a ``threading.get_ident()``) is the thread ``log_sink`` is called on for
    ledger lines (the event loop's, when the sidecar is built on another thread; default: the
    constructing thread): lines written elsewhere wait for it (:meth:`drain_ledger`).
    ``router``: the router, when the owner built it first (from ``config.router``, ``env`` and
    the docs root this sidecar uses: the MCP server answers a first ``web_search`` with it
    while the rest is built); else it is built here.
    """

    def __init__(
        self,
        config: SidecarConfig,
        workspace: Path | None,
        env: Mapping[str, str],
        log_sink: LogSink | None = None,
        force_suggester: bool = False,
        echo_stderr: bool = True,
        warm_search: bool = False,
        docs_root: Path | None = None,
        server_kind: str | None = None,
        start_suggester: bool = True,
        sink_thread: int | None = None,
        router: Router | None = None,
    ) -> None:
        self.config = config
        self.sink_thread = sink_thread if sink_thread is not None else threading.get_ident()
        self.env = dict(env)
        #: Why the workspace folder is refused (``/``, ``$HOME``…), or ``None`` (docs/SECURITY.md, class 7).
        self.workspace_refused = fsguard.root_refusal(workspace, self.env.get("HOME"))
        if self.workspace_refused is not None:
            log.warning("%s", self.workspace_refused)
            workspace = None
        self.workspace = workspace
        self.home = dsh_home(self.env)
        #: The per-repository workspace indexes (rebuildable: the platform cache directory).
        self.index_dir = workspace_cache(self.env)
        self.log_sink = log_sink or _no_sink
        self.force_suggester = force_suggester
        self.shared = open_state(config.state)  # None: files under $DSH_HOME (docs/fleet.md)
        self.echo_stderr = echo_stderr
        # the offline docs index (when local is in the chain) holds this project's docs
        self.docs_root = docs_root if docs_root is not None else workspace
        self.router, self.bandit = self._search_cores(config, router)
        # a long-lived server (warm_search) imports httpx and builds the HTTP client on a thread,
        # so its first search never waits for them; a one-shot CLI command does not pay for what it may never use. With the suggester on, it
        # waits for the workspace graph: the suggester's first notes come before any of it
        self._search_warm: threading.Thread | None = None
        #: A first search's preparation (its loop and future), shared by the searches waiting.
        self._preparing: tuple[asyncio.AbstractEventLoop, asyncio.Future[None]] | None = None
        self._closing, self._exit = threading.Event(), FleetExit(self.shared, server_kind) if self.shared else None
        #: ``dsh/postExecute`` calls one at a time, in order (:meth:`post_execute_async`; the tasks queued by :meth:`post_execute_soon`)
        self._calls, self._queued = asyncio.Lock(), deque[asyncio.Future[PostExecuteResult]]()
        #: set when the first call is answered (the search path's preparation waits for it)
        self._answered = threading.Event()
        # the background index and its readiness (workspace/projection.py): the graph, the
        # content index and the heap freezer; it prepares the suggester's targets as they change
        self.projection = WorkspaceProjection(workspace, self.index_dir, lambda: self.suggester)
        self.suggester = self._make_suggester(config.suggester)
        if self._suggesting(config.suggester):
            if start_suggester:  # its `activated` ledger line first, before any call is answered
                self.suggester.start()
            self.projection.start()
        if warm_search:
            self._search_warm = threading.Thread(target=self._warm_search, name="dsh-search-prepare", daemon=True)
            self._search_warm.start()
        self.run_file: RunFile | None = None
        if server_kind is not None:
            self.run_file = RunFile(self.env, server_kind, self._run_snapshot)
            self.run_file.start()

    def _search_cores(self, config: SidecarConfig, router: Router | None = None) -> tuple[Router, StrategyBandit]:
        """The router (``router``, built by the owner from ``config.router``, this sidecar's
        environment and docs root, or built here) and the bandit of ``config``,
        on the fleet's shared state when there is one (the router's redactor is the sidecar's
        before the bandit may log)."""
        if router is None:
            router = Router.from_config(config.router, self.env, docs_root=self.docs_root)
        share_router(router, self.shared)
        self.redactor: Redactor = router.redactor
        bandit = StrategyBandit(
            router, config.bandit, log=self._bandit_log, home=self.home, log_wanted=self._bandit_log_wanted
        )
        if self.shared is not None and config.bandit.persist:  # persist: false stays in memory
            bandit.store.share(self.shared, bandit.policy)
        return router, bandit

    def _warm_search(self) -> None:
        # the first answer first, then the suggester's build (its first notes need the graph),
        # then the shell parser and the search path
        first = time.monotonic() + WARM_AFTER_FIRST_CALL_S
        while not self._answered.is_set() and time.monotonic() < first:
            if self._closing.wait(0.02):
                return
        # the whole projection (not the graph alone: the content index and the targets follow it)
        # is ready first: a later session on an unchanged tree is ready in a second of CPU, and
        # these imports (~0.3 s of CPU) would land inside it
        deadline = time.monotonic() + WARM_AFTER_GRAPH_S
        while self.projection.building() and time.monotonic() < deadline:
            if self._closing.wait(0.1):
                return
        # a client that waited for the projection (dsh/status, where_is) calls right after it;
        # with none to build (no workspace, the suggester off) nobody waits for one
        if self._builds_projection() and self._closing.wait(WARM_AFTER_READY_S):
            return
        if self._suggesting(self.config.suggester):
            try:
                warm_shell_parser()
            except Exception:  # the first shell line meets (and falls back from) the same failure
                log.debug("importing the shell parser failed", exc_info=True)
        try:
            router = self.router
            router.warm()
            while self.router is not router:  # a reconfigure while warming: one client still
                new = self.router
                if not new.adopt_client(router) and router.client is not None and router.client is not new.client:
                    asyncio.run(router.client.aclose())  # never used: no connection to wait for
                router = new
                router.warm()
            self.bandit.prepare()
            build_search_models()
        except Exception:  # a first search will meet (and report) the same failure
            log.debug("preparing the search path failed", exc_info=True)
        self._prune_cache()

    def _prune_cache(self) -> None:
        """Prune the index cache when a day has passed since a server last did
        (:func:`dsh_sidecar.cachedir.prune_if_due`), this server's own workspace indexes marked
        used first (an unchanged tree rewrites none of them); one log line when something went."""
        from dsh_sidecar.cachedir import prune_if_due  # after the first answers (the search path's preparation)

        try:
            in_use = None
            if self.workspace is not None:
                in_use = index_stem(self.workspace).rsplit("-", 1)[1]
            removed = prune_if_due(self.env, in_use=in_use)
        except Exception:  # a cache that cannot be pruned is rebuilt or pruned another time
            log.debug("pruning the index cache failed", exc_info=True)
            return
        if removed is not None and removed.paths:
            log.info(
                "pruned %d index files (%d KiB) of gone or unused workspaces", len(removed.paths), removed.bytes // 1024
            )

    def _suggesting(self, cfg: SuggesterConfig) -> bool:
        return cfg.enabled or self.force_suggester

    def _builds_projection(self) -> bool:
        """Whether this sidecar builds a workspace projection (a workspace, the suggester on)."""
        return self.workspace is not None and self._suggesting(self.config.suggester)

    def _graph(self) -> WorkspaceGraph | None:
        return self.projection.graph

    def _make_suggester(self, cfg: SuggesterConfig) -> Suggester:
        # the graph and content index are built here in the background: the graph's thread
        # prepares the suggester's targets when it has listed the workspace
        suggester = Suggester(
            self.workspace,
            cfg,
            self.home,
            sink=self.log_sink,
            workspace=self._graph,
            content=self.projection.content,
            background=True,
            indexing=self.projection.building,
            sink_thread=self.sink_thread,
            tables_cache=TablesCache(self.index_dir, self.workspace) if self.workspace is not None else None,
        )
        if self.shared is not None and self.workspace is not None:  # no workspace: nothing to key it by
            # a path is no identity a fleet can share: a history-less repository gets this
            # machine's own id (workspace/identity.py, fleet_identity), minted off the request path
            root, home, identity = self.workspace, self.home, suggester.identity
            suggester.knowledge.share(self.shared, lambda: fleet_identity(identity, root, home))
        if self.projection.graph is not None:  # a rebuilt core (structural knob): prepare it off the request path
            threading.Thread(target=suggester.warm, name="dsh-suggester-prepare", daemon=True).start()
        return suggester

    @cached_property
    def prompt_index(self) -> PromptIndex:
        """The index as a section or a task lead sees it, and the task leads owed (owed.py)."""
        return PromptIndex(self)

    def drain_ledger(self) -> None:
        """Pass the ledger lines written on other threads (the activation on a build thread, a
        call run on a worker thread) to ``log_sink``; on :attr:`sink_thread` only (elsewhere
        nothing happens)."""
        self.suggester.ledger.drain()

    def start_suggester(self) -> None:
        """Activate the suggester (writing its first ledger line) when it is on; fail-open."""
        if self._suggesting(self.config.suggester):
            self.suggester.start()

    def wait_for_graph(self, timeout_s: float) -> bool:
        """Block until the workspace graph (with its symbol index) is built; ``True`` if it is."""
        return self.projection.wait_for_graph(timeout_s)

    def report_graph_progress(self, progress: Callable[[int, int], None] | None) -> None:
        """Send the graph builds' ``progress(done, total)`` (large workspaces only; called from
        the builder's thread) to ``progress``; a running build is replayed to it."""
        self.projection.report_progress(progress)

    def files_changed(self, paths: list[str] | None) -> None:
        """``workspace/didChangeWatchedFiles``: queue the graph refresh of those paths (``None``:
        rebuild); the graph, content index and suggester targets follow in the background, so
        no call ever waits for a re-index."""
        self.projection.files_changed(paths)

    def _bandit_log(self, line: str) -> None:
        line = self.redactor(line)
        if self.echo_stderr:
            bandit_log.info("%s", line)
        self.log_sink(line)

    def _bandit_log_wanted(self) -> bool:
        """Whether a search's seed line goes anywhere (docs/bandit.md, "The log line"): to
        the client (``log_sink``, as ``logMessages`` allows: ``none`` sends none) or to the log
        at INFO (``--log-level INFO``). Nothing else asks for it, so with ``logMessages: none``
        at the default WARNING level a search costs no log line at all."""
        if self.echo_stderr and bandit_log.isEnabledFor(logging.INFO):
            return True
        return self.log_sink is not _no_sink and self.config.log_messages != "none"

    # ------------------------------------------------------------------ methods

    def post_execute(self, params: PostExecuteParams) -> PostExecuteResult:
        """``dsh/postExecute``: at most one note; silence when the suggester is off. The note
        is safe for the model's context as the suggester writes it (``suggester/notes.py``:
        escaped, the repository pack's prose quoted, display forms beside the exact paths). A
        call whose note needs a part of the workspace index still being built may wait for it
        within its bound, blocking this thread (an event loop calls :meth:`post_execute_async`)."""
        try:
            if not (self.config.suggester.enabled or self.force_suggester):
                return PostExecuteResult()
            contexts = self.suggester.post_execute(params)
            if not contexts:  # one note per call: an owed task lead goes with a call that has none
                contexts = self.prompt_index.lead_for(params.session_id, self.suggester, self.drain_ledger)
            return PostExecuteResult(additional_contexts=contexts)
        finally:
            self._answered.set()

    async def post_execute_async(self, params: PostExecuteParams) -> PostExecuteResult:
        """:meth:`post_execute` for an event loop: calls are answered in the order they came, and
        one that may wait for the workspace index (a fresh server's first call, or ``waitMs``) runs
        on a worker thread meanwhile (cancelled, it still holds later calls until that ends)."""
        async with self._calls:
            if not self.suggester.may_wait(params):
                return self.post_execute(params)
            work = asyncio.ensure_future(asyncio.to_thread(self.post_execute, params))
            try:  # a cancellation (shutdown's) cannot stop its thread: the lock is kept until it is done
                return await asyncio.shield(work)
            finally:
                await asyncio.wait([work])
                self.drain_ledger()  # its ledger lines, for the sink on this thread

    def post_execute_soon(self, params: PostExecuteParams) -> PostExecuteResult | asyncio.Future[PostExecuteResult]:
        """:meth:`post_execute_async` without a task where none is needed: the answer itself
        when no earlier call is queued or running and this one will not wait for the index
        (the usual call), else its task, kept until it is done so that later calls queue
        behind it (answered in the order they came)."""
        queued = self._queued
        while queued and queued[0].done():
            queued.popleft()
        if not queued and not self._calls.locked() and not self.suggester.may_wait(params):
            return self.post_execute(params)
        task = asyncio.ensure_future(self.post_execute_async(params))
        queued.append(task)
        return task

    def projection_pending(self) -> bool:
        """Whether the suggester's targets, the graph or the content index are still being
        built (a call that answers from all of them waits: :meth:`wait_for_graph`)."""
        return self.projection.pending()

    def section_pending(self) -> bool:
        """Whether :meth:`assemble_section` would wait for the projection (the suggester on, the
        sticky section on and the projection pending)."""
        on = bool(self.config.suggester.enabled or self.force_suggester)
        return on and self.config.suggester.section_mode == "sticky" and self.projection_pending()

    def shutdown(self) -> None:
        """LSP ``shutdown`` (and every other exit path: EOF, SIGTERM, ``exit`` without
        ``shutdown``): flush the suggester's knowledge file, the bandit's queued posterior
        writes and the buffered ledger lines (never raises; safe to call twice); on a fleet
        store, bounded (sidecar/fleetexit.py)."""
        if self._exit is None:
            self._flush_learning()
        else:
            self._exit.flush(self._flush_learning)
        try:
            self.suggester.ledger.flush()
        except Exception:
            log.warning("search-suggester: ledger flush at shutdown failed", exc_info=True)

    def _flush_learning(self) -> None:
        try:
            self.suggester.flush()
        except Exception:
            log.warning("search-suggester: knowledge flush at shutdown failed", exc_info=True)
        try:
            self.bandit.flush()
        except Exception:
            log.warning("bandit: state flush at shutdown failed", exc_info=True)

    def tools_changed(self) -> None:
        """``dsh/toolsChanged``: drop cached projections; the graph is rebuilt in the background
        while ``refreshOnBoot`` holds (plan, "The graph projection")."""
        self.suggester.invalidate()
        if self.config.suggester.refresh_on_boot and self.projection.graph is not None:
            self.projection.rebuild()  # a build under way goes on: the tree is not the tools

    def reconfigure(self, raw: Any) -> None:
        """``workspace/didChangeConfiguration``: validate the new blocks and apply them.

        Raises :class:`ConfigError` (and changes nothing) when the new config is invalid.
        """
        new = overlay_config(self.config, raw)
        if new.state != self.config.state:
            raise ConfigError("state", "the state backend is chosen at start; restart the sidecar to change it")
        if new.router != self.config.router:
            old = self.router
            self.router = Router.from_config(
                new.router, self.env, client=old.client, previous=old, docs_root=self.docs_root
            )
            # the warming thread may have made old's client after it was read above, and seen
            # no new router yet: take it here (the thread takes it when it sees this router)
            self.router.adopt_client(old)
            share_router(self.router, self.shared)
            self.redactor = self.router.redactor
            self.bandit.router = self.router
        self.bandit.config = new.bandit
        old_s = self.config.suggester
        if any(getattr(old_s, key) != getattr(new.suggester, key) for key in STRUCTURAL_KEYS):
            try:  # structural knobs (persistPath, refreshOnBoot) rebuild the core
                self.suggester.flush()
            except Exception:
                log.warning("search-suggester: knowledge flush before the rebuild failed", exc_info=True)
            self.suggester = self._make_suggester(new.suggester)
        else:  # every other suggester knob is volatile: hot reload
            self.suggester.reconfigure(new.suggester)
        if self._suggesting(new.suggester):
            self.suggester.start()  # turned on, or rebuilt: its activation line first
            self.projection.start_if_idle()
        self.config = new

    async def aclose(self) -> None:
        """Release the HTTP client, the bandit's decision log, the content index and the shared
        state (its queued writes are tried once more): :meth:`aclose_state`, then
        :meth:`aquiesce`."""
        await self.aclose_state()
        await self.aquiesce()

    async def aclose_state(self) -> None:
        """The state's part of :meth:`aclose`: the flushes' hand-over ended, the bandit's store
        and decision log closed, the HTTP client released and, for an MCP server (whose client
        kills it sooner: sidecar/fleetexit.py), the shared state closed."""
        self._closing.set()
        if self._exit is not None:
            self._exit.begin()  # nothing below waits for the store (see shutdown)
        if self.run_file is not None:
            self.run_file.remove()
        self.projection.close()
        self.bandit.close(self._exit.left() if self._exit is not None else None)
        try:
            await self.router.aclose()
        except Exception:  # `serve` closes on a new loop: the old one's connections raise, and skipped the rest
            log.debug("closing the router's connections failed", exc_info=True)
        if self._exit is not None and self._exit.before_quiesce:
            self._exit.close(self.bandit.store.abandon() + self.suggester.knowledge.abandon())

    async def aquiesce(self) -> None:
        """A workspace build still running is cancelled and waited for, at most
        :data:`QUIESCE_S`: the interpreter must not finalise under a background thread inside a
        native extension (google-re2's pybind11 module aborts the whole process then, exit
        status -6, instead of exiting 0). Then, for ``serve``, the shared state is closed (last:
        the background work may still write to it)."""
        await asyncio.to_thread(self._quiesce, QUIESCE_S)
        if self._exit is not None:  # once: an MCP server's is closed already
            self._exit.close(self.bandit.store.abandon() + self.suggester.knowledge.abandon())

    def _quiesce(self, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for the graph build, the content sync and the search
        path's preparation to stop."""
        t0 = time.monotonic()
        self.projection.quiesce(timeout_s)
        self.prompt_index.owed.join(max(0.0, timeout_s - (time.monotonic() - t0)))
        warm = self._search_warm
        if warm is not None:
            warm.join(max(0.0, timeout_s - (time.monotonic() - t0)))
