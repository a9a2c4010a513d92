"""Tenant identity: what a fleet store keys a repository's knowledge by never collides for
different content. A remote or a root commit names content and is shared as it is; a
repository with no history gets ``local:<random id>`` minted per machine (``$DSH_HOME``), folder
and folder inode. The attack: two unrelated history-less projects at the same path on two
machines (CI runners, containers) shared knowledge, one's dismissal silencing the other's notes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from dsh_protocol import DismissParams
from dsh_sidecar.config import parse_config
from dsh_sidecar.state.config import parse_state_config
from dsh_sidecar.state.redis_store import RedisState
from dsh_sidecar.workspace.identity import LOCAL_IDENTITIES, fleet_identity, local_identity, repository_identity
from support.fleetkit import REDIS_SERVER, RedisServer

LOCAL = re.compile(r"^local:[0-9a-f]{32}$")


def _project(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "README.md").write_text(text)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1.0"\n')
    return root


def _git(root: Path, *args: str) -> None:
    env = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
    subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


@pytest.mark.parametrize("kind", ["no-git", "git-init-no-commit", "git-local-remote-only"])
def test_a_history_less_repository_on_two_machines_gets_two_identities(tmp_path: Path, kind: str) -> None:
    ws = _project(tmp_path / "workspace", "one\n")
    if kind != "no-git":
        if shutil.which("git") is None:
            pytest.skip("git not installed")
        _git(ws, "init", "-q")
        if kind == "git-local-remote-only":  # a path remote names a folder, not a project
            _git(ws, "remote", "add", "origin", "/srv/git/project.git")
    ident = repository_identity(ws)
    assert ident == f"path:{ws.resolve().as_posix()}"  # the file key, per machine, unchanged
    machine_a, machine_b = tmp_path / "home-a", tmp_path / "home-b"
    a, b = fleet_identity(ident, ws, machine_a), fleet_identity(ident, ws, machine_b)
    assert LOCAL.match(a) and LOCAL.match(b) and a != b
    # the same machine and folder keep theirs: its sidecars share, a restart keeps its knowledge
    assert fleet_identity(ident, ws, machine_a) == a
    assert local_identity(ws, machine_b) == b


def test_a_folder_made_anew_at_the_same_path_is_another_tenant(tmp_path: Path) -> None:
    ws = _project(tmp_path / "workspace", "one\n")
    home = tmp_path / "home"
    first = local_identity(ws, home)
    ws.rename(tmp_path / "old")  # still there: the new folder cannot reuse its inode
    _project(ws, "two\n")
    second = local_identity(ws, home)
    assert first != second and LOCAL.match(second)
    assert local_identity(ws, home) == second


def test_content_identities_are_shared_across_machines(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("git not installed")
    ws = _project(tmp_path / "ws", "x\n")
    _git(ws, "init", "-q")
    _git(ws, "add", "-A")
    _git(ws, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "x")
    root = repository_identity(ws)
    assert root.startswith("root:")
    assert fleet_identity(root, ws, tmp_path / "a") == fleet_identity(root, ws, tmp_path / "b") == root
    _git(ws, "remote", "add", "origin", "git@github.com:Owner/Repo.git")
    remote = repository_identity(ws)
    assert remote == "remote:github.com/owner/repo"
    assert fleet_identity(remote, ws, tmp_path / "a") == remote
    assert not (tmp_path / "a" / LOCAL_IDENTITIES).exists()  # nothing minted for content


def test_an_unwritable_home_gives_an_id_of_this_process_only(tmp_path: Path) -> None:
    ws = _project(tmp_path / "ws", "x\n")
    home = tmp_path / "home"
    home.write_text("a file where the folder should be\n")
    a, b = local_identity(ws, home), local_identity(ws, home)
    assert LOCAL.match(a) and LOCAL.match(b) and a != b


@pytest.mark.parametrize(
    "planted",
    [b"[" * 50_000, b'{"folders": {"x": "not-a-token"}}', b'{"folders": []}', b"\xff\xfe", None],
)
def test_a_hostile_identities_file_never_yields_another_folders_id(tmp_path: Path, planted: bytes | None) -> None:
    ws = _project(tmp_path / "ws", "x\n")
    home = tmp_path / "home"
    path = home / LOCAL_IDENTITIES
    path.parent.mkdir(parents=True)
    if planted is None:
        os.symlink("/dev/zero", path)
    else:
        path.write_bytes(planted)
    ident = local_identity(ws, home)
    assert LOCAL.match(ident)
    assert local_identity(ws, home) == ident  # the file was set aside and rewritten


@pytest.mark.skipif(REDIS_SERVER is None, reason="redis-server not installed (.ci/run installs it)")
def test_one_tenants_dismissal_never_reaches_another_through_the_store(tmp_path: Path) -> None:
    """End to end on a real redis-server: two sidecars at the same history-less path with two
    ``$DSH_HOME``s (two machines); A dismisses ``Version``; the store holds it under A's
    identity only, and B's knowledge has no dismissal. A third sidecar of machine A sees it."""
    from dsh_sidecar.sidecar import Sidecar

    server = RedisServer(tmp_path / "redis")
    server.start()
    ws = _project(tmp_path / "workspace", "x\n")
    config = parse_config({"suggester": {"enabled": True}, "state": {"backend": server.url, "timeoutMs": 2000}})
    try:
        made = []

        def sidecar(home: str) -> Sidecar:
            made.append(Sidecar(config, ws, {"DSH_HOME": str(tmp_path / home), "HOME": str(tmp_path)}))
            return made[-1]

        a, b = sidecar("home-a"), sidecar("home-b")
        a.dismiss(DismissParams(family="Version"))
        a.shutdown()
        repo_a, repo_b = a.suggester.knowledge.repo, b.suggester.knowledge.repo
        assert LOCAL.match(repo_a) and LOCAL.match(repo_b) and repo_a != repo_b
        store = RedisState(parse_state_config({"backend": server.url, "timeoutMs": 2000}))
        now = time.time()
        assert [k for k in store.knowledge_view(repo_a, now).dismissals] == [("Version", "*")]
        assert store.knowledge_view(repo_b, now).dismissals == {}
        assert b.suggester.knowledge.active_dismissals() == {}
        again = sidecar("home-a")
        assert again.suggester.knowledge.repo == repo_a
        assert list(again.suggester.knowledge.active_dismissals()) == [("Version", "*")]
        store.close()
    finally:
        import asyncio

        for s in made:
            s.shutdown()
            asyncio.run(s.aclose())
        server.stop()
