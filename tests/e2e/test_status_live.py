"""``dsh-search status`` shows the live state of the running servers (their status files under
``$DSH_HOME/run``: provider health, cache, suggester counters), which a new process cannot
know, or says there is none or why it cannot tell; the files are 0600, bounded, removed at
exit, and stale or hostile ones are ignored."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from dsh_sidecar.runstate import MAX_BYTES, live_servers
from support import rawrpc
from support.cli import env_for, run
from support.mockprovider import MockProvider
from support.providerbodies import answer
from support.sidecar import home_env
from support.waiting import wait_until


def test_status_shows_a_running_servers_health_cache_and_counters(tmp_path: Path, workspace: Path):
    mock = MockProvider()
    mock.route("GET", "/search", answer("searxng", [{"url": "https://a.example/", "title": "A", "snippet": "s"}]))
    home = tmp_path / "home"
    env = env_for(home, {"SEARXNG_BASE_URL": mock.url})
    srv = rawrpc.RawServer(home, env=env, forked=True)
    try:
        srv.initialize(options={"router": {"order": ["searxng"]}}, root=workspace)
        assert "result" in srv.request("dsh/search", {"query": "bike", "strategy": "quick"}, timeout=30)
        run_dir = home / "run"

        def served() -> dict | None:
            servers, problem = live_servers({**env})
            assert problem is None
            cache = servers[0]["router"]["cache"] if servers else None
            return servers[0] if cache and cache["entries"] == 1 else None

        live = wait_until(served, "the server's status file showing its search")  # heartbeat: 5 s
        files = list(run_dir.iterdir())
        assert len(files) == 1 and files[0].stat().st_mode & 0o777 == 0o600 and run_dir.stat().st_mode & 0o777 == 0o700
        assert live["kind"] == "serve" and live["workspace"] == str(workspace)
        assert [h["provider"] for h in live["router"]["health"]] == ["searxng"]
        assert live["router"]["health"][0]["state"] == "ok"
        rc, out, err = run(["status", "--json"], env, tmp_path)
        doc = json.loads(out)
        assert (
            rc == 0 and doc["servers"][0]["pid"] == live["pid"] and doc["servers"][0]["router"]["cache"]["entries"] == 1
        )
        assert doc["router"]["health"][0]["state"] == "unknown"  # this process's own view: it searched nothing
        rc, out, err = run(["status"], env, tmp_path)
        assert out.startswith("running servers (1, live):\n  serve pid ")
        assert "    chain: searxng [ok]\n    cache: 1 entries, 0 hits, 1 misses\n" in out
    finally:
        assert srv.shutdown() == 0
        mock.close()
    assert list((home / "run").iterdir()) == []  # removed at exit
    rc, out, _ = run(["status"], env, tmp_path)
    assert out.startswith("running servers: none (a server writes its live state under $DSH_HOME/run;")


def test_stale_and_hostile_status_files_are_ignored(tmp_path: Path):
    home = tmp_path / "home"
    run_dir = home / "run"
    run_dir.mkdir(parents=True)
    env = home_env(home)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead_pid = int(dead.stdout)
    me = os.getpid()
    (run_dir / f"{dead_pid}.json").write_text(json.dumps({"pid": dead_pid, "kind": "serve"}))  # process gone
    old = run_dir / f"{me}.json"
    old.write_text(json.dumps({"pid": me, "kind": "serve"}))
    past = time.time() - 120
    os.utime(old, (past, past))  # a hung server: heartbeat too old
    (run_dir / "1.json").write_text("x" * (MAX_BYTES + 1))  # too big
    (run_dir / "notes.txt").write_text("{}")
    os.symlink("/dev/zero", run_dir / "2.json")
    servers, problem = live_servers(env)
    assert (servers, problem) == ([], None)
    assert not (run_dir / f"{dead_pid}.json").exists()  # its process is gone: removed
    os.utime(old)
    servers, _ = live_servers(env)
    assert [s["pid"] for s in servers] == [me]
    (home / "run").rename(home / "elsewhere")
    (home / "run").write_text("not a folder")
    assert live_servers(env) == ([], f"{home / 'run'} is not a folder")
