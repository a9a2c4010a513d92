"""JSON-RPC error codes the sidecar replies with.

The -327xx/-326xx codes are JSON-RPC 2.0's; -32002 and -32800 are LSP's
(``ServerNotInitialized``, ``RequestCancelled``); -32001 is ours, in the range LSP leaves
to servers.
"""

from __future__ import annotations

from enum import IntEnum


class ErrorCode(IntEnum):
    """Error codes of ``error.code`` in a JSON-RPC error reply."""

    PARSE_ERROR = -32700
    INVALID_REQUEST = -32600
    METHOD_NOT_FOUND = -32601
    INVALID_PARAMS = -32602
    INTERNAL_ERROR = -32603
    SERVER_NOT_INITIALIZED = -32002
    REQUEST_CANCELLED = -32800
    #: every provider of the chain failed; ``message`` is the router seed's aggregated,
    #: key-free text, ``data.attempts`` lists each provider's outcome and ``data.outage`` is true
    #: when every failure was an outage (nothing configured or reachable: nothing to learn from).
    SEARCH_FAILED = -32001
