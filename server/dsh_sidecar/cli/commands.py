"""The ``dsh-search`` commands (Typer) behind :func:`dsh_sidecar.cli.main`; see that package's
docstring for the options, output and exit codes."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from dsh_protocol.errors import ErrorCode
from dsh_protocol.models import MAX_RESULTS_LIMIT
from pydantic import ValidationError

from dsh_sidecar import __version__
from dsh_sidecar.cli.exits import EXIT_FAILED, EXIT_OK, EXIT_USAGE, WRITE_ERRNOS, closed_pipe, unwritable
from dsh_sidecar.cli.output import (
    COLOR_CHOICES,
    CliError,
    Output,
    config_error,
    reporter,
    usage_error,
)
from dsh_sidecar.cli.render import render_status
from dsh_sidecar.cli.serving import PROJECT_DIR_ENV, read_config
from dsh_sidecar.cli.serving import serve as run_server
from dsh_sidecar.errors import ConfigError, first_problem

if TYPE_CHECKING:  # the config modules are imported by the commands that read a config
    from dsh_sidecar.cli.discovery import Discovered
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.state.config import StateConfig

__all__ = ["app", "main", "render_status"]

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


def _epilog(example: str, *env: str) -> str:
    return f"Example: {example}\n\nEnvironment: {' '.join(env)}\n\n{EXIT_CODES}"


app = typer.Typer(
    name="dsh-search",
    help="dsh-search-sidecar: web-search router, strategy bandit and search suggester for coding agents.",
    epilog=_epilog(
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
bandit_app = typer.Typer(
    help="Look after the bandit's learned posteriors.",
    epilog=_epilog("dsh-search bandit reset", HOME_ENV),
    no_args_is_help=True,
)
app.add_typer(bandit_app, name="bandit")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout (errors too).")]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Only the result (and errors); no progress.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Also the log lines (bandit, suggester ledger).")]
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config",
        "-c",
        help="YAML/JSON file with router/bandit/suggester/state blocks (default: $DSH_SEARCH_CONFIG); laid over"
        " the project's .dsh/config.yml and your ~/.config/dsh-search/config.yml (dsh-search config shows the result).",
    ),
]
ColorOpt = Annotated[
    str | None, typer.Option("--color", metavar="WHEN", help="Colour: auto (on a terminal), always or never.")
]


def _output(ctx: typer.Context, as_json: bool, quiet: bool, verbose: bool, color: str | None = None) -> Output:
    """The command's :class:`Output`: its own flags or the ones given before the command."""
    top = ctx.find_root().obj or {}
    color = color or top.get("color") or "auto"
    if color not in COLOR_CHOICES:
        raise typer.Exit(
            Output(json=as_json or top.get("json", False)).error(
                usage_error(f"bad --color: {color!r} (auto, always or never)", flag="--color")
            )
        )
    return Output(
        json=as_json or top.get("json", False),
        quiet=quiet or top.get("quiet", False),
        verbose=verbose or top.get("verbose", False),
        color=color,
    )


def _discover(path: Path | None, workspace: Path | None) -> Discovered:
    """The config files of a command (:mod:`dsh_sidecar.cli.discovery`); a bad ``--config``,
    ``$DSH_SEARCH_CONFIG`` or user file is a usage error (exit 2)."""
    from dsh_sidecar.cli.discovery import discover

    try:
        return discover(
            path, workspace if workspace is not None and workspace.is_dir() else None, os.environ, read_config
        )
    except ConfigError as exc:
        raise config_error(exc) from None


def _config(out: Output, path: Path | None, workspace: Path | None = Path(".")) -> SidecarConfig:
    """The command's config: its files found and merged (warnings about the project file on
    stderr), validated. Raises :class:`CliError` (exit 2) for a bad one."""
    return _validated(out, _discover(path, workspace))


def _validated(out: Output, found: Discovered) -> SidecarConfig:
    from dsh_sidecar.config import parse_config

    for line in found.warnings():
        out.warn(line)
    try:
        return parse_config(found.merged())
    except ConfigError as exc:
        raise config_error(exc) from None


def _folder(flag: str, path: Path | None) -> None:
    if path is not None and not path.is_dir():
        raise usage_error(f"{flag} {path} is not a folder", flag=flag)


def _finish(out: Output, run: Callable[[], object]) -> None:
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


# ---------------------------------------------------------------------------- serve


@app.command(
    epilog=_epilog(
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
            "--log-file", help="Append stderr (logs, bandit lines) to this file, for harnesses that drop stderr."
        ),
    ] = None,
    log_level: Annotated[
        str, typer.Option("--log-level", envvar="DSH_LOG_LEVEL", help="DEBUG, INFO, WARNING or ERROR.")
    ] = "WARNING",
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


# ---------------------------------------------------------------------------- query


@app.command(
    epilog=_epilog(
        "dsh-search query 'how to fix a leaky faucet' --strategy quick --json | jq '.sources[].url'",
        PROVIDER_ENV,
        HOME_ENV,
        COLOR_ENV,
    )
)
def query(
    ctx: typer.Context,
    text: Annotated[str, typer.Argument(metavar="QUERY", help="What to search for.")],
    strategy: Annotated[
        str, typer.Option("--strategy", "-s", help="auto (the bandit chooses), quick or thorough.")
    ] = "auto",
    max_results: Annotated[
        int | None,
        typer.Option(
            "--max-results",
            "-n",
            help=f"How many sources to return, 1–{MAX_RESULTS_LIMIT} (default: the strategy's, quick 5, thorough 10);"
            " fewer only when the providers have no more, and then it says so.",
        ),
    ] = None,
    deadline_ms: Annotated[int | None, typer.Option("--deadline-ms", help="Bound on the whole search, ms.")] = None,
    workspace: Annotated[
        Path,
        typer.Option("--workspace", "-w", help="The project (its .dsh/config.yml, its docs offline; default: here)."),
    ] = Path("."),
    local: Annotated[
        bool | None,
        typer.Option(
            "--local/--no-local",
            help="Fall back to the offline docs index (this machine's docs, earlier results) when no web provider"
            " answers (default: on; router.localFallback in the config).",
        ),
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
) -> None:
    """Run one web search through the router's chain and print the sources."""
    out = _output(ctx, as_json, quiet, verbose, color)
    _finish(out, lambda: asyncio.run(_query(out, text, strategy, max_results, deadline_ms, config, workspace, local)))


def _asking_for(cfg: SidecarConfig, max_results: int | None, local: bool | None) -> SidecarConfig:
    """``cfg`` for one ``query``: its arms return ``max_results`` sources (``-n``: "give me N";
    the arms' caps, quick 5 and thorough 10, would otherwise cap it silently), and the offline
    docs index ends its chain unless ``--no-local`` or the config said no (``localFallback``
    unset is on for this command)."""
    update: dict[str, Any] = {}
    if max_results is not None:
        update["bandit"] = cfg.bandit.model_copy(
            update={"quick_max_results": max_results, "thorough_max_results": max_results}
        )
    fallback = local if local is not None else cfg.router.local_fallback
    update["router"] = cfg.router.model_copy(update={"local_fallback": fallback is not False})
    return cfg.model_copy(update=update)


async def _query(
    out: Output,
    text: str,
    strategy: str,
    max_results: int | None,
    deadline_ms: int | None,
    config: Path | None,
    workspace: Path = Path("."),
    local: bool | None = None,
) -> None:
    from dsh_protocol import SearchParams

    from dsh_sidecar.router import AllProvidersFailed
    from dsh_sidecar.sidecar import Sidecar

    try:
        # the models validate what the user typed (an unknown strategy is their error to name)
        params = SearchParams(
            query=text, strategy=cast(Any, strategy), max_results=max_results, deadline_ms=deadline_ms
        )
    except ValidationError as exc:
        problem = first_problem(exc)
        flag = "--" + str(problem.loc[0]).replace("_", "-")
        if flag == "--query":
            flag = "QUERY"
        raise usage_error(f"bad {flag}: {problem.reason}", flag=flag) from None
    _folder("--workspace", workspace)
    cfg = _asking_for(_config(out, config, workspace), max_results, local)
    try:
        sidecar = Sidecar(cfg, None, os.environ, log_sink=out.log, echo_stderr=False, docs_root=workspace)
    except ConfigError as exc:
        raise config_error(exc) from None
    try:
        with out.progress(f"Searching ({strategy})…"):
            result = (await sidecar.search(params, escaped=False)).wire()  # data as it came: clean() shows it
    except AllProvidersFailed as exc:
        raise CliError(
            ErrorCode.SEARCH_FAILED,
            exc.message,
            EXIT_FAILED,
            {"attempts": [a.wire() for a in exc.attempts]},
            prefixed=False,
        ) from None
    finally:
        await sidecar.aclose()
    from dsh_sidecar.cli.render import search_plain, search_rich

    if out.json:
        out.emit_json(result)
    elif out.rich:
        out.print(search_rich(result))
    else:
        out.write(search_plain(result))
    if max_results is not None and len(result["sources"]) < max_results:
        answered = next((a["provider"] for a in reversed(result["attempts"]) if a["outcome"].startswith("ok")), None)
        who = f"{answered} had no more" if answered else "no provider answered"
        out.info(f"{len(result['sources'])} of the {max_results} sources asked for: {who}")


# ---------------------------------------------------------------------------- suggest


@app.command(
    epilog=_epilog(
        """dsh-search suggest --workspace . --tool grep --input '{"pattern": "__version__"}'""", HOME_ENV, COLOR_ENV
    )
)
def suggest(
    ctx: typer.Context,
    tool: Annotated[str, typer.Option("--tool", "-t", help="Tool name: grep, glob, read, bash, …")],
    tool_input: Annotated[
        str, typer.Option("--input", "-i", help="""Tool input as a JSON object, e.g. '{"pattern": "__version__"}'.""")
    ],
    workspace: Annotated[Path, typer.Option("--workspace", "-w", help="The repository (default: here).")] = Path("."),
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
) -> None:
    """Say what the suggester would tell an agent after one tool call (runs even when disabled)."""
    out = _output(ctx, as_json, quiet, verbose, color)
    _finish(out, lambda: _suggest(out, tool, tool_input, workspace, config))


def _suggest(out: Output, tool: str, tool_input: str, workspace: Path, config: Path | None) -> None:
    from dsh_protocol import PostExecuteParams

    from dsh_sidecar.sidecar import Sidecar

    try:
        parsed = json.loads(tool_input)
    except (ValueError, RecursionError):
        raise usage_error("--input must be a JSON object", flag="--input") from None
    if not isinstance(parsed, dict):
        raise usage_error("--input must be a JSON object", flag="--input")
    try:
        params = PostExecuteParams(session_id="cli", turn=0, tool=cast(Any, {"name": tool, "input": parsed}))
    except ValidationError as exc:
        problem = first_problem(exc)
        where = "--tool" if problem.loc[:2] == ("tool", "name") else "--input"
        raise usage_error(f"bad {where}: {problem.reason}", flag=where) from None
    _folder("--workspace", workspace)
    cfg = _config(out, config, workspace)
    lines: list[str] = []
    sidecar = Sidecar(cfg, workspace, os.environ, log_sink=lines.append, force_suggester=True, echo_stderr=False)
    try:
        with out.progress("Indexing the workspace…", counted=True) as bar:
            sidecar.report_graph_progress(reporter(bar))
            sidecar.wait_for_graph(60.0)  # Symbol/Usage read the symbol index; without it they fall back
            sidecar.report_graph_progress(None)
        # one call of a fresh CLI session: no cooldown/turn history to suppress it
        result = sidecar.post_execute(params).wire()
    finally:
        sidecar.shutdown()  # the ledger (its activation line first) and knowledge written now, not at exit
        asyncio.run(sidecar.aclose())
    if out.json:
        out.emit_json(result)
    elif result["additionalContexts"]:
        text = result["additionalContexts"][0]["text"]
        if out.rich:
            from rich.text import Text

            from dsh_sidecar.cli.output import clean

            head, _, rest = clean(text, one_line=False).partition("\n")
            out.print(Text(head, style="bold"))
            if rest:
                out.print(Text(rest))
        else:
            out.write(text)
    else:
        out.write("(silence: no note for this call)")
    for line in lines:
        out.log(line)


# ---------------------------------------------------------------------------- status


@app.command(epilog=_epilog("dsh-search status --json | jq .bandit.arms", HOME_ENV, PROVIDER_ENV, COLOR_ENV))
def status(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="Also report the suggester for this folder.")
    ] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
) -> None:
    """Show the resolved chain with each provider's health, the bandit's posteriors and where state lives.

    The running servers (serve, mcp) of this $DSH_HOME are listed with their live state: provider health, cache and
    suggester counters, which a new process cannot know."""
    out = _output(ctx, as_json, quiet, verbose, color)
    _finish(out, lambda: _status(out, workspace, config))


def _status(out: Output, workspace: Path | None, config: Path | None) -> None:
    from dsh_sidecar.cli.render import status_plain, status_rich
    from dsh_sidecar.sidecar import Sidecar

    _folder("--workspace", workspace)
    cfg = _config(out, config, workspace if workspace is not None else Path("."))
    try:
        sidecar = Sidecar(cfg, workspace, os.environ, echo_stderr=False)
    except ConfigError as exc:
        raise config_error(exc) from None
    try:
        result = sidecar.status().wire()
    finally:
        asyncio.run(sidecar.aclose())
    from dsh_sidecar.runstate import live_servers

    servers, problem = live_servers(os.environ)
    result["servers"] = servers  # what this command cannot know: the running servers' live state
    if problem is not None:
        result["serversError"] = problem
    if out.json:
        out.emit_json(result)
    elif out.rich:
        out.print(status_rich(result))
    else:
        out.write(status_plain(result))


# ---------------------------------------------------------------------------- doctor


@app.command(epilog=_epilog("dsh-search doctor --timeout 2", PROVIDER_ENV, HOME_ENV, COLOR_ENV))
def doctor(
    ctx: typer.Context,
    config: ConfigOpt = None,
    timeout: Annotated[float, typer.Option("--timeout", help="Seconds to wait for each endpoint.", min=0.1)] = 3.0,
    offline: Annotated[bool, typer.Option("--offline", help="Do not contact the endpoints.")] = False,
    mcp: Annotated[
        bool, typer.Option("--mcp", help="Also require what dsh-search mcp needs (the [mcp] extra).")
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
) -> None:
    """Check Python, SQLite/FTS5, git, the providers (keys set or not, never their values), their endpoints and state.

    Each provider of the chain is asked one real search (its own key, to its own endpoint), so a refused key or a
    SearXNG without JSON output fails here with the fix."""
    out = _output(ctx, as_json, quiet, verbose, color)
    _finish(out, lambda: _doctor(out, config, timeout, offline, mcp))


def _doctor(out: Output, config: Path | None, timeout: float, offline: bool, mcp: bool = False) -> None:
    from dsh_sidecar.cli.doctor import run_doctor
    from dsh_sidecar.cli.render import doctor_plain, doctor_rich

    found = _discover(config, Path("."))
    cfg = _validated(out, found)
    try:
        with out.progress("Checking…"):
            report = run_doctor(cfg, os.environ, found.files(), timeout, offline, mcp)
    except ConfigError as exc:
        raise config_error(exc) from None
    if out.json:
        out.emit_json(report)
    elif out.rich:
        out.print(doctor_rich(report))
    else:
        out.write(doctor_plain(report))
    if not report["ok"]:
        raise typer.Exit(EXIT_FAILED)


# ---------------------------------------------------------------------------- bandit reset


@bandit_app.command(
    "reset",
    epilog=_epilog(
        "dsh-search bandit reset --decisions",
        HOME_ENV,
        "A running sidecar keeps its memory. With a shared state (--config with state.backend redis://…),"
        " the fleet's statistics in the store are deleted too.",
    ),
)
def bandit_reset(
    ctx: typer.Context,
    decisions: Annotated[bool, typer.Option("--decisions", help="Also delete the decision log.")] = False,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Forget what the bandit learned: delete its posteriors under $DSH_HOME (the prior Beta(1, 1) again)."""
    out = _output(ctx, as_json, quiet, verbose)
    _finish(out, lambda: _bandit_reset(out, decisions, _config(out, config)))


def _bandit_reset(out: Output, decisions: bool, cfg: SidecarConfig) -> None:
    from dsh_sidecar.bandit.store import reset_posteriors
    from dsh_sidecar.config import dsh_home

    home = dsh_home(os.environ)
    # the store first: when it does not answer, nothing is reset
    shared = _reset_shared_bandit(cfg.state) if cfg.state.shared else None
    try:
        removed = reset_posteriors(home, decisions=decisions)
    except (OSError, TimeoutError) as exc:
        raise CliError(ErrorCode.INTERNAL_ERROR, f"bandit reset failed: {exc}", EXIT_FAILED) from None
    if out.json:
        doc: dict = {"removed": [str(p) for p in removed], "dshHome": str(home)}
        if shared is not None:
            doc["shared"] = {"backend": shared[0], "removedKeys": shared[1]}
        out.emit_json(doc)
        return
    lines = [f"removed {p}" for p in removed] or [f"nothing to reset under {home / 'bandit'}"]
    if shared is not None:
        lines.append(f"removed {shared[1]} bandit keys from {shared[0]}")
    out.write("\n".join(lines))


def _reset_shared_bandit(state_config: StateConfig) -> tuple[str, int]:
    """``(the store's public URL, keys deleted)``: the fleet's bandit statistics deleted from the
    shared store of ``state_config``. Raises :class:`CliError` (exit 1) when redis-py is missing
    or the store does not answer (the URL without its password, the error's class only)."""
    from dsh_sidecar.state.fleet import open_state

    try:
        store = open_state(state_config)
    except ConfigError as exc:
        raise config_error(exc) from None
    assert store is not None  # a shared config
    url = store.status()["backend"]
    try:
        return url, store.reset_bandit()
    except Exception as exc:
        import redis

        if not isinstance(exc, (redis.RedisError, OSError)):
            raise
        raise CliError(
            ErrorCode.INTERNAL_ERROR,
            f"bandit reset failed: state store {url} unavailable ({type(exc).__name__})",
            EXIT_FAILED,
        ) from None
    finally:
        store.close()


# ---------------------------------------------------------------------------- replay


@app.command(
    epilog=_epilog(
        "dsh-search replay tests/data/replay/shopcart-50.jsonl --workspace tests/data/workspaces/shopcart",
        HOME_ENV,
        "DSH_CORPUS_CACHE: default of --cache.",
    )
)
def replay(
    ctx: typer.Context,
    trace: Annotated[Path | None, typer.Argument(help="JSONL trace of dsh/postExecute calls.")] = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", help="The repository the trace was taken in.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            help="Score the evaluation corpus (e.g. corpus) instead of TRACE: both figure sets and the trajectories' held-out folds.",
        ),
    ] = None,
    cache: Annotated[
        Path | None, typer.Option("--cache", envvar="DSH_CORPUS_CACHE", help="Folder holding the corpus checkouts.")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Also print every call's notes as JSON lines (--corpus: the report).")
    ] = False,
    suggester: Annotated[
        str | None,
        typer.Option(
            "--suggester", help="Suggester knobs for the replayed sidecar, a JSON object ('{\"bias\": 0.5}')."
        ),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Replay a trace of dsh/postExecute calls through a spawned sidecar and score the notes."""
    out = _output(ctx, False, quiet, verbose)
    out.json = as_json or out.json
    if corpus is not None:
        _finish(out, lambda: _replay_corpus(out, corpus, cache, _suggester_knobs(suggester)))
    else:
        _finish(out, lambda: _replay(out, trace, workspace, _suggester_knobs(suggester)))


def _suggester_knobs(raw: str | None) -> dict[str, Any] | None:
    """``--suggester`` as a dict (``None`` when absent). Raises a usage error for anything else."""
    if raw is None:
        return None
    try:
        knobs = json.loads(raw)
    except ValueError:
        knobs = None
    if not isinstance(knobs, dict):
        raise usage_error("--suggester must be a JSON object of suggester knobs", flag="--suggester")
    return knobs


def _replay_corpus(out: Output, corpus: Path, cache: Path | None, knobs: dict[str, Any] | None = None) -> None:
    from dsh_sidecar.evaluation import format_corpus, run_corpus

    if cache is None or not cache.is_dir():
        raise usage_error("--corpus needs --cache DIR (or DSH_CORPUS_CACHE) holding the checkouts", flag="--cache")
    try:
        with out.progress("Replaying the corpus…"):
            report = run_corpus(corpus, cache, suggester=knobs)
    except (RuntimeError, OSError, EOFError, ValueError, KeyError) as exc:
        raise CliError(ErrorCode.INTERNAL_ERROR, f"corpus replay failed: {exc}", EXIT_FAILED) from None
    out.write(json.dumps(report, indent=1) if out.json else format_corpus(report))


def _replay(out: Output, trace_path: Path | None, workspace: Path | None, knobs: dict[str, Any] | None = None) -> None:
    from dsh_sidecar.evaluation import TraceError, latency_line, read_trace, replay

    if trace_path is None or workspace is None:
        raise usage_error("replay needs TRACE --workspace DIR, or --corpus DIR --cache DIR")
    _folder("--workspace", workspace)
    try:
        trace = read_trace(trace_path.read_text("utf-8").splitlines())
    except OSError as exc:
        raise usage_error(f"cannot read {trace_path}: {exc.strerror}", flag="TRACE") from None
    except (TraceError, UnicodeDecodeError) as exc:
        raise usage_error(f"{trace_path}: {exc}", flag="TRACE") from None
    try:
        with out.progress(f"Replaying {len(trace)} calls…"):
            score, notes, _ = replay(trace, workspace, knobs)
    except (RuntimeError, OSError, EOFError) as exc:
        raise CliError(ErrorCode.INTERNAL_ERROR, f"replay failed: {exc}", EXIT_FAILED) from None
    if out.json:
        for line, ns in zip(trace, notes):
            out.write(json.dumps({"callId": line.params.get("callId"), "notes": ns}))
    out.write(score.line() + "\n" + latency_line(score.latencies_ms))


# ---------------------------------------------------------------------------- mcp


@app.command(
    epilog=_epilog(
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
        typer.Option("--workspace", "-w", help=f"The repository (default: ${PROJECT_DIR_ENV}, else here)."),
    ] = None,
    config: ConfigOpt = None,
    log_level: Annotated[
        str, typer.Option("--log-level", envvar="DSH_LOG_LEVEL", help="DEBUG, INFO, WARNING or ERROR (stderr).")
    ] = "WARNING",
) -> None:
    r"""Serve the sidecar's tools over MCP on stdio (needs the \[mcp] extra).

    web_search, where_is and suggestion_dismiss for the model; post_tool_use and session_start for hooks."""
    raise typer.Exit(_mcp(workspace, config, log_level))


def _mcp(workspace: Path | None, config: Path | None, log_level: str) -> int:
    """``dsh-search mcp`` (:func:`dsh_sidecar.cli.serving.mcp`, which a plain ``mcp`` command
    line reaches without this app)."""
    from dsh_sidecar.cli.serving import mcp as run_mcp

    return run_mcp(workspace, config, log_level)


# ---------------------------------------------------------------------------- completion

SHELLS = ("bash", "zsh", "fish")


@app.command(
    epilog="Example: dsh-search completion bash > ~/.local/share/bash-completion/completions/dsh-search\n\n"
    'zsh: dsh-search completion zsh > "${fpath[1]}/_dsh-search"; fish: dsh-search completion fish >'
    " ~/.config/fish/completions/dsh-search.fish\n\n" + EXIT_CODES,
)
def completion(
    shell: Annotated[str, typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
) -> None:
    """Print the shell completion script for bash, zsh or fish (commands, options, choices)."""
    from typer._completion_shared import get_completion_script

    if shell not in SHELLS:
        raise typer.Exit(Output().error(usage_error(f"bad SHELL: {shell!r} (bash, zsh or fish)", flag="SHELL")))
    sys.stdout.write(
        get_completion_script(prog_name="dsh-search", complete_var="_DSH_SEARCH_COMPLETE", shell=shell).rstrip("\n")
        + "\n"
    )


# ---------------------------------------------------------------------------- config


@app.command(
    "config",
    epilog=_epilog("dsh-search config --json | jq '.values'", CONFIG_ENV, "XDG_CONFIG_HOME: where the user file is."),
)
def config_command(
    ctx: typer.Context,
    workspace: Annotated[
        Path, typer.Option("--workspace", "-w", help="The project whose .dsh/config.yml counts (default: here).")
    ] = Path("."),
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Show the config every command here would use: each file read, and where each value came from."""
    out = _output(ctx, as_json, quiet, verbose)
    _finish(out, lambda: _config_show(out, workspace, config))


def _config_show(out: Output, workspace: Path, config: Path | None) -> None:
    from dsh_sidecar.cli.discovery import PROJECT_FILE, explicit_path, user_path
    from dsh_sidecar.cli.render import config_plain
    from dsh_sidecar.redact import Redactor

    _folder("--workspace", workspace)
    found = _discover(config, workspace)
    _validated(out, found)  # refuses an invalid merge as every command would
    merged = found.merged() or {}
    origins = found.origins()
    secrets = [str(v) for k, v in _flat(merged).items() if k.endswith(".apiKey") and v]
    redact = Redactor(secrets)
    values = {
        key: {"value": "***" if key.endswith(".apiKey") else _redacted(value, redact), "from": origins.get(key, "?")}
        for key, value in _flat(merged).items()
    }
    read = {layer.kind: layer for layer in found.layers}
    explicit = explicit_path(config, os.environ)
    candidates = [
        ("explicit", explicit[1] if explicit else None, read.get("flag") or read.get("env")),
        ("project", workspace / PROJECT_FILE, read.get("project")),
        ("user", user_path(os.environ), read.get("user")),
    ]
    files = []
    for kind, path, layer in candidates:
        if path is None:
            files.append({"kind": kind, "path": None, "status": "not given (--config, $DSH_SEARCH_CONFIG)"})
            continue
        if layer is None:
            status = "not found"
        elif layer.ignored:
            status = f"ignored: {layer.ignored}"
        elif layer.refused:
            status = f"read; refused: {', '.join(layer.refused)}"
        else:
            status = "read"
        files.append({"kind": kind, "path": str(path), "status": status})
    doc = {"files": files, "values": values}
    if out.json:
        out.emit_json(doc)
    else:
        out.write(config_plain(doc))


def _flat(doc: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(doc, dict):
        for key, value in doc.items():
            path = f"{prefix}{key}"
            if isinstance(value, dict) and value:
                out.update(_flat(value, path + "."))
            else:
                out[path] = value
    return out


def _redacted(value: Any, redact: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redacted(v, redact) for v in value]
    return value


# ---------------------------------------------------------------------------- cache

cache_app = typer.Typer(
    help="Look after the rebuildable indexes (workspace indexes, the offline docs index) in the cache directory.",
    epilog=_epilog("dsh-search cache prune --dry-run", CACHE_ENV, HOME_ENV),
    no_args_is_help=True,
)
app.add_typer(cache_app, name="cache")


@cache_app.command("dir", epilog=_epilog('du -sh "$(dsh-search cache dir)"', CACHE_ENV))
def cache_dir(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Print the cache directory ($DSH_CACHE_DIR, else $XDG_CACHE_HOME/dsh-search, else ~/.cache/dsh-search)."""
    from dsh_sidecar.cachedir import usage

    out = _output(ctx, as_json, False, False)
    doc = usage(os.environ)
    _finish(out, lambda: out.emit_json(doc) if out.json else out.write(str(doc["dir"])))


@cache_app.command("clean", epilog=_epilog("dsh-search cache clean", CACHE_ENV, HOME_ENV))
def cache_clean(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Remove every index in the cache directory (rebuilt when next needed); state under $DSH_HOME stays."""
    out = _output(ctx, as_json, quiet, verbose)
    from dsh_sidecar.cachedir import clean

    _finish(out, lambda: _cache_report(out, clean(os.environ, dry_run=dry_run), dry_run))


@cache_app.command("prune", epilog=_epilog("dsh-search cache prune --max-age-days 30", CACHE_ENV, HOME_ENV))
def cache_prune(
    ctx: typer.Context,
    max_age_days: Annotated[
        float, typer.Option("--max-age-days", min=0, help="Remove indexes unused for this long (default 90).")
    ] = 90.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Remove indexes that will not be used again: of deleted workspaces, unused for a while, or left in $DSH_HOME by older versions."""
    out = _output(ctx, as_json, quiet, verbose)
    from dsh_sidecar.cachedir import prune

    _finish(
        out, lambda: _cache_report(out, prune(os.environ, max_age_s=max_age_days * 86400, dry_run=dry_run), dry_run)
    )


@cache_app.command("index", epilog=_epilog("dsh-search cache index -w .", CACHE_ENV))
def cache_index(
    ctx: typer.Context,
    workspace: Annotated[
        Path, typer.Option("--workspace", "-w", help="The project whose docs are indexed too (default: here).")
    ] = Path("."),
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Build the offline docs index now (otherwise an offline search builds it a little at a time)."""
    out = _output(ctx, as_json, quiet, verbose)
    _finish(out, lambda: _cache_index(out, workspace))


def _cache_index(out: Output, workspace: Path) -> None:
    from dsh_sidecar.paths import docs_cache
    from dsh_sidecar.router.localdocs import LocalDocs

    _folder("--workspace", workspace)
    docs = LocalDocs(docs_cache(os.environ), workspace)
    with out.progress("Indexing this machine's docs…"):
        counts = docs.build_now()
    if out.json:
        out.emit_json({"index": str(docs.path), "documents": counts})
    else:
        total = sum(counts.values())
        parts = ", ".join(f"{name} {n}" for name, n in counts.items())
        out.write(f"{docs.path}: {total} documents ({parts or 'none'})")


def _cache_report(out: Output, removed: Any, dry_run: bool) -> None:
    from dsh_sidecar.cli.doctor import human_bytes

    if out.json:
        out.emit_json({**removed.wire(), "dryRun": dry_run})
    else:
        verb = "would remove" if dry_run else "removed"
        lines = [f"{verb} {p}" for p in removed.paths] if out.verbose or dry_run else []
        lines.append(f"{verb} {len(removed.paths)} files, {human_bytes(removed.bytes)}")
        lines += [f"could not remove {e}" for e in removed.errors]
        out.write("\n".join(lines))
    if removed.errors:
        raise typer.Exit(EXIT_FAILED)


# ---------------------------------------------------------------------------- entry point


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
        except Exception as exc:
            if not (hasattr(exc, "format_message") and hasattr(exc, "exit_code")):
                raise
            # a usage error found by the parser: missing option, unknown command, bad choice
            if _wants_json(args):
                Output(json=True).error(usage_error(exc.format_message()))
            else:
                exc.show()  # type: ignore[attr-defined]
            code = EXIT_USAGE
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
