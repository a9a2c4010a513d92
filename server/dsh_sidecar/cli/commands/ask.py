"""The commands that ask one core one question from a terminal: ``query`` (a web search through
the router and the bandit), ``suggest`` (what the suggester would say for one tool call) and
``replay`` (a trace or the corpus through a spawned sidecar).
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
from dsh_protocol.errors import ErrorCode
from dsh_protocol.models import MAX_DEADLINE_MS, MAX_RESULTS_LIMIT, MIN_DEADLINE_MS, StrategyChoice
from pydantic import ValidationError

from dsh_sidecar.cli.commands.base import (
    COLOR_ENV,
    HOME_ENV,
    PROVIDER_ENV,
    ColorOpt,
    ConfigOpt,
    JsonOpt,
    QuietOpt,
    VerboseOpt,
    app,
    check_folder,
    command_config,
    command_output,
    finish,
    help_epilog,
)
from dsh_sidecar.cli.commands.usage import utf8_text
from dsh_sidecar.cli.exits import EXIT_FAILED
from dsh_sidecar.cli.output import (
    CliError,
    Output,
    config_error,
    reporter,
    usage_error,
)
from dsh_sidecar.errors import ConfigError, first_problem

if TYPE_CHECKING:  # the config modules are imported by the commands that read a config
    from dsh_sidecar.config import SidecarConfig

#: Longest ``suggest`` waits for the workspace graph (its symbol index) before the call, seconds.
GRAPH_WAIT_S = 60.0


@app.command(
    epilog=help_epilog(
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
        StrategyChoice,
        typer.Option("--strategy", "-s", metavar="STRATEGY", help="auto (the bandit chooses), quick or thorough."),
    ] = "auto",
    max_results: Annotated[
        int | None,
        typer.Option(
            "--max-results",
            "-n",
            metavar="N",
            min=1,
            max=MAX_RESULTS_LIMIT,
            help=f"How many sources to return, 1–{MAX_RESULTS_LIMIT} (default: the strategy's, quick 5, thorough 10);"
            " fewer only when the providers have no more, and then it says so.",
        ),
    ] = None,
    deadline_ms: Annotated[
        int | None,
        typer.Option(
            "--deadline-ms",
            metavar="MS",
            min=MIN_DEADLINE_MS,
            max=MAX_DEADLINE_MS,
            help=f"Bound on the whole search, in ms ({MIN_DEADLINE_MS}–{MAX_DEADLINE_MS}).",
        ),
    ] = None,
    workspace: Annotated[
        Path,
        typer.Option(
            "--workspace",
            "-w",
            metavar="DIR",
            help="The project (its .dsh/config.yml, its docs offline; default: here).",
        ),
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
    out = command_output(ctx, as_json, quiet, verbose, color)
    finish(out, lambda: asyncio.run(_query(out, text, strategy, max_results, deadline_ms, config, workspace, local)))


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
    from dsh_sidecar.sidecar import Sidecar, fleetexit

    try:
        params = SearchParams(  # the models validate what the user typed (an unknown strategy: theirs to name)
            query=utf8_text(text, "QUERY"),
            strategy=cast(Any, strategy),
            max_results=max_results,
            deadline_ms=deadline_ms,
        )
    except ValidationError as exc:
        problem = first_problem(exc)
        flag = "--" + str(problem.loc[0]).replace("_", "-")
        if flag == "--query":
            flag = "QUERY"
        raise usage_error(f"bad {flag}: {problem.reason}", flag=flag) from None
    check_folder("--workspace", workspace)
    cfg = _asking_for(command_config(out, config, workspace), max_results, local)
    try:
        sidecar = Sidecar(cfg, None, os.environ, log_sink=out.log, echo_stderr=False, docs_root=workspace)
    except ConfigError as exc:
        raise config_error(exc) from None
    try:
        with out.progress(f"Searching ({strategy})…"):
            await asyncio.to_thread(fleetexit.settle_fleet, sidecar)  # one search: the fleet's posteriors
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


@app.command(
    epilog=help_epilog(
        """dsh-search suggest --workspace . --tool grep --input '{"pattern": "__version__"}'""", HOME_ENV, COLOR_ENV
    )
)
def suggest(
    ctx: typer.Context,
    tool: Annotated[str, typer.Option("--tool", "-t", metavar="NAME", help="Tool name: grep, glob, read, bash, …")],
    tool_input: Annotated[
        str,
        typer.Option(
            "--input", "-i", metavar="JSON", help="""Tool input as a JSON object, e.g. '{"pattern": "__version__"}'."""
        ),
    ],
    workspace: Annotated[
        Path, typer.Option("--workspace", "-w", metavar="DIR", help="The repository (default: here).")
    ] = Path("."),
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
) -> None:
    """Say what the suggester would tell an agent after one tool call (runs even when disabled)."""
    out = command_output(ctx, as_json, quiet, verbose, color)
    finish(out, lambda: _suggest(out, tool, tool_input, workspace, config))


def _suggest(out: Output, tool: str, tool_input: str, workspace: Path, config: Path | None) -> None:
    from dsh_protocol import PostExecuteParams

    from dsh_sidecar.sidecar import Sidecar

    tool, tool_input = utf8_text(tool, "--tool"), utf8_text(tool_input, "--input")
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
    check_folder("--workspace", workspace)
    cfg = command_config(out, config, workspace)
    lines: list[str] = []
    sidecar = Sidecar(cfg, workspace, os.environ, log_sink=lines.append, force_suggester=True, echo_stderr=False)
    try:
        with out.progress("Indexing the workspace…", counted=True) as bar:
            sidecar.report_graph_progress(reporter(bar))
            sidecar.wait_for_graph(GRAPH_WAIT_S)  # Symbol/Usage read the symbol index; without it they fall back
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
        out.write(silence(lines))
    for line in lines:
        out.log(line)


@app.command(
    epilog=help_epilog(
        "dsh-search replay tests/data/replay/shopcart-50.jsonl --workspace tests/data/workspaces/shopcart",
        HOME_ENV,
        "DSH_CORPUS_CACHE: default of --cache.",
    )
)
def replay(
    ctx: typer.Context,
    trace: Annotated[Path | None, typer.Argument(metavar="TRACE", help="JSONL trace of dsh/postExecute calls.")] = None,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", metavar="DIR", help="The repository the trace was taken in.")
    ] = None,
    corpus: Annotated[
        Path | None,
        typer.Option(
            "--corpus",
            metavar="DIR",
            help="Score the evaluation corpus (e.g. corpus) instead of TRACE: both figure sets and the trajectories' held-out folds.",
        ),
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option("--cache", metavar="DIR", envvar="DSH_CORPUS_CACHE", help="Folder holding the corpus checkouts."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Also print every call's notes as JSON lines (--corpus: the report).")
    ] = False,
    suggester: Annotated[
        str | None,
        typer.Option(
            "--suggester",
            metavar="JSON",
            help="Suggester knobs for the replayed sidecar, a JSON object ('{\"bias\": 0.5}').",
        ),
    ] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Replay a trace of dsh/postExecute calls through a spawned sidecar and score the notes."""
    out = command_output(ctx, False, quiet, verbose)
    out.json = as_json or out.json
    if corpus is not None:
        finish(out, lambda: _replay_corpus(out, corpus, cache, _suggester_knobs(suggester)))
    else:
        finish(out, lambda: _replay(out, trace, workspace, _suggester_knobs(suggester)))


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
    check_folder("--workspace", workspace)
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


def silence(ledger_lines: list[str]) -> str:
    """What ``suggest`` prints for a call without a note: why, when the index was not ready (a
    first run on a large tree, or a loaded machine, outlasts :data:`GRAPH_WAIT_S`: the README's
    first command printed a bare silence at load 8-13, its ledger saying ``suppressed not-ready``
    only with ``--verbose``)."""
    if any("] suppressed not-ready " in line for line in ledger_lines):
        return (
            f"(silence: the workspace index was not ready within {GRAPH_WAIT_S:.0f} s; "
            "run the command again: it goes on from what this run indexed)"
        )
    return "(silence: no note for this call)"
