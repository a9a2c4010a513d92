"""Starting the sidecar in tests: the installed ``dsh-search serve``, a host environment
without provider credentials, a pytest-lsp client that keeps custom results as plain JSON, a
polite stop, and the wait for the workspace projection to be ready."""

from __future__ import annotations

import asyncio
import atexit
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from dsh_sidecar.lsp.transport import raw_params_converter
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

from support.waiting import until

#: The test data (provider fixtures, workspaces, CLI snapshots, replay traces).
DATA = Path(__file__).resolve().parents[1] / "data"

#: Environment variables of the host that would leak into provider auto-detection.
PROVIDER_VARS = (
    "EXA_API_KEY",
    "TAVILY_API_KEY",
    "BRAVE_SEARCH_API_KEY",
    "PPLX_API_KEY",
    "DEEPSEEK_API_KEY",
    "SEARXNG_BASE_URL",
)


def server_command() -> list[str]:
    """The installed ``dsh-search serve`` next to this Python (the venv's console script)."""
    script = Path(sys.executable).parent / "dsh-search"
    if script.exists():
        return [str(script), "serve"]
    return [sys.executable, "-m", "dsh_sidecar", "serve"]


#: The fork servers of this pytest process (:mod:`support.forkserver`), by kind: (zygote, socket).
_ZYGOTES: dict[str, tuple[subprocess.Popen[bytes], str]] = {}
FORKSERVER = Path(__file__).with_name("forkserver.py")


def forked(argv: list[str], kind: str | None = None) -> list[str]:
    """``argv`` (the ``dsh-search`` console script and its arguments) started through
    :mod:`support.forkserver`: the same command forked from a process that has done its imports
    (a ``serve`` zygote, an ``mcp`` one for ``dsh-search mcp``, or the ``cli`` one ``kind`` asks
    for), on the caller's pipes; for tests that only talk to the sidecar. ``argv`` itself with
    ``DSH_TESTS_FORKSERVER=0``. Each zygote starts on first use and ends with this process."""
    if os.environ.get("DSH_TESTS_FORKSERVER") == "0":
        return argv
    kind = kind or ("mcp" if argv[1:2] == ["mcp"] else "serve")
    zygote = _ZYGOTES.get(kind)
    if zygote is None or zygote[0].poll() is not None:
        path = str(Path(tempfile.mkdtemp(prefix="dsh-zygote-")) / "sock")
        proc = subprocess.Popen(
            [sys.executable, "-P", str(FORKSERVER), "zygote", kind, path], stdin=subprocess.PIPE, stdout=subprocess.PIPE
        )
        assert proc.stdout is not None
        if proc.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the {kind} fork server did not start (exit {proc.wait()})")
        atexit.register(_stop_zygote, proc, path)
        zygote = _ZYGOTES[kind] = (proc, path)
    return [sys.executable, "-S", "-I", str(FORKSERVER), "launch", zygote[1], *argv]


def forked_command() -> list[str]:
    """:func:`server_command` through :func:`forked`."""
    return forked(server_command())


def _stop_zygote(proc: subprocess.Popen[bytes], path: str) -> None:
    if proc.stdin is not None:
        proc.stdin.close()  # the zygote kills its remaining sidecars and exits
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(Path(path).parent, ignore_errors=True)  # its socket's temp dir


#: Variables that point a sidecar at other config or cache files than the test's own.
ISOLATED_VARS = ("DSH_SEARCH_CONFIG", "DSH_CACHE_DIR")


def clean_env(dsh_home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The host environment without provider credentials, with ``DSH_HOME`` set, and the cache
    and the user's config folder beside it (``<home>-cache``, ``<home>-config``, the latter
    empty): each test's indexes and config files are its own, as its state is."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS and k not in ISOLATED_VARS}
    env.update(home_env(dsh_home))
    env.update(extra or {})
    return env


def home_env(dsh_home: Path | str) -> dict[str, str]:
    """The smallest environment of a sidecar made in-process or spawned by the MCP SDK (which
    passes on only ``HOME``, ``PATH`` and a few more; :func:`clean_env` lays it over the host's):
    ``DSH_HOME``, and the cache and config folders beside it, so no index or config file of the test
    lands in the user's ``~/.cache/dsh-search`` or is read from ``~/.config/dsh-search``."""
    return {"DSH_HOME": str(dsh_home), "XDG_CACHE_HOME": f"{dsh_home}-cache", "XDG_CONFIG_HOME": f"{dsh_home}-config"}


def make_client() -> LanguageClient:
    """A pytest-lsp client whose custom-method results stay plain JSON (dicts)."""
    client = LanguageClient(converter_factory=raw_params_converter)
    register_lsp_features(client)
    return client


async def start_server(dsh_home: Path, env: dict[str, str] | None = None, forked: bool = False) -> LanguageClient:
    """``dsh-search serve`` over real stdio with :func:`clean_env` (plus ``env``), not yet
    initialized; stop it with :func:`stop_client`. ``forked``: through :func:`forked_command`
    (then ``client._server.pid`` is the launcher's, not the sidecar's)."""
    command = forked_command() if forked else server_command()
    config = ClientServerConfig(server_command=command, client_factory=make_client, server_env=clean_env(dsh_home, env))
    return await config.start()


async def initialize(
    client: LanguageClient, init_options: dict[str, Any] | None = None, root: Path | None = None
) -> None:
    """``initialize`` (no client capabilities, ``rootUri`` from ``root``) and ``initialized``."""
    await client.initialize_session(
        lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(),
            root_uri=root.as_uri() if root else None,
            initialization_options=init_options,
        )
    )


async def stop_client(client: LanguageClient, timeout_s: float = 10.0) -> None:
    """Shut the server down politely (shutdown + exit), else close its stdin, else kill it."""
    server = client._server
    try:
        if client.capabilities is not None and client.error is None and server and server.returncode is None:
            await asyncio.wait_for(client.shutdown_session(), timeout_s)
    except Exception:
        pass
    if server is not None and server.returncode is None:
        if server.stdin is not None:
            server.stdin.close()
        try:
            await asyncio.wait_for(server.wait(), timeout_s)
        except TimeoutError:
            server.kill()
    await asyncio.wait_for(client.stop(), timeout_s)


async def prepared(client: LanguageClient) -> LanguageClient:
    """``client`` once the sidecar's workspace projection (graph, content index, targets) is
    ready (``dsh/status`` ``suggester.graph.ready``): ``initialize`` answers before it, and
    calls before it are suppressed as not-ready."""

    async def ready() -> Any:
        status = await client.protocol.send_request_async("dsh/status", {})
        return status["suggester"]["graph"]["ready"]

    await until(ready, "the workspace projection ready")
    return client
