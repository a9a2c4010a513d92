"""The ``dsh-search`` Typer app and what its commands share: the sub-apps, the common options
(``--json``, ``--quiet``, ``--verbose``, ``--config``, ``--color``), the help's environment and
exit-code lines, reading the config, and turning a :class:`CliError` into its exit code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from dsh_sidecar import __version__
from dsh_sidecar.cli.commands.helpstyle import PlainGroup, PlainTyper
from dsh_sidecar.cli.exits import closed_pipe
from dsh_sidecar.cli.output import (
    CliError,
    Output,
    config_error,
    usage_error,
)
from dsh_sidecar.cli.serving import read_config
from dsh_sidecar.cli.serving import serve as run_server
from dsh_sidecar.errors import ConfigError

if TYPE_CHECKING:  # the config modules are imported by the commands that read a config
    from dsh_sidecar.cli.discovery import Discovered
    from dsh_sidecar.config import SidecarConfig


PROVIDER_ENV = (
    "EXA_API_KEY, TAVILY_API_KEY, BRAVE_SEARCH_API_KEY, PPLX_API_KEY, DEEPSEEK_API_KEY: provider keys (a set key "
    "puts its provider in the zero-config chain). SEARXNG_BASE_URL: a SearXNG to ask first."
)
HOME_ENV = "DSH_HOME: where state lives (default ~/.dsh)."
CONFIG_ENV = (
    "DSH_SEARCH_CONFIG: the config file when --config is not given (then .dsh/config.yml in the workspace,"
    " then ~/.config/dsh-search/config.yml)."
)
CACHE_ENV = "DSH_CACHE_DIR, XDG_CACHE_HOME: where the rebuildable indexes live (default ~/.cache/dsh-search)."
COLOR_ENV = "NO_COLOR: no colour on a terminal (--color always overrides)."
EXIT_CODES = "Exit codes: 0 ok, 1 failed (search, replay, doctor check), 2 bad arguments or config."


def help_epilog(example: str, *env: str) -> str:
    return f"Example: {example}\n\nEnvironment: {' '.join(env)}\n\n{EXIT_CODES}"


class _Listed(PlainGroup):
    """The top-level commands in the order the help lists them, whichever module of this package
    defines them (Typer lists them in the order they were registered); the groups follow."""

    ORDER = ("serve", "query", "suggest", "status", "doctor", "replay", "mcp", "completion", "config")

    def list_commands(self, ctx: Any) -> list[str]:  # Any: Typer's vendored click Context
        names = super().list_commands(ctx)
        return sorted(names, key=lambda n: self.ORDER.index(n) if n in self.ORDER else len(self.ORDER))


app = PlainTyper(
    cls=_Listed,
    name="dsh-search",
    help="dsh-search-sidecar: web-search router, strategy bandit and search suggester for coding agents.",
    epilog=help_epilog(
        "dsh-search query 'httpx streaming timeout'",
        HOME_ENV,
        CONFIG_ENV,
        PROVIDER_ENV,
        COLOR_ENV,
        "DSH_LOG_LEVEL: serve's log level.",
    ),
    # completion is a command (dsh-search completion bash|zsh|fish), as gh and rg have it
    add_completion=False,
    invoke_without_command=True,
    no_args_is_help=False,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
bandit_app = PlainTyper(
    help="Look after the bandit's learned posteriors.",
    epilog=help_epilog("dsh-search bandit reset", HOME_ENV),
    no_args_is_help=True,
)
app.add_typer(bandit_app, name="bandit", cls=PlainGroup)

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout (errors too).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Only the result (and errors); no progress.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Also the log lines (bandit, suggester ledger).")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        metavar="FILE",
        help="YAML/JSON file with router/bandit/suggester/state blocks (default: $DSH_SEARCH_CONFIG); laid over"
        " the project's .dsh/config.yml and your ~/.config/dsh-search/config.yml (dsh-search config shows the result).",
    ),
]
ColorChoice = Literal["auto", "always", "never"]  # :data:`COLOR_CHOICES`, checked by the parser
ColorOpt = Annotated[
    ColorChoice | None, typer.Option("--color", metavar="WHEN", help="Colour: auto (on a terminal), always or never.")
]


def command_output(ctx: typer.Context, as_json: bool, quiet: bool, verbose: bool, color: str | None = None) -> Output:
    """The command's :class:`Output`: its own flags or the ones given before the command."""
    top = ctx.find_root().obj or {}
    color = color or top.get("color") or "auto"
    return Output(
        json=as_json or top.get("json", False),
        quiet=quiet or top.get("quiet", False),
        verbose=verbose or top.get("verbose", False),
        color=color,
    )


def discover_config(path: Path | None, workspace: Path | None) -> Discovered:
    """The config files of a command (:mod:`dsh_sidecar.cli.discovery`); a bad ``--config``,
    ``$DSH_SEARCH_CONFIG`` or user file is a usage error (exit 2)."""
    from dsh_sidecar.cli.discovery import discover

    try:
        return discover(
            path, workspace if workspace is not None and workspace.is_dir() else None, os.environ, read_config
        )
    except ConfigError as exc:
        raise config_error(exc) from None


def command_config(out: Output, path: Path | None, workspace: Path | None = Path(".")) -> SidecarConfig:
    """The command's config: its files found and merged (warnings about the project file on
    stderr), validated. Raises :class:`CliError` (exit 2) for a bad one."""
    return validated_config(out, discover_config(path, workspace))


def validated_config(out: Output, found: Discovered) -> SidecarConfig:
    from dsh_sidecar.config import parse_config

    for line in found.warnings():
        out.warn(line)
    try:
        return parse_config(found.merged())
    except ConfigError as exc:
        raise config_error(exc) from None


def check_folder(flag: str, path: Path | None) -> None:
    if path is not None and not path.is_dir():
        raise usage_error(f"{flag} {path} is not a folder", flag=flag)


def finish(out: Output, run: Callable[[], object]) -> None:
    """Run ``run()``; turn a :class:`CliError` into its report and exit code, a closed stdout
    into :data:`EXIT_CLOSED_PIPE`."""
    try:
        try:
            run()
        except CliError as exc:
            raise typer.Exit(out.error(exc)) from None
        out.stdout.flush()
    except BrokenPipeError:  # before the parser's own EPIPE handler turns it into exit code 1
        raise typer.Exit(closed_pipe()) from None


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"dsh-search {__version__}\n")
        raise typer.Exit(0)


def stdin_is_terminal() -> bool:
    """Whether a person is typing at stdin (then a bare ``dsh-search`` shows its help, not a
    server waiting for JSON-RPC)."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (ValueError, OSError):
        return False


@app.callback()
def _root(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
    version: Annotated[
        bool, typer.Option("--version", "-V", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Without a command: the help on a terminal; serve JSON-RPC on stdio when stdin is a pipe
    (what a harness spawns: ``dsh-search serve``)."""
    ctx.obj = {"json": as_json, "quiet": quiet, "verbose": verbose, "color": color}
    if ctx.invoked_subcommand is None:
        if stdin_is_terminal():
            sys.stdout.write(ctx.get_help() + "\n")
            raise typer.Exit(0)
        raise typer.Exit(run_server(None, None, os.environ.get("DSH_LOG_LEVEL", "WARNING")))


cache_app = PlainTyper(
    help="Look after the rebuildable indexes (workspace indexes, the offline docs index) in the cache directory.",
    epilog=help_epilog("dsh-search cache prune --dry-run", CACHE_ENV, HOME_ENV),
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache", cls=PlainGroup)
