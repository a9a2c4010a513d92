"""The MCP front end (``dsh-search mcp``) over the same :class:`~dsh_sidecar.sidecar.Sidecar`
as the JSON-RPC server; needs the optional ``mcp`` extra (the official MCP SDK).

``hooks`` maps Claude Code's hook fields to sidecar params and results to hook output (no SDK
needed); ``server`` builds the MCP server and runs it on stdio. The command line (options,
help, config files) is the CLI's (:mod:`dsh_sidecar.cli.commands`), which calls :func:`run`.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dsh_sidecar.config import SidecarConfig

#: The modules the optional extra provides.
SDK_MODULES = ("mcp", "mcp_types")


class SdkMissing(Exception):
    """The MCP SDK (the ``mcp`` extra) is not installed."""


def sdk_installed() -> bool:
    """Whether the MCP SDK can be imported (found, not imported)."""
    for name in SDK_MODULES:
        try:
            if importlib.util.find_spec(name) is None:
                return False
        except (ImportError, ValueError):  # a module set to None in sys.modules: blocked
            return False
    return True


def run(config: SidecarConfig, workspace: Path, log_level: str, env: Mapping[str, str] | None = None) -> int:
    """Serve MCP on stdio (:func:`dsh_sidecar.mcp.server.main`); the exit code. Raises
    :class:`SdkMissing` when the extra is not installed."""
    from dsh_sidecar.workspace.heap import collections_paused

    try:  # the SDK's and the server's imports: long-lived objects, no collection scans them again
        with collections_paused(freeze=True, once=True):
            from dsh_sidecar.mcp.server import main
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in SDK_MODULES:
            raise SdkMissing(exc.name) from None
        raise
    return main(config, workspace, log_level, env)
