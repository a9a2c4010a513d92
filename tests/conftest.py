"""Shared fixtures: loopback provider mocks, the sidecar spawned over real stdio (pytest-lsp),
temporary ``$DSH_HOME`` and copies of the workspace fixtures."""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from dsh_sidecar.paths import workspace_cache
from pytest_lsp import LanguageClient
from support.mockprovider import MockProvider
from support.sidecar import initialize as initialize_session
from support.sidecar import start_server, stop_client
from support.trees import copy_fixture

#: The user's workspace cache, and when this run began: :func:`pytest_sessionfinish` looks for
#: indexes the run's own workspaces left there.
USER_WORKSPACE_CACHE = workspace_cache()  # read before the isolation below changes the environment
RUN_STARTED = time.time()


def _isolate_user_folders() -> None:
    """Every process of the run (this one, each sidecar, CLI and harness it starts) gets an
    empty config folder and a cache of its own under the temp dir, never the user's
    ``~/.config/dsh-search`` or ``~/.cache/dsh-search``; :func:`support.sidecar.clean_env` then
    gives each test its own pair. Per worker process."""
    import atexit
    import os

    root = Path(tempfile.mkdtemp(prefix="dsh-tests-xdg-"))
    atexit.register(shutil.rmtree, root, True)
    os.environ["XDG_CONFIG_HOME"] = str(root / "config")
    os.environ["XDG_CACHE_HOME"] = str(root / "cache")
    for name in ("DSH_SEARCH_CONFIG", "DSH_CACHE_DIR"):
        os.environ.pop(name, None)


_isolate_user_folders()


def pytest_configure(config: pytest.Config) -> None:
    """Cache the assertion-rewritten test modules even under ``PYTHONDONTWRITEBYTECODE=1``.

    That setting (on some machines and images) also stops pytest from caching its rewritten
    test modules, so every xdist worker re-parses and rewrites all ~100 of them: 7 of the 11 s
    a worker spent collecting. The tree stays free of bytecode as the setting asks; the cache
    goes under the temp dir instead (``sys.pycache_prefix``, Python 3.8+, which pytest's rewriter
    honours). Only this pytest process: the spawned sidecars keep the environment they get."""
    if sys.dont_write_bytecode and not sys.pycache_prefix:
        sys.pycache_prefix = str(Path(tempfile.gettempdir()) / "dsh-tests-pycache")
        sys.dont_write_bytecode = False


#: The longest-running modules, longest first (wall seconds on the 2-core CI machine in
#: parentheses). pytest-xdist hands each worker one module at a time in collection order
#: (``--no-loadscope-reorder`` in the addopts; its default order is by test count, which put the
#: one-test 55 s VS Code workbench last, with one worker idle for it), so these start first and
#: the short ones fill in behind them. Only the order changes: a stale list costs time, nothing else.
LONG_FIRST = (
    "tests/harness/test_dsh_plugins.py",  # (87) seven DSH runs: install kinds, each plugin alone
    "tests/harness/test_dsh_web_router_card.py",  # (53) one test: dsh web + Chromium, seven searches
    "tests/harness/test_dsh.py",  # (47) restarts with the DSH bundle's real backoff
    "tests/e2e/test_corpus_scores.py",  # (24)
    "tests/editors/test_editor_vscode_workbench.py",  # (23) one test: code-server + Chromium
    "tests/e2e/test_reliability_state.py",  # (12)
    "tests/e2e/test_mcp.py",  # (11)
    "tests/e2e/test_cli_output.py",  # (11)
    "tests/harness/test_dsh_bundle_trust.py",  # (21) misbehaving children, a 24 MB frame
    "tests/harness/test_dsh_bundle_start.py",  # (11)
    "tests/harness/test_claude_code.py",  # (11)
    "tests/e2e/test_fleet.py",  # (9)
    "tests/e2e/test_bandit_e2e.py",  # (9)
    "tests/editors/test_editor_clients.py",  # (8)
    "tests/e2e/test_reliability_framing.py",  # (7)
    "tests/editors/test_editor_nvim.py",  # (6)
)


#: The folders whose every test starts processes (sidecars, CLIs, editors, harnesses): each of
#: their tests is ``slow`` without saying so itself.
SLOW_FOLDERS = ("tests/e2e/", "tests/harness/", "tests/editors/")

#: The inner loop: ``pytest tests/unit`` leaves out the unit tests marked ``slow`` (a process
#: started, or over a second on the 2-core CI machine) unless ``--slow`` or ``-m`` is given.
UNIT = "tests/unit"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--slow",
        action="store_true",
        help=f"with only {UNIT} paths: run their slow tests too (the whole suite always does)",
    )


def _unit_only(config: pytest.Config) -> bool:
    """Whether every path on the command line lies in tests/unit (no path: the whole suite)."""
    unit = config.rootpath / UNIT
    paths = [Path(arg.split("::", 1)[0]) for arg in config.args]
    return bool(config.args) and all((config.invocation_params.dir / p).resolve().is_relative_to(unit) for p in paths)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The modules of :data:`LONG_FIRST` first, in its order; the rest keep theirs (a stable sort,
    so the order inside each module stays as written). Every test of :data:`SLOW_FOLDERS` is
    marked ``slow``; a run of tests/unit alone leaves its slow tests out (:data:`UNIT`)."""
    rank = {path: i for i, path in enumerate(LONG_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))
    for item in items:
        if item.nodeid.startswith(SLOW_FOLDERS):
            item.add_marker(pytest.mark.slow)
    if _unit_only(config) and not config.getoption("--slow") and not config.getoption("markexpr"):
        slow = [item for item in items if item.get_closest_marker("slow")]
        if slow:
            config.hook.pytest_deselected(items=slow)
            items[:] = [item for item in items if not item.get_closest_marker("slow")]


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
    copy_fixture("pyproj", dest)
    return dest


Spawn = Callable[..., Awaitable[LanguageClient]]


@pytest_asyncio.fixture
async def spawn(dsh_home: Path) -> AsyncIterator[Spawn]:
    """Start ``dsh-search serve`` and initialize it: ``await spawn(init_options, root=…, env=…)``.

    These tests talk to the sidecar, so it is forked from the worker's fork server
    (:mod:`support.forkserver`: the same ``serve`` on the same pipes, without the ~0.7 s of
    imports each); ``forked=False`` spawns it, for a test that reads the process (``/proc``)."""
    clients: list[LanguageClient] = []

    async def start(
        init_options: dict[str, Any] | None = None,
        root: Path | None = None,
        env: dict[str, str] | None = None,
        initialize: bool = True,
        forked: bool = True,
    ) -> LanguageClient:
        client = await start_server(dsh_home, env, forked=forked)
        clients.append(client)
        if initialize:
            await initialize_session(client, init_options, root)
        return client

    yield start
    for client in clients:
        await stop_client(client)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Fail the run when one of its sidecars wrote a symbol cache of a test workspace (a folder
    under this run's temp root: another run at the same time is not this one's concern) into
    the user's own cache: a test built the sidecar's environment
    without the isolated cache folder (``support.sidecar.home_env`` / ``clean_env``)."""
    if hasattr(session.config, "workerinput"):  # the xdist controller checks once for all workers
        return
    temp_root = str(session.config._tmp_path_factory.getbasetemp())  # this run's (its workers' under it)
    leaked = []
    try:
        entries = list(USER_WORKSPACE_CACHE.glob("*-[0-9a-f]*.json"))
    except OSError:
        return
    for path in entries[:10_000]:
        try:
            if path.stat().st_mtime < RUN_STARTED or path.name.endswith(".kinds.json"):
                continue
            with path.open("rb") as f:
                head = f.read(4096)
        except OSError:
            continue
        if temp_root.encode() in head:
            leaked.append(path.name)
    if leaked:
        writer = session.config.get_terminal_writer()
        writer.line()
        writer.line(
            f"a test wrote {len(leaked)} workspace index(es) into the user's cache {USER_WORKSPACE_CACHE}: "
            + ", ".join(sorted(leaked)[:5]),
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
