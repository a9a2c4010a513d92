"""How long ``dsh-search mcp`` takes to exit when Claude Code ends it, on a fleet store (docs/fleet.md,
"The exit is bounded"), and what it loses.

Claude Code's teardown of an MCP server: stdin closed and SIGINT, SIGTERM 100 ms later, SIGKILL
400 ms after that (0.5 s in all). Each exit here is a real ``dsh-search mcp`` on a real
``redis-server`` behind a loopback proxy, after ``initialize``, a warm search and three searches
and ``post_tool_use`` calls; the clock runs from the SIGINT to the process's end. Two stores:

* **stalled**: the proxy holds every reply for 60 s from the three calls on (a store that
  accepts and never answers): the exit waits for it only its bounds, then counts what it did not
  send;
* **healthy**: the proxy forwards at once: the four bandit updates must all be in the store.

``--busy N`` runs N busy loops (one process each) through the exits: the machine of a user with
a build running. ``--before TREE`` runs the code of ``TREE`` (a checkout or ``git archive`` of an
earlier commit: its ``server``, ``protocol`` and ``packs``) in the same rotation, one exit of each
tree in turn, so the before/after comes from one run. Prints per tree and store the median and
worst exit time, how many exits the SIGKILL ended, and the writes lost on the healthy store.

Run: ``python bench/mcp_exit.py --exits 10 --busy 2 [--before /tmp/main-tree]``.
Needs Debian's ``redis-server``. The machine is shared: compare the trees within one run.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import select
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import redis  # noqa: E402
from dsh_sidecar.bandit.policy import GLOBAL  # noqa: E402
from dsh_sidecar.state import keys  # noqa: E402
from support.fleetkit import (  # noqa: E402
    REDIS_SERVER,
    Providers,
    RedisServer,
    make_workspace,
    options,
    sidecar_env,
    temp_root,
)
from support.storeproxy import StoreProxy  # noqa: E402

#: Claude Code's teardown: SIGINT, SIGTERM this much later, SIGKILL this much after that.
SIGTERM_AFTER_S = 0.1
SIGKILL_AFTER_S = 0.4
STALL_S = 60.0
GREP = {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}}
INIT = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}


class Mcp:
    def __init__(self, env: dict[str, str], config: Path, workspace: Path, stderr: Path) -> None:
        self._stderr = stderr.open("wb")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_sidecar", "mcp", "--config", str(config), "--workspace", str(workspace)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )
        self.next_id = 0

    def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            ready, _, _ = select.select([self.proc.stdout], [], [], 60)
            assert ready, f"no answer to {method} within 60 s"
            message = json.loads(self.proc.stdout.readline())
            if message.get("id") == self.next_id:
                return message

    def call(self, tool: str, args: dict[str, Any]) -> None:
        result = self.request("tools/call", {"name": tool, "arguments": args})["result"]
        assert not result.get("isError"), result

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def end_as_claude_code(self) -> tuple[float, int]:
        """Seconds from the SIGINT to the exit, and the exit status (-9: the SIGKILL ended it).
        The exit is seen by a thread blocked in ``waitpid`` (as a harness's SIGCHLD would see
        it), not by ``Popen.wait``'s polling, which sleeps up to 50 ms between looks."""
        assert self.proc.stdin is not None
        reaped: dict[str, float] = {}
        done = threading.Event()

        def reap() -> None:
            _, status = os.waitpid(self.proc.pid, 0)
            reaped["at"] = time.perf_counter()
            reaped["status"] = os.waitstatus_to_exitcode(status)
            done.set()

        reaper = threading.Thread(target=reap, daemon=True)
        reaper.start()
        self.proc.stdin.close()
        t0 = time.perf_counter()
        os.kill(self.proc.pid, signal.SIGINT)  # not Popen.send_signal: its poll() would reap the exit first
        for sig, after_s in ((signal.SIGTERM, SIGTERM_AFTER_S), (signal.SIGKILL, SIGKILL_AFTER_S)):
            if done.wait(max(0.0, t0 + after_s - time.perf_counter()) if sig == signal.SIGTERM else after_s):
                break
            os.kill(self.proc.pid, sig)  # unreaped until the thread reaps it: the pid is still the child's
        reaper.join(10)
        self.proc.returncode = int(reaped["status"])
        self._stderr.close()
        return reaped["at"] - t0, self.proc.returncode


def busy() -> None:
    while True:
        pass


def one_exit(tmp: Path, tree: Path | None, store: RedisServer, providers: Providers, stalled: bool) -> dict[str, Any]:
    raw = redis.Redis.from_url(store.url)
    raw.flushall()
    proxy = StoreProxy(store.port)
    home = tmp / "home"
    home.mkdir(parents=True)
    env = sidecar_env(home)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(tree / part) for part in ("server", "protocol", "packs"))
    config = tmp / "sidecar.json"
    config.write_text(json.dumps(options(providers, proxy.url(), seed=1, timeoutMs=5000, retryMs=60_000)))
    mcp = Mcp(env, config, make_workspace(tmp / "demo"), tmp / "stderr.log")
    try:
        mcp.request("initialize", INIT)
        mcp._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        mcp.request("tools/list", {})
        mcp.call("search", {"query": "warm"})
        if stalled:
            proxy.delay_s = STALL_S
        for i in range(3):
            mcp.call("search", {"query": f"exit {i}"})
            mcp.call("post_tool_use", {**GREP, "session_id": f"s{i}"})
        took, status = mcp.end_as_claude_code()
    finally:
        if mcp.proc.poll() is None:
            mcp.proc.kill()
            mcp.proc.wait(10)
        proxy.close()
    stored = sum(int(v) for k, v in raw.hgetall(keys.bandit_counts_key(GLOBAL)).items() if k.endswith(b":updates"))
    raw.close()
    return {"took": took, "status": status, "lost": 4 - stored}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--exits", type=int, default=10, help="exits per tree and store (default 10)")
    ap.add_argument("--busy", type=int, default=2, help="busy loops running through the exits (default 2)")
    ap.add_argument("--before", type=Path, help="a tree of earlier code, exited in the same rotation")
    args = ap.parse_args()
    if REDIS_SERVER is None:
        print("redis-server is not installed (apt-get install redis-server)")
        return
    tmp = temp_root("dsh-bench-mcp-exit-")
    store = RedisServer(tmp / "redis")
    store.start()
    providers = Providers(error_every=0)
    loops = [multiprocessing.Process(target=busy, daemon=True) for _ in range(args.busy)]
    for p in loops:
        p.start()
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.before is not None:
        trees.insert(0, ("before", args.before.resolve()))
    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    loads: list[float] = []
    try:
        n = 0
        for i in range(args.exits):
            for kind in ("stalled", "healthy"):
                for name, tree in trees if i % 2 == 0 else trees[::-1]:
                    n += 1
                    r = one_exit(tmp / f"exit-{n}", tree, store, providers, kind == "stalled")
                    results.setdefault((name, kind), []).append(r)
                    loads.append(os.getloadavg()[0])
    finally:
        for p in loops:
            p.kill()
            p.join()
        providers.close()
        store.stop()
    print(
        f"dsh-search mcp exit under Claude Code's teardown (SIGKILL {SIGTERM_AFTER_S + SIGKILL_AFTER_S:.1f} s after "
        f"SIGINT), {args.busy} busy loops, {os.cpu_count()} CPUs, 1-min load {min(loads):.1f}-{max(loads):.1f}"
    )
    print(f"{'tree':<10} {'store':<8} {'exits':>5} {'median s':>9} {'worst s':>8} {'killed':>7} {'writes lost':>12}")
    for (name, kind), rs in results.items():
        took = [r["took"] for r in rs]
        killed = sum(r["status"] == -signal.SIGKILL for r in rs)
        lost = sum(r["lost"] for r in rs) if kind == "healthy" else "-"
        print(
            f"{name:<10} {kind:<8} {len(rs):>5} {statistics.median(took):9.3f} {max(took):8.3f} {killed:>7} {lost!s:>12}"
        )
        print(f"{'':<19} each: {' '.join(f'{t:.3f}' for t in took)}")


if __name__ == "__main__":
    main()
