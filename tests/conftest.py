"""Shared fixtures: loopback provider mocks, the sidecar spawned over real stdio (pytest-lsp),
temporary ``$DSH_HOME`` and copies of the workspace fixtures."""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import register_lsp_features

sys.path.insert(0, str(Path(__file__).parent))

from dsh_sidecar.lsp.transport import raw_params_converter  # noqa: E402
from mockprovider import MockProvider  # noqa: E402

DATA = Path(__file__).parent / "data"


def server_command() -> list[str]:
    """The installed ``dsh-search serve`` next to this Python (the venv's console script)."""
    script = Path(sys.executable).parent / "dsh-search"
    if script.exists():
        return [str(script), "serve"]
    return [sys.executable, "-m", "dsh_sidecar", "serve"]


def make_client() -> LanguageClient:
    """A pytest-lsp client whose custom-method results stay plain JSON (dicts)."""
    client = LanguageClient(converter_factory=raw_params_converter)
    register_lsp_features(client)
    return client


#: Environment variables of the host that would leak into provider auto-detection.
PROVIDER_VARS = (
    "EXA_API_KEY",
    "TAVILY_API_KEY",
    "BRAVE_SEARCH_API_KEY",
    "PPLX_API_KEY",
    "DEEPSEEK_API_KEY",
    "SEARXNG_BASE_URL",
)


def clean_env(dsh_home: Path, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The host environment without provider credentials, with ``DSH_HOME`` set."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    env["DSH_HOME"] = str(dsh_home)
    env.update(extra or {})
    return env


@pytest.fixture
def dsh_home(tmp_path: Path) -> Path:
    home = tmp_path / "dsh-home"
    home.mkdir()
    return home


@pytest.fixture
def mock_provider() -> Iterator[MockProvider]:
    mock = MockProvider()
    yield mock
    mock.close()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of the Python workspace fixture (tests may change it)."""
    dest = tmp_path / "pyproj"
    shutil.copytree(DATA / "workspaces" / "pyproj", dest)
    return dest


Spawn = Callable[..., Awaitable[LanguageClient]]


@pytest_asyncio.fixture
async def spawn(dsh_home: Path) -> AsyncIterator[Spawn]:
    """Start ``dsh-search serve`` and initialize it: ``await spawn(init_options, root=…, env=…)``."""
    clients: list[LanguageClient] = []

    async def start(
        init_options: dict[str, Any] | None = None,
        root: Path | None = None,
        env: dict[str, str] | None = None,
        initialize: bool = True,
    ) -> LanguageClient:
        config = ClientServerConfig(
            server_command=server_command(), client_factory=make_client, server_env=clean_env(dsh_home, env)
        )
        client = await config.start()
        clients.append(client)
        if initialize:
            await client.initialize_session(
                lsp.InitializeParams(
                    capabilities=lsp.ClientCapabilities(),
                    root_uri=root.as_uri() if root else None,
                    initialization_options=init_options,
                )
            )
        return client

    yield start
    for client in clients:
        await stop_client(client)


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
