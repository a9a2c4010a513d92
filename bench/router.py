"""Router benchmark, side by side in one run, against one loopback provider (the test mock
replaying ``searxng/ok``):

1. ``dsh/search`` (strategy ``quick``, unique queries so the cache never answers) through the
   real sidecar spawned over stdio, vs a direct ``httpx`` call (GET + JSON decode) to the same
   provider, **interleaved** (A, B, A, B … so both see the same machine noise): p50/p99, the
   router's overhead (goal: <= 1 ms at p50) and the p50 of the per-pair differences. The
   provider sets TCP_NODELAY (no delayed-ACK stalls); the sidecar runs with bandit
   persistence **on** (its state-file writes are part of a real search). A ``dsh/status``
   round trip is printed too (labelled the stdio floor in earlier runs' figures; it builds the
   whole status, 1-1.3 ms of CPU against the echo's 0.5-0.67: the echo below is the floor).
2. Time to answer when the primary hangs (``timeoutMs`` = 300; the fallback answers at once):
   goal timeout + <= 50 ms.
3. A cache hit (the same query again) through the sidecar.
4. The first ``auto`` search of a fresh sidecar (spawned, initialised, idle for 1 s as a
   harness is between its start and the agent's first search) vs its second one: the first
   must not pay for the search path's imports (the cold start). Fresh spawns, medians over
   ``--first-runs``; with ``--baseline-src`` the baseline's sidecar is measured alike, the two
   trees' spawns alternated.

The floor, in the same interleaving: a bare pygls+asyncio **echo** (pygls' ``run_async`` on an
asyncio pipe reader, as ``bench/transport.py``'s) answering ``dsh/status`` with ``{}`` (the
stdio floor: the sidecar's ``dsh/status`` builds a whole status on top of it) and ``dsh/search``
with one ``httpx.AsyncClient`` GET + JSON decode of the same provider (the search floor: the
same exchange, no router, bandit or escaping). Its CPU per round is printed beside the
sidecars'.

The same three figures are also measured in-process (``Router.search`` vs ``httpx.AsyncClient``
on one event loop, interleaved), which isolates the router from the stdio transport and the
bandit.

``--baseline-src DIR`` (another commit's source tree, e.g. ``git archive main | tar -x -C DIR``)
adds that commit's sidecar to the interleaving (A, B, baseline, …), run from DIR through
``PYTHONPATH``: before/after against the same direct call in one run. A second sidecar of this
tree with ``logMessages`` ``none`` (no per-search ``window/logMessage``) is interleaved too, so
the cost of the seed's line reaching the client is measured, not guessed. Every sidecar of the
interleaving gets the same calls (a search and a ``dsh/status`` a round), so each one's CPU over
the loop (``/proc``, all its threads: what it spends whatever the neighbours do) is printed per
round beside the latencies, with the per-pair differences against the baseline. The load
average is printed before and after.

The interleaved loop is also cut into ``--rounds`` consecutive rounds (default 5): per round the
overhead p50 of this tree and of the baseline, with medians and ranges over the rounds and the
per-round ratio (this tree's overhead over the baseline's), the load at each round's start.

Usage: ``python bench/router.py [--n 300] [--rounds 5] [--hang-runs 8] [--first-runs 7] [--baseline-src DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

import httpx

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
from _rpc import StdioClient, pipe_floor, sidecar_cmd  # noqa: E402
from _scratch import scratch  # noqa: E402
from support.mockprovider import MockProvider, Reply, case_reply  # noqa: E402

PROVIDER_VARS = (
    "EXA_API_KEY",
    "TAVILY_API_KEY",
    "BRAVE_SEARCH_API_KEY",
    "PPLX_API_KEY",
    "DEEPSEEK_API_KEY",
    "SEARXNG_BASE_URL",
)
HANG_TIMEOUT_MS = 300


#: The echo floor (see the module docstring): pygls over an asyncio pipe reader; ``dsh/status``
#: answers ``{}``, ``dsh/search`` is one httpx GET + JSON decode of ``params.url``.
ECHO = pipe_floor(
    """
client = []
@server.feature("dsh/status")
def status(ls, params):
    return {}
@server.feature("dsh/search")
async def search(ls, params):
    if not client:
        client.append(httpx.AsyncClient(trust_env=False))
    r = await client[0].get(params.url, params={"q": params.query, "format": "json"})
    return {"sources": r.json().get("results", [])[:5]}
""",
    imports="import httpx\n",
)


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 1)[0]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q / 100 * (len(ordered) - 1))))]


async def in_process(mock_url: str, hang_url: str, n: int, hang_runs: int) -> dict[str, list[float]]:
    """The router alone on one event loop: direct async httpx vs Router.search."""
    from dsh_sidecar.router import Router, parse_router_config

    out: dict[str, list[float]] = {k: [] for k in ("direct", "router", "cached", "hang")}
    fast = Router.from_config(
        parse_router_config({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_url}}}), {}
    )
    hang = Router.from_config(
        parse_router_config(
            {
                "order": ["searxng", "duckduckgo"],
                "timeoutMs": HANG_TIMEOUT_MS,
                "cache": False,
                "providers": {"searxng": {"baseUrl": hang_url}, "duckduckgo": {"baseURL": hang_url}},
            }
        ),
        {},
    )
    async with httpx.AsyncClient(trust_env=False) as client:
        for i in range(n + 20):
            t0 = time.perf_counter()
            r = await client.get(f"{mock_url}/search", params={"q": f"direct {i}", "format": "json"})
            r.json()
            t1 = time.perf_counter()
            await fast.search(f"router {i}", 5)
            t2 = time.perf_counter()
            await fast.search("router 0", 5)
            t3 = time.perf_counter()
            if i >= 20:
                out["direct"].append((t1 - t0) * 1000)
                out["router"].append((t2 - t1) * 1000)
                out["cached"].append((t3 - t2) * 1000)
    for i in range(hang_runs):
        t0 = time.perf_counter()
        await hang.search(f"hang {i}", 5)
        out["hang"].append((time.perf_counter() - t0) * 1000)
    await fast.aclose()
    await hang.aclose()
    return out


def spawn(home: str, router: dict, log_messages: str = "all", src: Path | None = None) -> StdioClient:
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    env["DSH_HOME"] = home
    env["DSH_CACHE_DIR"] = str(Path(home) / "cache")  # inside home: removed with it
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src.resolve() / d) for d in ("server", "protocol", "packs"))
    client = StdioClient(sidecar_cmd(), env=env)
    reply = client.request(
        "initialize",
        {
            "processId": None,
            "capabilities": {},
            "rootUri": None,
            "initializationOptions": {
                "router": router,
                **({} if log_messages == "all" else {"logMessages": log_messages}),
            },
        },
    )
    assert "result" in reply, reply
    client.send("initialized", {}, notify=True)
    return client


#: Clock ticks per second of ``/proc/<pid>/stat`` times.
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(client: StdioClient) -> float:
    """User + system CPU seconds of the client's server process (all its threads), from ``/proc``."""
    fields = Path(f"/proc/{client.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def settle(client: StdioClient, quiet_s: float = 0.5, timeout_s: float = 15.0) -> None:
    """Until the server spent no CPU for ``quiet_s`` (its warm-up after the first calls, the
    shell parser's and the search path's imports on a thread, is over): the loop measures
    searches, not that."""
    deadline = time.monotonic() + timeout_s
    last = cpu_s(client)
    while time.monotonic() < deadline:
        time.sleep(quiet_s)
        now = cpu_s(client)
        if now == last:
            return
        last = now


def timed(fn, n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def _time_one(fn, arg) -> float:
    t0 = time.perf_counter()
    fn(arg)
    return (time.perf_counter() - t0) * 1000


def spawn_echo(path: Path) -> StdioClient:
    """The echo floor (:data:`ECHO`, written to ``path``), initialised."""
    path.write_text(ECHO)
    client = StdioClient(
        [sys.executable, str(path)], env={k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    )
    assert "result" in client.request("initialize", {"processId": None, "capabilities": {}, "rootUri": None})
    client.send("initialized", {}, notify=True)
    return client


def echo_search(client: StdioClient, url: str, query: str) -> dict:
    reply = client.request("dsh/search", {"url": url, "query": query})
    assert "result" in reply, reply
    return reply["result"]


def search(client: StdioClient, query: str) -> dict:
    reply = client.request("dsh/search", {"query": query, "strategy": "quick"})
    assert "result" in reply, reply
    return reply["result"]


def first_auto(mock_url: str, srcs: list[Path | None], runs: int) -> list[tuple[list[float], list[float]]]:
    """``runs`` fresh sidecars of each tree of ``srcs`` (``None``: this tree), the trees
    alternated spawn by spawn (the same machine noise for each): per tree, the first and the
    second ``auto`` search's round trip, in ms, each sidecar idle for 1 s after a ``dsh/status``
    answered (cache off: both reach the provider)."""
    out: list[tuple[list[float], list[float]]] = [([], []) for _ in srcs]
    for _ in range(runs):
        for src, (first, second) in zip(srcs, out, strict=True):
            with scratch("dsh-router-first-") as home:
                client = spawn(
                    str(home),
                    {"provider": "searxng", "cache": False, "providers": {"searxng": {"baseUrl": mock_url}}},
                    src=src,
                )
                try:
                    client.request("dsh/status", {})  # the build after the reply is done
                    time.sleep(1.0)
                    for times, q in ((first, "first auto query"), (second, "second auto query")):
                        t0 = time.perf_counter()
                        reply = client.request("dsh/search", {"query": q, "strategy": "auto"})
                        times.append((time.perf_counter() - t0) * 1000)
                        assert "result" in reply, reply
                finally:
                    client.close()
    return out


def rounds_of(values: list[float], rounds: int) -> list[list[float]]:
    """``values`` (in the order measured) cut into ``rounds`` consecutive rounds."""
    size = max(1, len(values) // rounds)
    return [values[i * size : (i + 1) * size] for i in range(rounds) if values[i * size : (i + 1) * size]]


def print_rounds(rounds: int, d: list[float], s: list[float], sb: list[float], loads: list[str]) -> None:
    """Per round (consecutive slices of the interleaved loop): the overhead p50 (search p50 -
    direct p50) of this tree and of the baseline, and this tree's over the baseline's; the
    medians and ranges over the rounds."""
    rd, rs, rb = rounds_of(d, rounds), rounds_of(s, rounds), rounds_of(sb, rounds) if sb else []
    mine = [pct(b, 50) - pct(a, 50) for a, b in zip(rd, rs, strict=True)]
    line = f"per round ({len(rd)} rounds of {len(rd[0])} pairs; load {', '.join(loads)}): this tree overhead p50 " + (
        f"median {statistics.median(mine):.3f} ms ({min(mine):.3f}-{max(mine):.3f})"
    )
    if rb:
        base = [pct(b, 50) - pct(a, 50) for a, b in zip(rd, rb, strict=True)]
        ratio = [m / b for m, b in zip(mine, base, strict=True) if b > 0]
        line += f"; baseline median {statistics.median(base):.3f} ms ({min(base):.3f}-{max(base):.3f})"
        if ratio:
            line += f"; this tree / baseline median x{statistics.median(ratio):.2f} ({min(ratio):.2f}-{max(ratio):.2f})"
    print(line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--hang-runs", type=int, default=15)
    ap.add_argument("--first-runs", type=int, default=7, help="fresh sidecars for the first-auto-search figure")
    ap.add_argument("--log-messages", default="all", help="the sidecar's logMessages setting (all|decisions|none)")
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    ap.add_argument("--rounds", type=int, default=5, help="rounds the interleaved loop is cut into (per-round p50s)")
    args = ap.parse_args()

    mock = MockProvider()
    hang_mock = MockProvider()
    for m in (mock, hang_mock):  # TCP_NODELAY on the provider side (socketserver's own switch)
        m.server.RequestHandlerClass.disable_nagle_algorithm = True  # type: ignore[attr-defined]
    ok, _ = case_reply("searxng", "ok", check=False)
    mock.route("GET", "/search", ok)
    hang_mock.route("GET", "/search", Reply(200, {"content-type": "application/json"}, b"{}", hang_s=30.0))
    hang_mock.route("POST", "/html/", case_reply("duckduckgo", "ok", check=False)[0])
    load_before = load()
    with scratch("dsh-router-") as root:  # every home in it, removed however the run ends
        home = str(root / "home")
        for name in ("home", "quiet", "base"):
            (root / name).mkdir()
        fast_config = {"provider": "searxng", "providers": {"searxng": {"baseUrl": mock.url}}}
        echo = spawn_echo(root / "echo.py")
        fast = spawn(home, fast_config, args.log_messages)
        quiet = spawn(str(root / "quiet"), fast_config, "none")
        base = None
        if args.baseline_src:  # its own state file
            base = spawn(str(root / "base"), fast_config, args.log_messages, src=args.baseline_src)
        hang = spawn(
            home,
            {
                "order": ["searxng", "duckduckgo"],
                "timeoutMs": HANG_TIMEOUT_MS,
                "cache": False,
                "providers": {"searxng": {"baseUrl": hang_mock.url}, "duckduckgo": {"baseURL": hang_mock.url}},
            },
        )
        try:
            direct_client = httpx.Client(trust_env=False)

            def direct(i: int) -> None:
                r = direct_client.get(f"{mock.url}/search", params={"q": f"bench query {i}", "format": "json"})
                r.json()

            for i in range(20):  # warm up both paths
                direct(i)
                search(fast, f"warm {i}")
                search(quiet, f"warm {i}")
                echo_search(echo, f"{mock.url}/search", f"warm {i}")
                if base is not None:
                    search(base, f"warm {i}")
            d, s, st, sq, sb, stb, se, ste = [], [], [], [], [], [], [], []
            sidecars = {
                "this tree": fast,
                "logMessages none": quiet,
                **({"baseline": base} if base else {}),
                "echo floor": echo,
            }
            for c in sidecars.values():
                settle(c)
            cpu0 = {k: cpu_s(c) for k, c in sidecars.items()}
            loads = []
            for i in range(args.n):  # interleaved A/B/C/D: the same noise for all of them
                if i % max(1, args.n // args.rounds) == 0:
                    loads.append(load())
                d.append(_time_one(direct, i))
                s.append(_time_one(lambda q: search(fast, q), f"bench query {i}"))
                st.append(_time_one(lambda _: fast.request("dsh/status", {}), None))
                sq.append(_time_one(lambda q: search(quiet, q), f"bench query {i}"))
                quiet.request("dsh/status", {})  # the same calls as the others (their CPU is compared)
                if base is not None:
                    sb.append(_time_one(lambda q: search(base, q), f"bench query {i}"))
                    stb.append(_time_one(lambda _: base.request("dsh/status", {}), None))
                se.append(_time_one(lambda q: echo_search(echo, f"{mock.url}/search", q), f"bench query {i}"))
                ste.append(_time_one(lambda _: echo.request("dsh/status", {}), None))
            cpu_us = {k: (cpu_s(c) - cpu0[k]) / args.n * 1e6 for k, c in sidecars.items()}
            pairs = [b - a for a, b in zip(d, s, strict=True)]
            search(fast, "cached query")
            c = timed(lambda i: search(fast, "cached query"), args.n)
            assert search(fast, "cached query")["attempts"][0]["outcome"] == "ok (cached)"

            search(hang, "warm hang")
            h, fired, fallback = [], [], []
            for i in range(args.hang_runs):
                t0 = time.perf_counter()
                res = search(hang, f"hang query {i}")
                h.append((time.perf_counter() - t0) * 1000)
                assert [a["provider"] for a in res["attempts"]] == ["searxng", "duckduckgo"], res["attempts"]
                fired.append(res["attempts"][0]["ms"] - HANG_TIMEOUT_MS)
                fallback.append(res["attempts"][1]["ms"])
            direct_client.close()
            ip = asyncio.run(in_process(mock.url, hang_mock.url, args.n, args.hang_runs))
            fa, *rest = first_auto(
                mock.url, [None, *([args.baseline_src] if args.baseline_src else [])], args.first_runs
            )
            fb = rest[0] if rest else None
        finally:
            fast.close()
            quiet.close()
            echo.close()
            hang.close()
            if base is not None:
                base.close()
            mock.close()
            hang_mock.close()

    print(
        f"router benchmark (n={args.n}, loopback provider replaying searxng/ok, strategy quick, "
        f"bandit persistence on, logMessages {args.log_messages}); load {load_before} -> {load()}"
    )
    print(f"{'path':44} {'p50 ms':>8} {'p99 ms':>8}")
    rows = [
        ("direct httpx GET + JSON decode", d),
        ("dsh/search via sidecar over stdio (no cache)", s),
        ("dsh/status via sidecar (stdio floor)", st),
        ("dsh/search, logMessages none", sq),
        ("dsh/search cache hit via sidecar", c),
        ("echo floor: dsh/search (httpx.AsyncClient)", se),
        ("echo floor: dsh/status (the stdio floor)", ste),
    ]
    for name, values in rows:
        print(f"{name:44} {pct(values, 50):8.3f} {pct(values, 99):8.3f}")
    overhead = pct(s, 50) - pct(d, 50)
    router_only = pct(s, 50) - pct(d, 50) - pct(st, 50)
    print(
        f"overhead p50 (sidecar search - direct): {overhead:.3f} ms   goal <= 1 ms: {'met' if overhead <= 1 else 'NOT met'}"
    )
    print(f"  p50 of the per-pair differences (search - direct, interleaved): {pct(pairs, 50):.3f} ms")
    print(f"  of which stdio round trip (status p50): {pct(st, 50):.3f} ms; router+bandit: {router_only:.3f} ms")
    print(
        f"  with logMessages none (no per-search window/logMessage): overhead p50 {pct(sq, 50) - pct(d, 50):.3f} ms; "
        f"the line to the client costs {pct(s, 50) - pct(sq, 50):+.3f} ms p50"
    )
    if sb:
        print(
            f"baseline ({args.baseline_src}) dsh/search p50 {pct(sb, 50):.3f} ms, p99 {pct(sb, 99):.3f} ms; "
            f"overhead p50 {pct(sb, 50) - pct(d, 50):.3f} ms (the same direct calls)"
        )
        print(
            f"  baseline per-pair differences (search - direct) p50 {pct([b - a for a, b in zip(d, sb, strict=True)], 50):.3f} ms; "
            f"its stdio floor (status p50) {pct(stb, 50):.3f} ms; this tree - baseline, per pair: "
            f"p50 {pct([a - b for a, b in zip(s, sb, strict=True)], 50):+.3f} ms"
        )
    print(
        f"  against the echo floor (same run): dsh/status {pct(st, 50) - pct(ste, 50):+.3f} ms p50 over its "
        f"{pct(ste, 50):.3f} ms; dsh/search {pct(s, 50) - pct(se, 50):+.3f} ms p50 over its {pct(se, 50):.3f} ms"
    )
    print_rounds(args.rounds, d, s, sb, loads)
    print(
        "server CPU per round (one search + one dsh/status; /proc, all threads): "
        + ", ".join(f"{k} {v:.0f} us" for k, v in cpu_us.items())
        + f" (one clock tick over the loop: {1e6 / CLK_TCK / args.n:.0f} us)"
    )
    if h:  # --hang-runs 0 measures none
        excess = [x - HANG_TIMEOUT_MS for x in h]
        print(
            f"primary hangs, timeoutMs={HANG_TIMEOUT_MS}: answer p50 {statistics.median(h):.1f} ms, max {max(h):.1f} ms; "
            f"excess over timeout p50 {statistics.median(excess):.1f} ms, max {max(excess):.1f} ms   "
            f"goal <= 50 ms: {'met' if max(excess) <= 50 else 'NOT met'}"
        )
        print(
            f"  split: the timeout fired {statistics.median(fired):.0f} ms late (p50, max {max(fired)}); "
            f"the fallback's own answer took {statistics.median(fallback):.0f} ms (p50, max {max(fallback)})"
        )
    print(f"cache hit p50 {pct(c, 50):.3f} ms vs uncached p50 {pct(s, 50):.3f} ms")
    for label, (f1, f2) in (("this tree", fa), *((("baseline", fb),) if fb else ())):
        if not f1:  # --first-runs 0
            continue
        print(
            f"first auto search of a fresh sidecar ({label}, {len(f1)} spawns): median {statistics.median(f1):.1f} ms "
            f"vs its second {statistics.median(f2):.1f} ms (first - second: "
            f"{statistics.median([a - b for a, b in zip(f1, f2, strict=True)]):.1f} ms)"
        )
    print()
    print("in-process (one event loop, no stdio, no bandit)")
    print(f"{'path':44} {'p50 ms':>8} {'p99 ms':>8}")
    for name, key in (
        ("direct httpx.AsyncClient GET + JSON decode", "direct"),
        ("Router.search (no cache)", "router"),
        ("Router.search cache hit", "cached"),
    ):
        print(f"{name:44} {pct(ip[key], 50):8.3f} {pct(ip[key], 99):8.3f}")
    ov = pct(ip["router"], 50) - pct(ip["direct"], 50)
    print(f"router overhead p50: {ov:.3f} ms   goal <= 1 ms: {'met' if ov <= 1 else 'NOT met'}")
    ex = [x - HANG_TIMEOUT_MS for x in ip["hang"]]
    if ex:
        print(
            f"primary hangs: answer p50 {statistics.median(ip['hang']):.1f} ms; excess over timeout p50 "
            f"{statistics.median(ex):.1f} ms, max {max(ex):.1f} ms   goal <= 50 ms: {'met' if max(ex) <= 50 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
