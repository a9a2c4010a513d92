"""JSON-RPC method names of the sidecar (DESIGN.md, "Wire protocol")."""

from __future__ import annotations

from typing import Final


class Method:
    """Method-name constants. ``dsh/*`` are the sidecar's own; the rest are LSP standard."""

    SEARCH: Final = "dsh/search"
    SEARCH_FEEDBACK: Final = "dsh/searchFeedback"
    ROUTE_SEARCH: Final = "dsh/routeSearch"
    SEARCH_PLAN: Final = "dsh/searchPlan"
    SEARCH_REPORT: Final = "dsh/searchReport"
    POST_EXECUTE: Final = "dsh/postExecute"
    DISMISS: Final = "dsh/dismiss"
    ASSEMBLE_SECTION: Final = "dsh/assembleSection"
    TASK_LEAD: Final = "dsh/taskLead"
    STATUS: Final = "dsh/status"
    TOOLS_CHANGED: Final = "dsh/toolsChanged"  # notification

    INITIALIZE: Final = "initialize"
    SHUTDOWN: Final = "shutdown"
    EXIT: Final = "exit"
    DID_CHANGE_CONFIGURATION: Final = "workspace/didChangeConfiguration"
    DID_CHANGE_WATCHED_FILES: Final = "workspace/didChangeWatchedFiles"
    LOG_MESSAGE: Final = "window/logMessage"  # server -> client
    CANCEL_REQUEST: Final = "$/cancelRequest"


#: The sidecar's own notifications: sent with an id, each is an invalid request (-32600), as
#: LSP's and MCP's are (``dsh_protocol.ids.notification_with_id``), and runs nothing.
NOTIFICATIONS: Final = frozenset({Method.TOOLS_CHANGED})
