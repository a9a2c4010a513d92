"""The rebuildable indexes live in the cache directory (``$DSH_CACHE_DIR``, else
``$XDG_CACHE_HOME/dsh-search``, else ``~/.cache/dsh-search``), state under ``$DSH_HOME``;
``dsh-search cache dir|clean|prune`` remove only files this program writes (by name, never a
symlink), and the indexes older versions left under ``$DSH_HOME/workspace`` go with ``prune``."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from dsh_sidecar.cachedir import AUTO_PRUNE_EVERY_S, INDEX_FILE, PRUNE_STAMP, clean, prune, prune_if_due, usage
from support.cli import env_for, run
from support.waiting import wait_until

GREP = ["suggest", "--tool", "grep", "--input", '{"pattern": "__version__"}']


def test_indexes_go_to_the_cache_directory_and_state_stays_home(tmp_path: Path, workspace: Path):
    home = tmp_path / "home"
    env = env_for(home)
    rc, out, err = run([*GREP, "-w", str(workspace)], env, tmp_path)
    assert rc == 0 and "look here for the package version" in out, err
    cache = Path(env["XDG_CACHE_HOME"]) / "dsh-search" / "workspace"
    names = sorted(p.name for p in cache.iterdir())
    assert any(n.endswith(".content.sqlite") for n in names) and any(n.endswith(".json") for n in names), names
    assert all(INDEX_FILE.match(n) for n in names), names
    assert not (home / "workspace").exists()
    rc, out, _ = run(["cache", "dir"], env, tmp_path)
    assert (rc, out) == (0, f"{cache.parent}\n")
    rc, out, _ = run(["cache", "dir"], {**env, "DSH_CACHE_DIR": str(tmp_path / "elsewhere")}, tmp_path)
    assert out == f"{tmp_path / 'elsewhere'}\n"


def _plant(folder: Path, names: list[str], age_days: float = 0.0) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    out = []
    for name in names:
        p = folder / name
        p.write_text("x" * 10)
        when = time.time() - age_days * 86400
        os.utime(p, (when, when))
        out.append(p)
    return out


def test_clean_removes_only_our_files_never_a_symlink_nor_state(tmp_path: Path):
    """``DSH_CACHE_DIR`` pointed at a folder with other files in it: only the names this
    program writes go; a symlink named like an index is left (and its target untouched); the
    fleet identities under ``$DSH_HOME/workspace`` are state and stay."""
    cache = tmp_path / "cache"
    home = tmp_path / "home"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(home), "HOME": str(tmp_path)}
    ours = _plant(
        cache / "workspace",
        [
            "repo-0123456789ab.json",
            "repo-0123456789ab.content.sqlite",
            "repo-0123456789ab.content.sqlite-wal",
            "repo-0123456789ab.json.lock",
        ],
    )
    ours += _plant(cache / "docs", ["docs.sqlite", "docs.sqlite-shm"])
    foreign = _plant(cache / "workspace", ["notes.txt", "Repo-0123456789ab.json"]) + _plant(cache, ["keep.me"])
    target = tmp_path / "precious.json"
    target.write_text("mine")
    (cache / "workspace" / "link-0123456789ab.json").symlink_to(target)
    legacy = _plant(home / "workspace", ["old-fedcba987654.json", "old-fedcba987654.content.sqlite"])
    state = _plant(home / "workspace", ["identities.json", "identities.json.lock"])
    assert usage(env)["legacy"] == {"dir": str(home / "workspace"), "bytes": 20, "files": 2}

    dry = clean(env, dry_run=True)
    assert sorted(dry.paths) == sorted(str(p) for p in ours + legacy) and all(p.exists() for p in ours)
    removed = clean(env)
    assert sorted(removed.paths) == sorted(str(p) for p in ours + legacy) and removed.bytes == 10 * 8
    assert not any(p.exists() for p in ours + legacy)
    assert all(p.exists() for p in foreign + state) and target.read_text() == "mine"
    assert (cache / "workspace" / "link-0123456789ab.json").is_symlink()


def test_prune_removes_gone_workspaces_stale_indexes_and_legacy_ones(tmp_path: Path):
    cache = tmp_path / "cache"
    home = tmp_path / "home"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(home), "HOME": str(tmp_path)}
    alive, gone = tmp_path / "alive", tmp_path / "gone"
    alive.mkdir()
    folder = cache / "workspace"
    folder.mkdir(parents=True)
    for root, h in ((alive, "aaaaaaaaaaaa"), (gone, "bbbbbbbbbbbb")):
        (folder / f"{root.name}-{h}.json").write_text(json.dumps({"version": 2, "root": str(root), "files": {}}))
        (folder / f"{root.name}-{h}.content.sqlite").write_text("db")
    stale = _plant(folder, ["old-cccccccccccc.content.sqlite"], age_days=120)
    legacy = _plant(home / "workspace", ["x-dddddddddddd.json"])
    removed = prune(env)
    assert sorted(Path(p).name for p in removed.paths) == sorted(
        [
            "gone-bbbbbbbbbbbb.json",
            "gone-bbbbbbbbbbbb.content.sqlite",
            "old-cccccccccccc.content.sqlite",
            "x-dddddddddddd.json",
        ]
    )
    assert not any(p.exists() for p in stale + legacy)
    assert sorted(p.name for p in folder.iterdir()) == ["alive-aaaaaaaaaaaa.content.sqlite", "alive-aaaaaaaaaaaa.json"]
    # a shorter age takes the recent ones too; --dry-run through the CLI removes nothing
    cli_env = env_for(home, {"DSH_CACHE_DIR": str(cache)})
    rc, out, err = run(["cache", "prune", "--max-age-days", "0", "--dry-run", "--json"], cli_env, tmp_path)
    assert (rc, err) == (0, "") and len(json.loads(out)["removed"]) == 2 and json.loads(out)["dryRun"] is True
    assert len(list(folder.iterdir())) == 2
    rc, out, err = run(["cache", "prune", "--max-age-days", "0"], cli_env, tmp_path)
    assert (rc, err) == (0, "") and out.startswith("removed 2 files, ")
    assert not folder.exists() or not list(folder.iterdir())


def test_clean_through_the_cli_then_a_command_rebuilds(tmp_path: Path, workspace: Path):
    home = tmp_path / "home"
    env = env_for(home)
    assert run([*GREP, "-w", str(workspace)], env, tmp_path)[0] == 0
    rc, out, err = run(["cache", "clean"], env, tmp_path)
    assert (rc, err) == (0, "") and out.startswith("removed ") and " files, " in out
    assert not (Path(env["XDG_CACHE_HOME"]) / "dsh-search").exists()
    rc, out, _ = run([*GREP, "-w", str(workspace)], env, tmp_path)
    assert rc == 0 and "look here for the package version" in out
    shutil.rmtree(Path(env["XDG_CACHE_HOME"]))


def _plant_gone(folder: Path, root: Path, digest: str) -> list[Path]:
    """The symbol cache and content index of a workspace folder ``root`` that does not exist."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{root.name}-{digest}.json").write_text(json.dumps({"version": 2, "root": str(root), "files": {}}))
    (folder / f"{root.name}-{digest}.content.sqlite").write_text("db")
    return [folder / f"{root.name}-{digest}.json", folder / f"{root.name}-{digest}.content.sqlite"]


def test_servers_prune_the_cache_by_themselves_at_most_once_a_day(tmp_path: Path):
    """Agents in throw-away checkouts leave an index per checkout: the first server of a day
    prunes (the stamp set first, so a fleet starting together prunes once), the next ones within
    the day do not; ``clean`` removes the stamp with the rest; a stamp that is a symlink is
    never written through."""
    cache = tmp_path / "cache"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    folder = cache / "workspace"
    assert prune_if_due(env) is None  # nothing cached yet: no stamp either
    assert not (cache / PRUNE_STAMP).exists()
    first = _plant_gone(folder, tmp_path / "checkout-1", "aaaaaaaaaaaa")
    t0 = time.time()
    removed = prune_if_due(env, now=t0)
    assert removed is not None and sorted(removed.paths) == sorted(str(p) for p in first)
    assert (cache / PRUNE_STAMP).stat().st_mtime == t0
    second = _plant_gone(folder, tmp_path / "checkout-2", "bbbbbbbbbbbb")
    assert prune_if_due(env, now=t0 + AUTO_PRUNE_EVERY_S - 1) is None
    assert all(p.exists() for p in second)
    removed = prune_if_due(env, now=t0 + AUTO_PRUNE_EVERY_S)
    assert removed is not None and sorted(removed.paths) == sorted(str(p) for p in second)
    assert [Path(p).name for p in clean(env).paths] == [PRUNE_STAMP]
    # a planted symlink stamp: not due, and its target is neither created nor touched
    _plant_gone(folder, tmp_path / "checkout-3", "cccccccccccc")
    target = tmp_path / "elsewhere"
    (cache / PRUNE_STAMP).symlink_to(target)
    assert prune_if_due(env, now=t0 + 10 * AUTO_PRUNE_EVERY_S) is None
    assert not target.exists() and len(list(folder.iterdir())) == 2


def test_a_long_lived_server_prunes_after_its_workspace_is_ready(tmp_path: Path, workspace: Path):
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    cache = tmp_path / "cache"
    gone = _plant_gone(cache / "workspace", tmp_path / "deleted-checkout", "dddddddddddd")
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), workspace, env, warm_search=True)
    try:
        assert wait_until(lambda: not any(p.exists() for p in gone), "the deleted checkout's indexes pruned", 60)
        assert (cache / PRUNE_STAMP).is_file()
        # the server's own workspace indexes stay
        assert any(p.name.endswith(".content.sqlite") for p in (cache / "workspace").iterdir())
    finally:
        sidecar.shutdown()
