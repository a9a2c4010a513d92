"""The MCP front end (``dsh-search mcp``) over the same :class:`~dsh_sidecar.sidecar.Sidecar`
as the JSON-RPC server; needs the optional ``mcp`` extra (in the checkout: ``pip install -e '.[mcp]'``; the
distribution is not on PyPI).

``hooks`` maps Claude Code's hook fields to sidecar params and results to hook output (no SDK
needed); ``server`` builds the MCP server and runs it on stdio.
"""

from __future__ import annotations

import sys

#: What ``dsh-search mcp`` prints (stderr) when the optional SDK is not installed.
MISSING_SDK = (
    "dsh-search mcp: the MCP SDK is not installed; in the checkout: pip install '.[mcp]' (editable: -e '.[mcp]')\n"
)


def run(argv: list[str] | None = None) -> int:
    """Entry of ``dsh-search mcp``: exit code 2 when the ``mcp`` extra is missing."""
    try:
        from dsh_sidecar.mcp.server import main
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("mcp", "mcp_types"):
            sys.stderr.write(MISSING_SDK)
            return 2
        raise
    return main(argv)
