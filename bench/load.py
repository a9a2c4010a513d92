"""Load soak: drive ``dsh-search serve`` over real stdio with interleaved, pipelined
``dsh/postExecute`` and ``dsh/search`` calls (up to ``--inflight`` in flight) for
``--duration`` seconds, against loopback providers with injected faults, and print
throughput, p50/p99 latency per method, errors by kind, and the server's RSS over the run.

Chain: ``brave`` (a loopback fault injector: 503s, 429s, resets, invalid JSON, slow answers,
oversized bodies, and some good answers) → ``searxng`` (a healthy loopback replay of the
captured fixture). Queries come from a pool of 300, so the result cache sees hits and misses.

Idle baselines, measured in the same run half before and half after the soak (pooled, so a
load change during the run shows on both sides): ``dsh/postExecute`` and ``dsh/search`` one at
a time with nothing else in flight; every latency printed is next to its idle figure and the
ratio. Then the **large-bodies** phase: :data:`LARGE_ROUNDS` rounds that alternate a window with
nothing else in flight and a window with 16 ``dsh/search`` calls whose providers answer 2,000
results (~1 MB) kept in flight, ``dsh/postExecute`` one at a time all along; the loaded p99 is
compared with the idle p99 of the same rounds (goal <= 2x), with the searches completed (they
must overlap the calls). The providers here are threads of this process: ``bench/large_answers.py``
serves the large bodies from another process and compares with a baseline tree.

RSS bound: the end-of-run RSS may exceed the RSS after warm-up by at most ``RSS_BOUND_MIB``
(the result cache, the bandit's pending-feedback table and the suggester's per-session state
are all capped; what is left is allocator slack). The bench prints PASS/FAIL for it.

Usage: ``python bench/load.py [--duration 60] [--inflight 64] [--search-share 0.3]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
#: Allowed RSS growth from after warm-up to the end of the run, MiB (see module docstring).
RSS_BOUND_MIB = 64
#: Results in a "large" provider answer (the large-bodies phase).
LARGE_RESULTS = 2000
#: Searches of large bodies kept in flight in that phase.
LARGE_INFLIGHT = 16
#: Calls of each idle baseline.
IDLE_CALLS = 200
#: Rounds of the large-bodies phase (an idle window, then a loaded one), and each window's seconds.
LARGE_ROUNDS = 4
LARGE_WINDOW_S = 3.0
#: Fault mix of the brave injector: (kind, weight). Sums to 100.
FAULTS = [("ok", 25), ("503", 20), ("429", 15), ("reset", 10), ("invalid-json", 10), ("slow", 10), ("big-body", 10)]


# ----------------------------------------------------------------------------- providers


class _Server(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # resets are injected on purpose; no tracebacks on the bench's output


def _serve(handler: type[BaseHTTPRequestHandler]) -> tuple[ThreadingHTTPServer, str]:
    server = _Server(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, "http://127.0.0.1:%d" % server.server_address[1]


def start_providers(rng: random.Random) -> tuple[list[ThreadingHTTPServer], str, str, Counter]:
    searx_body = (DATA / "providers" / "searxng" / "ok.200.json").read_bytes()
    brave_body = (DATA / "providers" / "brave" / "ok.200.json").read_bytes()
    rows = [
        {
            "url": f"https://large.example/{i}",
            "title": f"result {i}",
            "content": "x" * 400,
            "publishedDate": "2024-01-01",
        }
        for i in range(LARGE_RESULTS)
    ]
    searx_large = json.dumps({"query": "large", "results": rows}).encode()
    brave_large = json.dumps(
        {"web": {"results": [{"url": r["url"], "title": r["title"], "description": r["content"]} for r in rows]}}
    ).encode()
    injected: Counter = Counter()
    lock = threading.Lock()

    class Quiet(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

    class Searx(Quiet):
        def do_GET(self) -> None:
            self.reply(200, searx_large if "large" in self.path else searx_body)

    class Brave(Quiet):
        def do_GET(self) -> None:
            if "large" in self.path:
                return self.reply(200, brave_large)
            with lock:
                kind = rng.choices([k for k, _ in FAULTS], [w for _, w in FAULTS])[0]
                injected[kind] += 1
            if kind == "ok":
                self.reply(200, brave_body)
            elif kind == "503":
                self.reply(503, b"<html>Service Unavailable</html>")
            elif kind == "429":
                self.reply(429, b'{"error": "rate limited"}', {"Retry-After": "1"})
            elif kind == "reset":
                self.send_response(200)
                self.send_header("Content-Length", "5000")
                self.end_headers()
                self.wfile.write(b'{"web": {"res')
                self.wfile.flush()
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                self.close_connection = True
            elif kind == "invalid-json":
                self.reply(200, b'{"web": {"results": [ nope')
            elif kind == "slow":
                time.sleep(0.3)
                self.reply(200, brave_body)
            else:  # big-body: 10 MB, over the router's 8 MiB bounded read
                self.reply(200, b" " * (10 * 1024 * 1024))

    searx, searx_url = _serve(Searx)
    brave, brave_url = _serve(Brave)
    return [searx, brave], brave_url, searx_url, injected


# ----------------------------------------------------------------------------- client


class Client:
    """Pipelined JSON-RPC over the server's stdio: ``call`` returns (reply, seconds)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future] = {}
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while True:
                line = await out.readline()
                if not line:
                    for fut in self.waiting.values():
                        if not fut.done():
                            fut.set_exception(EOFError("server closed stdout"))
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            msg = json.loads(await out.readexactly(length))
            if "method" not in msg and msg.get("id") in self.waiting:
                self.waiting.pop(msg["id"]).set_result(msg)

    async def call(self, method: str, params: Any) -> tuple[dict[str, Any], float]:
        self.next_id += 1
        msg_id = self.next_id
        fut = asyncio.get_running_loop().create_future()
        self.waiting[msg_id] = fut
        body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}).encode()
        t0 = time.perf_counter()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        await self.proc.stdin.drain()
        reply = await fut
        return reply, time.perf_counter() - t0

    def notify(self, method: str, params: Any) -> None:
        body = json.dumps({"jsonrpc": "2.0", "method": method, "params": params}).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


TOOLS = [
    ("Grep", {"pattern": "__version__"}),
    ("Grep", {"pattern": "def main"}),
    ("Glob", {"pattern": "**/*.toml"}),
    ("Read", {"file_path": "src/demo_pkg/__init__.py"}),
    ("Bash", {"command": "grep -rn 'dependencies' ."}),
    ("Grep", {"pattern": "pytest fixture"}),
    ("Edit", {"file_path": "README.md"}),
    ("Grep", {"pattern": "TODO"}),
]


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    servers, brave_url, searx_url, injected = start_providers(random.Random(args.seed + 1))
    tmp = Path(tempfile.mkdtemp(prefix="dsh-load-"))
    workspace = tmp / "pyproj"
    shutil.copytree(DATA / "workspaces" / "pyproj", workspace)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "SEARXNG_BASE_URL"}
    env["DSH_HOME"] = str(tmp / "home")
    env["DSH_CACHE_DIR"] = str(tmp / "cache")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "dsh_sidecar",
        "serve",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        limit=1 << 24,
    )
    client = Client(proc)
    options = {
        "router": {
            "order": ["brave", "searxng"],
            "timeoutMs": 2000,
            "deadlineMs": 10000,
            "providers": {"brave": {"apiKey": "BSA-LOAD-KEY", "baseUrl": brave_url}, "searxng": {"baseUrl": searx_url}},
        },
        "suggester": {"enabled": True},
    }
    init, _ = await client.call(
        "initialize",
        {"processId": os.getpid(), "capabilities": {}, "rootUri": workspace.as_uri(), "initializationOptions": options},
    )
    assert "result" in init, init
    client.notify("initialized", {})
    for i in range(20):  # warm-up: imports, activation, first searches
        await client.call(
            "dsh/postExecute",
            {"sessionId": "warm", "turn": i, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}},
        )
    await client.call("dsh/search", {"query": "warm up", "strategy": "quick"})
    # idle baselines: one call at a time, nothing else in flight (half now, half after the soak)
    idle: dict[str, list[float]] = defaultdict(list)

    async def idle_pass(tag: str) -> None:
        for i in range(IDLE_CALLS // 2):
            name, inp = TOOLS[i % len(TOOLS)]
            params = {"sessionId": f"idle{tag}{i % 32}", "turn": i, "tool": {"name": name, "input": inp}}
            idle["dsh/postExecute"].append((await client.call("dsh/postExecute", params))[1])
        for i in range(IDLE_CALLS // 8):
            idle["dsh/search"].append(
                (await client.call("dsh/search", {"query": f"idle query {tag}{i}", "strategy": "quick"}))[1]
            )

    await idle_pass("a")

    # large bodies: idle and loaded windows alternate, postExecute one at a time all along
    large_done = Counter()
    large_idle: list[float] = []
    under_large: list[float] = []

    async def pe_window(out: list[float], seconds: float, tag: str) -> None:
        end, i = time.monotonic() + seconds, 0
        while time.monotonic() < end:
            i += 1
            name, inp = TOOLS[i % len(TOOLS)]
            params = {"sessionId": f"large{tag}{i % 32}", "turn": i, "tool": {"name": name, "input": inp}}
            out.append((await client.call("dsh/postExecute", params))[1])
            await asyncio.sleep(0.002)

    for rnd in range(LARGE_ROUNDS):
        await pe_window(large_idle, LARGE_WINDOW_S, f"i{rnd}")
        large_stop = asyncio.Event()

        async def large_worker(k: int, stop: asyncio.Event = large_stop, rnd: int = rnd) -> None:
            n = 0
            while not stop.is_set():
                n += 1
                await client.call("dsh/search", {"query": f"large query {rnd}-{k}-{n}", "strategy": "quick"})
                large_done["dsh/search"] += 1

        large_tasks = [asyncio.create_task(large_worker(k)) for k in range(LARGE_INFLIGHT)]
        await asyncio.sleep(0.3)  # let the searches fill the pipeline
        await pe_window(under_large, LARGE_WINDOW_S, f"l{rnd}")
        large_stop.set()
        await asyncio.gather(*large_tasks)

    rss_start = rss_mib(proc.pid)
    cpu_start = cpu_s(proc.pid)

    latencies: dict[str, list[float]] = defaultdict(list)
    errors: Counter = Counter()
    attempts: Counter = Counter()
    done: Counter = Counter()
    rss_peak = rss_start
    deadline = time.monotonic() + args.duration
    turn = 0

    async def one() -> None:
        nonlocal turn
        turn += 1
        if rng.random() < args.search_share:
            method = "dsh/search"
            params: dict[str, Any] = {
                "query": f"load query {rng.randrange(300)}",
                "strategy": rng.choice(["auto", "quick", "thorough"]),
            }
        else:
            method = "dsh/postExecute"
            name, inp = rng.choice(TOOLS)
            params = {"sessionId": f"s{rng.randrange(32)}", "turn": turn, "tool": {"name": name, "input": inp}}
        reply, seconds = await client.call(method, params)
        latencies[method].append(seconds)
        done[method] += 1
        if "error" in reply:
            errors[f"{method} {reply['error']['code']}"] += 1
        elif method == "dsh/search":
            for a in reply["result"]["attempts"]:
                attempts[f"{a['provider']}: {a['outcome'].split(' (')[0][:40]}"] += 1

    async def worker() -> None:
        while time.monotonic() < deadline:
            await one()

    async def sample() -> None:
        nonlocal rss_peak
        while time.monotonic() < deadline:
            rss_peak = max(rss_peak, rss_mib(proc.pid))
            await asyncio.sleep(1)

    t0 = time.monotonic()
    await asyncio.gather(sample(), *(worker() for _ in range(args.inflight)))
    elapsed = time.monotonic() - t0
    rss_end = rss_mib(proc.pid)
    cpu_used = cpu_s(proc.pid) - cpu_start
    await idle_pass("b")  # the other half of the idle baseline, after the soak

    await client.call("shutdown", None)
    client.notify("exit", None)
    assert proc.stdin is not None
    await proc.stdin.drain()
    code = await asyncio.wait_for(proc.wait(), 30)
    for s in servers:
        s.shutdown()
    shutil.rmtree(tmp, ignore_errors=True)

    total = sum(done.values())
    print(
        f"load: {args.duration:.0f} s, {args.inflight} in flight, search share {args.search_share:.0%}, "
        f"chain brave(fault injector) -> searxng (loopback)"
    )
    print(
        f"{'method':<18} {'calls':>7} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
        f" {'idle p50':>9} {'idle p99':>9} {'p50 x':>6} {'p99 x':>6}"
    )

    def row(label: str, lat: list[float], base: list[float], calls: int, seconds: float) -> None:
        i50, i99 = percentile(base, 0.5), percentile(base, 0.99)
        p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)
        print(
            f"{label:<18} {calls:>7} {calls / seconds:>8.1f} {p50 * 1000:>8.1f} {p99 * 1000:>8.1f} "
            f"{max(lat, default=float('nan')) * 1000:>8.1f} {i50 * 1000:>9.2f} {i99 * 1000:>9.2f} "
            f"{p50 / i50:>6.1f} {p99 / i99:>6.1f}"
        )

    for method in ("dsh/postExecute", "dsh/search"):
        row(method, latencies[method], idle[method], done[method], elapsed)
    print(f"{'all':<18} {total:>7} {total / elapsed:>8.1f}")
    i99, l99 = percentile(large_idle, 0.99), percentile(under_large, 0.99)
    print(
        f"large bodies: dsh/postExecute one at a time, {LARGE_ROUNDS} rounds of {LARGE_WINDOW_S:.0f} s idle / "
        f"{LARGE_WINDOW_S:.0f} s with {LARGE_INFLIGHT} searches of {LARGE_RESULTS}-result answers in flight "
        f"({large_done['dsh/search']} searches done; n = {len(large_idle)} idle / {len(under_large)} loaded): "
        f"p50 {percentile(under_large, 0.5) * 1000:.2f} vs {percentile(large_idle, 0.5) * 1000:.2f} ms, "
        f"p99 {l99 * 1000:.2f} ms vs idle p99 {i99 * 1000:.2f} ms (same rounds) = x{l99 / i99:.2f}   goal <= 2x: "
        f"{'met' if l99 <= 2 * i99 else 'NOT met'}"
    )
    print("errors by kind (JSON-RPC replies):", dict(errors) or "none")
    print("faults injected at brave:", dict(injected))
    print("search attempts by outcome:", dict(attempts.most_common(12)))
    print(f"server CPU: {cpu_used:.1f} s over {elapsed:.1f} s wall")
    growth = rss_end - rss_start
    verdict = "PASS" if growth <= RSS_BOUND_MIB else "FAIL"
    print(
        f"RSS MiB: start {rss_start:.1f}  peak {rss_peak:.1f}  end {rss_end:.1f}  growth {growth:+.1f} "
        f"(bound +{RSS_BOUND_MIB}) {verdict}"
    )
    print(f"exit code after shutdown/exit: {code}")
    return 0 if verdict == "PASS" and code == 0 else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    parser.add_argument("--inflight", type=int, default=64, help="requests in flight (default 64)")
    parser.add_argument("--search-share", type=float, default=0.3, help="share of dsh/search calls (default 0.3)")
    parser.add_argument("--seed", type=int, default=8)
    return asyncio.run(run(parser.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
