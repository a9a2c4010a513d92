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

from dsh_sidecar.cachedir import (
    AUTO_PRUNE_EVERY_S,
    INDEX_FILE,
    PRUNE_STAMP,
    STAMP_SKEW_S,
    clean,
    prune,
    prune_if_due,
    usage,
)
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
            "repo-0123456789ab.json.corrupt-1700000000",
            "repo-0123456789ab.json.corrupt-1700000000-1",
            "repo-0123456789ab.tables.bin",
            "repo-0123456789ab.tables.bin.lock",
            ".repo-0123456789ab.tables.bin.k2j4_x.tmp",
            "repo-0123456789ab.listing.bin",
            "repo-0123456789ab.journal.json",
            "repo-0123456789ab.listing-journal.json",
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
    assert sorted(removed.paths) == sorted(str(p) for p in ours + legacy) and removed.bytes == 10 * 16
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


def test_a_workspace_whose_path_is_not_utf8_is_indexed(tmp_path: Path, workspace: Path):
    """A folder named with bytes that are not UTF-8 (a Latin-1 checkout, an odd archive) is a
    workspace like any other: its index is named by a hash of the path's bytes, where encoding
    the path as UTF-8 raised and ``suggest`` printed a traceback."""
    home = tmp_path / "home"
    env = env_for(home)
    odd = workspace.rename(tmp_path / "caf\udce9")  # the byte 0xE9 alone, as the OS gives it
    rc, out, err = run([*GREP, "-w", str(odd)], env, tmp_path)
    assert (rc, err) == (0, "") and "look here for the package version" in out
    shutil.rmtree(Path(env["XDG_CACHE_HOME"]))


def test_a_server_marks_its_own_workspace_indexes_used_before_pruning(tmp_path: Path, workspace: Path):
    """An unchanged tree rewrites none of its index files, so an index opened every day was
    pruned as "unused for 90 days" by the very server that had it open (its SQLite -wal and -shm
    too); the server marks its own workspace's files used first, and the next prune keeps them."""
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    cache = tmp_path / "cache"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    config = parse_config({"suggester": {"enabled": True}})
    sidecar = Sidecar(config, workspace, env)
    try:
        assert wait_until(lambda: not sidecar.projection.building(), "the workspace indexed", 60)
        # a tree outside git keeps its verified listing too, written once the build is done
        listing = lambda: list((cache / "workspace").glob("*.listing.bin"))  # noqa: E731
        assert wait_until(listing, "the verified listing kept", 60)
    finally:
        sidecar.shutdown()
    folder = cache / "workspace"
    own = sorted(p.name for p in folder.iterdir())
    assert any(n.endswith(".content.sqlite") for n in own) and any(n.endswith(".json") for n in own)
    long_ago = time.time() - 100 * 86400
    for path in folder.iterdir():
        os.utime(path, (long_ago, long_ago))
    gone = _plant_gone(folder, tmp_path / "deleted-checkout", "dddddddddddd")
    sidecar = Sidecar(config, workspace, env, warm_search=True)
    try:
        assert wait_until(lambda: not any(p.exists() for p in gone), "the deleted checkout's indexes pruned", 60)
        assert sorted(p.name for p in folder.iterdir()) == own
        assert all(time.time() - p.stat().st_mtime < 3600 for p in folder.iterdir())
    finally:
        sidecar.shutdown()


def test_a_stamp_from_a_clock_that_ran_ahead_does_not_stop_pruning(tmp_path: Path):
    """A stamp within an hour ahead is a clock's ordinary drift (not due); one further ahead
    was set by a wrong clock, and waiting for the clock to catch up would leave the cache
    unpruned for as long (due, and the stamp set back to now)."""
    cache = tmp_path / "cache"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    now = time.time()
    stamp = cache / PRUNE_STAMP
    first = _plant_gone(cache / "workspace", tmp_path / "checkout-1", "aaaaaaaaaaaa")
    stamp.touch()
    os.utime(stamp, (now + STAMP_SKEW_S - 60, now + STAMP_SKEW_S - 60))
    assert prune_if_due(env, now=now) is None and all(p.exists() for p in first)
    os.utime(stamp, (now + 365 * 86400, now + 365 * 86400))
    removed = prune_if_due(env, now=now)
    assert removed is not None and sorted(removed.paths) == sorted(str(p) for p in first)
    assert stamp.stat().st_mtime == now


def test_a_stamp_that_is_not_a_file_is_never_opened(tmp_path: Path):
    """A FIFO or a folder where the stamp goes: not due, and nothing waits on the FIFO for a
    reader (the server's warm-up thread would hang there)."""
    cache = tmp_path / "cache"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    planted = _plant_gone(cache / "workspace", tmp_path / "checkout-1", "aaaaaaaaaaaa")
    os.mkfifo(cache / PRUNE_STAMP)
    assert prune_if_due(env, now=time.time() + 10 * AUTO_PRUNE_EVERY_S) is None
    (cache / PRUNE_STAMP).unlink()
    (cache / PRUNE_STAMP).mkdir()
    assert prune_if_due(env, now=time.time() + 10 * AUTO_PRUNE_EVERY_S) is None
    assert all(p.exists() for p in planted)


def test_two_servers_claiming_the_stamp_at_once_prune_once(tmp_path: Path, monkeypatch):
    """Another server claims the stamp between this one's look at it and its claim (a fleet
    starting together): this one does not prune again, whether the stamp was missing (it is
    created exclusively) or a day old (it is locked and looked at again)."""
    import dsh_sidecar.cachedir as cachedir

    cache = tmp_path / "cache"
    env = {"DSH_CACHE_DIR": str(cache), "DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    (cache / "workspace").mkdir(parents=True)
    real_open = os.open
    results: list[object] = []

    def another_server_first(path, flags, mode=0o777):
        if path == cache / PRUNE_STAMP and not results:
            results.append(None)
            results[0] = prune_if_due(env, now=now)
        return real_open(path, flags, mode)

    monkeypatch.setattr(cachedir.os, "open", another_server_first)
    for stamp_age in (None, 2 * AUTO_PRUNE_EVERY_S):
        results.clear()
        now = time.time()
        if stamp_age is not None:
            os.utime(cache / PRUNE_STAMP, (now - stamp_age, now - stamp_age))
        assert prune_if_due(env, now=now) is None
        assert results and results[0] is not None  # the other server pruned, once
