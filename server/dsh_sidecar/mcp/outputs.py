"""The MCP tools' outputs: one pydantic model per tool (its JSON Schema is the tool's
``outputSchema``), snake_case like the tools' arguments.

**Naming**: snake_case for every MCP argument and output field, as the Python reference servers
(``mcp-server-fetch``: ``max_length``, ``start_index``; ``mcp-server-git``: ``repo_path``,
``max_count``) and Claude Code's own tools and hook fields (``file_path``, ``tool_input``,
``session_id``) spell them, so a model passes on what it read (``search_id`` from ``search`` to
``search_feedback``) without re-spelling it. The JSON-RPC methods (``dsh/*``, LSP framing) keep
LSP's camelCase; that is a different protocol, for harness code, not for models.

**What a model sees**: Claude Code 2.1.328 hands the model a result's ``structuredContent`` (as
compact JSON) in place of its text, and the MCP specification leaves that choice to each client,
so nothing model-facing carries what the model must not see: no strategy, reward or provider
attempts (they are in ``dsh/status``, the decision log and the ``[bandit-search]`` log line).
The text block is the same JSON (the specification's advice for structured results).
"""

from __future__ import annotations

import json

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel, ConfigDict, Field


class Output(BaseModel):
    """Base of the output models: closed (no field beyond the schema's)."""

    model_config = ConfigDict(extra="forbid")


class WebSource(Output):
    """One search result."""

    url: str
    title: str | None = Field(default=None, description="the page title")
    snippet: str | None = Field(default=None, description="a passage of the page about the query")
    published_at: str | None = Field(default=None, description="when the page was published, as the provider gave it")


class WebResults(Output):
    """What web_search returns: the sources of the first provider that answered."""

    sources: list[WebSource]
    content: str | None = Field(default=None, description="an answer the provider wrote, when it gives one")
    truncated: bool = Field(description="true when more sources were found than returned")


class SearchResults(WebResults):
    """What search returns: the sources, and the id search_feedback takes."""

    search_id: str = Field(description="pass it to search_feedback after answering")


class Target(Output):
    """One file where the thing lives, and why."""

    path: str = Field(description="path relative to the workspace")
    display: str = Field(
        description="the path as a reader should see it: escaped, and in double quotes when it holds a space, colon or quote"
    )
    reason: str = Field(description="why this file is where the thing lives")


class WhereIs(Output):
    """What where_is returns: what the question is about and the files to look at."""

    intent: str | None = Field(
        description="the kind of thing asked about (Version, Config, Test, Symbol, …); null: none applies"
    )
    confidence: float | None = Field(
        default=None,
        ge=0,
        le=1,
        description=(
            "how sure the suggester is that the intent applies, 0-1 (it volunteers a note from "
            "0.75 on, 0.85 for Version, Path and Ledger)"
        ),
    )
    about: str | None = Field(default=None, description="the intent in words")
    targets: list[Target]
    index: str | None = Field(
        default=None,
        description="set while the workspace index is still being built: the answer is from the part that is ready",
    )


class Dismissal(Output):
    """What suggestion_dismiss returns: the record written and when it lapses."""

    record: str = Field(description="the ledger record, e.g. 'dismissed Version *'")
    expires_at: str = Field(description="when the dismissal lapses (UTC, ISO 8601)")


class FeedbackReceipt(Output):
    """What search_feedback returns: whether the answer used the search's sources."""

    search_id: str
    used: bool = Field(description="true when one of the reported URLs is one of the search's sources")


def structured(value: Output) -> CallToolResult:
    """A tool result whose ``structuredContent`` is ``value`` (optional fields left at their
    default omitted) and whose text is the same JSON."""
    data = value.model_dump(mode="json", exclude_defaults=True)
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def failure(text: str) -> CallToolResult:
    """A tool error whose only text is ``text`` (no prefix: the router's aggregated error is
    the seed's text, byte for byte)."""
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
