"""Deadlines and cancellation with the CPU loaded: ``dsh/search`` and MCP ``web_search``/``search``
over providers that never answer, and ``$/cancelRequest`` / ``notifications/cancelled``.

Agents' machines are busy (builds, tests): this bench starts its own CPU burners (``--burners``,
default 2: one per core of the reference machine, ``python -c 'while True: pass'``) and prints
the load average before and after, so a figure is read with the load it was taken under.

Per round, fresh servers (the first search after ``initialize`` meets the sidecar's build, the
search path's preparation and, with the suggester on, the workspace's indexing):

* **LSP deadline**: ``dsh/search`` with ``deadlineMs: 5000`` over two hanging providers
  (SearXNG's and Brave's wire format on loopback), the first one right after ``initialize``
  (``cold``), then ``--searches`` more (``warm``); the reply time is the client's, from its
  write to the reply read. Goal: <= 5,000 ms.
* **LSP overrun**: ``--overruns`` searches with a 1 s deadline (quick and thorough alternated)
  while ``--churn`` files change every 200 ms (``workspace/didChangeWatchedFiles``: the graph,
  content index and suggester re-preparation run in the background): how long past its deadline
  each reply came. Run on a tree with no reserve, this is what the router's reserve must cover
  (``router/budget.py``, ``DEADLINE_RESERVE_MS``).
* **LSP cancel**: a search (``deadlineMs: 20000``) over a hanging provider, ``$/cancelRequest``
  after 300 ms: the reply (-32800) latency from the cancel's write (goal <= 100 ms) and when the
  provider saw its connection closed (the cancel reached the HTTP call; 0 when the search was
  cancelled before its call). ``warm``: on the server above, files still changing; ``cold``: the
  first request of a fresh server (sent while the sidecar is being built).
* **MCP deadline**: ``dsh-search mcp`` with ``router.deadlineMs: 5000``: ``web_search`` and
  ``search`` over the hanging providers, the first right after ``initialize``.
* **MCP cancel**: ``notifications/cancelled`` 300 ms into a ``web_search`` (MCP answers no
  cancelled request): a ``ping`` sent with it answered (the loop is free) and when the provider
  saw its connection closed; ``cold`` on a fresh server.
* **Floor**: round trips to a stdio echo child (no sidecar at all) under the same load, between
  the rounds: what the machine alone costs a message.

With ``--baseline-src DIR`` (another commit's source tree, e.g. a ``git worktree`` of main) the
same rounds run on it too, alternated round by round; each tree's figures are printed beside the
goal as medians, p90 and maxima, with how many missed it.

    python bench/deadlines.py [--rounds 4] [--burners 2] [--files 3000] [--overruns 10] [--cancels 5]
        [--no-churn] [--no-mcp] [--no-lsp] [--baseline-src DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from dsh_protocol.stdio_client import encode_frame, read_frame

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
#: Goal of a search's reply with ``deadlineMs: 5000``, ms.
DEADLINE_GOAL_MS = 5000
#: Goal of a cancelled request's reply (and of the HTTP call's abort), ms.
CANCEL_GOAL_MS = 100
#: The short deadline of the overrun samples (how late past its deadline a reply comes), ms.
OVERRUN_DEADLINE_MS = 1000
KEY = "bsk-DeadlineBench-0c1d2e3f4a5b6c7d"


# ------------------------------------------------------------------ a provider that never answers


class Hang:
    """When each query's connection was opened and closed by the client (monotonic)."""

    opened: dict[str, float] = {}
    closed: dict[str, float] = {}
    lock = threading.Lock()


class HangingProvider(BaseHTTPRequestHandler):
    """Reads the request, never answers, and records when the client closes the connection."""

    def _hang(self) -> None:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query).get("q", [""])[0]
        with Hang.lock:
            Hang.opened[query] = time.monotonic()
        self.connection.settimeout(120)
        try:
            while self.connection.recv(4096):
                pass
        except OSError:
            pass
        with Hang.lock:
            Hang.closed[query] = time.monotonic()
        self.close_connection = True

    do_GET = _hang  # noqa: N815 - http.server API
    do_POST = _hang  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


def wait_closed(query: str, cancelled: float, timeout: float = 10.0) -> float:
    """Milliseconds from the cancel to the provider seeing ``query``'s connection closed; 0 when
    the search never reached the provider (cancelled before its HTTP call); inf if never."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        with Hang.lock:
            if query in Hang.closed:
                return max(0.0, (Hang.closed[query] - cancelled) * 1000)
            if query not in Hang.opened and time.monotonic() - cancelled > 1.0:
                return 0.0
        time.sleep(0.005)
    return float("inf")


# ------------------------------------------------------------------ clients with arrival times


def _env(home: Path, src: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "SEARXNG_BASE_URL"}
    env.update(DSH_HOME=str(home), DSH_CACHE_DIR=f"{home}-cache", BRAVE_SEARCH_API_KEY=KEY)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs"))
    return env


class Lsp:
    """``python -m dsh_sidecar serve``; every message read is stamped with its arrival."""

    def __init__(self, home: Path, ws: Path, src: Path | None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_sidecar", "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(home, src),
            cwd=ws,
        )
        self.replies: dict[Any, tuple[float, dict[str, Any]]] = {}
        self.cond = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            raw = read_frame(self.proc.stdout)
            if raw is None:
                return
            at = time.monotonic()
            msg = json.loads(raw)
            if "id" in msg and "method" not in msg:
                with self.cond:
                    self.replies[msg["id"]] = (at, msg)
                    self.cond.notify_all()

    def write(self, msg: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        data = encode_frame(msg)
        t = time.monotonic()
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return t

    def send(self, method: str, params: Any) -> tuple[int, float]:
        self.next_id += 1
        return self.next_id, self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    def notify(self, method: str, params: Any) -> float:
        return self.write({"jsonrpc": "2.0", "method": method, "params": params})

    def wait(self, msg_id: int, timeout: float = 60.0) -> tuple[float, dict[str, Any]] | None:
        end = time.monotonic() + timeout
        with self.cond:
            while msg_id not in self.replies:
                left = end - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.replies.pop(msg_id)

    def close(self) -> None:
        try:
            i, _ = self.send("shutdown", None)
            self.wait(i, 20)
            self.notify("exit", None)
            self.proc.wait(20)
        except Exception:
            self.proc.kill()
            self.proc.wait()


class Mcp:
    """``python -m dsh_sidecar mcp`` (newline-delimited JSON-RPC), replies stamped likewise."""

    def __init__(self, home: Path, ws: Path, config: Path, src: Path | None) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dsh_sidecar", "mcp", "--workspace", str(ws), "--config", str(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=_env(home, src),
            bufsize=0,
        )
        self.replies: dict[Any, tuple[float, dict[str, Any]]] = {}
        self.cond = threading.Condition()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            at = time.monotonic()
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "id" in msg and "method" not in msg:
                with self.cond:
                    self.replies[msg["id"]] = (at, msg)
                    self.cond.notify_all()

    def write(self, msg: dict[str, Any]) -> float:
        assert self.proc.stdin is not None
        data = json.dumps(msg).encode() + b"\n"
        t = time.monotonic()
        self.proc.stdin.write(data)
        return t

    def send(self, method: str, params: Any) -> tuple[int, float]:
        self.next_id += 1
        return self.next_id, self.write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})

    wait = Lsp.wait

    def initialize(self) -> None:
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        i, _ = self.send("initialize", params)
        assert self.wait(i, 120) is not None, "the MCP server did not answer initialize"
        self.write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ------------------------------------------------------------------ one round


def router_config(url: str, deadline_ms: int) -> dict[str, Any]:
    return {
        "order": ["searxng", "brave"],
        "providers": {"searxng": {"baseUrl": url + "/hang"}, "brave": {"baseUrl": url + "/hang"}},
        "cache": False,
        "timeoutMs": 20000,
        "deadlineMs": deadline_ms,
    }


class Churn:
    """Touch files of the workspace every 200 ms and tell the sidecar, until stopped."""

    def __init__(self, lsp: Lsp, files: list[Path]) -> None:
        self.lsp, self.files, self.stop = lsp, files, threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        i = 0
        while not self.stop.wait(0.2) and self.files:
            batch = [self.files[(i + k) % len(self.files)] for k in range(5)]
            i += 5
            for path in batch:
                with open(path, "a") as fh:
                    fh.write(f"# {i}\n")
            changes = [{"uri": p.as_uri(), "type": 2} for p in batch]
            self.lsp.notify("workspace/didChangeWatchedFiles", {"changes": changes})

    def __enter__(self) -> Churn:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join()


def lsp_start(ws: Path, home: Path, src: Path | None, url: str) -> Lsp:
    options = {"router": router_config(url, 20000), "suggester": {"enabled": True}}
    lsp = Lsp(home, ws, src)
    init = {"processId": None, "capabilities": {}, "rootUri": ws.as_uri(), "initializationOptions": options}
    i, _ = lsp.send("initialize", init)
    assert lsp.wait(i, 120) is not None, "no initialize reply"
    lsp.notify("initialized", {})
    return lsp


def lsp_cancel(lsp: Lsp, query: str, out: dict, key: str) -> None:
    i, _ = lsp.send("dsh/search", {"query": query, "strategy": "quick", "deadlineMs": 20000})
    time.sleep(0.3)
    cancelled = lsp.notify("$/cancelRequest", {"id": i})
    got = lsp.wait(i, 30)
    out[f"lsp cancel {key} reply"].append((got[0] - cancelled) * 1000 if got else float("inf"))
    out[f"lsp cancel {key} http closed"].append(wait_closed(query, cancelled))


def lsp_round(tag: str, url: str, ws: Path, home: Path, src: Path | None, args: argparse.Namespace, out: dict) -> None:
    lsp = lsp_start(ws, home, src, url)
    try:
        for n in range(1 + args.searches):
            params = {"query": f"{tag} d{n}", "strategy": "quick", "deadlineMs": DEADLINE_GOAL_MS}
            i, sent = lsp.send("dsh/search", params)
            got = lsp.wait(i, 60)
            took = (got[0] - sent) * 1000 if got else float("inf")
            out["lsp deadline cold" if n == 0 else "lsp deadline warm"].append(took)
        files = sorted(p for p in ws.rglob("*.py"))[:200]
        with Churn(lsp, files if args.churn else []):
            for n in range(args.overruns):  # the reply's lateness past a short deadline, both arms
                strategy = "quick" if n % 2 == 0 else "thorough"
                params = {"query": f"{tag} o{n}", "strategy": strategy, "deadlineMs": OVERRUN_DEADLINE_MS}
                i, sent = lsp.send("dsh/search", params)
                got = lsp.wait(i, 60)
                out["lsp overrun past 1 s"].append(
                    (got[0] - sent) * 1000 - OVERRUN_DEADLINE_MS if got else float("inf")
                )
            for n in range(args.cancels):
                lsp_cancel(lsp, f"{tag} c{n}", out, "warm")
    finally:
        lsp.close()
    lsp = lsp_start(ws, Path(f"{home}-cold"), src, url)  # a cancel while the sidecar is still being built
    try:
        lsp_cancel(lsp, f"{tag} cc", out, "cold")
    finally:
        lsp.close()


def mcp_cancel(mcp: Mcp, query: str, out: dict, key: str) -> None:
    i, _ = mcp.send("tools/call", {"name": "web_search", "arguments": {"query": query}})
    time.sleep(0.3)
    cancelled = mcp.write(
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": i, "reason": "bench"}}
    )
    p, _ = mcp.send("ping", None)
    pong = mcp.wait(p, 30)
    out[f"mcp cancel {key} ping"].append((pong[0] - cancelled) * 1000 if pong else float("inf"))
    out[f"mcp cancel {key} http closed"].append(wait_closed(query, cancelled))
    mcp.wait(i, 1)  # a cancelled request is not answered (MCP); drop a late reply if any


def mcp_start(ws: Path, home: Path, src: Path | None, url: str) -> Mcp:
    config = home / "mcp-config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"router": router_config(url, DEADLINE_GOAL_MS), "suggester": {"enabled": True}}))
    mcp = Mcp(home, ws, config, src)
    mcp.initialize()
    return mcp


def mcp_round(tag: str, url: str, ws: Path, home: Path, src: Path | None, args: argparse.Namespace, out: dict) -> None:
    mcp = mcp_start(ws, home, src, url)
    try:
        for n in range(1 + args.searches):
            tool = "web_search" if n % 2 == 0 else "search"
            i, sent = mcp.send("tools/call", {"name": tool, "arguments": {"query": f"{tag} m{n}"}})
            got = mcp.wait(i, 60)
            took = (got[0] - sent) * 1000 if got else float("inf")
            out["mcp deadline cold" if n == 0 else "mcp deadline warm"].append(took)
        for n in range(args.cancels):
            mcp_cancel(mcp, f"{tag} mc{n}", out, "warm")
    finally:
        mcp.close()
    mcp = mcp_start(ws, Path(f"{home}-cold"), src, url)  # the first call cancelled
    try:
        mcp_cancel(mcp, f"{tag} mcc", out, "cold")
    finally:
        mcp.close()


ECHO = "import sys\nfor line in sys.stdin.buffer:\n    sys.stdout.buffer.write(line)\n    sys.stdout.buffer.flush()\n"


def floor_round(n: int, out: dict) -> None:
    """The machine's own floor: round trips to a stdio echo child (no sidecar) under the same load."""
    proc = subprocess.Popen([sys.executable, "-c", ECHO], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"warm\n")
        proc.stdout.readline()
        for _ in range(n):
            t0 = time.monotonic()
            proc.stdin.write(b"ping\n")
            proc.stdout.readline()
            out["floor: stdio echo"].append((time.monotonic() - t0) * 1000)
            time.sleep(0.05)
    finally:
        proc.stdin.close()
        proc.wait()


# ------------------------------------------------------------------ report


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))]


GOALS: dict[str, int] = {
    "floor: stdio echo": CANCEL_GOAL_MS,
    "lsp deadline cold": DEADLINE_GOAL_MS,
    "lsp deadline warm": DEADLINE_GOAL_MS,
    "lsp overrun past 1 s": 0,
    "lsp cancel cold reply": CANCEL_GOAL_MS,
    "lsp cancel cold http closed": CANCEL_GOAL_MS,
    "lsp cancel warm reply": CANCEL_GOAL_MS,
    "lsp cancel warm http closed": CANCEL_GOAL_MS,
    "mcp deadline cold": DEADLINE_GOAL_MS,
    "mcp deadline warm": DEADLINE_GOAL_MS,
    "mcp cancel cold ping": CANCEL_GOAL_MS,
    "mcp cancel cold http closed": CANCEL_GOAL_MS,
    "mcp cancel warm ping": CANCEL_GOAL_MS,
    "mcp cancel warm http closed": CANCEL_GOAL_MS,
}


def report(name: str, out: dict[str, list[float]]) -> int:
    missed_total = 0
    print(f"-- {name}")
    for key, goal in GOALS.items():
        xs = out.get(key) or []
        if not xs:
            continue
        missed = sum(1 for x in xs if x > goal)
        missed_total += missed
        print(
            f"   {key:28s} n={len(xs):3d} p50={statistics.median(xs):8.1f} p90={pct(xs, 90):8.1f} "
            f"max={max(xs):8.1f} ms  goal<={goal} missed={missed}"
        )
    return missed_total


def burn(n: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--burners", type=int, default=2, help="CPU-bound processes started for the run")
    ap.add_argument("--files", type=int, default=3000, help="files in the synthetic workspace")
    ap.add_argument("--searches", type=int, default=2, help="warm searches after the cold one, per server")
    ap.add_argument("--cancels", type=int, default=5, help="cancelled searches per server")
    ap.add_argument("--overruns", type=int, default=10, help="searches with a 1 s deadline per server (both arms)")
    ap.add_argument("--no-churn", dest="churn", action="store_false", help="no file changes during the cancels")
    ap.add_argument("--no-mcp", dest="mcp", action="store_false")
    ap.add_argument("--no-lsp", dest="lsp", action="store_false")
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, rounds alternated")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(HERE))
    from workspace import synthetic  # bench/workspace.py's mix of kinds, with content

    server = ThreadingHTTPServer(("127.0.0.1", 0), HangingProvider)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline_src:
        trees.append((f"baseline {args.baseline_src}", args.baseline_src.resolve()))
    results: dict[str, dict[str, list[float]]] = {name: {k: [] for k in GOALS} for name, _ in trees}
    tmp = Path(tempfile.mkdtemp(prefix="dsh-deadlines-"))
    burners: list[subprocess.Popen[bytes]] = []
    try:
        ws = tmp / "ws"
        synthetic(ws, args.files, with_content=True)
        load0 = os.getloadavg()
        burners = burn(args.burners)
        time.sleep(1.0)
        for r in range(args.rounds):
            order = trees if r % 2 == 0 else list(reversed(trees))
            for name, src in order:
                tag = f"r{r}-{'b' if src else 't'}"
                home = tmp / f"home-{tag}"
                if args.lsp:
                    lsp_round(tag, url, ws, home, src, args, results[name])
                if args.mcp:
                    mcp_round(tag, url, ws, tmp / f"mcp-{tag}", src, args, results[name])
                floor_round(40, results[name])
            print(f"round {r + 1}/{args.rounds} done, load average {os.getloadavg()[0]:.1f}", flush=True)
        load1 = os.getloadavg()
    finally:
        for b in burners:
            b.kill()
            b.wait()
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)
    print(
        f"load average 1/5/15 min: before {load0[0]:.1f}/{load0[1]:.1f}/{load0[2]:.1f}, "
        f"at the end {load1[0]:.1f}/{load1[1]:.1f}/{load1[2]:.1f} ({args.burners} CPU burners of ours, "
        f"{os.cpu_count()} CPUs)"
    )
    missed = 0
    for name, _ in trees:
        m = report(name, results[name])
        missed = m if name == "this tree" else missed
    print(f"deadlines: this tree missed {missed} goal(s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
