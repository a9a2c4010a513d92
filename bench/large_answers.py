"""``dsh/postExecute`` while large search answers are in flight, against idle in the same run.

A loopback SearXNG-format provider runs in **its own process** (so serving 1 MB bodies never
competes with this process's timing), answering ~2,000 results (~1 MB) with ``TCP_NODELAY``. A
sidecar (this tree; with ``--baseline-src DIR`` also other source trees — the option may be
repeated — alternated with it round by round) has ``searxng`` alone in its chain. Each round is an idle window then a
loaded window (``--inflight`` ``dsh/search`` calls kept in flight), ``dsh/postExecute`` sent one
at a time with a 2 ms pause throughout, so idle and loaded come from the same rounds. Printed
per tree: idle and loaded p50/p99/max, the ratios (goal: loaded p99 ≤ 2× idle), the large
searches completed (they must overlap the calls) and their p50, the server process's own CPU
(idle and loaded, per second, and per large search over the idle rate; this figure moves less
with the machine's load than the p99s do), the same with its live child processes (the parsing
worker: the work it took off the event loop is still the search's), the large searches that
failed (a provider timeout: the parsing worker starved, say) and the load average.

Before the rounds, ``--first-runs`` fresh sidecars per tree (alternated) each time their first
large search, the one that finds no parsing worker running: it must not wait for the worker's
start. ``--burners N`` keeps N CPU-bound processes (``while True: pass``, nice 0) running for the
whole run, as agents' builds and tests do beside a sidecar; the niced parsing worker then waits
for a CPU.

What it measures is the router's half: the body read, the hand-over to the parsing worker, the
per-search log line. (The warm-up search is itself a large answer, so from the first timed
search on the provider's exchanges run in the parsing worker, as they would for a user whose
provider answers large: ``router/parsing.py``.)

    python bench/large_answers.py [--rounds 5] [--window 4] [--inflight 16] [--first-runs 3]
        [--burners 0] [--baseline-src DIR ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _scratch import scratch  # noqa: E402
from load import DATA, TOOLS, Client, cpu_s, percentile  # noqa: E402

#: The sidecars this run started and has not stopped (:func:`stop_all` stops them on the way
#: out, so none writes into a temp folder being removed).
LIVE: dict[Any, Client] = {}

PROVIDER = textwrap.dedent(
    """
    import json, socket, sys
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    rows = [{"url": f"https://large.example/{i}", "title": f"result {i}", "content": "x" * 400,
             "publishedDate": "2024-01-01"} for i in range(int(sys.argv[1]))]
    body = json.dumps({"query": "large", "results": rows}).encode()
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        def log_message(self, *args):
            pass
        def setup(self):
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 128
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], len(body), flush=True)
    server.serve_forever()
    """
)


def children(pid: int) -> list[int]:
    """The live descendants of ``pid`` (``/proc/<pid>/task/*/children``)."""
    out: list[int] = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return out
    for task in tasks:
        try:
            kids = [int(k) for k in (task / "children").read_text().split()]
        except OSError:
            continue
        for kid in kids:
            out += [kid, *children(kid)]
    return out


def family_cpu_s(pid: int) -> float:
    """Process CPU of ``pid`` and of its live child processes (the parsing worker): the work the
    worker took off the event loop is still the search's."""
    total = cpu_s(pid)
    for kid in children(pid):
        with contextlib.suppress(OSError):  # gone meanwhile
            total += cpu_s(kid)
    return total


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 1)[0]


def serving_worker(pid: int) -> bool:
    """Whether ``pid`` has a parsing worker waiting in its event loop (a spawned child in
    ``epoll_wait``: it enters its loop after its ready byte)."""
    for kid in children(pid):
        with contextlib.suppress(OSError):
            proc = Path(f"/proc/{kid}")
            if b"spawn_main" in (proc / "cmdline").read_bytes() and "epoll" in (proc / "wchan").read_text():
                return True
    return False


async def spawn(src: Path | None, home: Path, ws: Path, port: str) -> tuple[Any, Client, list[float]]:
    """A sidecar of ``src`` (``None``: this tree) after its first large search, then with its
    parsing worker running and a second large search (the provider's exchanges are then the
    worker's, as in a session that has had large answers for a while); the two searches' times,
    ms, third."""
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "SEARXNG_BASE_URL"}
    env["DSH_HOME"] = str(home)
    env["DSH_CACHE_DIR"] = f"{home}-cache"
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src / p) for p in ("server", "protocol", "packs"))
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
    LIVE[proc] = client
    opts = {
        "router": {
            "order": ["searxng"],
            "timeoutMs": 10000,
            "deadlineMs": 30000,
            "providers": {"searxng": {"baseUrl": f"http://127.0.0.1:{port}"}},
        },
        "suggester": {"enabled": True},
    }
    init, _ = await client.call(
        "initialize",
        {"processId": os.getpid(), "capabilities": {}, "rootUri": ws.as_uri(), "initializationOptions": opts},
    )
    assert "result" in init, init
    client.notify("initialized", {})
    for i in range(20):
        await client.call(
            "dsh/postExecute", {"sessionId": "w", "turn": i, "tool": {"name": "Grep", "input": {"pattern": "x"}}}
        )
    reply, first = await client.call("dsh/search", {"query": "warm up", "strategy": "quick"})
    assert "result" in reply and len(reply["result"]["sources"]) > 0, reply
    end = time.monotonic() + 120
    while not serving_worker(proc.pid) and time.monotonic() < end:
        await asyncio.sleep(0.05)
    reply, second = await client.call("dsh/search", {"query": "warm up again", "strategy": "quick"})
    if "result" not in reply:  # the worker's first fetch (starved, say): a figure, not the bench's end
        print(f"the second large search (the worker's first fetch) failed after {second:.1f} s: {reply}")
    return proc, client, [first * 1000, second * 1000]


async def stop_sidecar(proc: Any, client: Client) -> None:
    LIVE.pop(proc, None)
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), 10)
    except TimeoutError:
        proc.kill()
    client.reader.cancel()


async def stop_all() -> None:
    """Stop every sidecar still running (:data:`LIVE`)."""
    for proc, client in list(LIVE.items()):
        if proc.stdin is not None and not proc.stdin.is_closing():
            await stop_sidecar(proc, client)
        else:
            LIVE.pop(proc, None)
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
            client.reader.cancel()


async def first_searches(trees: list[tuple[str, Path | None]], tmp: Path, ws: Path, port: str, runs: int) -> None:
    """Each tree's first large searches in ``runs`` fresh sidecars, trees alternated: the first
    (no parsing worker running), and once the worker runs the next two (its first and second
    fetch)."""
    times: dict[str, list[list[float]]] = {name: [] for name, _ in trees}
    for run in range(runs):
        for name, src in trees if run % 2 == 0 else list(reversed(trees)):
            proc, client, ms = await spawn(src, tmp / f"first{run}-{name.replace(' ', '-')}", ws, port)
            reply, third = await client.call("dsh/search", {"query": "third", "strategy": "quick"})
            assert "result" in reply, reply
            times[name].append([*ms, third * 1000])
            await stop_sidecar(proc, client)
    for name, rows in times.items() if runs else ():
        first, fetch1, fetch2 = (", ".join(f"{m:.0f}" for m in col) for col in zip(*rows, strict=True))
        med = [percentile([row[k] for row in rows], 0.5) for k in range(3)]
        print(
            f"{name:10}: a fresh sidecar's large searches, ms (median: each run): first {med[0]:.0f}: {first}; "
            f"once the worker runs, its first fetch {med[1]:.0f}: {fetch1}, its second {med[2]:.0f}: {fetch2}"
        )


async def pe_window(client: Client, out: list[float], seconds: float) -> None:
    end, i = time.monotonic() + seconds, 0
    while time.monotonic() < end:
        i += 1
        name, inp = TOOLS[i % len(TOOLS)]
        _, s = await client.call(
            "dsh/postExecute", {"sessionId": f"s{i % 32}", "turn": i, "tool": {"name": name, "input": inp}}
        )
        out.append(s * 1000)
        await asyncio.sleep(0.002)


async def main_async(args: argparse.Namespace) -> int:
    prov = subprocess.Popen([sys.executable, "-c", PROVIDER, str(args.results)], stdout=subprocess.PIPE, text=True)
    burners: list[subprocess.Popen[bytes]] = []
    try:
        with scratch("dsh-large-") as tmp:  # removed however the run ends (Ctrl-C, an error, a kill)
            assert prov.stdout is not None
            port, size = prov.stdout.readline().split()
            ws = tmp / "pyproj"
            shutil.copytree(DATA / "workspaces" / "pyproj", ws)
            trees: list[tuple[str, Path | None]] = [("this tree", None)]
            for i, src in enumerate(args.baseline_src or []):
                trees.append(("baseline" if i == 0 else f"baseline{i + 1}", src.resolve()))
                print(f"{trees[-1][0]}: {src}")
            burners += [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.burners)]
            try:
                return await measure(args, trees, tmp, ws, port, size)
            finally:
                await stop_all()  # the sidecars a failed or interrupted run left, before their folders go
    finally:
        for p in [*burners, prov]:
            p.kill()
            p.wait()


async def measure(
    args: argparse.Namespace, trees: list[tuple[str, Path | None]], tmp: Path, ws: Path, port: str, size: str
) -> int:
    print(
        f"provider: {int(size) / 1e6:.2f} MB answers ({args.results} results), own process; "
        f"{args.burners} CPU burners of ours; load {load()}"
    )
    await first_searches(trees, tmp, ws, port, args.first_runs)
    if args.rounds <= 0:
        print(f"load {load()}")
        return 0
    sidecars = {}
    for i, (name, src) in enumerate(trees):
        proc, client, _ = await spawn(src, tmp / f"home{i}", ws, port)
        sidecars[name] = (proc, client)
    res: dict[str, dict[str, list[float]]] = {n: {"idle": [], "loaded": [], "search": []} for n, _ in trees}
    done = dict.fromkeys(res, 0)
    failed = dict.fromkeys(res, 0)
    # the server process's own CPU (its parsing worker is a child: not counted), per window kind
    cpu = {
        n: {"idle": 0.0, "loaded": 0.0, "idle_s": 0.0, "loaded_s": 0.0, "fam_idle": 0.0, "fam_loaded": 0.0}
        for n, _ in trees
    }
    for rnd in range(args.rounds):
        for name, _ in trees if rnd % 2 == 0 else list(reversed(trees)):
            proc, client = sidecars[name]
            c0, f0, t0 = cpu_s(proc.pid), family_cpu_s(proc.pid), time.monotonic()
            await pe_window(client, res[name]["idle"], args.window)
            c1, f1, t1 = cpu_s(proc.pid), family_cpu_s(proc.pid), time.monotonic()
            cpu[name]["idle"] += c1 - c0
            cpu[name]["fam_idle"] += f1 - f0
            cpu[name]["idle_s"] += t1 - t0
            stop = time.monotonic() + args.window

            async def worker(
                k: int, client: Client = client, name: str = name, stop: float = stop, rnd: int = rnd
            ) -> None:
                n = 0
                while time.monotonic() < stop:
                    n += 1
                    reply, s = await client.call("dsh/search", {"query": f"large {rnd}-{k}-{n}", "strategy": "quick"})
                    done[name] += 1
                    failed[name] += "result" not in reply
                    res[name]["search"].append(s * 1000)

            tasks = [asyncio.create_task(worker(k)) for k in range(args.inflight)]
            await asyncio.sleep(0.3)
            await pe_window(client, res[name]["loaded"], stop - time.monotonic())
            await asyncio.gather(*tasks)
            cpu[name]["loaded"] += cpu_s(proc.pid) - c1
            cpu[name]["fam_loaded"] += family_cpu_s(proc.pid) - f1
            cpu[name]["loaded_s"] += time.monotonic() - t1
        print(f"round {rnd + 1}: load {load()}", flush=True)
    for name, r in res.items():
        idle, loaded = r["idle"], r["loaded"]
        i99, l99 = percentile(idle, 0.99), percentile(loaded, 0.99)
        print(
            f"{name:10}: idle n={len(idle)} p50 {percentile(idle, 0.5):.2f} p99 {i99:.2f} max {max(idle):.1f} ms | "
            f"loaded n={len(loaded)} p50 {percentile(loaded, 0.5):.2f} p99 {l99:.2f} max {max(loaded):.1f} ms | "
            f"p99 x{l99 / i99:.2f} (goal <= 2x) p50 x{percentile(loaded, 0.5) / percentile(idle, 0.5):.2f} | "
            f"{done[name]} large searches (p50 {percentile(r['search'], 0.5):.0f} ms, "
            f"p99 {percentile(r['search'], 0.99):.0f} ms, {failed[name]} failed)"
        )
        c = cpu[name]
        extra = c["loaded"] - c["idle"] / max(c["idle_s"], 1e-9) * c["loaded_s"]
        fam_extra = c["fam_loaded"] - c["fam_idle"] / max(c["idle_s"], 1e-9) * c["loaded_s"]
        print(
            f"{'':10}  server process CPU: idle {c['idle'] / max(c['idle_s'], 1e-9) * 1000:.0f} ms/s, "
            f"loaded {c['loaded'] / max(c['loaded_s'], 1e-9) * 1000:.0f} ms/s; "
            f"{extra / max(done[name], 1) * 1000:.2f} ms per large search over idle; with its child processes "
            f"(the parsing worker): {fam_extra / max(done[name], 1) * 1000:.2f} ms"
        )
    print(f"load {load()}")
    for proc, client in sidecars.values():
        await stop_sidecar(proc, client)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--window", type=float, default=4.0, help="seconds of each idle and loaded window")
    ap.add_argument("--inflight", type=int, default=16)
    ap.add_argument("--results", type=int, default=2000)
    ap.add_argument("--first-runs", type=int, default=3, help="fresh sidecars a tree timing their first large search")
    ap.add_argument("--burners", type=int, default=0, help="CPU-bound processes kept running for the whole run")
    ap.add_argument(
        "--baseline-src",
        type=Path,
        action="append",
        help="another commit's source tree, alternated with this one (repeat for more)",
    )
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
