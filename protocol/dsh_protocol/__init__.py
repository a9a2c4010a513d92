"""Wire types of dsh-search-sidecar: method names, params/result models, error codes.

Imported as ``dsh_protocol``. It depends on pydantic only, so a client (a harness, an
editor extension, a test) can use it without the server.
"""

from typing import TYPE_CHECKING, Any

from dsh_protocol.errors import ErrorCode
from dsh_protocol.methods import Method

if TYPE_CHECKING:
    from dsh_protocol.models import (
        AdditionalContext,
        AssembleSectionParams,
        AssembleSectionResult,
        Attempt,
        CacheStatus,
        ChainEntry,
        DismissParams,
        DismissResult,
        NoteSource,
        PostExecuteParams,
        PostExecuteResult,
        ProviderHealthStatus,
        ReportedSource,
        RouterStatus,
        RouteSearchParams,
        RouteSearchResult,
        SearchFeedbackParams,
        SearchFeedbackResult,
        SearchParams,
        SearchPlanParams,
        SearchPlanResult,
        SearchReportParams,
        SearchReportResult,
        SearchResult,
        SearchRun,
        Section,
        Source,
        StateStatus,
        StatusParams,
        StatusResult,
        TaskLeadParams,
        TaskLeadResult,
        ToolCall,
        ToolResult,
        WireModel,
    )

__all__ = [
    "AdditionalContext",
    "AssembleSectionParams",
    "AssembleSectionResult",
    "Attempt",
    "CacheStatus",
    "ChainEntry",
    "DismissParams",
    "DismissResult",
    "ErrorCode",
    "Method",
    "NoteSource",
    "PostExecuteParams",
    "PostExecuteResult",
    "ProviderHealthStatus",
    "ReportedSource",
    "RouteSearchParams",
    "RouteSearchResult",
    "RouterStatus",
    "SearchFeedbackParams",
    "SearchFeedbackResult",
    "SearchParams",
    "SearchPlanParams",
    "SearchPlanResult",
    "SearchReportParams",
    "SearchReportResult",
    "SearchResult",
    "SearchRun",
    "Section",
    "Source",
    "StateStatus",
    "StatusParams",
    "StatusResult",
    "TaskLeadParams",
    "TaskLeadResult",
    "ToolCall",
    "ToolResult",
    "WireModel",
]


def __getattr__(name: str) -> Any:
    """The pydantic models, imported on first use (PEP 562): ``ErrorCode`` and ``Method`` alone
    do not build every wire model (a server's ``initialize`` reply needs neither)."""
    if name in __all__:
        from dsh_protocol import models

        value = getattr(models, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
