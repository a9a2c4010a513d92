"""What the MCP server shows its clients, the way the reference servers do it.

* **Listed and unlisted tools.** :class:`ToolServer` serves every registered tool but lists only
  the model-facing ones: a tool registered with ``listed=False`` (the hook-only tools Claude
  Code's ``mcp_tool`` hooks call by name) is absent from ``tools/list``, so no client offers it
  to a model, and still answers ``tools/call``.
* **Closed argument lists.** Every listed tool's ``inputSchema`` says
  ``additionalProperties: false``, and a call with an argument the tool does not take is refused
  with a message naming it, the likely intended one and the ones the tool takes
  (``{"maxResults": 3}`` is never silently ignored). Hook-only tools take whatever a hook sends
  (they answer ``{}`` to anything malformed: a hook must never fail).
* **Argument errors a model can act on**: the first problem, its argument named, without
  pydantic's wrapper text or URL (:func:`~dsh_sidecar.errors.first_problem`).

Start-up costs only what ``tools/list`` needs: an unlisted tool is registered with the SDK (its
argument model built) by its first call, and the SDK's logging set-up (a ``rich`` handler that
``logging.basicConfig`` then does not install, the server's own handler being there already:
~14 ms of CPU to import ``rich`` for nothing) is skipped.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any, Final, TypeVar

import mcp.server.mcpserver.server as sdk_server
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import Tool as MCPTool
from pydantic import ValidationError
from pydantic.alias_generators import to_snake

from dsh_sidecar.errors import first_problem

_F = TypeVar("_F", bound=Callable[..., Any])

#: How close an unknown argument name must be to a known one to be suggested (difflib ratio).
SUGGEST_CUTOFF: Final = 0.75


def arguments_list(schema: dict[str, Any]) -> str:
    """The arguments a tool takes, for a message: ``query (required), max_results``."""
    required = set(schema.get("required") or ())
    names = [f"{n} (required)" if n in required else n for n in schema.get("properties") or {}]
    return ", ".join(names) if names else "none"


def unknown_argument(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """The refusal of the first argument ``tool``'s ``schema`` does not list, or ``None``."""
    known = list(schema.get("properties") or {})
    for name in arguments:
        if name in known:
            continue
        shown = name if len(name) <= 64 else name[:64] + "…"
        snake = to_snake(name) if name.isascii() else name
        import difflib  # an unknown argument's hint only

        hint = snake if snake in known else next(iter(difflib.get_close_matches(name, known, 1, SUGGEST_CUTOFF)), None)
        mean = f" (did you mean '{hint}'?)" if hint else ""
        return f"Invalid arguments for {tool}: unknown argument {shown!r}{mean}. Arguments: {arguments_list(schema)}."
    return None


def invalid_arguments(tool: str, exc: ValidationError) -> str:
    """``Invalid arguments for <tool>: <argument>: <reason>.``, from pydantic's first error."""
    problem = first_problem(exc, unknown="unknown argument")
    reason = "required" if problem.reason == "Field required" else problem.reason
    where = f"{problem.key}: " if problem.key else ""
    more = f" (and {problem.more} more)" if problem.more else ""
    return f"Invalid arguments for {tool}: {where}{reason}{more}."


@contextlib.contextmanager
def _sdk_logging_left_alone() -> Iterator[None]:
    """:class:`MCPServer` without its ``configure_logging`` call (the server configures its own);
    an SDK without that function is left as it is."""
    configure = getattr(sdk_server, "configure_logging", None)
    if configure is None:
        yield
        return
    sdk_server.configure_logging = lambda *args, **kwargs: None
    try:
        yield
    finally:
        sdk_server.configure_logging = configure


class ToolServer(MCPServer[Any]):
    """An :class:`MCPServer` with unlisted tools and closed argument lists (module docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        with _sdk_logging_left_alone():
            super().__init__(*args, **kwargs)
        self.unlisted: set[str] = set()
        #: Unlisted tools not registered with the SDK yet: each one's registration, run by its first call.
        self._unregistered: dict[str, Callable[[], object]] = {}
        self._schemas: dict[str, dict[str, Any]] | None = None
        #: Called when a client lists the tools (the owner's cue that the client's session starts).
        self.on_list: Callable[[], object] | None = None

    def tool(self, *args: Any, listed: bool = True, **kwargs: Any) -> Callable[[_F], _F]:
        """:meth:`MCPServer.tool`, plus ``listed=False`` for a tool only hooks call."""
        register = super().tool(*args, **kwargs)

        def decorator(fn: _F) -> _F:
            if not listed:
                name = kwargs.get("name") or fn.__name__
                self.unlisted.add(name)
                self._unregistered[name] = lambda: register(fn)
                return fn
            register(fn)
            self._schemas = None
            return fn

        return decorator

    async def _all_tools(self) -> list[MCPTool]:
        tools = await super().list_tools()
        for t in tools:
            t.input_schema["additionalProperties"] = False
        return tools

    async def list_tools(self) -> list[MCPTool]:
        """The model-facing tools (the unlisted ones are served, not listed)."""
        if self.on_list is not None:
            self.on_list()
        return [t for t in await self._all_tools() if t.name not in self.unlisted]

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        """Refuse an argument the tool does not take, and word argument errors plainly; then
        call the tool as :class:`MCPServer` does."""
        registration = self._unregistered.pop(name, None)
        if registration is not None:
            registration()
        if self._schemas is None:
            self._schemas = {t.name: t.input_schema for t in await self._all_tools()}
        schema = self._schemas.get(name)
        if schema is not None and name not in self.unlisted:
            refused = unknown_argument(name, arguments, schema)
            if refused is not None:
                raise ToolError(refused)
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError) and not isinstance(exc, UnexpectedToolError):
                raise ToolError(invalid_arguments(name, exc.__cause__)) from exc.__cause__
            raise
