"""``dsh-search serve`` and ``dsh-search mcp`` without the command-line framework: what a
harness spawns starts without importing Typer and Rich (cold start); :func:`serve_args` and
:func:`mcp_args` recognise the plain command lines and everything else goes through the Typer
app (:mod:`dsh_sidecar.cli.commands`), which calls the same :func:`serve` and :func:`mcp`.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import sys
from pathlib import Path
from typing import Any, Literal, get_args

from dsh_sidecar.cli.exits import WRITE_ERRNOS, closed_pipe, unwritable
from dsh_sidecar.errors import ConfigError

#: ``serve``'s options that take a value (``--opt value`` or ``--opt=value``), as Typer defines them.
VALUE_OPTIONS = {"--config": "config", "-c": "config", "--log-file": "log_file", "--log-level": "log_level"}
#: The levels ``--log-level`` and ``$DSH_LOG_LEVEL`` accept (any case): the Typer option's
#: choices and what a plain command line is checked against.
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR"]
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)
#: ``serve``'s flags (``--stdio`` is accepted and ignored).
FLAGS = frozenset({"--stdio"})


def without_httpx_cli() -> None:
    """Keep httpx's command line (``httpx._main``: rich, pygments and click, which this package's
    own CLI installs beside it) out of a server: httpx imports it whenever they are there, and a
    server never runs it. That import was ~50 ms of CPU (importtime) in the first search, and in
    the MCP server's build when a provider's base URL is configured (the router checks it with
    ``httpx.URL``). Blocked the documented way (``None`` in :data:`sys.modules`: httpx then
    defines its ``main`` as the note to install its ``cli`` extra); nothing when httpx is
    already imported."""
    if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
        sys.modules["httpx._main"] = None  # type: ignore[assignment]


def serve_args(argv: list[str]) -> tuple[Path | None, Path | None, str] | None:
    """``(config, log_file, log_level)`` when ``argv`` is a plain serve command line: empty
    (serve is the default) or ``serve`` followed by its own options, each at most once, every
    value non-empty and not starting with ``-``. ``None`` for anything else (help, another
    command, an unknown or repeated option): the Typer app parses it. ``log_level`` falls
    back to ``$DSH_LOG_LEVEL``, then ``WARNING``, as the Typer option does."""
    if not argv:
        level = _log_level({})
        return None if level is None else (None, None, level)
    if argv[0] != "serve":
        return None
    values = _plain_options(argv[1:], VALUE_OPTIONS, FLAGS)
    if values is None:
        return None
    level = _log_level(values)
    if level is None:
        return None
    config = Path(values["config"]) if "config" in values else None
    log_file = Path(values["log_file"]) if "log_file" in values else None
    return config, log_file, level


#: ``mcp``'s options (all take a value), as Typer defines them.
MCP_OPTIONS = {
    "--workspace": "workspace",
    "-w": "workspace",
    "--config": "config",
    "-c": "config",
    "--log-level": "log_level",
}
#: Environment variable Claude Code sets to the project folder (hooks reference): ``mcp``'s
#: workspace when ``--workspace`` is not given, else the current folder.
PROJECT_DIR_ENV = "CLAUDE_PROJECT_DIR"


def mcp_args(argv: list[str]) -> tuple[Path | None, Path | None, str] | None:
    """``(workspace, config, log_level)`` when ``argv`` is a plain ``mcp`` command line (its
    own options, each at most once, as :func:`serve_args` accepts them); ``None`` for anything
    else (help, an unknown option…): the Typer app parses it."""
    if argv[:1] != ["mcp"]:
        return None
    values = _plain_options(argv[1:], MCP_OPTIONS, frozenset())
    if values is None:
        return None
    level = _log_level(values)
    if level is None:
        return None
    workspace = Path(values["workspace"]) if "workspace" in values else None
    config = Path(values["config"]) if "config" in values else None
    return workspace, config, level


def _log_level(values: dict[str, str]) -> str | None:
    """The level of a plain command line (its ``--log-level``, else ``$DSH_LOG_LEVEL``, else
    ``WARNING``), or ``None`` when it is not one of :data:`LOG_LEVELS`: the Typer app then
    says so, naming the flag, and exits 2."""
    level = values.get("log_level", os.environ.get("DSH_LOG_LEVEL", "WARNING"))
    return level if level.upper() in LOG_LEVELS else None


def _plain_options(rest: list[str], options: dict[str, str], flags: frozenset[str]) -> dict[str, str] | None:
    """The values of ``rest`` by option key, or ``None`` when it is not plain (an unknown or
    repeated option, a missing or empty value, a value starting with ``-``, ``-x=value``)."""
    values: dict[str, str] = {}
    seen: set[str] = set()
    i = 0
    while i < len(rest):
        arg = rest[i]
        i += 1
        if arg in flags:
            if arg in seen:
                return None
            seen.add(arg)
            continue
        name, eq, value = arg.partition("=")
        key = options.get(name)
        if key is None or (eq and not name.startswith("--")):
            return None
        if not eq:
            if i >= len(rest):
                return None
            value = rest[i]
            i += 1
        if not value or value.startswith("-") or key in values:
            return None
        values[key] = value
    return values


def serve_main(config: Path | None, log_file: Path | None, log_level: str) -> int:
    """Run :func:`serve`; the exit code, with the entry point's handling of an unwritable
    stdout (:func:`dsh_sidecar.cli.commands.main`)."""
    try:
        code = serve(config, log_file, log_level)
        sys.stdout.flush()
    except BrokenPipeError:
        return closed_pipe()
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        return unwritable(exc)
    return code


def mcp(workspace: Path | None, config: Path | None, log_level: str) -> int:
    """``dsh-search mcp``: its config files found and validated, the workspace checked, then the
    server (:func:`dsh_sidecar.mcp.run`) until stdin ends; the exit code. A missing SDK, a bad
    config or folder is one line on stderr and exit 2 (stdout is the protocol's), as every
    command reports it (the CLI's output module is imported on those paths only). SIGTERM and
    SIGHUP end it with status 0 from here on, as ``serve``'s start does, until the server's own
    signal receiver takes them over (``mcp/server.py``: ``serve_until_signal``)."""
    from dsh_sidecar.lsp.signals import install_start_sigterm

    install_start_sigterm()  # first: the start below takes seconds on a loaded machine
    from dsh_sidecar.fielddocs import set_attribute_docstrings
    from dsh_sidecar.mcp import SdkMissing, run, sdk_installed

    set_attribute_docstrings(False)  # nothing MCP answers carries a config field's description
    without_httpx_cli()
    if not sdk_installed():
        return _report(_missing_extra("mcp", "dsh-search mcp"))
    if workspace is None:
        workspace = Path(os.environ[PROJECT_DIR_ENV]) if os.environ.get(PROJECT_DIR_ENV) else Path.cwd()
    if not workspace.is_dir():
        from dsh_sidecar.cli.output import usage_error

        return _report(usage_error(f"--workspace {workspace} is not a folder", flag="--workspace"))
    from dsh_sidecar.workspace.heap import collections_paused

    # the start's imports and config (pydantic's validators, PyYAML): long-lived objects that
    # make no garbage cycle; with the collector on, its collections would scan them again and
    # again as the imports go on (about 30 ms of this start's CPU): frozen at the block's end
    # (once: without a young collection over all of them, heap.collections_paused)
    with collections_paused(freeze=True, once=True):
        from dsh_sidecar.cli.discovery import discover
        from dsh_sidecar.config import parse_config

        try:
            found = discover(config, workspace, os.environ, read_config)
            warnings = found.warnings()
            if warnings:
                from dsh_sidecar.cli.output import Output

                out = Output(quiet=False)
                for line in warnings:
                    out.warn(line)
            cfg = parse_config(found.merged())
        except ConfigError as exc:
            from dsh_sidecar.cli.output import config_error

            return _report(config_error(exc))
    _start_git(workspace, cfg.suggester.enabled)
    try:
        return run(cfg, workspace, log_level, os.environ)
    except SdkMissing:
        return _report(_missing_extra("mcp", "dsh-search mcp"))


def _start_git(workspace: Path, suggesting: bool) -> None:
    """Start the git commands the sidecar's first build runs over ``workspace`` (its identity;
    its listing and recency when the suggester is on) on threads, before the server's imports
    (``workspace/prefetch.py``): a folder the sidecar refuses runs none. Git's listing is not
    started when the last session kept it (``workspace/listingcache.py``: the build is ready
    from the kept listing and runs the scan after ready, so started now it would only compete
    with the imports and the first call); that is told from the kept file's head alone
    (``workspace/cachenames.py``, without the workspace cache's imports)."""
    from dsh_sidecar.paths import workspace_cache
    from dsh_sidecar.workspace import fsguard, identity, prefetch, recency
    from dsh_sidecar.workspace.cachenames import kept_listing_source

    root = workspace.resolve()
    if fsguard.root_refusal(root, os.environ.get("HOME")) is not None:
        return
    prefetch.start(("identity", str(root)), identity.identify, root)
    if suggesting and kept_listing_source(workspace_cache(os.environ), root) != "git":
        prefetch.start(("git_scan", str(root)), recency.scan, root)


def _report(exc: Exception) -> int:
    """Report a :class:`~dsh_sidecar.cli.output.CliError` as every command does; its exit code."""
    from dsh_sidecar.cli.output import CliError, Output

    assert isinstance(exc, CliError)
    return Output(quiet=False).error(exc)


def _missing_extra(extra: str, what: str) -> Exception:
    """The usage error of a missing optional extra, with the command that installs it here."""
    from dsh_protocol.errors import ErrorCode

    from dsh_sidecar.cli.exits import EXIT_USAGE
    from dsh_sidecar.cli.installs import extra_hint
    from dsh_sidecar.cli.output import CliError

    return CliError(
        ErrorCode.INVALID_PARAMS,
        f"{what} needs the optional [{extra}] extra, which is not installed; add it with: {extra_hint(extra)}",
        EXIT_USAGE,
        {"extra": extra},
    )


def mcp_main(workspace: Path | None, config: Path | None, log_level: str) -> int:
    """Run :func:`mcp`; the exit code, with the entry point's handling of an unwritable stdout
    and of Ctrl-C (130), as :func:`serve_main` and the Typer app's entry point do."""
    try:
        code = mcp(workspace, config, log_level)
        sys.stdout.flush()
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return closed_pipe()
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        return unwritable(exc)
    return code


def check_config_path(path: Path) -> None:
    """Refuse a ``--config`` that is not a regular file (a FIFO would block the read forever,
    ``/dev/zero`` never ends) before it is read. Raises :class:`ConfigError` naming the file."""
    import stat

    try:
        mode = path.stat().st_mode
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read ({exc.strerror})") from None
    if stat.S_ISDIR(mode):
        raise ConfigError(str(path), "cannot read (Is a directory)")
    if not stat.S_ISREG(mode):
        raise ConfigError(str(path), "not a regular file")


def read_config(path: Path) -> Any:
    """The raw document of one of the user's config files (``--config``, ``$DSH_SEARCH_CONFIG``,
    the user file: :func:`dsh_sidecar.config.read_config_file`), after :func:`check_config_path`.
    Raises :class:`ConfigError`."""
    from dsh_sidecar.config import read_config_file

    check_config_path(path)
    try:
        return read_config_file(path)
    except UnicodeDecodeError:
        raise ConfigError(str(path), "not UTF-8 text") from None
    except RecursionError:
        raise ConfigError(str(path), "nested too deeply") from None


def _open_log_file(path: Path) -> None:
    """Point the process's stderr (fd 2: logging, the bandit's lines, native warnings) at
    ``path``, appended, created 0600. A symlink is refused, not followed (a planted link must
    not redirect the log, nor create a file where it points); a FIFO without a reader is an
    error, not a hang. Raises :class:`CliError` (usage, exit 2)."""
    import fcntl

    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o600)
    except OSError as exc:
        why = {errno.ELOOP: "is a symbolic link", errno.ENXIO: "a FIFO nobody reads"}.get(exc.errno or 0, exc.strerror)
        from dsh_sidecar.cli.output import usage_error  # Rich: only on this error path

        raise usage_error(f"--log-file {path}: cannot open ({why})", flag="--log-file") from None
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
    sys.stderr.flush()
    os.dup2(fd, 2)
    os.close(fd)


def serve(config: Path | None, log_file: Path | None, log_level: str) -> int:
    """``dsh-search serve``: the stdio JSON-RPC server until ``exit`` or EOF; the exit code
    (2 for an unusable ``--config`` or ``--log-file``, reported as the other commands do).
    SIGTERM is the LSP ``exit`` from here on, during the imports before the ``initialize``
    reply too (:mod:`dsh_sidecar.lsp.signals`)."""
    from dsh_sidecar.lsp.signals import install_start_sigterm

    install_start_sigterm()  # first: everything below may take a while (imports, the config)
    from dsh_sidecar.fielddocs import set_attribute_docstrings

    set_attribute_docstrings(False)  # before the config models are defined (cold start; imports no pydantic)
    without_httpx_cli()
    from dsh_sidecar.cli.discovery import discover

    try:  # --config (or $DSH_SEARCH_CONFIG) and the user file now; the project file at initialize
        discovered = discover(config, None, os.environ, read_config)
    except ConfigError as exc:
        from dsh_sidecar.cli.output import Output, config_error  # Rich: only on this error path

        return Output().error(config_error(exc))
    if log_file is not None:
        try:
            _open_log_file(log_file)
        except Exception as exc:
            from dsh_sidecar.cli.output import CliError, Output

            if not isinstance(exc, CliError):
                raise
            return Output().error(exc)
    from dsh_sidecar.lsp.app import configure_logging, run_stdio
    from dsh_sidecar.lsp.handlers import build_server

    server = build_server()
    server.config_defaults = discovered.merged()
    configure_logging(server.redactor, log_level)

    def config_for_root(root: Path | None) -> Any:
        found = discovered.with_project(root)
        for line in found.warnings():
            logging.getLogger("dsh_sidecar.config").warning("%s", line)
        return found.merged()

    server.config_for_root = config_for_root
    code = run_stdio(server)  # the state is flushed and the transport closed when it returns
    _exit_now(code)
    return code  # not reached


def _exit_now(code: int) -> None:
    """End the server process as ``Py_FinalizeEx`` would up to its last step, then ``os._exit``:
    non-daemon threads joined and the threading exit hooks run, the atexit flushes (and
    multiprocessing's, which ends the router's parsing worker), the streams flushed. The
    skipped last step would stop the background daemon threads (workspace graph, content
    index, git drains) that wake up meanwhile by
    unwinding their stacks, and a C frame without unwind tables or a C++ ``noexcept`` frame on one
    aborts the process ("FATAL: exception not rethrown", "terminate called without an active
    exception": SIGABRT instead of the exit code; CPython gh-87135)."""
    import atexit
    import logging
    import threading

    threading._shutdown()  # type: ignore[attr-defined]
    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
