"""The benchmarks' temp folders go however a run ends: at its end, on an error, on a kill
(``bench/_scratch.py``); ``bench/transport.py`` refusing its repository leaves none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from bench import transport
from bench._scratch import own_cache, scratch

BENCH = Path(__file__).resolve().parents[3] / "bench"


def test_the_folder_goes_at_the_end_and_on_an_error(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with scratch("dsh-x-") as tmp:
        (tmp / "a").mkdir()
        (tmp / "a" / "b").write_text("b")
    assert not tmp.exists()
    with pytest.raises(RuntimeError), scratch("dsh-x-") as tmp:
        (tmp / "c").write_text("c")
        raise RuntimeError("the bench failed")
    assert list(tmp_path.iterdir()) == []


def test_a_kill_ends_the_run_and_the_folder_goes(tmp_path):
    script = (
        "import sys, threading\n"
        f"sys.path.insert(0, {str(BENCH)!r})\n"
        "from _scratch import scratch\n"
        "with scratch('dsh-x-') as tmp:\n"
        "    (tmp / 'state').write_text('s')\n"
        "    print(tmp, flush=True)\n"
        "    threading.Event().wait()\n"
    )
    env = dict(os.environ, TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    folder = Path(proc.stdout.readline().strip())
    assert folder.parent == tmp_path and (folder / "state").exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    assert list(tmp_path.iterdir()) == []


def test_the_signal_handler_is_given_back(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = signal.getsignal(signal.SIGTERM)
    with scratch("dsh-x-"):
        assert signal.getsignal(signal.SIGTERM) is not before
    assert signal.getsignal(signal.SIGTERM) is before


def test_transport_refusing_its_repository_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    argv = ["transport.py", "--repo", "nobody/nothing", "--cache", str(tmp_path / "no-cache")]
    monkeypatch.setattr(sys, "argv", argv)
    with pytest.raises(SystemExit) as exited:
        transport.main()
    assert str(exited.value).startswith("transport: ")
    assert list((tmp_path / "tmp").iterdir()) == []


def test_own_cache_unless_the_user_names_one(tmp_path):
    """A run's sidecars get their own ``DSH_CACHE_DIR`` (the shared cache's rows are keyed by the
    rules' version, which two branches may raise to the same number), unless the user set one."""
    env: dict[str, str] = {"HOME": "/h"}
    with own_cache(tmp_path / "cache", env) as used:
        assert used == tmp_path / "cache"
        assert env == {"HOME": "/h", "DSH_CACHE_DIR": str(tmp_path / "cache")}
    assert env == {"HOME": "/h"}
    env = {"DSH_CACHE_DIR": "/mine"}
    with own_cache(tmp_path / "cache", env) as used:
        assert used is None and env == {"DSH_CACHE_DIR": "/mine"}
    assert env == {"DSH_CACHE_DIR": "/mine"}


ROOT = BENCH.parent
SHOPCART = ROOT / "tests" / "data" / "workspaces" / "shopcart"
#: Runs that start sidecars, each stopped by a kill once a sidecar's ledger is written.
KILLED_RUNS = {
    "suggester": [str(BENCH / "suggester.py"), "--files", "0"],
    "corpus report": [str(ROOT / "corpus" / "intents" / "report.py"), "--materialized"],
    "first note": [
        str(BENCH / "first_note.py"),
        *("--workspace", str(SHOPCART), "--call", '{"name": "Grep", "input": {"pattern": "class Cart"}}'),
        *("--sessions", "1", "--busy", "0", "--only", "stdio"),
    ],
}


@pytest.mark.slow  # spawns the bench and its sidecars
@pytest.mark.parametrize("name", sorted(KILLED_RUNS))
def test_a_killed_run_leaves_no_folder(tmp_path, name):
    """``kill`` of a run while its sidecar runs: every folder it made under the temp directory
    goes (its scratch folder: homes, caches, stub workspaces). Before, the replays' homes and the
    corpus runs' folders (``dsh-corpus-…``, ~100 MB) and first_note's reference home stayed."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "DSH_CACHE_DIR"}
    env.update(TMPDIR=str(tmp), HOME=str(tmp_path))
    proc = subprocess.Popen([sys.executable, *KILLED_RUNS[name]], env=env, stdout=subprocess.DEVNULL, cwd=ROOT)
    try:
        for _ in range(6000):  # a sidecar's ledger: the run is replaying (a bound, not a timing)
            if any(tmp.rglob("ledger.log")) or proc.poll() is not None:
                break
            time.sleep(0.05)
        assert proc.poll() is None, "the run ended before a sidecar wrote its ledger"
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert sorted(p.name for p in tmp.iterdir()) == []
    assert code == 128 + signal.SIGTERM  # ended by its own SystemExit (before: killed outright, -15)
