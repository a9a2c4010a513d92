"""Shared fixtures: loopback provider mocks, the sidecar spawned over real stdio (pytest-lsp),
temporary ``$DSH_HOME`` and copies of the workspace fixtures."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from pytest_lsp import LanguageClient
from support.editors import NVIMS
from support.mockprovider import MockProvider
from support.sidecar import DATA, start_server, stop_client
from support.sidecar import initialize as initialize_session


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
        client = await start_server(dsh_home, env)
        clients.append(client)
        if initialize:
            await initialize_session(client, init_options, root)
        return client

    yield start
    for client in clients:
        await stop_client(client)


@pytest.fixture(params=NVIMS or [None], ids=lambda p: p or "no-nvim")
def nvim(request) -> str:
    """Each Neovim found (support.editors.NVIMS), or a skip with the reason when there is none."""
    if request.param is None:
        pytest.skip("Neovim is not installed (apt-get install -y neovim; .ci/run installs it)")
    return request.param
