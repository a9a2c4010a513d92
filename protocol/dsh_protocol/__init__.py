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
    DismissParams,
    DismissResult,
    NoteSource,
    PostExecuteParams,
    PostExecuteResult,
    SearchFeedbackParams,
    SearchFeedbackResult,
    SearchParams,
    SearchResult,
    Section,
    Source,
    StatusParams,
    ToolCall,
    ToolResult,
    WireModel,
)

__all__ = [
    "AdditionalContext",
    "AssembleSectionParams",
    "AssembleSectionResult",
    "Attempt",
    "DismissParams",
    "DismissResult",
    "ErrorCode",
    "Method",
    "NoteSource",
    "PostExecuteParams",
    "PostExecuteResult",
    "SearchFeedbackParams",
    "SearchFeedbackResult",
    "SearchParams",
    "SearchResult",
    "Section",
    "Source",
    "StatusParams",
    "ToolCall",
    "ToolResult",
    "WireModel",
]
