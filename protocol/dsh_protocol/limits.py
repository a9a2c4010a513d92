"""The wire's size and range limits, apart from the models (:mod:`dsh_protocol.models`, which
uses them and names them too): a front end that only declares its arguments with them (the MCP
server's tools) imports these without building every model."""

from __future__ import annotations

#: Longest accepted ``dsh/search`` query, in characters. Search APIs cap queries far lower
#: (Brave: 400 characters, 50 words); anything longer is a harness bug, not a search.
MAX_QUERY_CHARS = 2000
#: Largest ``maxResults`` a caller may ask for (the thorough arm's cap is 10; providers cap at 20-100).
MAX_RESULTS_LIMIT = 50
#: Bounds of a per-request ``deadlineMs`` (milliseconds).
MIN_DEADLINE_MS = 100
MAX_DEADLINE_MS = 600_000
#: Longest free-text field of a tool call that the suggester looks at (characters).
MAX_TOOL_TEXT = 100_000
#: Sources a ``dsh/routeSearch`` returns when the caller names no ``maxResults`` (the router
#: seed's providers return 5-10 by default; DSH's ``web_search`` asks for its own number).
DEFAULT_ROUTE_RESULTS = 10

#: Most query variants one bandit search may run (the thorough arm runs 3).
MAX_PLAN_QUERIES = 10
#: Most sources one reported query run may carry (the arms cap at 10; providers at 20-100).
MAX_RUN_SOURCES = 100
#: Longest error text of a reported run, characters.
MAX_RUN_ERROR_CHARS = 4000

#: Longest task text ``dsh/taskLead`` accepts, characters (the sidecar reads its head).
MAX_TASK_CHARS = 200_000

__all__ = [
    "DEFAULT_ROUTE_RESULTS",
    "MAX_DEADLINE_MS",
    "MAX_PLAN_QUERIES",
    "MAX_QUERY_CHARS",
    "MAX_RESULTS_LIMIT",
    "MAX_RUN_ERROR_CHARS",
    "MAX_RUN_SOURCES",
    "MAX_TASK_CHARS",
    "MAX_TOOL_TEXT",
    "MIN_DEADLINE_MS",
]
