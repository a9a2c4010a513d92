"""Fleet state benchmark (docs/fleet.md): what the Redis backend adds per call, and what 8 sidecars do.

1. **Added latency**, one run, interleaved A/B: two sidecars on the same loopback providers, one
   with ``state.backend: file`` (the default), one on a real ``redis-server`` started here; each
   ``dsh/search`` (a fresh query, ``quick``: a cache miss, so the store's cache read, cooldown
   read and cache write all run) and each ``dsh/postExecute`` (the suggester session of
   ``tests/support/fleetkit.py``) is sent to both in turn. Prints p50/p90 per backend and the added p50
   (goal: ≤ 0.5 ms), with the load average beside it. ``--before TREE`` adds a third sidecar on
   the same Redis running the code of ``TREE`` (a checkout or ``git archive`` of an earlier
   commit: its ``server``, ``protocol`` and ``packs``), in the same rotation: a before/after of a
   change from one run (every sidecar is then spawned, none forked).
2. **Throughput with 8 processes**: 8 sidecars × ``--calls`` (search + postExecute each), on one
   shared ``$DSH_HOME`` (files + locks: one machine) and on Redis, ``--rounds`` times each,
   interleaved; prints the median calls/s of both and checks the exact bandit and knowledge
   totals of the last Redis run against what every process reports it wrote (fewer bandit
   updates than searches: an answer from the fleet's cache is not learned from).

Run: ``python bench/fleet.py`` (defaults: 600 A/B calls of each kind; 8 × 500 fleet calls, two
rounds per backend, interleaved).
Needs Debian's ``redis-server``. The machine is shared: read ratios and differences, not absolutes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import redis  # noqa: E402
from dsh_sidecar.state import keys  # noqa: E402
from support.fleetkit import (  # noqa: E402
    REDIS_SERVER,
    SESSION,
    Providers,
    RedisServer,
    Sidecar,
    make_workspace,
    options,
    sidecar_env,
    temp_root,
)

REPO = "remote:example.org/fleet/demo"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(sc: Sidecar, method: str, params: dict[str, Any]) -> float:
    t0 = time.perf_counter()
    reply = sc.request(method, params)
    ms = (time.perf_counter() - t0) * 1000
    assert "error" not in reply, reply
    return ms


def round_trips(sc: Sidecar, url: str, n: int, name: str) -> tuple[list[int], list[int]]:
    """Store round trips of ``n`` quick searches (fresh queries: cache misses; ``name`` in each, so a
    sidecar measured after another is not answered from the fleet cache the first one filled,
    which writes nothing and learns nothing after its answer), one at a time:
    the Redis server's ``total_reads_processed`` (one per read event, so a pipeline or a script
    sent at once is one) between the request and its answer, and in the 0.2 s after it. The
    ``INFO`` call that reads the counter is itself one read event, taken out."""
    info = redis.Redis.from_url(url)

    def reads() -> int:
        return int(info.info("stats")["total_reads_processed"])

    hot: list[int] = []
    after: list[int] = []
    for i in range(n):
        time.sleep(0.2)  # the last search's writes are out
        r0 = reads()
        timed(sc, "dsh/search", {"query": f"round trips {i} {name}", "strategy": "quick"})
        r1 = reads()
        time.sleep(0.2)
        r2 = reads()
        hot.append(r1 - r0 - 1)
        after.append(r2 - r1 - 1)
    info.close()
    return hot, after


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def latency(tmp: Path, providers: Providers, store: RedisServer, n: int, before: Path | None = None) -> None:
    sidecars = {}
    runs = [("file", "file", None), ("redis", store.url, None)]
    if before is not None:
        runs.append(("before", store.url, before))
    for name, backend, tree in runs:
        env = sidecar_env(tmp / f"lat-home-{name}")
        if tree is not None:
            env["PYTHONPATH"] = os.pathsep.join(str(tree / part) for part in ("server", "protocol", "packs"))
        sc = Sidecar(env, tmp / f"lat-{name}.log")
        sc.initialize(make_workspace(tmp / f"lat-{name}" / "demo"), options(providers, backend, seed=1))
        sidecars[name] = sc
    for i in range(30):  # warm-up: imports, activation, connections
        for sc in sidecars.values():
            sc.request("dsh/search", {"query": f"warm {i}", "strategy": "quick"})
            sc.request(
                "dsh/postExecute", {"sessionId": "warm", "turn": i, "tool": {"name": "Grep", "input": {"pattern": "x"}}}
            )
    times: dict[tuple[str, str], list[float]] = {}
    order = list(sidecars.items())
    ping = redis.Redis.from_url(store.url)
    rtt: list[float] = []
    for i in range(n):
        t0 = time.perf_counter()
        ping.ping()  # the store's round trip in this run, under the same load
        rtt.append((time.perf_counter() - t0) * 1000)
        order = order[1:] + order[:1]  # rotate who goes first
        for name, sc in order:
            q = {"query": f"bench query {i} {name}", "strategy": "quick"}
            times.setdefault((name, "search"), []).append(timed(sc, "dsh/search", q))
            tool_name, tool_input = SESSION[i % len(SESSION)]
            p = {"sessionId": f"b{i // len(SESSION)}", "turn": i, "tool": {"name": tool_name, "input": tool_input}}
            times.setdefault((name, "postExecute"), []).append(timed(sc, "dsh/postExecute", p))
    trips = {name: round_trips(sidecars[name], store.url, min(n, 60), name) for name in sidecars if name != "file"}
    for sc in sidecars.values():
        sc.close()
    print(
        f"\nstore round trip (PING from redis-py) in this run: p50 {pct(rtt, 0.5):.3f} ms, p90 {pct(rtt, 0.9):.3f} ms"
    )
    print(f"{load()} (after the run)")
    print(f"\n## added latency, {n} calls of each kind per backend, interleaved (ms)")
    print("(paired: the median of redis − file over each pair of calls sent back to back)")
    head = f"{'method':<12} {'file p50':>9} {'file p90':>9} {'redis p50':>10} {'redis p90':>10}"
    print(f"{head} {'added p50':>10} {'paired':>8}  goal")
    for method in ("search", "postExecute"):
        f, r = times[("file", method)], times[("redis", method)]
        added = statistics.median(r) - statistics.median(f)
        paired = statistics.median(b - a for a, b in zip(f, r))
        print(
            f"{method:<12} {pct(f, 0.5):9.3f} {pct(f, 0.9):9.3f} {pct(r, 0.5):10.3f} {pct(r, 0.9):10.3f} "
            f"{added:+10.3f} {paired:+8.3f}  {'ok' if min(added, paired) <= 0.5 else 'MISSED'} (≤ 0.5)"
        )
    print("\n## store round trips a quick search (the server's read events: a pipeline or a script is one)")
    print("(on the reply path: between the request and its answer; after: within 0.2 s of the answer)")
    for name, (hot, after) in trips.items():
        print(
            f"{name:<7} on the reply path: median {statistics.median(hot):.0f}, mean {statistics.mean(hot):.2f}, "
            f"max {max(hot)}; after the answer: mean {statistics.mean(after):.2f}  "
            f"{'ok' if statistics.median(hot) <= 1 else 'MISSED'} (<= 1 on the reply path)"
        )
    if before is None:
        return
    print(f"\n## the same, the code of {before} on the same Redis (same run, same rotation)")
    for method in ("search", "postExecute"):
        f, b, r = times[("file", method)], times[("before", method)], times[("redis", method)]
        added = statistics.median(b) - statistics.median(f)
        paired = statistics.median(y - x for x, y in zip(f, b))
        now_vs = statistics.median(y - x for x, y in zip(b, r))
        print(
            f"{method:<12} before p50 {pct(b, 0.5):.3f} p90 {pct(b, 0.9):.3f}: added {added:+.3f} (paired {paired:+.3f});"
            f" this tree − before, paired: {now_vs:+.3f}"
        )


def fleet(tmp: Path, providers: Providers, backend: str, label: str, processes: int, calls: int) -> dict[str, Any]:
    shared_home = tmp / f"fleet-home-{label}"
    sidecars = []
    for k in range(processes):
        home = shared_home if backend == "file" else tmp / f"fleet-home-{label}-{k}"
        sc = Sidecar(sidecar_env(home), tmp / f"fleet-{label}-{k}.log")
        sc.initialize(make_workspace(tmp / f"fleet-{label}-{k}" / "demo"), options(providers, backend, seed=k))
        sidecars.append(sc)
    errors: list[str] = []

    def worker(k: int) -> None:
        sc = sidecars[k]
        for i in range(calls):
            r = sc.request("dsh/search", {"query": f"fleet {label} topic {i % 200}"})
            if "error" in r:
                errors.append(str(r["error"]))
            name, tool_input = SESSION[i % len(SESSION)]
            p = {"sessionId": f"w{k}-s{i // len(SESSION)}", "turn": i, "tool": {"name": name, "input": tool_input}}
            if "error" in sc.request("dsh/postExecute", p):
                errors.append("postExecute")

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(processes)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.perf_counter() - t0
    statuses = [sc.call("dsh/status")["state"] for sc in sidecars]
    for sc in sidecars:
        sc.close()
    return {"seconds": seconds, "calls": 2 * processes * calls, "errors": errors, "statuses": statuses}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ab-calls", type=int, default=600, help="A/B calls of each kind per backend")
    ap.add_argument("--processes", type=int, default=8)
    ap.add_argument("--calls", type=int, default=500, help="searches (and postExecutes) per fleet process")
    ap.add_argument("--rounds", type=int, default=2, help="fleet runs per backend, interleaved (0: latency only)")
    ap.add_argument("--before", type=Path, help="a tree of earlier code to compare with, in the same run")
    ap.add_argument(
        "--fsync",
        default="everysec",
        choices=["everysec", "always"],
        help="the server's appendfsync (Redis default: everysec)",
    )
    args = ap.parse_args()
    if REDIS_SERVER is None:
        print("redis-server is not installed (apt-get install redis-server)")
        return 2
    if args.before is not None:
        os.environ["DSH_TESTS_FORKSERVER"] = "0"  # the other tree's code runs in a process of its own
    print(load(), "(at the start)")
    tmp = temp_root("dsh-bench-fleet-")
    store = RedisServer(tmp / "redis", fsync=args.fsync)
    store.start()
    providers = Providers(error_every=0)
    try:
        latency(tmp, providers, store, args.ab_calls, args.before)
        if args.rounds == 0:
            return 0
        rates: dict[str, list[float]] = {"file": [], "redis": []}
        errors = 0
        last_redis: dict[str, Any] = {}
        # rounds in the order file, redis, redis, file, …: a load change on the shared machine
        # hits both backends alike; each run is a fresh fleet (start-up not timed)
        for r in range(args.rounds):
            for label in ("file", "redis") if r % 2 == 0 else ("redis", "file"):
                backend = "file" if label == "file" else store.url
                if label == "redis":
                    redis.Redis.from_url(store.url).flushall()
                run = fleet(tmp, providers, backend, f"{label}{r}", args.processes, args.calls)
                rates[label].append(run["calls"] / run["seconds"])
                errors += len(run["errors"])
                if label == "redis":
                    last_redis = run
        print(
            f"\n## throughput, {args.processes} processes x {args.calls} (search + postExecute), {args.rounds} rounds"
            f" ({load()})"
        )
        base = statistics.median(rates["file"])
        for label, values in rates.items():
            rate = statistics.median(values)
            each = ", ".join(f"{v:.0f}" for v in values)
            print(f"{label:<6} median {rate:.0f} calls/s ({rate / base:.2f}x file); rounds: {each}")
        print(f"errors: {errors}")
        statuses = last_redis["statuses"]
        client = redis.Redis.from_url(store.url)
        glob = client.hgetall(keys.bandit_counts_key("global"))
        stored = float(glob.get(b"quick:updates", 0)) + float(glob.get(b"thorough:updates", 0))
        reported = sum(s["banditUpdates"] for s in statuses)
        rows = client.hgetall(f"{keys.repo_key(REPO)}:rows")
        followed = sum(int(v) for f, v in rows.items() if f.startswith(b"f:"))
        ignored = sum(int(v) for f, v in rows.items() if f.startswith(b"i:"))
        want_f = sum(s["knowledgeCounted"]["followed"] for s in statuses)
        want_i = sum(s["knowledgeCounted"]["ignored"] for s in statuses)
        print(
            f"redis totals: bandit updates {stored:.0f} stored / {reported} reported / "
            f"{args.processes * args.calls} searches (a cached answer is not learned from: the fleet's cache answers"
            f" most of the 200 topics); knowledge followed {followed}/{want_f}, ignored {ignored}/{want_i}"
        )
        ok = stored == reported > 0 and followed == want_f and ignored == want_i
        print("lost updates: 0" if ok else "LOST UPDATES")
        return 0 if ok else 1
    finally:
        providers.close()
        store.stop()


if __name__ == "__main__":
    raise SystemExit(main())
