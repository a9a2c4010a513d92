"""Claude Code hook fields → sidecar params, and sidecar results → hook output JSON.

Pure functions (no MCP SDK): the ``post_tool_use`` and ``session_start`` tools of
:mod:`dsh_sidecar.mcp.server` call them.

Claude Code's hook input (PostToolUse) carries ``session_id``, ``tool_name``, ``tool_input``,
``tool_response`` (and ``cwd``, ``transcript_path``, ``tool_use_id``, ``hook_event_name``).
An ``mcp_tool`` hook passes the arguments its ``input`` names, each string value
``${path}``-interpolated from the hook input, where an object value is interpolated as its JSON
text: so ``tool_input`` arrives as a JSON string, or as an object from any other caller. The
hook output that adds context beside the tool result is
``{"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "<text>"}}``;
``{}`` is a no-op (Claude Code hooks reference, "PostToolUse decision control").

A PreToolUse hook denies a call with ``{"hookSpecificOutput": {"hookEventName": "PreToolUse",
"permissionDecision": "deny", "permissionDecisionReason": "<text>"}}``: Claude Code 2.1.328 gives
the model ``PreToolUse:<tool> hook error: <text>`` as that call's result (seen in the real CLI).
A Stop hook's input carries ``last_assistant_message``, the text of the final answer.
"""

from __future__ import annotations

import json
import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from dsh_protocol.limits import MAX_TOOL_TEXT

from dsh_sidecar.recent import remember

if TYPE_CHECKING:
    from dsh_protocol import PostExecuteParams, PostExecuteResult

    from dsh_sidecar.suggester.config import SuggesterConfig

#: Sessions whose per-call counter is kept (oldest dropped first): bounded memory.
MAX_SESSIONS: Final = 1000
#: Longest ``tool_input`` JSON text accepted, characters (a bigger one is ignored: silence).
MAX_TOOL_INPUT_CHARS: Final = 10 * MAX_TOOL_TEXT
#: Longest session id kept or counted, characters: the protocol's bound on ``sessionId``
#: (``dsh_protocol.models``). A longer one is refused before anything keeps it (the MCP client
#: is untrusted: a kept id is held until 1000 newer sessions push it out).
MAX_SESSION_ID_CHARS: Final = 500
#: Session id used when the hook input names none.
ANONYMOUS_SESSION: Final = "claude-code"

POST_TOOL_USE: Final = "PostToolUse"
SESSION_START: Final = "SessionStart"


class HookInputError(ValueError):
    """A hook field of the wrong shape; the message names the field."""


def parse_tool_input(value: Any) -> dict[str, Any]:
    """``tool_input`` as an object: a dict as is, a JSON object text decoded, ``None``/``""``
    as ``{}``. Raises :class:`HookInputError` naming ``tool_input`` for anything else."""
    if value is None or value == "":
        return {}
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        if len(value) > MAX_TOOL_INPUT_CHARS:
            raise HookInputError(f"tool_input: longer than {MAX_TOOL_INPUT_CHARS} characters")
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            raise HookInputError("tool_input: not valid JSON") from None
        if isinstance(decoded, dict):
            return decoded
    raise HookInputError("tool_input: must be a JSON object (or its JSON text)")


#: The text fields of Claude Code's tool responses, in the order they are read: Bash's
#: ``stdout``/``stderr``, Grep's ``content`` (content mode), an MCP tool's ``output``/``result``.
RESPONSE_TEXT_FIELDS = ("stdout", "content", "output", "result", "text", "stderr")


def response_text(value: Any) -> str | None:
    """``tool_response`` as the text the suggester may read (capped), ``None`` when absent: a
    string as it is; an object's text fields (:data:`RESPONSE_TEXT_FIELDS`) and its
    ``filenames`` (Grep and Glob list their files there), one per line, as the tool printed
    them — a JSON dump of the object would put every path on one line, behind escaped line
    breaks, where no listing reader finds it (so a note could name back what the call had just
    listed); anything else as its JSON text."""
    if value is None or value == "":
        return None
    if isinstance(value, dict):
        parts = [value[k] for k in RESPONSE_TEXT_FIELDS if isinstance(value.get(k), str) and value[k]]
        names = value.get("filenames")
        if isinstance(names, list):
            parts.append("\n".join(n for n in names if isinstance(n, str)))
        text = "\n".join(parts) if parts else json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text[: 10 * MAX_TOOL_TEXT]


class TurnCounter:
    """Claude Code's hook input carries no turn number, so each tool call of a session counts
    as its own turn (0, 1, 2, …): the per-turn cap then bounds nothing Claude Code batches,
    and the cooldown (``cooldownCalls``) and dedupe keep the notes sparse."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._next: OrderedDict[str, int] = OrderedDict()

    def next(self, session_id: str) -> int:
        """The turn number of this call of ``session_id``."""
        turn = self._next.get(session_id, 0)
        remember(self._next, session_id, turn + 1, self.limit)
        return turn


def post_execute_params(
    turns: TurnCounter,
    tool_name: Any,
    tool_input: Any,
    session_id: Any,
    tool_response: Any = None,
    tool_use_id: Any = None,
) -> PostExecuteParams:
    """The ``dsh/postExecute`` params of one Claude Code PostToolUse hook call.

    The fields arrive untyped (any JSON value). Raises :class:`HookInputError` naming the
    field when ``tool_name`` is not a non-empty string, ``session_id``/``tool_use_id`` is
    neither a string nor absent, ``session_id`` is over :data:`MAX_SESSION_ID_CHARS`, or
    ``tool_input`` is bad; pydantic's ``ValidationError`` for
    a field out of the protocol's bounds."""
    if not isinstance(tool_name, str) or not tool_name:
        raise HookInputError("tool_name: must be a non-empty string")
    for field, value in (("session_id", session_id), ("tool_use_id", tool_use_id)):
        if value is not None and not isinstance(value, str):
            raise HookInputError(f"{field}: must be a string")
    session = session_id or ANONYMOUS_SESSION
    if len(session) > MAX_SESSION_ID_CHARS:  # refused before the turn counter keeps it
        raise HookInputError(f"session_id: longer than {MAX_SESSION_ID_CHARS} characters")
    payload: dict[str, Any] = {
        "session_id": session,
        "turn": turns.next(session),
        "tool": {"name": tool_name, "input": parse_tool_input(tool_input)},
    }
    if tool_use_id:
        payload["call_id"] = tool_use_id
    text = response_text(tool_response)
    if text is not None:
        payload["result"] = {"text": text}
    from dsh_protocol import PostExecuteParams  # the wire models: built by the first call, not at start

    return PostExecuteParams.model_validate(payload)


def post_tool_use_output(result: PostExecuteResult) -> dict[str, Any]:
    """Hook output JSON for a PostToolUse: the note's text as ``additionalContext``, or ``{}``."""
    if not result.additional_contexts:
        return {}
    text = "\n\n".join(c.text for c in result.additional_contexts)
    return {"hookSpecificOutput": {"hookEventName": POST_TOOL_USE, "additionalContext": text}}


#: Hook events whose output may carry the sticky section as ``additionalContext``.
SECTION_EVENTS: Final = frozenset({SESSION_START, "UserPromptSubmit"})


def session_start_wants(config: SuggesterConfig, prompt: Any) -> bool:
    """Whether a ``session_start`` call with ``prompt`` can add anything: the sticky section
    (the suggester on, ``sectionMode: sticky``) or the task lead (the suggester on,
    ``taskLead: true``, a prompt with text). When not, its answer is ``{}`` whatever the
    sidecar holds, so the server gives it without waiting for the sidecar's build (a harness's
    first hook call, Claude Code's ``UserPromptSubmit``, comes right after the tool list)."""
    if not config.enabled:
        return False
    if config.section_mode == "sticky":
        return True
    return config.task_lead and isinstance(prompt, str) and bool(prompt.strip())


class OwedSections:
    """The sessions whose sticky section is owed: their ``session_start`` came while the
    workspace index the section lists was still being built, and was answered without it (a
    prompt hook must not hold the user's turn for a build); the section then goes with the
    session's next answer once the index is built (its next ``post_tool_use``, else its next
    ``session_start``). Bounded like :class:`TurnCounter` (oldest dropped first)."""

    def __init__(self, limit: int = MAX_SESSIONS) -> None:
        self.limit = limit
        self._owed: OrderedDict[str, None] = OrderedDict()

    def owe(self, session_id: str) -> None:
        """``session_id``'s section was not sent (an id over :data:`MAX_SESSION_ID_CHARS` is not
        kept: its ``post_tool_use`` is refused by that bound, so it could never be paid)."""
        if len(session_id) > MAX_SESSION_ID_CHARS:
            return
        remember(self._owed, session_id, None, self.limit)

    def owed(self, session_id: str) -> bool:
        """Whether ``session_id``'s section is owed."""
        return session_id in self._owed

    def paid(self, session_id: str) -> None:
        """``session_id``'s section was sent."""
        self._owed.pop(session_id, None)


def with_section(output: dict[str, Any], section_text: str | None) -> dict[str, Any]:
    """A PostToolUse hook output (:func:`post_tool_use_output`) with an owed sticky section
    after its note (or alone), as its ``additionalContext``."""
    if not section_text:
        return output
    note = output.get("hookSpecificOutput", {}).get("additionalContext")
    text = f"{note}\n\n{section_text}" if note else section_text
    return {"hookSpecificOutput": {"hookEventName": POST_TOOL_USE, "additionalContext": text}}


def session_start_output(section_text: str | None, event: str | None = None) -> dict[str, Any]:
    """Hook output JSON for a SessionStart (or UserPromptSubmit, named by ``event``): the
    sticky section as ``additionalContext``, or ``{}``. Claude Code 2.1.328 runs a SessionStart
    ``mcp_tool`` hook only when the server is already connected (resume, clear, compact), not
    at a fresh start, so the plugin also asks on UserPromptSubmit, which waits for it."""
    if not section_text:
        return {}
    name = event if event in SECTION_EVENTS else SESSION_START
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": section_text}}


PRE_TOOL_USE: Final = "PreToolUse"
#: The bandit seed's steer toward its ``search`` tool (the DSH bundle's system-prompt section,
#: byte for byte); the MCP server's instructions carry it.
STEER: Final = (
    "Prefer the search tool over web_search for web searches: it picks a quick or a thorough "
    "strategy per query and learns which pays off. Cite the returned URLs as markdown links."
)
#: Environment variable that turns the steer away from Claude Code's built-in WebSearch on
#: (``1``/``true``/``yes``/``on``); the plugin sets it from its ``steer_web_search`` option.
STEER_ENV: Final = "DSH_SEARCH_STEER_WEBSEARCH"
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.:-]{1,200}")


def steer_on(env: Mapping[str, str]) -> bool:
    """Whether :data:`STEER_ENV` turns the WebSearch steer on."""
    return env.get(STEER_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def pre_tool_use_output(tool_name: Any, search_tool: Any, steer: bool) -> dict[str, Any]:
    """Hook output JSON for a PreToolUse of a built-in web search (``tool_name``): with the
    steer on, deny the call with a reason that points the model at ``search_tool`` (our
    ``search`` as the harness names it); else ``{}`` (the call goes ahead). A name that is not a
    plain tool name is not echoed (the reason reaches the model)."""
    if not steer or not isinstance(tool_name, str) or not _TOOL_NAME.fullmatch(tool_name):
        return {}
    tool = search_tool if isinstance(search_tool, str) and _TOOL_NAME.fullmatch(search_tool) else "search"
    reason = (
        f"Search the web with the {tool} tool instead of {tool_name}: it picks a quick or a thorough "
        "strategy per query and learns which pays off. Cite the returned URLs as markdown links."
    )
    return {
        "hookSpecificOutput": {
            "hookEventName": PRE_TOOL_USE,
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }
