"""``dsh-search mcp``: the sidecar as an MCP stdio server (official ``mcp`` SDK, 2.x).

One :class:`~dsh_sidecar.sidecar.Sidecar` per process, the same object ``serve`` drives, built
on a thread when the server starts, so ``initialize`` and ``tools/list`` (what a client waits
for before its session starts) are answered without waiting for the sidecar's imports (the
workspace, router and bandit code) or its construction; every tool call awaits the build,
but a ``session_start`` that has nothing to add (no sticky section, no task lead: the
defaults) answers ``{}`` at once, since a harness's first call is that hook; a build that
failed makes every tool that needs the sidecar a tool error naming why
(:class:`SidecarUnavailable`), the hooks ``{}``, while ``web_search`` answers on the router the
build made before it failed (it needs nothing else). A malformed provider setting in the
environment is no such failure: the router skips that provider and logs why once built. It
is shut down when the client closes stdin. MCP stdio is newline-delimited JSON-RPC; the SDK points fd 1 at stderr while it serves,
so nothing but protocol reaches stdout, and every log line goes to stderr through the
secret-redacting filter.

Listed tools (arguments and outputs snake_case, every output typed: :mod:`.outputs`; an unknown
argument is refused: :mod:`.surface`):

* ``search(query)`` – the bandit seed's tool: ``dsh/search`` with the strategy chosen and
  learned per query, never named to the model; ``{search_id, sources, content?, truncated}``.
* ``web_search(query, max_results?)`` – the router seed's tool: one query, the first provider
  of the chain that answers; ``{sources, content?, truncated}``.
* ``search_feedback(search_id, used_urls)`` – ``dsh/searchFeedback``: the answer-usage reward
  (``docs/bandit.md``); ``{search_id, used}``.
* ``where_is(query? | tool_name + tool_input)`` – the suggester on demand: intent, confidence,
  and targets with their reasons, no ledger line and no cooldown; free text no intent answers
  gets the task lead's ranking (intent ``Task``) when ``suggester.taskLead`` is on. It waits for
  the workspace build at most what is left of the start's first-call window
  (``suggester.firstCallWaitMs``); an index still being built answers from what is ready, with
  ``index`` saying so.
* ``suggestion_dismiss(family, path?)`` – ``dsh/dismiss``: the seed's durable dismissal.

Both searches send one ``notifications/progress`` per provider attempt when the call carries a
progress token; ``notifications/cancelled`` cancels the task, which aborts the in-flight HTTP
exchange. When every provider failed, the result is an error whose only text is the router
seed's aggregated error.

Unlisted tools, for Claude Code's ``mcp_tool`` hooks (called by name; fail-open, any error
answers ``{}``):

* ``post_tool_use(tool_name, tool_input, session_id?, tool_response?, tool_use_id?)`` – hook
  output JSON with the note (or, without one, the start's first note owed to the session when
  the index was not ready for it, ``suggester/owednote.py``, else the session's owed task lead)
  as ``additionalContext`` and after it the session's owed sticky section (see
  ``session_start``), or ``{}``.
* ``session_start(session_id?, hook_event_name?, prompt?)`` – the sticky section (when
  ``suggester.sectionMode`` is ``sticky``) and, with a ``UserPromptSubmit`` prompt, the task
  lead (when ``suggester.taskLead`` is on; once per session) as ``additionalContext``, or ``{}``.
  Both answer from the whole workspace index, and a prompt hook holds the user's turn: while
  the index is still being built the first ``session_start`` of a start waits for it at most
  ``suggester.firstCallWaitMs`` (the first note's bound; the section and the lead together),
  later ones not at all, and one answered without them owes them to its session: the section
  comes with the session's next ``post_tool_use`` once the index is built (else with its next
  ``session_start``), the lead with its next ``post_tool_use`` that has no note
  (``sidecar/owed.py``).
* ``pre_tool_use(tool_name, search_tool?)`` – the steer from the built-in WebSearch to
  ``search``: a deny with the reason when ``DSH_SEARCH_STEER_WEBSEARCH`` is on, else ``{}``.
* ``stop(last_assistant_message)`` – the final answer's cited URLs reported for this server's
  pending searches (``Sidecar.answer_feedback``); ``{}``.

Every tool is a coroutine, so the suggester's tools run on the server's event-loop thread one
at a time, as ``serve``'s handlers do (the SDK runs a plain function on a worker thread, so
parallel hook calls would enter the suggester's noise control and ledger at once); each of
them is a few milliseconds of work.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager, suppress
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, TypeVar

import anyio
from dsh_protocol.limits import MAX_QUERY_CHARS, MAX_RESULTS_LIMIT, MAX_TASK_CHARS
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, ToolAnnotations
from pydantic import Field, ValidationError

from dsh_sidecar import __version__
from dsh_sidecar.bandit.usage import MAX_CITED_URLS, MAX_URL_CHARS
from dsh_sidecar.config import SidecarConfig
from dsh_sidecar.errors import RequestError, first_problem
from dsh_sidecar.mcp.building import (
    BUILD_AFTER_LIST_S,
    BuildGate,
    Holder,
    Lifetime,
    SidecarUnavailable,
    build_on_thread,
    follow_build,
    not_ready_line,
    publish,
    search_router,
)
from dsh_sidecar.mcp.hooks import (
    STEER,
    HookInputError,
    parse_tool_input,
    post_execute_params,
    post_tool_use_output,
    pre_tool_use_output,
    session_start_output,
    session_start_wants,
    steer_on,
    with_section,
)
from dsh_sidecar.mcp.outputs import (
    Dismissal,
    FeedbackReceipt,
    SearchResults,
    Target,
    WebResults,
    WebSource,
    WhereIs,
    failure,
    structured,
)
from dsh_sidecar.mcp.surface import ToolServer
from dsh_sidecar.mcp.transport import serve_stdio
from dsh_sidecar.redact import RedactingFilter, Redactor
from dsh_sidecar.workspace.heap import collections_paused

if TYPE_CHECKING:
    from dsh_protocol import Attempt

    from dsh_sidecar.router import Router
    from dsh_sidecar.sidecar import Sidecar

log = logging.getLogger(__name__)

#: Name the server announces in ``initialize`` (``serverInfo.name``).
SERVER_NAME = "dsh-search"
INSTRUCTIONS = (
    f"{STEER} search_feedback reports, after answering, which URLs of a search the answer "
    "used. web_search sends one query to the search providers in order. where_is names the "
    "files of this repository where a thing (version, config, tests, a symbol, …) lives. "
    "suggestion_dismiss silences a search-suggester note family you find unhelpful."
)
#: Sources web_search returns when max_results is not given (the quick arm's cap, the seed's 5).
WEB_SEARCH_DEFAULT: Final = 5
_R = TypeVar("_R")
_HOOK_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def build_server(  # noqa: C901, PLR0915  (a registration closure: one short nested handler per MCP tool)
    config: SidecarConfig,
    workspace: Path | None,
    env: Mapping[str, str],
    redactor: Redactor | None = None,
    lifetime: Lifetime | None = None,
) -> ToolServer:
    """An :class:`MCPServer` whose lifespan owns one :class:`Sidecar` for ``workspace`` (kept
    in ``lifetime``, so a signal can close it); the router's keys are added to ``redactor``
    (the log filter's) once the sidecar exists."""
    live = lifetime if lifetime is not None else Lifetime()
    if config.suggester.enabled:
        live.not_ready = partial(not_ready_line, config.suggester.log_file, env)

    @asynccontextmanager
    async def lifespan(_: MCPServer[Any]) -> AsyncIterator[Holder]:
        # the lifespan runs before the initialize reply: the sidecar's imports and construction
        # run on a thread instead (initialize and tools/list do not need them; with a shared
        # state backend they run here), and so does the suggester's activation (its packs read,
        # its first ledger line); every call waits for both. The thread starts building once the
        # tools are listed (or a call comes first): until then its imports would take the GIL
        # from the handshake the client's session waits for
        loop_thread = threading.get_ident()

        loop = asyncio.get_running_loop()
        router_built: asyncio.Future[Router] = loop.create_future()
        gate = BuildGate()

        def build(wait: bool = True) -> Sidecar:
            # the build's imports and construction make long-lived objects and no garbage cycle:
            # no collection meanwhile (each would scan what the imports made so far: a 20-45 ms
            # generation-1 collection mid-build), then frozen (heap.collections_paused)
            with collections_paused(freeze=True):
                return build_paused(wait)

        def build_paused(wait: bool) -> Sidecar:
            # the router first (its imports are the search path's alone): a web_search that comes
            # before the rest is built answers with it, and the rest yields to it (BuildGate)
            router = search_router(config, workspace, env)
            if redactor is not None:
                redactor.add(router.secrets())
            publish(loop, router_built, router)
            gate.import_rest(wait)
            from dsh_sidecar.sidecar import Sidecar

            sidecar = Sidecar(
                config,
                workspace,
                env,
                warm_search=True,
                server_kind="mcp",
                start_suggester=False,
                sink_thread=loop_thread,
                router=router,
            )
            threading.Thread(target=sidecar.start_suggester, name="dsh-suggester-activate", daemon=True).start()
            return sidecar

        if config.state.shared:  # opening the shared store can refuse the config: before the reply, as serve does
            built: asyncio.Future[Sidecar] = loop.create_future()
            built.set_result(build(wait=False))
        else:
            server.on_list = live.start.set
            built = build_on_thread(loop, build, live.start, BUILD_AFTER_LIST_S, live.ended)
        live.building = built

        follow_build(built, router_built)
        try:
            yield Holder(built, live.start, router_built, gate)
        finally:
            await live.close()

    server = ToolServer(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )

    def holder(ctx: Context[Holder, Any]) -> Holder:
        return ctx.request_context.lifespan_context

    async def sidecar_of(ctx: Context[Holder, Any]) -> Sidecar:
        return await holder(ctx).get()

    async def with_progress(ctx: Context[Holder, Any], search: Callable[[], Awaitable[_R]]) -> _R:
        """Run ``search``, sending one ``notifications/progress`` per provider attempt when the
        call carries a progress token (the client's display, not the model's context)."""
        from dsh_sidecar.router.progress import observe_attempts  # the wire models: imported by the build

        pending: list[asyncio.Task[None]] = []
        count = 0

        def on_attempt(attempt: Attempt) -> None:
            nonlocal count
            count += 1
            message = f"{attempt.provider}: {attempt.outcome} ({attempt.ms} ms)"
            pending.append(asyncio.ensure_future(ctx.report_progress(count, None, message)))

        try:
            with observe_attempts(on_attempt):
                return await search()
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)

    @server.tool(
        description=(
            "Search the web. Returns the sources (url, title, snippet) and a search_id. The search "
            "strategy is chosen and learned per query. Cite the URLs you use as markdown links."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True),
    )
    async def search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to search for")],
        ctx: Context[Holder, Any],
    ) -> Annotated[CallToolResult, SearchResults]:
        sidecar = await sidecar_of(ctx)
        from dsh_protocol import SearchParams  # the wire models (and the router): imported by the build

        from dsh_sidecar.router.chain import AllProvidersFailed

        try:
            result = await with_progress(ctx, lambda: sidecar.search(SearchParams(query=query)))
        except AllProvidersFailed as exc:
            return failure(exc.message)  # the router seed's aggregated error, and nothing else
        sources = [WebSource.model_validate(s.model_dump()) for s in result.sources]
        return structured(
            SearchResults(
                search_id=result.search_id, sources=sources, content=result.content, truncated=result.truncated
            )
        )

    @server.tool(
        description=(
            "Send one query to the configured search providers, tried in order, and return the "
            f"sources (url, title, snippet) of the first that answers: up to max_results "
            f"(default {WEB_SEARCH_DEFAULT}, at most {MAX_RESULTS_LIMIT})."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True),
    )
    async def web_search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to search for")],
        ctx: Context[Holder, Any],
        max_results: Annotated[
            int, Field(ge=1, le=MAX_RESULTS_LIMIT, description="how many sources to return at most")
        ] = WEB_SEARCH_DEFAULT,
    ) -> Annotated[CallToolResult, WebResults]:
        h = holder(ctx)
        router = await h.search_router()  # before the rest of the sidecar is built, its router
        from dsh_sidecar.router.chain import AllProvidersFailed  # imported by the router's build
        from dsh_sidecar.router.web import web_search as route_web_search

        try:
            with h.gate.searching():
                result = await with_progress(ctx, lambda: route_web_search(router, query, max_results))
        except AllProvidersFailed as exc:
            return failure(exc.message)
        sources = [WebSource.model_validate(s.model_dump()) for s in result.sources]
        return structured(WebResults(sources=sources, content=result.content, truncated=result.truncated))

    @server.tool(
        description=(
            "After answering from a search's results, report which of its URLs the answer used "
            "(search_id from search). The search learns from it which strategy pays off; "
            "reporting a search again changes nothing once a URL of it was used."
        ),
        annotations=ToolAnnotations(
            read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
        ),
    )
    async def search_feedback(
        ctx: Context[Holder, Any],
        search_id: Annotated[str, Field(min_length=1, max_length=200, description="the search_id search returned")],
        used_urls: Annotated[
            list[Annotated[str, Field(max_length=MAX_URL_CHARS)]],
            Field(max_length=MAX_CITED_URLS, description="the URLs of its sources the answer used ([] if none)"),
        ],
    ) -> Annotated[CallToolResult, FeedbackReceipt]:
        sidecar = await sidecar_of(ctx)
        try:  # the pending-feedback write waits for another sidecar's lock: off the loop
            done = await asyncio.to_thread(sidecar.feedback, search_id, used_urls)
        except RequestError as exc:  # the wire's message, in this tool's spelling
            raise ToolError(exc.message.replace("searchId:", "search_id:", 1)) from None
        return structured(FeedbackReceipt(search_id=search_id, used=done.used))

    @server.tool(
        description=(
            "Where does a thing live in this repository? Give a free-text query (e.g. 'package "
            "version', 'test config') or a tool call (tool_name + tool_input). Returns the intent, "
            "the suggester's confidence in it, and target files with the reason each is a target; "
            "intent null when nothing applies."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=False),
    )
    async def where_is(
        ctx: Context[Holder, Any],
        query: Annotated[str | None, Field(max_length=MAX_QUERY_CHARS, description="free-text query")] = None,
        tool_name: Annotated[
            str | None, Field(max_length=200, description="a tool name: Grep, Glob, Read, Bash")
        ] = None,
        tool_input: Annotated[dict[str, Any] | str | None, Field(description="that tool's input")] = None,
    ) -> Annotated[CallToolResult, WhereIs]:
        sidecar = await sidecar_of(ctx)
        if tool_name:
            try:
                tool, args = tool_name, parse_tool_input(tool_input)
            except HookInputError as exc:
                raise ToolError(str(exc)) from None
        elif query and query.strip():
            from dsh_sidecar.suggester.query import QUESTION_TOOL  # the suggester loads lazily

            tool, args = QUESTION_TOOL, {"query": query}  # free text: the query model's question
        else:
            raise ToolError("give query, or tool_name with tool_input")
        hit = await sidecar.where_is_async(tool, args)  # waits for a build off the loop
        return structured(
            WhereIs(
                intent=hit["intent"],
                confidence=hit.get("k"),
                about=hit.get("about"),
                targets=[Target(**t) for t in hit["targets"]],
                index=hit.get("index"),
            )
        )

    @server.tool(description="Hook-only (Claude Code PostToolUse mcp_tool hook).", annotations=_HOOK_ONLY, listed=False)
    async def post_tool_use(
        ctx: Context[Holder, Any],
        # Untyped on purpose: the SDK would answer a field of the wrong shape with a tool error,
        # which Claude Code reports as a failed hook; post_execute_params checks each field and
        # a malformed call answers {}.
        tool_name: Annotated[Any, Field(description="the hook's tool_name (string)")] = None,
        tool_input: Annotated[Any, Field(description="the hook's tool_input: an object or its JSON text")] = None,
        session_id: Annotated[Any, Field(description="the hook's session_id (string)")] = None,
        tool_response: Any = None,
        tool_use_id: Annotated[Any, Field(description="the hook's tool_use_id (string)")] = None,
        hook_event_name: Any = None,
    ) -> dict[str, Any]:
        h = holder(ctx)
        try:
            params = post_execute_params(h.turns, tool_name, tool_input, session_id, tool_response, tool_use_id)
            sidecar = await h.get()
            output = post_tool_use_output(await sidecar.post_execute_async(params))
            return with_section(output, h.owed_section(sidecar, params.session_id))
        except HookInputError as exc:
            log.info("post_tool_use: ignored a malformed hook call: %s", str(exc)[:200])
        except SidecarUnavailable as exc:
            log.warning("post_tool_use: no note: %s", exc)
        except ValidationError as exc:
            problem = first_problem(exc, unknown="unknown field")
            log.info("post_tool_use: ignored a malformed hook call: %s: %s", problem.key, problem.message())
        except Exception:
            log.warning("post_tool_use: internal error; the tool call passes through", exc_info=True)
        return {}

    @server.tool(
        description="Hook-only (Claude Code SessionStart/UserPromptSubmit mcp_tool hook).",
        annotations=_HOOK_ONLY,
        listed=False,
    )
    async def session_start(
        ctx: Context[Holder, Any],
        # untyped for the same reason as post_tool_use: a malformed hook call answers {}
        session_id: Annotated[Any, Field(description="the hook's session_id (string)")] = None,
        hook_event_name: Annotated[Any, Field(description="SessionStart or UserPromptSubmit")] = None,
        source: Any = None,
        prompt: Annotated[Any, Field(description="UserPromptSubmit's prompt (string): the task lead's text")] = None,
    ) -> dict[str, Any]:
        try:
            sid = session_id if isinstance(session_id, str) else None
            event = hook_event_name if isinstance(hook_event_name, str) else None
            if not session_start_wants(config.suggester, prompt):
                return {}  # nothing to add, built or not: no wait for the build
            h = holder(ctx)
            sidecar = await h.get()
            section = await h.section(sidecar, sid)
            texts = [section] if section else []
            if isinstance(prompt, str) and prompt.strip():
                from dsh_protocol import TaskLeadParams  # the wire models: imported by the build

                # the task lead: once per session, ranked off the loop (suggester/lead/offer.py)
                params = TaskLeadParams(session_id=(sid or "")[:500] or None, task=prompt[:MAX_TASK_CHARS])
                texts += [c.text for c in (await sidecar.task_lead_async(params)).additional_contexts]
            return session_start_output("\n\n".join(texts) or None, event)
        except SidecarUnavailable as exc:
            log.warning("session_start: no section: %s", exc)
            return {}
        except Exception:
            log.warning("session_start: internal error; no section", exc_info=True)
            return {}

    steer = steer_on(env)

    @server.tool(
        description="Hook-only (Claude Code PreToolUse mcp_tool hook on the built-in WebSearch).",
        annotations=_HOOK_ONLY,
        listed=False,
    )
    async def pre_tool_use(
        # untyped: a malformed hook call answers {} (the call goes ahead)
        tool_name: Annotated[Any, Field(description="the hook's tool_name (string)")] = None,
        search_tool: Annotated[Any, Field(description="the name the harness gives this server's search")] = None,
        tool_input: Any = None,
        session_id: Any = None,
        hook_event_name: Any = None,
    ) -> dict[str, Any]:
        return pre_tool_use_output(tool_name, search_tool, steer)

    @server.tool(description="Hook-only (Claude Code Stop mcp_tool hook).", annotations=_HOOK_ONLY, listed=False)
    async def stop(
        ctx: Context[Holder, Any],
        # untyped: a malformed hook call answers {} (a Stop hook must never keep the turn going)
        last_assistant_message: Annotated[Any, Field(description="the hook's last_assistant_message")] = None,
        session_id: Any = None,
        stop_hook_active: Any = None,
        hook_event_name: Any = None,
    ) -> dict[str, Any]:
        if isinstance(last_assistant_message, str) and last_assistant_message:
            try:  # the pending-feedback write waits for another sidecar's lock: off the loop
                await asyncio.to_thread((await sidecar_of(ctx)).answer_feedback, last_assistant_message)
            except Exception:
                log.warning("stop: the answer's feedback failed; nothing learned from it", exc_info=True)
        return {}

    @server.tool(
        description=(
            "Dismiss a search-suggester note family (the intent a note named, e.g. Version) or "
            "one path of it, for a day. Returns the record line and when it expires."
        ),
        annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False),
    )
    async def suggestion_dismiss(
        ctx: Context[Holder, Any],
        family: Annotated[str, Field(min_length=1, max_length=100, description="intent family, e.g. Version")],
        path: Annotated[str | None, Field(min_length=1, max_length=4096, description="one target path")] = None,
    ) -> Annotated[CallToolResult, Dismissal]:
        try:
            # the knowledge write waits for another sidecar's lock: off the loop (as serve's handler)
            sidecar = await sidecar_of(ctx)
            from dsh_protocol import DismissParams  # the wire models: imported by the build

            done = await asyncio.to_thread(sidecar.dismiss, DismissParams(family=family, path=path))
        except RequestError as exc:
            raise ToolError(exc.message) from None
        return structured(Dismissal(record=done.record, expires_at=done.expires_at))

    return server


def _configure_logging(level: str) -> Redactor:
    redactor = Redactor()
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter(redactor))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, str(level).upper(), logging.WARNING))
    for noisy in ("mcp", "httpx", "httpcore"):
        logging.getLogger(noisy).setLevel(max(root.level, logging.WARNING))
    return redactor


def main(config: SidecarConfig, workspace: Path, log_level: str, env: Mapping[str, str] | None = None) -> int:
    """Serve MCP on stdio for ``workspace`` (a folder) with ``config`` until stdin ends or a
    signal; the exit code. ``dsh-search mcp`` parses its command line and finds its config
    files first (:mod:`dsh_sidecar.cli.commands`)."""
    env = dict(os.environ if env is None else env)
    redactor = _configure_logging(log_level)
    lifetime = Lifetime()
    anyio.run(serve_until_signal, build_server(config, workspace.resolve(), env, redactor, lifetime), lifetime)
    return 0


async def serve_until_signal(server: MCPServer[Any], lifetime: Lifetime) -> None:
    """:func:`serve_stdio` until stdin ends, or SIGTERM/SIGHUP/SIGINT arrives (a harness's
    teardown of its MCP servers, a Ctrl-C). On a signal the sidecar's state (the bandit's written-behind
    posteriors, the suggester's ledger and knowledge) is flushed and the process ends with
    status 0, as ``serve`` does: at once (``os._exit``), since the SDK's stdin reader is a
    thread blocked in ``read`` that no cancellation reaches."""
    async with anyio.create_task_group() as group:

        async def on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGHUP, signal.SIGINT) as signals:
                async for _ in signals:
                    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the flush is not cut short
                    await lifetime.close()
                    for stream in (sys.stdout, sys.stderr):
                        with suppress(OSError, ValueError):
                            stream.flush()
                    os._exit(0)

        group.start_soon(on_signal)
        await serve_stdio(server)
        group.cancel_scope.cancel()
