"""``dsh-search mcp``: the sidecar as an MCP stdio server (official ``mcp`` SDK, 2.x).

One :class:`~dsh_sidecar.sidecar.Sidecar` per process, the same object ``serve`` drives, built
when the server starts (off the first tool call's path) and shut down when the client closes
stdin. MCP stdio is newline-delimited JSON-RPC; the SDK points fd 1 at stderr while it serves,
so nothing but protocol reaches stdout, and every log line goes to stderr through the
secret-redacting filter.

Tools:

* ``web_search(query, strategy?, max_results?)`` – ``dsh/search`` (router + bandit); structured
  output is the ``dsh/search`` result (sources, strategy, attempts, …); one
  ``notifications/progress`` per provider attempt when the call carries a progress token;
  ``notifications/cancelled`` cancels the task, which aborts the in-flight HTTP exchange.
* ``where_is(query? | tool_name + tool_input)`` – the suggester on demand: intent and targets
  with their reasons, no ledger line and no cooldown.
* ``post_tool_use(tool_name, tool_input, session_id?, tool_response?, tool_use_id?)`` – for
  Claude Code's PostToolUse ``mcp_tool`` hook: hook output JSON with the note as
  ``additionalContext``, or ``{}``. Fail-open: any error answers ``{}``.
* ``session_start(session_id?)`` – for the SessionStart hook: the sticky section (when
  ``suggester.sectionMode`` is ``sticky``) as ``additionalContext``, or ``{}``.
* ``suggestion_dismiss(family, path?)`` – ``dsh/dismiss``: the seed's durable dismissal.

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
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
from dsh_protocol import Attempt, DismissParams, DismissResult, SearchParams, SearchResult
from dsh_protocol.models import MAX_QUERY_CHARS, MAX_RESULTS_LIMIT
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import Field, ValidationError

from dsh_sidecar import __version__
from dsh_sidecar.bandit.arms import QUICK_MAX, THOROUGH_MAX  # the bandit seed's arm caps
from dsh_sidecar.config import SidecarConfig
from dsh_sidecar.errors import RequestError, first_problem
from dsh_sidecar.mcp.hooks import (
    HookInputError,
    TurnCounter,
    parse_tool_input,
    post_execute_params,
    post_tool_use_output,
    session_start_output,
)
from dsh_sidecar.mcp.transport import serve_stdio
from dsh_sidecar.redact import RedactingFilter, Redactor
from dsh_sidecar.router import AllProvidersFailed
from dsh_sidecar.router.progress import observe_attempts
from dsh_sidecar.sidecar import Sidecar

log = logging.getLogger(__name__)

#: Name the server announces in ``initialize`` (``serverInfo.name``).
SERVER_NAME = "dsh-search"
INSTRUCTIONS = (
    "web_search searches the web through a fallback chain of search providers and learns "
    "whether a quick or a thorough search pays off. where_is names the files of this "
    "repository where a thing (version, config, tests, a symbol, …) lives. "
    "suggestion_dismiss silences a search-suggester note family you find unhelpful. "
    "post_tool_use and session_start are for hooks only; never call them."
)

_HOOK_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


class Holder:
    """The one sidecar of this server and the per-session turn counter of the hooks."""

    def __init__(self, sidecar: Sidecar) -> None:
        self.sidecar = sidecar
        self.turns = TurnCounter()


class Lifetime:
    """The live :class:`Sidecar` of a served MCP session and its one closing (``shutdown``,
    then ``aclose``: state flushed), whichever comes first: the session's end or a signal."""

    def __init__(self) -> None:
        self.sidecar: Sidecar | None = None

    async def close(self) -> None:
        """Flush and close the sidecar (once; shielded from cancellation)."""
        sidecar, self.sidecar = self.sidecar, None
        if sidecar is None:
            return
        with anyio.CancelScope(shield=True):
            sidecar.shutdown()
            await sidecar.aclose()


def build_server(
    config: SidecarConfig,
    workspace: Path | None,
    env: Mapping[str, str],
    redactor: Redactor | None = None,
    lifetime: Lifetime | None = None,
) -> MCPServer[Holder]:
    """An :class:`MCPServer` whose lifespan owns one :class:`Sidecar` for ``workspace`` (kept
    in ``lifetime``, so a signal can close it); the router's keys are added to ``redactor``
    (the log filter's) once the sidecar exists."""
    live = lifetime if lifetime is not None else Lifetime()

    @asynccontextmanager
    async def lifespan(_: MCPServer[Holder]) -> AsyncIterator[Holder]:
        sidecar = live.sidecar = Sidecar(config, workspace, env, warm_search=True, server_kind="mcp")
        if redactor is not None:
            redactor.add(sidecar.router.secrets())
        try:
            yield Holder(sidecar)
        finally:
            await live.close()

    server: MCPServer[Holder] = MCPServer(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )

    def holder(ctx: Context[Holder, Any]) -> Holder:
        return ctx.request_context.lifespan_context

    @server.tool(
        description=(
            "Search the web. Returns sources (url, title, snippet), the strategy used and each "
            "provider attempt. strategy: auto (learned), quick (one query, up to "
            f"{QUICK_MAX} results) or thorough (three query variants merged, up to {THOROUGH_MAX} results)."
        ),
        annotations=ToolAnnotations(read_only_hint=True, open_world_hint=True),
    )
    async def web_search(
        query: Annotated[str, Field(min_length=1, max_length=MAX_QUERY_CHARS, description="what to search for")],
        ctx: Context[Holder, Any],
        strategy: Annotated[Literal["auto", "quick", "thorough"], Field(description="search strategy")] = "auto",
        max_results: Annotated[int | None, Field(ge=1, le=MAX_RESULTS_LIMIT, description="cap on sources")] = None,
    ) -> SearchResult:
        sidecar = holder(ctx).sidecar
        params = SearchParams(query=query, strategy=strategy, max_results=max_results)
        pending: list[asyncio.Task[None]] = []
        count = 0

        def on_attempt(attempt: Attempt) -> None:
            nonlocal count
            count += 1
            message = f"{attempt.provider}: {attempt.outcome} ({attempt.ms} ms)"
            pending.append(asyncio.ensure_future(ctx.report_progress(count, None, message)))

        try:
            with observe_attempts(on_attempt):
                result = await sidecar.search(params)
        except AllProvidersFailed as exc:
            raise ToolError(exc.message) from None
        finally:
            if pending:
                await asyncio.gather(*pending, return_exceptions=True)
        return result  # structured output: the dsh/search result model, its JSON Schema the outputSchema

    @server.tool(
        description=(
            "Where does a thing live in this repository? Give a free-text query (e.g. 'package "
            "version', 'test config') or a tool call (tool_name + tool_input). Returns the intent, "
            "and target files with the reason each is a target; intent null when nothing applies."
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
    ) -> dict[str, Any]:
        sidecar = holder(ctx).sidecar
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
        return await sidecar.where_is_async(tool, args)  # waits for a build off the loop

    @server.tool(
        description="Hook-only (Claude Code PostToolUse mcp_tool hook). Do not call.",
        annotations=_HOOK_ONLY,
    )
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
            return post_tool_use_output(h.sidecar.post_execute(params))
        except HookInputError as exc:
            log.info("post_tool_use: ignored a malformed hook call: %s", str(exc)[:200])
        except ValidationError as exc:
            problem = first_problem(exc, unknown="unknown field")
            log.info("post_tool_use: ignored a malformed hook call: %s: %s", problem.key, problem.message())
        except Exception:
            log.warning("post_tool_use: internal error; the tool call passes through", exc_info=True)
        return {}

    @server.tool(
        description="Hook-only (Claude Code SessionStart/UserPromptSubmit mcp_tool hook). Do not call.",
        annotations=_HOOK_ONLY,
    )
    async def session_start(
        ctx: Context[Holder, Any],
        # untyped for the same reason as post_tool_use: a malformed hook call answers {}
        session_id: Annotated[Any, Field(description="the hook's session_id (string)")] = None,
        hook_event_name: Annotated[Any, Field(description="SessionStart or UserPromptSubmit")] = None,
        source: Any = None,
    ) -> dict[str, Any]:
        try:
            sid = session_id if isinstance(session_id, str) else None
            event = hook_event_name if isinstance(hook_event_name, str) else None
            section = (await holder(ctx).sidecar.assemble_section_async(sid)).section
            return session_start_output(section.text if section else None, event)
        except Exception:
            log.warning("session_start: internal error; no section", exc_info=True)
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
    ) -> DismissResult:
        try:
            # the knowledge write waits for another sidecar's lock: off the loop (as serve's handler)
            return await asyncio.to_thread(holder(ctx).sidecar.dismiss, DismissParams(family=family, path=path))
        except RequestError as exc:
            raise ToolError(exc.message) from None

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
                        try:
                            stream.flush()
                        except (OSError, ValueError):
                            pass
                    os._exit(0)

        group.start_soon(on_signal)
        await serve_stdio(server)
        group.cancel_scope.cancel()
