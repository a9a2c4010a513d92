"""The ``dsh-search`` commands (Typer) behind :func:`dsh_sidecar.cli.main`; see that package's
docstring for the options, output and exit codes."""

from __future__ import annotations

import asyncio
import errno
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Final, cast

import typer
from dsh_protocol.errors import ErrorCode
from pydantic import ValidationError

from dsh_sidecar import __version__
from dsh_sidecar.cli.output import (
    EXIT_CLOSED_PIPE,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    Output,
    reporter,
    usage_error,
)
from dsh_sidecar.cli.render import render_status
from dsh_sidecar.cli.serving import _check_config_path, _serve
from dsh_sidecar.errors import ConfigError, first_problem

if TYPE_CHECKING:  # the config modules are imported by the commands that read a config
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.state.config import StateConfig

__all__ = ["app", "main", "render_status"]

PROVIDER_ENV = (
    "EXA_API_KEY, TAVILY_API_KEY, BRAVE_SEARCH_API_KEY, PPLX_API_KEY, DEEPSEEK_API_KEY: provider keys (a set key "
    "puts its provider in the zero-config chain). SEARXNG_BASE_URL: a SearXNG to ask first."
)
HOME_ENV = "DSH_HOME: where state lives (default ~/.dsh)."
COLOR_ENV = "NO_COLOR: no colour on a terminal."
EXIT_CODES = "Exit codes: 0 ok, 1 failed (search, replay, doctor check), 2 bad arguments or config."


def _epilog(example: str, *env: str) -> str:
    return f"Example: {example}\n\nEnvironment: {' '.join(env)}\n\n{EXIT_CODES}"


app = typer.Typer(
    name="dsh-search",
    help="dsh-search-sidecar: web-search router, strategy bandit and search suggester for coding agents.",
    epilog=_epilog(
        "dsh-search query 'httpx streaming timeout'",
        HOME_ENV,
        PROVIDER_ENV,
        COLOR_ENV,
        "DSH_LOG_LEVEL: serve's log level.",
    ),
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
    Path | None, typer.Option("--config", "-c", help="YAML/JSON file with router/bandit/suggester/state blocks.")
]


def _output(ctx: typer.Context, as_json: bool, quiet: bool, verbose: bool) -> Output:
    """The command's :class:`Output`: its own flags or the ones given before the command."""
    top = ctx.find_root().obj or {}
    return Output(
        json=as_json or top.get("json", False),
        quiet=quiet or top.get("quiet", False),
        verbose=verbose or top.get("verbose", False),
    )


def _config(path: Path | None):
    from dsh_sidecar.config import SidecarConfig, load_config_file

    if path is None:
        return SidecarConfig()
    try:
        _check_config_path(path)
        return load_config_file(path)
    except ConfigError as exc:
        raise config_error(exc) from None
    except UnicodeDecodeError:
        raise config_error(ConfigError(str(path), "not UTF-8 text")) from None
    except RecursionError:
        raise config_error(ConfigError(str(path), "nested too deeply")) from None


def config_error(exc: ConfigError) -> CliError:
    """A :class:`ConfigError` as a usage error naming the key (``data.key``)."""
    return usage_error(f"invalid config: {exc}", key=exc.key)


def _folder(flag: str, path: Path | None) -> None:
    if path is not None and not path.is_dir():
        raise usage_error(f"{flag} {path} is not a folder", flag=flag)


def _finish(out: Output, run) -> None:
    """Run ``run()``; turn a :class:`CliError` into its report and exit code, a closed stdout
    into :data:`EXIT_CLOSED_PIPE`."""
    try:
        try:
            run()
        except CliError as exc:
            raise typer.Exit(out.error(exc)) from None
        out.stdout.flush()
    except BrokenPipeError:  # before the parser's own EPIPE handler turns it into exit code 1
        raise typer.Exit(_closed_pipe()) from None


def _version(value: bool) -> None:
    if value:
        sys.stdout.write(f"dsh-search {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(
    ctx: typer.Context,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """Without a command: serve JSON-RPC on stdio (``dsh-search serve``)."""
    ctx.obj = {"json": as_json, "quiet": quiet, "verbose": verbose}
    if ctx.invoked_subcommand is None:
        raise typer.Exit(_serve(None, None, os.environ.get("DSH_LOG_LEVEL", "WARNING")))


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
    raise typer.Exit(_serve(config, log_file, log_level))


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
    max_results: Annotated[int | None, typer.Option("--max-results", "-n", help="Cap on sources (1–50).")] = None,
    deadline_ms: Annotated[int | None, typer.Option("--deadline-ms", help="Bound on the whole search, ms.")] = None,
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Run one web search through the router's chain and print the sources."""
    out = _output(ctx, as_json, quiet, verbose)
    _finish(out, lambda: asyncio.run(_query(out, text, strategy, max_results, deadline_ms, config)))


async def _query(
    out: Output, text: str, strategy: str, max_results: int | None, deadline_ms: int | None, config: Path | None
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
    cfg = _config(config)
    try:
        sidecar = Sidecar(cfg, None, os.environ, log_sink=out.log, echo_stderr=False)
    except ConfigError as exc:
        raise config_error(exc) from None
    try:
        with out.progress(f"Searching ({strategy})…"):
            result = (await sidecar.search(params)).wire()
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
) -> None:
    """Say what the suggester would tell an agent after one tool call (runs even when disabled)."""
    out = _output(ctx, as_json, quiet, verbose)
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
    cfg = _config(config)
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
) -> None:
    """Show the resolved chain with each provider's health, the bandit's posteriors and where state lives."""
    out = _output(ctx, as_json, quiet, verbose)
    _finish(out, lambda: _status(out, workspace, config))


def _status(out: Output, workspace: Path | None, config: Path | None) -> None:
    from dsh_sidecar.cli.render import status_plain, status_rich
    from dsh_sidecar.sidecar import Sidecar

    _folder("--workspace", workspace)
    cfg = _config(config)
    try:
        sidecar = Sidecar(cfg, workspace, os.environ, echo_stderr=False)
    except ConfigError as exc:
        raise config_error(exc) from None
    try:
        result = sidecar.status().wire()
    finally:
        asyncio.run(sidecar.aclose())
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
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Check Python, SQLite/FTS5, git, the providers (keys set or not, never their values), their endpoints and state."""
    out = _output(ctx, as_json, quiet, verbose)
    _finish(out, lambda: _doctor(out, config, timeout, offline))


def _doctor(out: Output, config: Path | None, timeout: float, offline: bool) -> None:
    from dsh_sidecar.cli.doctor import run_doctor
    from dsh_sidecar.cli.render import doctor_plain, doctor_rich

    cfg = _config(config)
    try:
        with out.progress("Checking…"):
            report = run_doctor(cfg, os.environ, config, timeout, offline)
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
    _finish(out, lambda: _bandit_reset(out, decisions, _config(config)))


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
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
    epilog=_epilog("dsh-search mcp --workspace .", HOME_ENV, PROVIDER_ENV),
)
def mcp(ctx: typer.Context) -> None:
    """Serve the sidecar's tools over MCP on stdio (the \\[mcp] extra; options: dsh-search mcp --help)."""
    raise typer.Exit(_mcp(list(ctx.args)))


def _mcp(argv: list[str]) -> int:
    """``dsh-search mcp …``: every option (and ``--help``) belongs to :mod:`dsh_sidecar.mcp`."""
    from dsh_sidecar.mcp import run

    return run(argv)


# ---------------------------------------------------------------------------- entry point


def _wants_json(argv: list[str]) -> bool:
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def _silence_stdout() -> None:
    """Point fd 1 at /dev/null, so the interpreter's final flush of what is still buffered
    cannot fail again (and print "Exception ignored" or exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def _closed_pipe() -> int:
    """stdout went away (``| head``): silence the rest of the output and exit 141."""
    _silence_stdout()
    return EXIT_CLOSED_PIPE


#: errno values of a write to stdout that cannot succeed (``> /dev/full``, a full disk or quota).
_WRITE_ERRNOS: Final = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _unwritable(exc: OSError) -> int:
    """stdout cannot be written: one line on stderr, no traceback, exit code 1."""
    _silence_stdout()
    try:
        sys.stderr.write(f"dsh-search: cannot write the output ({exc.strerror})\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    return EXIT_FAILED


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dsh-search`` console script; returns the exit code (0 ok, 1 failed,
    2 bad arguments or config, 141 closed stdout)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["mcp"]:  # MCP stdio mode: its options, help and logic live in dsh_sidecar.mcp
        return _mcp(args[1:])
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
        return _closed_pipe()
    except SystemExit as exc:
        # Rich's console (``--help``) and Click's parser turn a closed pipe into SystemExit(1)
        # raised while handling the BrokenPipeError: still a closed pipe (``dsh-search --help | head -1``)
        if isinstance(exc.__context__, BrokenPipeError):
            return _closed_pipe()
        raise
    except OSError as exc:
        if exc.errno not in _WRITE_ERRNOS:
            raise
        return _unwritable(exc)
    return code
