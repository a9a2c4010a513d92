"""Params and results of every sidecar method, as pydantic models.

camelCase on the wire, snake_case in Python. Params models are strict (no type coercion,
unknown fields rejected) so a malformed request gets a -32602 reply naming the field;
results are dumped with :meth:`WireModel.wire` (aliases, ``None`` fields omitted).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from dsh_protocol.limits import (
    DEFAULT_ROUTE_RESULTS,  # noqa: F401  (named here too: the wire's constants, dsh_protocol.typescript)
    MAX_DEADLINE_MS,
    MAX_PLAN_QUERIES,
    MAX_QUERY_CHARS,
    MAX_RESULTS_LIMIT,
    MAX_RUN_ERROR_CHARS,
    MAX_RUN_SOURCES,
    MAX_TASK_CHARS,
    MAX_TOOL_TEXT,
    MIN_DEADLINE_MS,
)

#: What ``dsh/search`` may ask for: an arm by name, or ``auto`` (the bandit chooses).
StrategyChoice = Literal["auto", "quick", "thorough"]


class WireModel(BaseModel):
    """Base of every wire model: camelCase aliases, strict params, ``None`` omitted on dump;
    validators built on first use (``defer_build``: a server answers its first calls with a few
    of these models, and building all of them at import cost its start-up ~25 ms of CPU)."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        strict=True,
        frozen=False,
        defer_build=True,
    )

    def wire(self) -> dict[str, Any]:
        """Return the JSON object sent on the wire (camelCase keys, ``None`` fields dropped)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


# --------------------------------------------------------------------------- search


class SearchParams(WireModel):
    """``dsh/search`` params.

    ``max_results`` further caps the chosen arm's own cap (quick 5, thorough 10);
    ``strategy`` forces an arm (``auto`` lets the bandit choose); ``deadline_ms`` bounds the
    whole search, every provider attempt included (milliseconds).
    """

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    max_results: int | None = Field(default=None, ge=1, le=MAX_RESULTS_LIMIT)
    strategy: StrategyChoice = "auto"
    deadline_ms: int | None = Field(default=None, ge=MIN_DEADLINE_MS, le=MAX_DEADLINE_MS)


class Source(WireModel):
    """One normalised search result. Only ``url`` is required; absent fields are omitted."""

    url: str
    title: str | None = None
    snippet: str | None = None
    published_at: str | None = None


class Attempt(WireModel):
    """One provider tried (or skipped) for a search: ``outcome`` is ``ok``, the failure
    reason, or ``skipped: …``; ``ms`` is its wall time in milliseconds."""

    provider: str
    outcome: str
    ms: int


class SearchResult(WireModel):
    """``dsh/search`` result. ``duration_ms`` is the whole search in milliseconds;
    ``reward`` the bandit's heuristic reward in [0, 1] for this call."""

    search_id: str
    strategy: Literal["quick", "thorough"]
    sources: list[Source]
    content: str | None = None
    truncated: bool
    attempts: list[Attempt]
    duration_ms: int
    reward: float


class RouteSearchParams(WireModel):
    """``dsh/routeSearch`` params: one query through the router's chain, nothing else (the
    search-router seed's single-query semantics: one backend query per call, fallback in
    order, no strategy, no reformulation, no bandit). ``max_results`` caps the sources
    (default :data:`DEFAULT_ROUTE_RESULTS`); ``deadline_ms`` bounds the whole chain."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    max_results: int | None = Field(default=None, ge=1, le=MAX_RESULTS_LIMIT)
    deadline_ms: int | None = Field(default=None, ge=MIN_DEADLINE_MS, le=MAX_DEADLINE_MS)


class RouteSearchResult(WireModel):
    """``dsh/routeSearch`` result: the first provider's answer. ``provider`` is the one that
    answered; ``cached`` is true when the (opt-in) result cache answered instead of a
    provider; ``duration_ms`` is the whole search in milliseconds."""

    sources: list[Source]
    content: str | None = None
    truncated: bool
    provider: str | None = None
    cached: bool
    duration_ms: int


class SearchPlanParams(WireModel):
    """``dsh/searchPlan`` params: the bandit seed's ``search(query)`` when the harness runs the
    queries itself (the DSH bundle runs them over ``ctx.web``, so the search goes to whatever
    provider the profile has). ``max_results`` further caps the chosen arm's own cap."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    max_results: int | None = Field(default=None, ge=1, le=MAX_RESULTS_LIMIT)


class SearchPlanResult(WireModel):
    """``dsh/searchPlan`` result: the arm Thompson sampling chose for the query's class, the
    queries to run (``quick``: the query; ``thorough``: the query and its reframed variants,
    to run concurrently) and how many sources each may return (``max_results``). The search
    is pending until its ``dsh/searchReport`` (or it expires, unlearned)."""

    search_id: str
    arm: Literal["quick", "thorough"]
    queries: list[str]
    max_results: int


class ReportedSource(WireModel):
    """One source a reported query run returned (bounded: the harness's provider is untrusted)."""

    url: str = Field(min_length=1, max_length=8192)
    title: str | None = Field(default=None, max_length=4000)
    snippet: str | None = Field(default=None, max_length=20000)
    published_at: str | None = Field(default=None, max_length=200)


class SearchRun(WireModel):
    """One planned query as the harness ran it: its sources, or ``error`` (the provider's
    failure text) when it failed; ``outage`` when the failure says nothing of the search (no
    provider configured or reachable, a cancellation); ``cached`` when a result cache answered
    it (a cached answer is no evidence of speed); ``duration_ms`` its wall time."""

    query: str = Field(min_length=1, max_length=MAX_QUERY_CHARS)
    sources: list[ReportedSource] = Field(default_factory=list, max_length=MAX_RUN_SOURCES)
    content: str | None = Field(default=None, max_length=100_000)
    truncated: bool = False
    error: str | None = Field(default=None, max_length=MAX_RUN_ERROR_CHARS)
    outage: bool = False
    cached: bool = False
    duration_ms: int = Field(ge=0, le=MAX_DEADLINE_MS)


class SearchReportParams(WireModel):
    """``dsh/searchReport`` params: the runs of a planned search, in plan order, and the whole
    search's wall time (the runs of the thorough arm overlap), milliseconds."""

    search_id: str = Field(min_length=1, max_length=200)
    runs: list[SearchRun] = Field(min_length=1, max_length=MAX_PLAN_QUERIES)
    duration_ms: int = Field(ge=0, le=MAX_DEADLINE_MS)


class SearchReportResult(WireModel):
    """``dsh/searchReport`` result: the runs merged in plan order, de-duplicated by URL and
    capped at the arm's cap (``truncated`` when the cap dropped any); ``reward`` the seed's
    heuristic reward credited, ``None`` when the search taught nothing (every run failed for an
    outage, or every answer came from a cache)."""

    search_id: str
    sources: list[Source]
    content: str | None = None
    truncated: bool
    reward: float | None = None


class SearchFeedbackParams(WireModel):
    """``dsh/searchFeedback`` params: which returned URLs the final answer used."""

    search_id: str = Field(min_length=1, max_length=200)
    used_urls: list[str] = Field(max_length=1000)


class SearchFeedbackResult(WireModel):
    """``dsh/searchFeedback`` result: the answer-usage reward credited, in [0, 1]."""

    reward: float


# --------------------------------------------------------------------------- suggester


class ToolCall(WireModel):
    """The tool call the agent just ran: its name (case-insensitive) and its input object."""

    name: str = Field(min_length=1, max_length=200)
    input: dict[str, Any] = Field(default_factory=dict)


class ToolResult(WireModel):
    """What the tool returned (optional; the suggester never changes it)."""

    is_error: bool | None = None
    text: str | None = Field(default=None, max_length=10 * MAX_TOOL_TEXT)


class PostExecuteParams(WireModel):
    """``dsh/postExecute`` params: one finished tool call of one session and turn."""

    session_id: str = Field(min_length=1, max_length=500)
    turn: int = Field(ge=0)
    call_id: str | None = Field(default=None, max_length=500)
    tool: ToolCall
    result: ToolResult | None = None
    #: Longest this call may wait (ms) for a part of the workspace index it needs that is still
    #: being built (a fresh server's symbol pass or content index) before the suggester holds its
    #: note back (``suppressed not-ready``); the client's own time bound for the call, less what
    #: it needs to read the answer. Absent: the server's ``suggester.firstCallWaitMs`` for the
    #: first such call of a start, no wait after.
    wait_ms: int | None = Field(default=None, ge=0, le=60_000)


class NoteSource(WireModel):
    """The label of a suggester note (plan: "The delivery"), plus ``intent``, ``targets`` (exact
    paths) and ``display_targets`` (their display forms)."""

    kind: Literal["search-suggester"] = "search-suggester"
    form: Literal["notice"] = "notice"
    summary: str
    intent: str
    targets: list[str]
    #: ``targets`` as shown to a reader (escaped, quoted when not a plain path: a harness that
    #: prints targets prints these); ``targets`` keep the exact names, to open the files.
    display_targets: list[str] = Field(default_factory=list)


class AdditionalContext(WireModel):
    """One extra context added beside a tool result; never a replacement of it."""

    source: NoteSource
    text: str


class PostExecuteResult(WireModel):
    """``dsh/postExecute`` result: at most one note; an empty list is silence."""

    additional_contexts: list[AdditionalContext] = Field(default_factory=list)


class DismissParams(WireModel):
    """``dsh/dismiss`` params: an intent family (e.g. ``Version``) and optionally one path."""

    family: str = Field(min_length=1, max_length=100)
    path: str | None = Field(default=None, min_length=1, max_length=4096)


class DismissResult(WireModel):
    """``dsh/dismiss`` result: the ledger record line and when it expires (ISO-8601, UTC)."""

    record: str
    expires_at: str


class AssembleSectionParams(WireModel):
    """``dsh/assembleSection`` params."""

    session_id: str | None = Field(default=None, max_length=500)


class Section(WireModel):
    """The sticky system-prompt section."""

    name: str
    order: int
    text: str


class AssembleSectionResult(WireModel):
    """``dsh/assembleSection`` result: ``section`` is ``None`` (JSON null) when sticky mode is off."""

    section: Section | None = None

    def wire(self) -> dict[str, Any]:
        """Keep ``section: null`` on the wire: null is this method's documented "off"."""
        return {"section": self.section.wire() if self.section else None}


class TaskLeadParams(WireModel):
    """``dsh/taskLead`` params: the task's text (a prompt, an issue) of one session."""

    session_id: str | None = Field(default=None, max_length=500)
    task: str = Field(min_length=1, max_length=MAX_TASK_CHARS)


class TaskLeadResult(WireModel):
    """``dsh/taskLead`` result: at most one note (intent ``Task``) naming the files the task
    points to, once per session; an empty list is silence (off, already offered, nothing found)."""

    additional_contexts: list[AdditionalContext] = Field(default_factory=list)


class StatusParams(WireModel):
    """``dsh/status`` params (none today)."""


# --------------------------------------------------------------------------- status


class ChainEntry(WireModel):
    """One provider of the router's chain: its id and its endpoint (credentials redacted, no key)."""

    provider: str
    base_url: str


class ProviderHealthStatus(WireModel):
    """One provider's health. ``state``: ``unknown`` (never called), ``ok``, ``failing`` (last
    call failed, no cooldown) or ``cooling_down``; ``cooldown_seconds_left`` in whole seconds."""

    provider: str
    state: Literal["unknown", "ok", "failing", "cooling_down"]
    failure_class: str | None
    cooldown_seconds_left: int
    last_outcome: str | None
    successes: int
    failures: int


class CacheStatus(WireModel):
    """The router's result cache: live entries, hits and misses since the process started."""

    entries: int
    hits: int
    misses: int


class RouterStatus(WireModel):
    """The router block of ``dsh/status``: the chain in order, the providers named in the config
    but not usable (with the reason), the effective limits (milliseconds), health per chain
    provider, and the cache (``None`` when it is off)."""

    chain: list[ChainEntry]
    unavailable: list[str]
    timeout_ms: int
    deadline_ms: int
    empty_results_fallback: bool
    health: list[ProviderHealthStatus]
    cache: CacheStatus | None


class StateStatus(WireModel):
    """Where durable state lives: ``$DSH_HOME`` (default ``~/.dsh``). With a shared store
    (``state.backend`` a Redis/Valkey URL) the store's own status follows (``backend`` without
    its password, ``shared``, ``available``, …) and what this process wrote to it
    (``banditUpdates``, ``knowledgeCounted``): those keys are the state core's, passed through."""

    model_config = ConfigDict(extra="allow")

    dsh_home: str


class StatusResult(WireModel):
    """``dsh/status`` result. ``workspace`` is ``None`` (JSON null) without one;
    ``workspace_refused`` (omitted when ``None``) says why a workspace was not indexed. ``bandit``
    (posteriors, knobs, state file) and ``suggester`` (packs, counters, ledger, ``graph``) are
    the cores' own status objects, documented where they are built (``StrategyBandit.status``,
    ``Suggester.status``)."""

    version: str
    workspace: str | None
    workspace_refused: str | None = None
    router: RouterStatus
    bandit: dict[str, Any]
    suggester: dict[str, Any]
    state: StateStatus

    def wire(self) -> dict[str, Any]:
        """The JSON object: ``None`` kept as null (a status shows what is unset) except
        ``workspaceRefused``, present only when a workspace was refused."""
        return self.model_dump(
            by_alias=True, mode="json", exclude={"workspace_refused"} if self.workspace_refused is None else None
        )
