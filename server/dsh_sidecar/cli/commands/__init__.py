"""The ``dsh-search`` commands (Typer) behind :func:`dsh_sidecar.cli.main`; see that package's
docstring for the options, output and exit codes.

``base`` holds the app, its shared options and helpers; the commands are grouped by what they
serve: ``servers`` (``serve``, ``mcp``: what a harness or an MCP client spawns), ``ask`` (one
question to a core from a terminal: ``query``, ``suggest``, ``replay``) and ``machine`` (this
machine's set-up and state: ``status``, ``doctor``, ``config``, ``completion``, ``bandit``,
``cache``). Importing a group registers its commands.
"""

from __future__ import annotations

import os
import sys

import typer
from typer._click import exceptions as click_errors

from dsh_sidecar.cli.commands import ask, machine, servers  # noqa: F401  (importing a group registers its commands)
from dsh_sidecar.cli.commands.base import app
from dsh_sidecar.cli.commands.usage import parser_error
from dsh_sidecar.cli.exits import EXIT_OK, EXIT_USAGE, WRITE_ERRNOS, closed_pipe, unwritable
from dsh_sidecar.cli.output import Output
from dsh_sidecar.cli.render import render_status

__all__ = ["app", "main", "render_status"]


def _wants_json(argv: list[str]) -> bool:
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dsh-search`` console script; returns the exit code (0 ok, 1 failed,
    2 bad arguments or config, 141 closed stdout)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if os.environ.get("_DSH_SEARCH_COMPLETE"):  # a shell asking for completions (dsh-search completion)
        from typer._completion_classes import completion_init

        completion_init()
    command = typer.main.get_command(app)
    try:
        try:
            rv = command.main(args=args, prog_name="dsh-search", standalone_mode=False)
            code = rv if isinstance(rv, int) else EXIT_OK
        except typer.Exit as exc:
            code = exc.exit_code
        except typer.Abort:
            code = 130
        except KeyboardInterrupt:
            code = 130
        except click_errors.NoArgsIsHelpError as exc:  # `dsh-search cache`: the group's help
            exc.show()
            code = EXIT_USAGE
        except click_errors.UsageError as exc:
            # found by the parser: a bad or missing value, an unknown option or command
            code = Output(json=_wants_json(args)).error(parser_error(exc, args, command))
        sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()
    except SystemExit as exc:
        # Rich's console (``--help``) and Click's parser turn a closed pipe into SystemExit(1)
        # raised while handling the BrokenPipeError: still a closed pipe (``dsh-search --help | head -1``)
        if isinstance(exc.__context__, BrokenPipeError):
            return closed_pipe()
        raise
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        return unwritable(exc)
    return code
