"""The commands that look after this machine: ``status``, ``doctor``, ``config`` (the files found
and where each value came from), ``completion``, ``bandit reset`` and ``cache dir|clean|prune|index``.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from dsh_protocol.errors import ErrorCode

from dsh_sidecar.cli.commands.base import (
    CACHE_ENV,
    COLOR_ENV,
    CONFIG_ENV,
    EXIT_CODES,
    HOME_ENV,
    PROVIDER_ENV,
    ColorOpt,
    ConfigOpt,
    JsonOpt,
    QuietOpt,
    VerboseOpt,
    app,
    bandit_app,
    cache_app,
    check_folder,
    command_config,
    command_output,
    discover_config,
    finish,
    help_epilog,
    validated_config,
)
from dsh_sidecar.cli.exits import EXIT_FAILED
from dsh_sidecar.cli.output import (
    CliError,
    Output,
    config_error,
)
from dsh_sidecar.errors import ConfigError

if TYPE_CHECKING:  # the config modules are imported by the commands that read a config
    from dsh_sidecar.config import SidecarConfig
    from dsh_sidecar.state.config import StateConfig


@app.command(epilog=help_epilog("dsh-search status --json | jq .bandit.arms", HOME_ENV, PROVIDER_ENV, COLOR_ENV))
def status(
    ctx: typer.Context,
    workspace: Annotated[
        Path | None, typer.Option("--workspace", "-w", metavar="DIR", help="Also report the suggester for this folder.")
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
    out = command_output(ctx, as_json, quiet, verbose, color)
    finish(out, lambda: _status(out, workspace, config))


def _status(out: Output, workspace: Path | None, config: Path | None) -> None:
    from dsh_sidecar.cli.render import status_plain, status_rich
    from dsh_sidecar.sidecar import Sidecar
    from dsh_sidecar.sidecar.fleetexit import settle_fleet

    check_folder("--workspace", workspace)
    cfg = command_config(out, config, workspace if workspace is not None else Path("."))
    try:
        sidecar = Sidecar(cfg, workspace, os.environ, echo_stderr=False)
    except ConfigError as exc:
        raise config_error(exc) from None
    try:
        settle_fleet(sidecar)  # the fleet's update counts, not this process's zeros
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


@app.command(epilog=help_epilog("dsh-search doctor --timeout 2", PROVIDER_ENV, HOME_ENV, COLOR_ENV))
def doctor(
    ctx: typer.Context,
    config: ConfigOpt = None,
    timeout: Annotated[
        float,
        typer.Option("--timeout", metavar="SECONDS", help="Seconds to wait for each endpoint (at least 0.1).", min=0.1),
    ] = 3.0,
    offline: Annotated[bool, typer.Option("--offline", help="Do not contact the endpoints.")] = False,
    mcp: Annotated[
        bool, typer.Option("--mcp", help=r"Also require what dsh-search mcp needs (the \[mcp] extra).")
    ] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    color: ColorOpt = None,
) -> None:
    """Check Python, SQLite/FTS5, git, the providers (keys set or not, never their values), their endpoints and state.

    Each provider of the chain is asked one real search (its own key, to its own endpoint), so a refused key or a
    SearXNG without JSON output fails here with the fix."""
    out = command_output(ctx, as_json, quiet, verbose, color)
    finish(out, lambda: _doctor(out, config, timeout, offline, mcp))


def _doctor(out: Output, config: Path | None, timeout: float, offline: bool, mcp: bool = False) -> None:
    from dsh_sidecar.cli.doctor import run_doctor
    from dsh_sidecar.cli.render import doctor_plain, doctor_rich

    found = discover_config(config, Path("."))
    cfg = validated_config(out, found)
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


@bandit_app.command(
    "reset",
    epilog=help_epilog(
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
    out = command_output(ctx, as_json, quiet, verbose)
    finish(out, lambda: _bandit_reset(out, decisions, command_config(out, config)))


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
    from dsh_sidecar.state.fleet import open_admin_state

    try:
        store = open_admin_state(state_config)  # not the 50 ms a search may wait on the store
    except ConfigError as exc:
        raise config_error(exc) from None
    assert store is not None  # a shared config
    url = store.status()["backend"]
    try:
        return url, store.reset_bandit()
    except Exception as exc:
        from dsh_sidecar.state.redis_link import CALL_ERRORS  # what a store, or what answers there, raises

        if not isinstance(exc, CALL_ERRORS):
            raise
        raise CliError(
            ErrorCode.INTERNAL_ERROR,
            f"bandit reset failed: state store {url} unavailable ({type(exc).__name__})",
            EXIT_FAILED,
        ) from None
    finally:
        store.close()


@app.command(
    epilog="Example: dsh-search completion bash > ~/.local/share/bash-completion/completions/dsh-search\n\n"
    'zsh: dsh-search completion zsh > "${fpath[1]}/_dsh-search"; fish: dsh-search completion fish >'
    " ~/.config/fish/completions/dsh-search.fish\n\n" + EXIT_CODES,
)
def completion(
    shell: Annotated[Literal["bash", "zsh", "fish"], typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
) -> None:
    """Print the shell completion script for bash, zsh or fish (commands, options, choices)."""
    from typer._completion_shared import get_completion_script

    sys.stdout.write(
        get_completion_script(prog_name="dsh-search", complete_var="_DSH_SEARCH_COMPLETE", shell=shell).rstrip("\n")
        + "\n"
    )


@app.command(
    "config",
    epilog=help_epilog(
        "dsh-search config --json | jq '.values'", CONFIG_ENV, "XDG_CONFIG_HOME: where the user file is."
    ),
)
def config_command(
    ctx: typer.Context,
    workspace: Annotated[
        Path,
        typer.Option(
            "--workspace", "-w", metavar="DIR", help="The project whose .dsh/config.yml counts (default: here)."
        ),
    ] = Path("."),
    config: ConfigOpt = None,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Show the config every command here would use: each file read, and where each value came from."""
    out = command_output(ctx, as_json, quiet, verbose)
    finish(out, lambda: _config_show(out, workspace, config))


def _config_show(out: Output, workspace: Path, config: Path | None) -> None:
    from dsh_sidecar.cli.discovery import PROJECT_FILE, explicit_path, user_path
    from dsh_sidecar.cli.render import config_plain
    from dsh_sidecar.redact import Redactor

    check_folder("--workspace", workspace)
    found = discover_config(config, workspace)
    validated_config(out, found)  # refuses an invalid merge as every command would
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


@cache_app.command("dir", epilog=help_epilog('du -sh "$(dsh-search cache dir)"', CACHE_ENV))
def cache_dir(ctx: typer.Context, as_json: JsonOpt = False) -> None:
    """Print the cache directory ($DSH_CACHE_DIR, else $XDG_CACHE_HOME/dsh-search, else ~/.cache/dsh-search)."""
    from dsh_sidecar.cachedir import usage

    out = command_output(ctx, as_json, False, False)
    doc = usage(os.environ)
    finish(out, lambda: out.emit_json(doc) if out.json else out.write(str(doc["dir"])))


@cache_app.command("clean", epilog=help_epilog("dsh-search cache clean", CACHE_ENV, HOME_ENV))
def cache_clean(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Remove every index in the cache directory (rebuilt when next needed); state under $DSH_HOME stays."""
    out = command_output(ctx, as_json, quiet, verbose)
    from dsh_sidecar.cachedir import clean

    finish(out, lambda: _cache_report(out, clean(os.environ, dry_run=dry_run), dry_run))


@cache_app.command("prune", epilog=help_epilog("dsh-search cache prune --max-age-days 30", CACHE_ENV, HOME_ENV))
def cache_prune(
    ctx: typer.Context,
    max_age_days: Annotated[
        float,
        typer.Option("--max-age-days", metavar="DAYS", min=0, help="Remove indexes unused for this long (default 90)."),
    ] = 90.0,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")] = False,
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Remove indexes that will not be used again: of deleted workspaces, unused for a while, or left in $DSH_HOME by older versions."""
    out = command_output(ctx, as_json, quiet, verbose)
    from dsh_sidecar.cachedir import prune

    finish(out, lambda: _cache_report(out, prune(os.environ, max_age_s=max_age_days * 86400, dry_run=dry_run), dry_run))


@cache_app.command("index", epilog=help_epilog("dsh-search cache index -w .", CACHE_ENV))
def cache_index(
    ctx: typer.Context,
    workspace: Annotated[
        Path,
        typer.Option(
            "--workspace", "-w", metavar="DIR", help="The project whose docs are indexed too (default: here)."
        ),
    ] = Path("."),
    as_json: JsonOpt = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Build the offline docs index now (otherwise an offline search builds it a little at a time)."""
    out = command_output(ctx, as_json, quiet, verbose)
    finish(out, lambda: _cache_index(out, workspace))


def _cache_index(out: Output, workspace: Path) -> None:
    from dsh_sidecar.paths import docs_cache
    from dsh_sidecar.router.localdocs import LocalDocs

    check_folder("--workspace", workspace)
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
