"""``dsh-search``: the sidecar's command line (Typer for commands, Rich for output).

Commands: ``serve`` (what a bare ``dsh-search`` runs when stdin is not a terminal: the stdio
JSON-RPC server a harness spawns; on a terminal it prints the help), ``query`` (one web
search), ``suggest`` (what the suggester would say for one tool call), ``status``, ``doctor``,
``config`` (the config files found and where each value came from), ``cache dir|clean|prune``,
``bandit reset``, ``replay`` (a trace through a spawned sidecar), ``mcp`` (the MCP server) and
``completion bash|zsh|fish``.

Every command takes ``--json`` (one JSON document on stdout, failures included as
``{"error": {code, message, data?}}``, the JSON-RPC error object), ``--quiet`` and
``--verbose``; output is Rich on a terminal, plain text in a pipe, no colour with
``NO_COLOR``. Exit codes: 0 ok, 1 the search (replay, doctor check) failed, 2 bad arguments
or config, 141 stdout closed by the reader. See :mod:`dsh_sidecar.cli.output`.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

from dsh_sidecar.cli.serving import mcp_args, mcp_main, serve_args, serve_main

if TYPE_CHECKING:
    from dsh_sidecar.cli.commands import app, render_status

__all__ = ["app", "main", "render_status"]


#: What ``dsh-search mcp`` started with stdout closed writes to stderr (then exit code 1).
MCP_STDOUT_CLOSED = "dsh-search mcp: stopping: stdout (fd 1) is closed: there is no MCP channel to answer on\n"


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dsh-search`` console script; returns the exit code (0 ok, 1 failed,
    2 bad arguments or config, 141 closed stdout; 1 for ``mcp`` started with stdout closed). A
    plain ``serve`` or ``mcp`` command line (:func:`~dsh_sidecar.cli.serving.serve_args`,
    :func:`~dsh_sidecar.cli.serving.mcp_args`) starts the server without importing the Typer
    app; every other one is parsed by it (:func:`dsh_sidecar.cli.commands.main`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    serve = serve_args(args) if not _help_instead(args) else None
    if serve is not None:
        return serve_main(*serve)
    if sys.stdout is None:
        # started with stdout closed (`dsh-search status >&-`): Python has no stdout object
        # then; like a reader gone before the first write, 141 and nothing else. The MCP
        # server's channel is stdout: like `serve`, it says why it cannot start, and fails.
        if args[:1] == ["mcp"]:
            if sys.stderr is not None:
                sys.stderr.write(MCP_STDOUT_CLOSED)
            return 1
        from dsh_sidecar.cli.exits import EXIT_CLOSED_PIPE

        return EXIT_CLOSED_PIPE
    mcp = mcp_args(args)
    if mcp is not None:  # a plain `mcp` command line: served without the Typer app, as `serve`
        return mcp_main(*mcp)
    from dsh_sidecar.cli.commands import main as commands_main

    return commands_main(args)


#: Set by a shell asking for completions (``dsh-search completion``'s script): the Typer app answers.
COMPLETE_ENV = "_DSH_SEARCH_COMPLETE"


def _help_instead(args: list[str]) -> bool:
    """Whether a command line that would serve goes to the Typer app instead: a bare
    ``dsh-search`` typed at a terminal (it prints the help) or a shell's completion request."""
    if os.environ.get(COMPLETE_ENV):
        return True
    if args:
        return False
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


def __getattr__(name: str) -> Any:
    """``app`` and ``render_status``, from :mod:`.commands` on first use (PEP 562)."""
    if name in ("app", "render_status"):
        from dsh_sidecar.cli import commands

        return getattr(commands, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
