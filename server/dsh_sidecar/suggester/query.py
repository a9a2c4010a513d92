"""The old import path of the query model, kept for the modules outside the suggester that
still use it (``mcp/server.py``: ``QUESTION_TOOL``; ``sidecar.py``: ``warm_shell_parser``).
The model lives in ``parse/``; import from there."""

from __future__ import annotations

from dsh_sidecar.suggester.parse import QUESTION_TOOL, warm_shell_parser

__all__ = ["QUESTION_TOOL", "warm_shell_parser"]
