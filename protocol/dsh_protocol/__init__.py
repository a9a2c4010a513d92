"""Wire types of dsh-search-sidecar: method names, params/result models, error codes.

Imported as ``dsh_protocol``. It depends on pydantic only, so a client (a harness, an
editor extension, a test) can use it without the server.
"""

from dsh_protocol.errors import ErrorCode
from dsh_protocol.methods import Method
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
    RouterStatus,
    SearchFeedbackParams,
    SearchFeedbackResult,
    SearchParams,
    SearchResult,
    Section,
    Source,
    StateStatus,
    StatusParams,
    StatusResult,
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
    "RouterStatus",
    "SearchFeedbackParams",
    "SearchFeedbackResult",
    "SearchParams",
    "SearchResult",
    "Section",
    "Source",
    "StateStatus",
    "StatusParams",
    "StatusResult",
    "ToolCall",
    "ToolResult",
    "WireModel",
]
