"""Thin handlers: validate params into a protocol model, call the sidecar, serialise.

A bad request gets a -32602 reply with its own id and a message naming the field; a request
before ``initialize`` gets -32002; the search failure gets -32001 with the router seed's
aggregated text and ``data.attempts``.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Generator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import dsh_protocol as wire  # the params models are imported by the sidecar's build (after initialize)
from dsh_protocol import ErrorCode, Method
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from dsh_sidecar import router as router_core
from dsh_sidecar.errors import ConfigError, RequestError, first_problem
from dsh_sidecar.lsp.app import InvalidRoot, SidecarServer, workspace_root
from dsh_sidecar.lsp.transport import RECEIVED_AT
from dsh_sidecar.options import Preflight, is_empty, merge_options, preflight_defaults, preflight_of

if TYPE_CHECKING:  # pydantic and the config models: imported after an initialize without options replies
    from pydantic import BaseModel

    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.sidecar import Sidecar

log = logging.getLogger(__name__)

M = TypeVar("M", bound="BaseModel")
T = TypeVar("T")


def invalid_params(message: str) -> JsonRpcInvalidParams:
    """A -32602 error with ``message``."""
    return JsonRpcInvalidParams(message=message)


def validate(model: type[M], params: Any) -> M:
    """Validate raw JSON params into ``model``; raise -32602 naming the first bad field."""
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise invalid_params("params must be an object")
    try:
        return model.model_validate(params, by_alias=True, by_name=False)
    except Exception as exc:
        from pydantic import ValidationError  # imported already: ``model`` is a pydantic model

        if not isinstance(exc, ValidationError):
            raise
        problem = first_problem(exc, unknown="unknown field")
        raise invalid_params(f"{problem.key or 'params'}: {problem.message()}") from None


def request_error(exc: RequestError) -> JsonRpcException:
    """The JSON-RPC error reply of a :class:`RequestError` the sidecar raised."""
    if exc.code == ErrorCode.INVALID_PARAMS:
        return invalid_params(exc.message)
    return JsonRpcException(code=exc.code, message=exc.message)


def search_failed(exc: router_core.AllProvidersFailed) -> JsonRpcException:
    """The -32001 reply of a search whose every provider failed: the seed's aggregated text,
    each provider's outcome (``data.attempts``) and whether it was an outage (``data.outage``:
    nothing configured or reachable, so nothing to learn from)."""
    return JsonRpcException(
        code=ErrorCode.SEARCH_FAILED,
        message=exc.message,
        data={"attempts": [a.wire() for a in exc.attempts], "outage": exc.outage},
    )


def build_wait_s(params: Any, received: float | None) -> float | None:
    """How long (s) a search may wait for the sidecar's build: until its ``deadlineMs`` (read
    from the raw params, before the model the build imports), less the router's reserve
    (``router/budget.py``), counted from ``received``; ``None`` (however long the build takes)
    without a usable ``deadlineMs``: the config's deadline is known once the build ends."""
    deadline_ms = params.get("deadlineMs") if isinstance(params, dict) else None
    if not isinstance(deadline_ms, int) or isinstance(deadline_ms, bool):
        return None
    from dsh_protocol.limits import MAX_DEADLINE_MS, MIN_DEADLINE_MS

    from dsh_sidecar.router.budget import deadline_reserve_ms

    if not MIN_DEADLINE_MS <= deadline_ms <= MAX_DEADLINE_MS:
        return None  # refused by the params model once built

    waited = time.monotonic() - received if received is not None else 0.0
    return max(0.0, (deadline_ms - deadline_reserve_ms(deadline_ms)) / 1000 - waited)


def post_wait_s(params: Any, received: float | None) -> float | None:
    """How long (s) a ``dsh/postExecute`` may wait for the sidecar's build: what is left of its
    ``waitMs`` (read from the raw params, before the model the build imports), counted from
    ``received``; ``None`` (however long the build takes, off the loop) without one."""
    wait_ms = params.get("waitMs") if isinstance(params, dict) else None
    if not isinstance(wait_ms, int) or isinstance(wait_ms, bool) or not 0 <= wait_ms <= 60_000:
        return None
    waited = time.monotonic() - received if received is not None else 0.0
    return max(0.0, wait_ms / 1000 - waited)


def deadline_before_build(chain: tuple[str, ...]) -> JsonRpcException:
    """The -32001 reply of a search whose deadline passed while the sidecar was still being
    built: every provider of the chain ``skipped: deadline`` (an outage), as the router answers
    a search whose deadline passes before any provider could be tried
    (``Router.deadline_passed``)."""
    from dsh_sidecar.router.outcomes import AGGREGATE_HEADER, DEADLINE_SKIP

    lines = [AGGREGATE_HEADER, *(f"- {pid}: {DEADLINE_SKIP}" for pid in chain)]
    if not chain:
        lines.append("- (no provider is configured or usable)")
    return JsonRpcException(
        code=ErrorCode.SEARCH_FAILED,
        message="\n".join(lines),
        data={"attempts": [{"provider": pid, "outcome": DEADLINE_SKIP, "ms": 0} for pid in chain], "outage": True},
    )


async def _awaited(future: asyncio.Future[T]) -> T:
    """``future``'s result, for a generator handler to yield (pygls runs it as a task, whose
    entry in the table of requests in flight :class:`.app.SidecarProtocol` drops once it ends)."""
    return await future


def built(server: SidecarServer) -> Generator[Any, Any, None]:
    """For a generator handler, ``yield from`` it first: a build still running is awaited off
    the event loop (pygls awaits the yielded wait, then resumes the handler), so the loop serves
    other messages meanwhile; reading :attr:`SidecarServer.sidecar` on the loop held every
    request until the build ended. Without a build running it yields nothing: the handler goes
    on at once, answered in order as a plain handler is."""
    if server.building():
        yield _awaited, (asyncio.ensure_future(server.sidecar_ready()),), {}


def require(server: SidecarServer) -> Sidecar:
    """The sidecar (its deferred build completed), or -32002 when ``initialize`` has not run,
    or -32603 when the build after ``initialize`` failed (logged then)."""
    sidecar = server.sidecar
    if sidecar is None:
        if server.build_error is not None:
            raise JsonRpcInternalError(message="Internal error")
        raise JsonRpcException(
            code=ErrorCode.SERVER_NOT_INITIALIZED, message="server not initialized: send initialize first"
        )
    return sidecar


def build_sidecar(ls: SidecarServer, config: SidecarConfig, root: Path | None, loop_thread: int) -> Sidecar:
    """The :class:`Sidecar` of an accepted ``initialize``; its secrets join the log filter.
    ``loop_thread``: the event loop's thread, where its ledger lines are sent (it may be built
    on another). Raises :class:`ConfigError` (the shared state backend cannot be opened)."""
    from dsh_sidecar.sidecar import Sidecar

    sidecar = Sidecar(
        config, root, ls.env, log_sink=ls.send_log_line, warm_search=True, server_kind="serve", sink_thread=loop_thread
    )
    ls.redactor.add(sidecar.router.secrets())
    return sidecar


def config_of(options: Any, config: SidecarConfig | None) -> SidecarConfig:
    """``config``, or when ``initialize`` had it checked without pydantic (``None``), the
    validated config of ``options`` (:func:`~dsh_sidecar.config.parse_config`: every default).
    Raises :class:`ConfigError` as ``parse_config`` does."""
    if config is not None:
        return config
    from dsh_sidecar.config import parse_config

    return parse_config(options)


def register(server: SidecarServer) -> None:  # noqa: C901, PLR0915  (a registration closure: one short nested handler per method)
    """Attach every handler to ``server``."""

    @server.feature(lsp.INITIALIZE)
    def on_initialize(ls: SidecarServer, params: lsp.InitializeParams) -> None:
        try:
            root = workspace_root(params)
            defaults = ls.config_for_root(root) if ls.config_for_root is not None else ls.config_defaults
            options = merge_options(defaults, params.initialization_options)
            config: SidecarConfig | None = None
            if not is_empty(options):  # every default otherwise: nothing to validate before the reply
                from dsh_sidecar.config import parse_config

                config = parse_config(options)
            # what the reply needs: the config checked (the environment's provider URLs and keys
            # included: the chain is resolved as the router resolves it) and every secret in the
            # log filter; without options this imports no pydantic (dsh_sidecar.options), and the
            # config is validated with the sidecar's build, right after the reply (cold start,
            # the cold start), unless opening a shared store can still refuse it
            check: Preflight | None
            if config is None:
                check = preflight_defaults(ls.env)
                shared = check.shared_state
            else:
                shared = config.state.shared
                check = None if shared else preflight_of(config, ls.env)
            if shared:  # opening the shared store can refuse the config: before the reply
                ls.sidecar = build_sidecar(ls, config_of(options, config), root, threading.get_ident())
            else:
                assert check is not None
                ls.redactor.add(check.secrets)
                ls.search_chain = tuple(spec.id for spec in check.chain)
                ls.start_config = config  # a session that ends during the build says so (ledger)
                loop_thread = threading.get_ident()
                ls.defer_sidecar(lambda: build_sidecar(ls, config_of(options, config), root, loop_thread))
        except ConfigError as exc:
            raise invalid_params(f"invalid initializationOptions: {exc}") from None
        except InvalidRoot as exc:
            raise invalid_params(str(exc)) from None
        ls.protocol.initialized_once = True  # a second initialize is refused (transport.dispatch)

    @server.feature(lsp.INITIALIZED)
    def on_initialized(ls: SidecarServer, params: Any) -> None:
        # the workspace graph builds in the background; a large one reports $/progress
        loop = asyncio.get_running_loop()

        def report_progress(sidecar: Sidecar | None) -> None:
            from dsh_sidecar.lsp.progress import GraphProgress, client_supports_progress  # after the reply

            if sidecar is not None:  # the activation's ledger line, written on the build's thread
                sidecar.drain_ledger()
                warn_skipped(ls, sidecar)
            if sidecar is not None and client_supports_progress(ls.client_capabilities):
                sidecar.report_graph_progress(GraphProgress(ls, loop))

        ls.after_build(report_progress)  # the build's thread: the loop serves on meanwhile

    @server.feature(Method.SEARCH)
    async def on_search(ls: SidecarServer, params: Any) -> dict[str, Any]:
        received = RECEIVED_AT.get()  # the deadline counts from the request's arrival
        if not await ls.built_within(build_wait_s(params, received)):  # a build past the deadline
            raise deadline_before_build(ls.search_chain)
        await ls.sidecar_ready()  # before the params model, which the build may be importing
        p = validate(wire.SearchParams, params)
        sidecar = require(ls)
        try:
            result = await sidecar.search(p, received_at=received)
        except router_core.AllProvidersFailed as exc:
            raise search_failed(exc) from None
        return result.wire()

    @server.feature(Method.ROUTE_SEARCH)
    async def on_route_search(ls: SidecarServer, params: Any) -> dict[str, Any]:
        received = RECEIVED_AT.get()
        if not await ls.built_within(build_wait_s(params, received)):  # as dsh/search
            raise deadline_before_build(ls.search_chain)
        await ls.sidecar_ready()
        p = validate(wire.RouteSearchParams, params)
        sidecar = require(ls)
        try:
            result = await sidecar.route_search(p)
        except router_core.AllProvidersFailed as exc:
            raise search_failed(exc) from None
        return result.wire()

    @server.feature(Method.SEARCH_PLAN)
    def on_search_plan(ls: SidecarServer, params: Any) -> Generator[Any, Any, dict[str, Any]]:
        yield from built(ls)  # before the params model, which the build may be importing
        p = validate(wire.SearchPlanParams, params)
        return require(ls).search_plan(p).wire()

    @server.feature(Method.SEARCH_REPORT)
    async def on_search_report(ls: SidecarServer, params: Any) -> dict[str, Any]:
        await ls.sidecar_ready()
        p = validate(wire.SearchReportParams, params)
        sidecar = require(ls)
        try:
            return (await sidecar.search_report(p)).wire()
        except RequestError as exc:
            raise request_error(exc) from None

    @server.feature(Method.SEARCH_FEEDBACK)
    async def on_search_feedback(ls: SidecarServer, params: Any) -> dict[str, Any]:
        await ls.sidecar_ready()
        p = validate(wire.SearchFeedbackParams, params)
        sidecar = require(ls)
        try:  # the pending-feedback write waits for another sidecar's lock: off the event loop
            return (await asyncio.to_thread(sidecar.search_feedback, p)).wire()
        except RequestError as exc:
            raise request_error(exc) from None

    @server.feature(Method.POST_EXECUTE)
    def on_post_execute(ls: SidecarServer, params: Any) -> Generator[Any, Any, dict[str, Any]]:
        if ls.building():  # waited for off the loop, within the call's waitMs: else silence
            wait = asyncio.ensure_future(ls.built_within(post_wait_s(params, RECEIVED_AT.get())))
            if not (yield _awaited, (wait,), {}):
                return {"additionalContexts": []}
        p = validate(wire.PostExecuteParams, params)
        answer = require(ls).post_execute_soon(p)
        if isinstance(answer, asyncio.Future):  # queued, or waits for the index off the loop: pygls
            answer = yield _awaited, (answer,), {}  # awaits the yielded task, then resumes
        return answer.wire()  # the usual call: answered at once, no task

    @server.feature(Method.DISMISS)
    async def on_dismiss(ls: SidecarServer, params: Any) -> dict[str, Any]:
        await ls.sidecar_ready()
        p = validate(wire.DismissParams, params)
        sidecar = require(ls)
        try:  # the knowledge write waits for another sidecar's lock: off the event loop
            return (await sidecar.dismiss_async(p)).wire()
        except RequestError as exc:
            raise request_error(exc) from None

    @server.feature(Method.ASSEMBLE_SECTION)
    async def on_assemble_section(ls: SidecarServer, params: Any) -> dict[str, Any]:
        await ls.sidecar_ready()
        p = validate(wire.AssembleSectionParams, params)
        return (await require(ls).assemble_section_async(p.session_id)).wire()  # waits off the loop

    @server.feature(Method.TASK_LEAD)
    async def on_task_lead(ls: SidecarServer, params: Any) -> dict[str, Any]:
        await ls.sidecar_ready()
        p = validate(wire.TaskLeadParams, params)
        return (await require(ls).task_lead_async(p)).wire()  # ranks (and waits) off the loop

    @server.feature(Method.STATUS)
    def on_status(ls: SidecarServer, params: Any) -> Generator[Any, Any, dict[str, Any]]:
        yield from built(ls)
        validate(wire.StatusParams, params)
        sidecar = require(ls)
        if sidecar.shared is not None:  # pygls awaits the yielded read (off the loop), then resumes
            # a shutdown meanwhile answers without the read
            with ls.protocol.answering_at_shutdown(lambda: sidecar.status().wire()):
                yield sidecar.read_fleet_cooldowns, (), {}
        return sidecar.status().wire()  # without a store: answered at once, in order

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: SidecarServer, params: Any) -> None:
        # a build still running is not waited for: answered at once, and the `exit` (or EOF,
        # a signal) that follows ends the process without it, its ledger saying `abstained
        # not-ready` (SidecarServer.end_before_start); a build that ends before that `exit` is
        # shut down then (run_stdio)
        if not ls.building() and ls.sidecar is not None:
            ls.sidecar.shutdown()

    @server.feature(Method.TOOLS_CHANGED)
    def on_tools_changed(ls: SidecarServer, params: Any) -> None:
        ls.after_build(lambda sidecar: sidecar.tools_changed() if sidecar is not None else None)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def on_did_change_configuration(ls: SidecarServer, params: lsp.DidChangeConfigurationParams) -> None:
        ls.after_build(lambda sidecar: reconfigure(ls, sidecar, params.settings))  # once built, in order

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def on_did_change_watched_files(ls: SidecarServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        paths = [to_fs_path(c.uri) or c.uri for c in params.changes]
        ls.after_build(lambda sidecar: sidecar.files_changed(paths) if sidecar is not None else None)


def reconfigure(ls: SidecarServer, sidecar: Sidecar | None, settings: Any) -> None:
    """``workspace/didChangeConfiguration`` on a built sidecar (``None``: not initialised, or
    its build failed: nothing to change); a refused change is a warning, the previous
    configuration kept."""
    if sidecar is None:
        return
    router = sidecar.router
    try:
        sidecar.reconfigure(settings)
        ls.redactor.add(sidecar.router.secrets())  # new keys are redacted in logs too
        if sidecar.router is not router:
            warn_skipped(ls, sidecar)
    except ConfigError as exc:
        message = f"configuration change refused, keeping the previous one: {exc}"
        log.warning(message)
        ls.send_log_line(message, lsp.MessageType.Warning)


def warn_skipped(ls: SidecarServer, sidecar: Sidecar) -> None:
    """Tell the client, as ``window/logMessage`` warnings, which providers its router skips for a
    malformed setting in the environment (the lines the server's stderr has): a client that does
    not read the child's stderr would otherwise learn it only from a search's attempts."""
    from dsh_sidecar.router.config import skipped_lines  # (imported by the router's build)

    for line in skipped_lines(sidecar.router.invalid):
        ls.send_log_line(line, lsp.MessageType.Warning)


def build_server() -> SidecarServer:
    """A server with every handler registered."""
    server = SidecarServer()
    register(server)
    return server
