"""The commands that run a server: ``serve`` (stdio JSON-RPC, what a harness spawns) and ``mcp``
(the MCP stdio server).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from dsh_sidecar.cli.commands.base import CONFIG_ENV, HOME_ENV, PROVIDER_ENV, ConfigOpt, app, help_epilog
from dsh_sidecar.cli.serving import PROJECT_DIR_ENV, LogLevel
from dsh_sidecar.cli.serving import serve as run_server

LogLevelOpt = Annotated[
    LogLevel,
    typer.Option(
        "--log-level",
        metavar="LEVEL",
        envvar="DSH_LOG_LEVEL",
        case_sensitive=False,
        help="DEBUG, INFO, WARNING or ERROR (on stderr).",
    ),
]


@app.command(
    epilog=help_epilog(
        "dsh-search serve --config ~/.config/dsh/sidecar.yml --log-file ~/.dsh/serve.log",
        HOME_ENV,
        PROVIDER_ENV,
        "DSH_LOG_LEVEL: default of --log-level.",
    )
)
def serve(
    config: ConfigOpt = None,
    log_file: Annotated[
        Path | None,
        typer.Option(
            "--log-file",
            metavar="FILE",
            help="Append stderr (logs, bandit lines) to this file, for harnesses that drop stderr.",
        ),
    ] = None,
    log_level: LogLevelOpt = "WARNING",
    stdio: Annotated[
        bool,
        typer.Option(
            "--stdio", help="Accepted and ignored: stdio is the only transport (vscode-languageclient adds it)."
        ),
    ] = False,
) -> None:
    """Serve JSON-RPC (LSP framing) on stdin/stdout: what a harness spawns.

    The client's initializationOptions are laid over --config (object by object)."""
    raise typer.Exit(run_server(config, log_file, log_level))


@app.command(
    epilog=help_epilog(
        "dsh-search mcp --workspace . --config ~/.config/dsh-search/claude.yml",
        HOME_ENV,
        CONFIG_ENV,
        PROVIDER_ENV,
        f"{PROJECT_DIR_ENV}: the workspace when --workspace is not given (Claude Code sets it).",
        "DSH_LOG_LEVEL: default of --log-level.",
    )
)
def mcp(
    workspace: Annotated[
        Path | None,
        typer.Option(
            "--workspace", "-w", metavar="DIR", help=f"The repository (default: ${PROJECT_DIR_ENV}, else here)."
        ),
    ] = None,
    config: ConfigOpt = None,
    log_level: LogLevelOpt = "WARNING",
) -> None:
    r"""Serve the sidecar's tools over MCP on stdio (needs the \[mcp] extra).

    For the model: search, web_search, search_feedback, where_is and suggestion_dismiss. Claude Code's hooks call post_tool_use, session_start, pre_tool_use and stop (not in the model's tool list)."""
    raise typer.Exit(_mcp(workspace, config, log_level))


def _mcp(workspace: Path | None, config: Path | None, log_level: str) -> int:
    """``dsh-search mcp`` (:func:`dsh_sidecar.cli.serving.mcp`, which a plain ``mcp`` command
    line reaches without this app)."""
    from dsh_sidecar.cli.serving import mcp as run_mcp

    return run_mcp(workspace, config, log_level)
