"""Transport benchmark: the sidecar's ``dsh/postExecute`` against a pygls+asyncio echo given
the same nested params, side by side in one run (the transport's throughput goal, docs/benchmarks.md).

Servers: raw Python framing (the floor), the **echo** (pygls reading stdin through an asyncio
pipe reader, ``connect_read_pipe`` + ``run_async``, as the sidecar does, answering
``dsh/postExecute`` with an empty ``additionalContexts``: the floor the goal names), for
reference stock pygls ``start_io`` (stdin read through a thread pool: 1.2–1.6x slower, so ratios
against it flatter the sidecar; printed, never used for a goal), and the sidecar on the
``pyproj`` fixture workspace. Two paths, each sent to the echo and to the sidecar with the same
params: **silent** (a grep the suggester ignores) and **intent** (a grep for ``def main``
that matches the Symbol intent: a note, a ledger line and a ``window/logMessage``; a fresh
``sessionId`` per call so every call matches). The intent path runs with ``logMessages: all``
(the default) and ``none``.

All six servers run at once and are measured **interleaved**: ``--rounds`` rounds (>= 5), each
giving every server, in a rotating order, ``--n``/rounds sequential round trips and as many
pipelined calls (``--window`` in flight), so every ratio is taken between measurements made
seconds apart under the same machine noise.

Prints per row: sequential p50/p99 round trip (ms, all rounds) and pipelined throughput (req/s,
the median over the rounds) and the server process's CPU time per pipelined call (µs, from
``/proc``: what the server spends, whatever the neighbours do; summed over all rounds, as one
round's few 10 ms clock ticks cannot tell calls apart), then each sidecar path's throughput
ratio to the echo on the same params: the median of the per-round ratios, with their spread,
and its CPU per call as a multiple of the other's (goals: intent >= 1.5x, silent
>= 2x; "the echo floor" of that goal is the pygls+asyncio echo's throughput on the same params).
``--baseline-src DIR`` (another commit's source tree, e.g. ``git archive main | tar -x -C DIR``;
may be given more than once) adds that commit's sidecar, silent and intent (logMessages all), to
the same interleaving. The load average is printed before and after the run.
Usage: ``python bench/transport.py [--n 2000] [--window 64] [--rounds 7] [--baseline-src DIR ...]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _rpc import StdioClient, sidecar_cmd  # noqa: E402

RAW_ECHO = textwrap.dedent(
    """
    import json, sys
    i, o = sys.stdin.buffer, sys.stdout.buffer
    while True:
        n = 0
        while True:
            line = i.readline()
            if not line:
                sys.exit(0)
            if line == b"\\r\\n":
                break
            if line.lower().startswith(b"content-length:"):
                n = int(line.split(b":")[1])
        msg = json.loads(i.read(n))
        if "id" not in msg:
            if msg.get("method") == "exit":
                sys.exit(0)
            continue
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": None}).encode()
        o.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        o.flush()
    """
)

FLOOR_PYGLS = textwrap.dedent(
    """
    import asyncio, logging, sys, threading
    from pygls.lsp.server import LanguageServer
    from pygls.io_ import StdoutWriter, run_async
    server = LanguageServer("floor", "0")
    @server.feature("bench/noop")
    def noop(ls, params):
        return None
    @server.feature("dsh/postExecute")
    def echo(ls, params):
        return {"additionalContexts": []}
    async def main():
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=2**20)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
        server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        await run_async(stop_event=threading.Event(), reader=reader, protocol=server.protocol,
                        logger=logging.getLogger(), error_handler=server.report_server_error)
    try:
        asyncio.run(main())
    except (SystemExit, KeyboardInterrupt):
        pass
    """
)

STOCK_PYGLS = textwrap.dedent(
    """
    from pygls.lsp.server import LanguageServer
    server = LanguageServer("stock", "0")
    @server.feature("bench/noop")
    def noop(ls, params):
        return None
    @server.feature("dsh/postExecute")
    def echo(ls, params):
        return {"additionalContexts": []}
    server.start_io()
    """
)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def sequential(client: StdioClient, method: str, params_of, start: int, n: int) -> list[float]:
    """``n`` round trips one after the other: their latencies, ms."""
    lat = []
    for i in range(start, start + n):
        params = params_of(i)
        t0 = time.perf_counter()
        reply = client.request(method, params)
        lat.append((time.perf_counter() - t0) * 1000)
        assert "result" in reply, reply
    return lat


def pipelined(client: StdioClient, method: str, params_of, start: int, n: int, window: int) -> float:
    """``n`` calls with ``window`` in flight: requests per second."""
    t0 = time.perf_counter()
    sent = done = 0
    pending: set[int] = set()
    while done < n:
        while sent < n and len(pending) < window:
            pending.add(client.send(method, params_of(start + sent)))  # type: ignore[arg-type]
            sent += 1
        msg = client.read()
        if msg.get("id") in pending:
            assert "result" in msg, msg
            pending.discard(msg["id"])
            done += 1
    return n / (time.perf_counter() - t0)


#: Clock ticks per second of ``/proc/<pid>/stat`` times.
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (all its threads), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def wait_ready(client: StdioClient, timeout_s: float = 120.0) -> None:
    """Until the sidecar's workspace projection is built (``dsh/status``: graph ready)."""
    deadline = time.monotonic() + timeout_s
    while not client.call("dsh/status", {})["suggester"]["graph"]["ready"]:
        if time.monotonic() > deadline:
            raise TimeoutError("the workspace graph was not built in time")
        time.sleep(0.05)


def silent(i: int) -> dict:
    return {"sessionId": "bench", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "frobnicate"}}}


def intent(i: int) -> dict:
    return {"sessionId": f"bench-{i}", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "def main"}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2000, help="calls per server and mode, over all rounds")
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument(
        "--baseline-src",
        type=Path,
        action="append",
        default=[],
        help="another commit's source tree, measured alongside (repeatable)",
    )
    args = ap.parse_args()
    rounds = max(5, args.rounds)
    per_round = max(50, args.n // rounds)
    tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-"))
    (tmp / "raw.py").write_text(RAW_ECHO)
    (tmp / "stock.py").write_text(STOCK_PYGLS)
    (tmp / "floor.py").write_text(FLOOR_PYGLS)
    ws = Path(__file__).resolve().parents[1] / "tests" / "data" / "workspaces" / "pyproj"

    def init(options: dict) -> dict:
        return {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}, "initializationOptions": options}

    on = {"suggester": {"enabled": True}}
    quiet = {"suggester": {"enabled": True}, "logMessages": "none"}
    echo = [sys.executable, str(tmp / "floor.py")]
    stock = [sys.executable, str(tmp / "stock.py")]
    rows = [
        ("raw Python framing (floor), no-op", [sys.executable, str(tmp / "raw.py")], None, "bench/noop", silent),
        ("echo pygls+asyncio, silent params", echo, {}, "dsh/postExecute", silent),
        ("sidecar dsh/postExecute silent", sidecar_cmd(), on, "dsh/postExecute", silent),
        ("echo pygls+asyncio, intent params", echo, {}, "dsh/postExecute", intent),
        ("sidecar dsh/postExecute intent (logMessages all)", sidecar_cmd(), on, "dsh/postExecute", intent),
        ("sidecar dsh/postExecute intent (logMessages none)", sidecar_cmd(), quiet, "dsh/postExecute", intent),
    ]
    pythonpath: dict[int, str] = {}
    baselines: list[tuple[int, int]] = []  # (silent row, intent row) of each baseline
    for given in args.baseline_src:
        src = given.resolve()
        first = len(rows)
        for label, options, params_of in (("silent", on, silent), ("intent (logMessages all)", on, intent)):
            pythonpath[len(rows)] = os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs"))
            rows.append((f"{src.name} dsh/postExecute {label}", sidecar_cmd(), options, "dsh/postExecute", params_of))
        baselines.append((first, first + 1))
    load_before = os.getloadavg()
    first_stock = len(rows)
    rows.append(("stock pygls start_io (reference), silent params", stock, {}, "dsh/postExecute", silent))
    rows.append(("stock pygls start_io (reference), intent params", stock, {}, "dsh/postExecute", intent))
    clients = []
    for k, (_label, cmd, options, method, params_of) in enumerate(rows):
        env = dict(os.environ, DSH_HOME=str(tmp / f"home-{k}"), DSH_CACHE_DIR=str(tmp / f"cache-{k}"))  # its own state
        if k in pythonpath:
            env["PYTHONPATH"] = pythonpath[k]
        client = StdioClient(cmd, env)
        if options is not None:
            client.request("initialize", init(options))
            client.send("initialized", {}, notify=True)
            if cmd not in (echo, stock):
                wait_ready(client)  # the workspace graph builds in the background
        for i in range(50):  # warm up
            client.request(method, params_of(-1 - i))
        clients.append(client)
    lat: list[list[float]] = [[] for _ in rows]
    rps: list[list[float]] = [[] for _ in rows]
    cpu = [0.0 for _ in rows]  # server CPU seconds over every round's pipelined calls
    for r in range(rounds):
        order = list(range(len(rows)))
        order = order[r % len(order) :] + order[: r % len(order)]  # rotate: no row always first
        for k in order:
            _label, _cmd, _options, method, params_of = rows[k]
            base = 1_000_000 * (r + 1)  # fresh sessionIds for the intent path, every call
            lat[k] += sequential(clients[k], method, params_of, base, per_round)
            c0 = cpu_s(clients[k].proc.pid)
            rps[k].append(pipelined(clients[k], method, params_of, base + per_round, per_round, args.window))
            cpu[k] += cpu_s(clients[k].proc.pid) - c0
    for client in clients:
        client.close()
    # CPU per call over all rounds: one round's delta is a few clock ticks (10 ms each over
    # ``per_round`` calls), too coarse to compare per round
    cpu_us = [total / (rounds * per_round) * 1e6 for total in cpu]
    width = max(len(r[0]) for r in rows)
    print(
        f"transport benchmark: {rounds} interleaved rounds x {per_round} calls per server "
        f"(sequential, then pipelined window={args.window})"
    )
    print(
        f"{'server / method':<{width}}  {'p50 ms':>8}  {'p99 ms':>8}  {'req/s':>9}  {'req/s min-max':>15}  "
        f"{'server CPU us/call':>18}"
    )
    for k, row in enumerate(rows):
        print(
            f"{row[0]:<{width}}  {percentile(lat[k], 0.5):>8.3f}  {percentile(lat[k], 0.99):>8.3f}  "
            f"{statistics.median(rps[k]):>9.0f}  {min(rps[k]):>7.0f}-{max(rps[k]):<7.0f}  "
            f"{cpu_us[k]:>18.0f}"
        )
    print(
        f"(server CPU over all {rounds} rounds' pipelined calls: one clock tick is {1e6 / CLK_TCK / (rounds * per_round):.0f} us/call)"
    )
    load_after = os.getloadavg()
    print(
        f"load average (1/5/15 min) before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
        f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} on {os.cpu_count()} CPUs"
    )
    pairs = [(2, 1, 2.0), (4, 3, 1.5), (5, 3, 1.5)]
    for silent_row, intent_row in baselines:
        pairs += [(silent_row, 1, 2.0), (intent_row, 3, 1.5)]
    pairs += [(1, first_stock, 0.0), (3, first_stock + 1, 0.0)]  # how much the stock echo flatters
    for side, base, goal in pairs:
        ratios = [a / b for a, b in zip(rps[side], rps[base], strict=True)]
        ratio = statistics.median(ratios)
        p50 = percentile(lat[side], 0.5) / percentile(lat[base], 0.5)
        cpu_ratio = cpu_us[side] / max(cpu_us[base], 1e-9)
        print(
            f"{rows[side][0]} vs {rows[base][0]}: throughput x{ratio:.2f} (median of {rounds} per-round ratios, "
            f"spread x{min(ratios):.2f}-x{max(ratios):.2f}), p50 x{p50:.2f}, server CPU per call x{cpu_ratio:.2f} "
            f"the other's   goal >= {goal}x: {'met' if ratio >= goal else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
