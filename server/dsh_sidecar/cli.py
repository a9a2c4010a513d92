"""``dsh-search``: ``serve`` (default), ``query``, ``suggest``, ``status``, ``replay``.

* ``dsh-search serve`` – the stdio JSON-RPC server a harness spawns.
* ``dsh-search query "…" [--strategy auto|quick|thorough] [--max-results N] [--json]`` – one
  search through the zero-config chain (or ``--config FILE``), printed as a table or JSON.
* ``dsh-search suggest --workspace DIR --tool NAME --input JSON`` – what the suggester would
  say for one tool call (always runs, whatever ``suggester.enabled`` says).
* ``dsh-search status [--workspace DIR] [--json]`` – the bandit's posteriors per query class
  as a table, then the resolved chain and state paths (``--json``: the ``dsh/status`` result).
* ``dsh-search replay TRACE.jsonl --workspace DIR [--json]`` – replay a trace of
  ``dsh/postExecute`` calls through a spawned sidecar and print
  ``calls=… notes=… precision=… recall=… first-note=…`` and the per-call latency;
  ``dsh-search replay --corpus bench/corpus --cache DIR [--json]`` – the corpus figures.

Exit codes: 0 ok, 1 the search failed, 2 bad arguments or config.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from dsh_protocol import PostExecuteParams, SearchParams
from pydantic import ValidationError

from dsh_sidecar import __version__
from dsh_sidecar.config import SidecarConfig, load_config_file
from dsh_sidecar.errors import ConfigError


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="dsh-search", description="dsh-search-sidecar: search router, strategy bandit, search suggester."
    )
    p.add_argument("--version", action="version", version=f"dsh-search {__version__}")
    sub = p.add_subparsers(dest="command")
    s = sub.add_parser("serve", help="serve JSON-RPC on stdio (default)")
    s.add_argument("--log-level", default=os.environ.get("DSH_LOG_LEVEL", "WARNING"))
    sub.add_parser("mcp", help="serve MCP on stdio (needs the [mcp] extra; dsh-search mcp --help)")
    q = sub.add_parser("query", help="run one web search")
    q.add_argument("query")
    q.add_argument("--strategy", choices=["auto", "quick", "thorough"], default="auto")
    q.add_argument("--max-results", type=int, default=None)
    q.add_argument("--deadline-ms", type=int, default=None)
    q.add_argument("--json", action="store_true", help="print the dsh/search result as JSON")
    q.add_argument("--config", type=Path, help="YAML/JSON file with router/bandit/suggester blocks")
    g = sub.add_parser("suggest", help="what the suggester would say for one tool call")
    g.add_argument("--workspace", type=Path, default=Path.cwd())
    g.add_argument("--tool", required=True, help="tool name: grep, glob, read, bash, …")
    g.add_argument("--input", required=True, help='tool input as JSON, e.g. \'{"pattern": "__version__"}\'')
    g.add_argument("--json", action="store_true")
    g.add_argument("--config", type=Path)
    r = sub.add_parser("replay", help="replay a JSONL trace of dsh/postExecute calls and score the notes")
    r.add_argument("trace", type=Path, nargs="?")
    r.add_argument("--workspace", type=Path)
    r.add_argument("--json", action="store_true", help="also print every call's notes as JSON lines")
    r.add_argument("--corpus", type=Path, help="score the evaluation corpus (e.g. bench/corpus) instead of TRACE")
    r.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"), help="corpus checkouts")
    t = sub.add_parser("status", help="show the resolved chain, posteriors and state paths")
    t.add_argument("--workspace", type=Path, default=None)
    t.add_argument("--config", type=Path)
    t.add_argument("--json", action="store_true", help="print the dsh/status result as JSON")
    return p


def _config(path: Path | None) -> SidecarConfig:
    return load_config_file(path) if path else SidecarConfig()


def _fail(message: str, code: int = 2) -> int:
    sys.stderr.write(f"dsh-search: {message}\n")
    return code


def _print_table(result: dict[str, Any]) -> None:
    out = sys.stdout
    out.write(
        f"strategy={result['strategy']} sources={len(result['sources'])} durationMs={result['durationMs']} "
        f"reward={result['reward']:.3f} truncated={str(result['truncated']).lower()}\n"
    )
    for i, s in enumerate(result["sources"], 1):
        out.write(f"{i:>2}. {s.get('title') or '(no title)'}\n    {s['url']}\n")
        if s.get("snippet"):
            out.write(f"    {s['snippet'][:200]}\n")
    out.write(
        "attempts: " + ", ".join(f"{a['provider']}={a['outcome']} ({a['ms']} ms)" for a in result["attempts"]) + "\n"
    )


async def _query(args: argparse.Namespace) -> int:
    from dsh_sidecar.router import AllProvidersFailed
    from dsh_sidecar.sidecar import Sidecar

    try:
        params = SearchParams(
            query=args.query, strategy=args.strategy, max_results=args.max_results, deadline_ms=args.deadline_ms
        )
        sidecar = Sidecar(_config(args.config), None, os.environ)
    except ValidationError as exc:
        first = exc.errors(include_input=False)[0]
        flag = "--" + str(first["loc"][0]).replace("_", "-")
        return _fail(f"bad {flag}: {first['msg']}")
    except ConfigError as exc:
        return _fail(f"invalid config: {exc}")
    try:
        result = (await sidecar.search(params)).wire()
    except AllProvidersFailed as exc:
        sys.stderr.write(exc.message + "\n")
        return 1
    finally:
        await sidecar.aclose()
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_table(result)
    return 0


def _suggest(args: argparse.Namespace) -> int:
    from dsh_sidecar.sidecar import Sidecar

    try:
        tool_input = json.loads(args.input)
    except (ValueError, RecursionError):
        return _fail("--input must be a JSON object")
    if not isinstance(tool_input, dict):
        return _fail("--input must be a JSON object")
    try:
        params = PostExecuteParams(session_id="cli", turn=0, tool={"name": args.tool, "input": tool_input})
    except ValidationError as exc:
        first = exc.errors(include_input=False)[0]
        where = "--tool" if first["loc"][:2] == ("tool", "name") else "--input"
        return _fail(f"bad {where}: {first['msg']}")
    if not args.workspace.is_dir():
        return _fail(f"--workspace {args.workspace} is not a folder")
    try:
        cfg = _config(args.config)
    except ConfigError as exc:
        return _fail(f"invalid config: {exc}")
    lines: list[str] = []
    sidecar = Sidecar(cfg, args.workspace, os.environ, log_sink=lines.append, force_suggester=True)
    sidecar.wait_for_graph(60.0)  # Symbol/Usage read the symbol index; without it they fall back
    # one call of a fresh CLI session (`params`): no cooldown/turn history to suppress it
    result = sidecar.post_execute(params).wire()
    asyncio.run(sidecar.aclose())
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    elif result["additionalContexts"]:
        sys.stdout.write(result["additionalContexts"][0]["text"] + "\n")
    else:
        sys.stdout.write("(silence: no note for this call)\n")
    for line in lines:
        sys.stderr.write(line + "\n")
    return 0


def _replay(args: argparse.Namespace) -> int:
    from dsh_sidecar.replay import TraceError, format_corpus, latency_line, read_trace, replay, run_corpus

    if args.corpus is not None:
        if args.cache is None or not args.cache.is_dir():
            return _fail("--corpus needs --cache DIR (or DSH_CORPUS_CACHE) holding the checkouts")
        try:
            rep = run_corpus(args.corpus, args.cache)
        except (RuntimeError, OSError, EOFError, ValueError, KeyError) as exc:
            return _fail(f"corpus replay failed: {exc}", 1)
        sys.stdout.write((json.dumps(rep, indent=1) if args.json else format_corpus(rep)) + "\n")
        return 0
    if args.trace is None or args.workspace is None:
        return _fail("replay needs TRACE --workspace DIR, or --corpus DIR --cache DIR")
    if not args.workspace.is_dir():
        return _fail(f"--workspace {args.workspace} is not a folder")
    try:
        trace = read_trace(args.trace.read_text("utf-8").splitlines())
    except OSError as exc:
        return _fail(f"cannot read {args.trace}: {exc.strerror}")
    except (TraceError, UnicodeDecodeError) as exc:
        return _fail(f"{args.trace}: {exc}")
    try:
        score, notes, _ = replay(trace, args.workspace)
    except (RuntimeError, OSError, EOFError) as exc:
        return _fail(f"replay failed: {exc}", 1)
    if args.json:
        for line, ns in zip(trace, notes):
            sys.stdout.write(json.dumps({"callId": line.params.get("callId"), "notes": ns}) + "\n")
    sys.stdout.write(score.line() + "\n" + latency_line(score.latencies_ms) + "\n")
    return 0


def _status(args: argparse.Namespace) -> int:
    from dsh_sidecar.sidecar import Sidecar

    if args.workspace is not None and not args.workspace.is_dir():
        return _fail(f"--workspace {args.workspace} is not a folder")
    try:
        sidecar = Sidecar(_config(args.config), args.workspace, os.environ)
    except ConfigError as exc:
        return _fail(f"invalid config: {exc}")

    status = sidecar.status()
    if args.json:
        sys.stdout.write(json.dumps(status, indent=2) + "\n")
    else:
        rest = {k: v for k, v in status.items() if k != "bandit"}
        sys.stdout.write(render_status(status["bandit"]) + "\n" + json.dumps(rest, indent=2) + "\n")
    asyncio.run(sidecar.aclose())
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``dsh-search`` console script; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["mcp"]:  # MCP stdio mode: its own options and logic live in dsh_sidecar/mcp
        from dsh_sidecar.mcp import run

        return run(argv[1:])
    args = _parser().parse_args(argv)
    command = args.command or "serve"
    if command == "serve":
        from dsh_sidecar.lsp.app import configure_logging, run_stdio
        from dsh_sidecar.lsp.handlers import build_server

        server = build_server()
        configure_logging(server.redactor, getattr(args, "log_level", "WARNING"))
        return run_stdio(server)
    if command == "query":
        return asyncio.run(_query(args))
    if command == "suggest":
        return _suggest(args)
    if command == "status":
        return _status(args)
    if command == "replay":
        return _replay(args)
    return _fail(f"unknown command {command}")


def render_status(status: dict[str, Any]) -> str:
    """The ``bandit`` block of ``dsh/status`` as a small text table (``dsh-search status``); moved here from the bandit core, which knows no output format."""
    from dsh_sidecar.bandit.policy import ARMS

    lines = [
        f"bandit posteriors Beta(alpha, beta) per query class (discount {status['discount']:g}; a class arm with "
        f"under {status['minClassEvidence']:g} observations borrows from global):",
        f"  {'class':8} {'arm':9} {'alpha':>9} {'beta':>9} {'mean':>6} {'evidence':>9}  fallback",
    ]
    rows = [(c, v, v["evidence"], "yes" if v["usesGlobalFallback"] else "no") for c, v in status["classes"].items()]
    rows.append(("global", status["arms"], "", ""))
    for name, arms, evidence, fallback in rows:
        for i, arm in enumerate(ARMS):
            p = arms[arm]
            ev = f"{evidence:g}" if i == 0 and evidence != "" else ""
            fb = fallback if i == 0 else ""
            lines.append(
                f"  {name if i == 0 else '':8} {arm:9} {p['alpha']:9.3f} {p['beta']:9.3f} {p['mean']:6.3f} {ev:>9}  {fb}"
            )
    state = status["state"]
    where = state["path"] or "memory only"
    lines.append(
        f"  state: {where}{'' if state['persisting'] or not state['path'] else ' (not persisting)'}; "
        f"pending feedback: {status['pendingFeedback']}"
    )
    for w in state["warnings"] + status["decisionLog"]["warnings"]:
        lines.append(f"  warning: {w}")
    return "\n".join(line.rstrip() for line in lines)
