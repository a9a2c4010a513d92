"""Transport benchmark: the sidecar's ``dsh/postExecute`` against a pygls+asyncio echo given
the same params, side by side in one run (the transport's throughput goal, docs/benchmarks.md).

Servers (one process each, all running at once): raw Python framing (the floor of framing), the
**echo** (pygls reading stdin through an asyncio pipe reader, ``connect_read_pipe`` +
``run_async``, as the sidecar does, answering ``dsh/postExecute`` with an empty
``additionalContexts``: the floor the goal names), for reference stock pygls ``start_io`` (stdin
read through a thread pool: 1.2-1.6x slower, so ratios against it flatter the sidecar; printed,
never used for a goal), this tree's sidecar and, per ``--baseline-src DIR`` (another commit's
source tree, ``git -C /work/main archive <commit> | tar -x -C DIR``; repeatable), that commit's.

The calls (default, ``bench/postexecute_streams.py``): the recorded agent runs of one training
repository (``--repo``, default ``pydata/xarray``) on its checkout in ``--cache``, as three
streams every server is given alike: **session** (every call of the runs in session order, notes
and silence as they came), **silent** and **note** (the runs' distinct search/read calls, each
the first call of a fresh session, split by what this tree's sidecar answered them in a
calibration pass before the run; a fixed seeded order). Each server sees the calls of a stream
in the same order, so caches and memos see what real sessions show them, not one pattern.
``--single-pattern`` is the earlier bench (kept to compare with its figures): the ``pyproj``
fixture, a silent grep (``frobnicate``) and a note (``def main``, a fresh session a call), the
note path also with ``logMessages: none``.

Every (server, stream) row is measured **interleaved**: ``--rounds`` rounds (>= 5), each giving
every row, in a rotating order, ``--n``/rounds sequential round trips and as many pipelined
calls (``--window`` in flight). Prints per row: sequential p50/p99 (ms), pipelined throughput
(req/s, the median over the rounds), the server's CPU per pipelined call (us, from ``/proc``,
summed over all rounds: one round's few clock ticks cannot tell calls apart), split into user
and system time (``utime``/``stime``: the kernel's share is the pipe I/O), and the share of
its answers that carried a note; then each sidecar row's throughput ratio to the echo on the
same params (median of the per-round ratios, with their spread) and this tree's CPU per call
against each baseline's on the same stream (goal: this tree's <= the review's commit's, silent
and note). The load average is printed before and after the run.
Usage: ``python bench/transport.py [--repo R] [--cache DIR] [--n 2000] [--window 64] [--rounds 7]
[--baseline-src DIR ...] [--single-pattern]``."""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import postexecute_streams as streams  # noqa: E402
from _rpc import StdioClient, pipe_floor, sidecar_cmd  # noqa: E402
from _scratch import scratch  # noqa: E402

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

#: The handlers both pygls floors answer with.
_HANDLERS = """
@server.feature("bench/noop")
def noop(ls, params):
    return None
@server.feature("dsh/postExecute")
def echo(ls, params):
    return {"additionalContexts": []}
"""

FLOOR_PYGLS = pipe_floor(_HANDLERS)

STOCK_PYGLS = (
    'from pygls.lsp.server import LanguageServer\nserver = LanguageServer("stock", "0")'
    + _HANDLERS
    + "server.start_io()\n"
)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def noted(msg: dict) -> bool:
    """Whether a ``dsh/postExecute`` answer carries a note."""
    result = msg.get("result")
    return bool(isinstance(result, dict) and result.get("additionalContexts"))


def sequential(client: StdioClient, method: str, params_of, start: int, n: int) -> tuple[list[float], int]:
    """``n`` round trips one after the other: their latencies (ms) and how many carried a note."""
    lat = []
    notes = 0
    for i in range(start, start + n):
        params = params_of(i)
        t0 = time.perf_counter()
        reply = client.request(method, params)
        lat.append((time.perf_counter() - t0) * 1000)
        assert "result" in reply, reply
        notes += noted(reply)
    return lat, notes


def pipelined(client: StdioClient, method: str, params_of, start: int, n: int, window: int) -> tuple[float, int]:
    """``n`` calls with ``window`` in flight: requests per second and how many carried a note."""
    t0 = time.perf_counter()
    sent = done = notes = 0
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
            notes += noted(msg)
    client.logs.clear()  # the ledger lines of the notes: not kept over the run
    return n / (time.perf_counter() - t0), notes


#: Clock ticks per second of ``/proc/<pid>/stat`` times.
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cpu_times(stat: str) -> tuple[float, float]:
    """``(user, system)`` CPU seconds of a ``/proc/<pid>/stat`` line (``utime`` and ``stime``,
    fields 14 and 15: all the process's threads). The command name, in parentheses, may hold
    spaces and parentheses itself: the fields are counted after its last ``)``."""
    fields = stat.rsplit(")", 1)[1].split()
    return int(fields[11]) / CLK_TCK, int(fields[12]) / CLK_TCK


def cpu_s(pid: int) -> tuple[float, float]:
    """``(user, system)`` CPU seconds of process ``pid`` so far, from ``/proc``."""
    return cpu_times(Path(f"/proc/{pid}/stat").read_text())


def wait_ready(client: StdioClient, timeout_s: float = 600.0) -> None:
    """Until the sidecar's workspace is indexed (``dsh/status``: graph ready, nothing pending)."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = client.call("dsh/status", {})["suggester"]
        if status["graph"]["ready"] and not status.get("pending"):
            return
        if time.monotonic() > deadline:
            raise TimeoutError("the workspace was not indexed in time")
        time.sleep(0.1)


def silent(i: int) -> dict:
    return {"sessionId": "bench", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "frobnicate"}}}


def intent(i: int) -> dict:
    return {"sessionId": f"bench-{i}", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "def main"}}}


@dataclass
class Server:
    label: str
    cmd: list[str]
    options: dict | None  # initializationOptions; None: no initialize (the raw floor)
    pythonpath: str | None = None
    sidecar: bool = False


@dataclass
class Row:
    label: str
    server: int
    method: str
    params_of: Callable[[int], dict]
    stream: str  # rows of one stream compare with each other
    echo: int | None = None  # the echo row on the same params
    baseline_of: int | None = None  # this tree's row, for a baseline's row


def corpus_streams(args: argparse.Namespace, tmp: Path) -> tuple[Path, dict[str, Callable[[int], dict]], str]:
    """The workspace and the session/silent/note streams of ``--repo`` (calibrated by this
    tree's sidecar), and a line saying what they hold."""
    corpus = streams.load(args.repo, args.cache)
    env = dict(os.environ, DSH_HOME=str(tmp / "home-calibrate"), DSH_CACHE_DIR=str(tmp / "cache-calibrate"))
    client = StdioClient(sidecar_cmd(), env)
    try:
        client.request("initialize", init(corpus.workspace, {"suggester": {"enabled": True}}))
        client.send("initialized", {}, notify=True)
        wait_ready(client)
        quiet, noting = streams.calibrate(corpus, lambda p: client.call("dsh/postExecute", p)["additionalContexts"])
    finally:
        client.close()
    made = {
        "session": streams.session_stream(corpus),
        "silent": streams.alone_stream(quiet, "silent"),
        "note": streams.alone_stream(noting, "note"),
    }
    what = (
        f"{args.repo} on {corpus.workspace.name}: session = {len(corpus.runs)} runs, "
        f"{len(corpus.session_calls)} calls; of their {len(corpus.watched)} distinct search/read calls "
        f"{len(quiet)} silent, {len(noting)} a note (alone, this tree)"
    )
    return corpus.workspace, made, what


def init(ws: Path, options: dict) -> dict:
    return {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}, "initializationOptions": options}


def plan(args: argparse.Namespace, tmp: Path) -> tuple[Path, list[Server], list[Row], str]:
    """The servers and the rows (server x stream) of the run."""
    echo_cmd = [sys.executable, str(tmp / "floor.py")]
    stock_cmd = [sys.executable, str(tmp / "stock.py")]
    on = {"suggester": {"enabled": True}}
    servers = [
        Server("raw Python framing", [sys.executable, str(tmp / "raw.py")], None),
        Server("echo pygls+asyncio", echo_cmd, {}),
        Server("stock pygls start_io (reference)", stock_cmd, {}),
        Server("sidecar (this tree)", sidecar_cmd(), on, sidecar=True),
    ]
    for given in args.baseline_src:
        src = given.resolve()
        path = os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs"))
        servers.append(Server(f"{src.name}", sidecar_cmd(), on, pythonpath=path, sidecar=True))
    rows = [Row("raw Python framing (floor), no-op", 0, "bench/noop", silent, "noop")]
    if args.single_pattern:
        ws = Path(__file__).resolve().parents[1] / "tests" / "data" / "workspaces" / "pyproj"
        servers.append(Server("sidecar, logMessages none", sidecar_cmd(), {**on, "logMessages": "none"}, sidecar=True))
        made = {"silent": silent, "note": intent}
        what = "single pattern on pyproj: silent Grep frobnicate, note Grep 'def main' (a fresh session a call)"
    else:
        ws, made, what = corpus_streams(args, tmp)
    for stream, params_of in made.items():
        echo_row = len(rows)
        rows.append(Row(f"echo pygls+asyncio, {stream}", 1, "dsh/postExecute", params_of, stream))
        ours = len(rows)
        for k, server in enumerate(servers):
            if server.sidecar and (server.label != "sidecar, logMessages none" or stream == "note"):
                rows.append(
                    Row(
                        f"{server.label}, {stream}",
                        k,
                        "dsh/postExecute",
                        params_of,
                        stream,
                        echo=echo_row,
                        baseline_of=None if len(rows) == ours or not server.pythonpath else ours,
                    )
                )
        rows.append(
            Row(f"stock pygls start_io (reference), {stream}", 2, "dsh/postExecute", params_of, stream, echo_row)
        )
    return ws, servers, rows, what


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=2000, help="calls per row, over all rounds")
    ap.add_argument("--window", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--repo", default="pydata/xarray", help="a training repository of corpus/trajectories")
    ap.add_argument("--cache", type=Path, default=streams.DEFAULT_CACHE, help="the corpus checkouts")
    ap.add_argument("--single-pattern", action="store_true", help="the earlier bench: one grep per path on pyproj")
    ap.add_argument(
        "--baseline-src",
        type=Path,
        action="append",
        default=[],
        help="another commit's source tree, measured alongside (repeatable)",
    )
    args = ap.parse_args()
    with scratch("dsh-bench-") as tmp:  # removed however the run ends (Ctrl-C, an error, a kill)
        run(args, tmp)


def run(args: argparse.Namespace, tmp: Path) -> None:
    """Every row's rounds with the servers' state under ``tmp``, then the report; the servers
    are closed however the rounds end."""
    rounds = max(5, args.rounds)
    per_round = max(50, args.n // rounds)
    (tmp / "raw.py").write_text(RAW_ECHO)
    (tmp / "stock.py").write_text(STOCK_PYGLS)
    (tmp / "floor.py").write_text(FLOOR_PYGLS)
    load_before = os.getloadavg()
    try:
        ws, servers, rows, what = plan(args, tmp)
    except (ValueError, OSError) as exc:  # a held-out or unknown repository, no checkout
        sys.exit(f"transport: {exc}")
    clients: list[StdioClient] = []
    try:
        for k, server in enumerate(servers):
            env = dict(
                os.environ, DSH_HOME=str(tmp / f"home-{k}"), DSH_CACHE_DIR=str(tmp / f"cache-{k}")
            )  # its own state
            if server.pythonpath:
                env["PYTHONPATH"] = server.pythonpath
            client = StdioClient(server.cmd, env)
            if server.options is not None:
                client.request("initialize", init(ws, server.options))
                client.send("initialized", {}, notify=True)
            clients.append(client)
        for k, server in enumerate(servers):
            if server.sidecar:
                wait_ready(clients[k])  # the workspace indexes build in the background
        seq = [0 for _ in rows]  # each row's next call of its stream: every server sees a stream alike
        for k, row in enumerate(rows):
            for _ in range(20):  # warm up
                clients[row.server].request(row.method, row.params_of(seq[k]))
                seq[k] += 1
        lat: list[list[float]] = [[] for _ in rows]
        rps: list[list[float]] = [[] for _ in rows]
        notes = [0 for _ in rows]
        cpu = [[0.0, 0.0] for _ in rows]  # server CPU seconds (user, system) over every round's pipelined calls
        for r in range(rounds):
            order = list(range(len(rows)))
            order = order[r % len(order) :] + order[: r % len(order)]  # rotate: no row always first
            for k in order:
                row, client = rows[k], clients[rows[k].server]
                got, n1 = sequential(client, row.method, row.params_of, seq[k], per_round)
                lat[k] += got
                u0, s0 = cpu_s(client.proc.pid)
                speed, n2 = pipelined(client, row.method, row.params_of, seq[k] + per_round, per_round, args.window)
                u1, s1 = cpu_s(client.proc.pid)
                cpu[k][0] += u1 - u0
                cpu[k][1] += s1 - s0
                rps[k].append(speed)
                notes[k] += n1 + n2
                seq[k] += 2 * per_round
    finally:
        for client in clients:
            client.close()
    split_us = [
        CpuPerCall(user / (rounds * per_round) * 1e6, system / (rounds * per_round) * 1e6) for user, system in cpu
    ]
    report(args, rows, lat, rps, notes, split_us, rounds, per_round, what, load_before)


@dataclass(frozen=True)
class CpuPerCall:
    """A server's CPU per pipelined call, us: in user mode (Python, parsing, the suggester) and in
    the kernel (the pipe reads and writes, wake-ups), as ``/proc/<pid>/stat`` splits it."""

    user: float
    system: float

    @property
    def total(self) -> float:
        return self.user + self.system


def report(args, rows, lat, rps, notes, split_us, rounds, per_round, what, load_before) -> None:  # noqa: PLR0913
    cpu_us = [c.total for c in split_us]
    width = max(len(r.label) for r in rows)
    print(what)
    print(
        f"transport benchmark: {rounds} interleaved rounds x {per_round} calls per row "
        f"(sequential, then pipelined window={args.window})"
    )
    print(
        f"{'server, stream':<{width}}  {'p50 ms':>8}  {'p99 ms':>8}  {'req/s':>9}  {'req/s min-max':>15}  "
        f"{'server CPU us/call':>18}  {'user':>6}  {'sys':>6}  {'notes':>6}"
    )
    for k, row in enumerate(rows):
        share = notes[k] / (2 * rounds * per_round)
        print(
            f"{row.label:<{width}}  {percentile(lat[k], 0.5):>8.3f}  {percentile(lat[k], 0.99):>8.3f}  "
            f"{statistics.median(rps[k]):>9.0f}  {min(rps[k]):>7.0f}-{max(rps[k]):<7.0f}  "
            f"{cpu_us[k]:>18.0f}  {split_us[k].user:>6.0f}  {split_us[k].system:>6.0f}  {share:>6.1%}"
        )
    print(
        f"(server CPU over all {rounds} rounds' pipelined calls, user + sys from /proc/<pid>/stat: one clock "
        f"tick is {1e6 / CLK_TCK / (rounds * per_round):.0f} us/call)"
    )
    load_after = os.getloadavg()
    print(
        f"load average (1/5/15 min) before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
        f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f} on {os.cpu_count()} CPUs"
    )
    for k, row in enumerate(rows):
        if row.echo is None or row.label.startswith("stock"):
            continue
        ratios = [a / b for a, b in zip(rps[k], rps[row.echo], strict=True)]
        ours, floor = split_us[k], split_us[row.echo]
        print(
            f"{row.label} vs the echo: throughput x{statistics.median(ratios):.2f} (median of {rounds} per-round "
            f"ratios, spread x{min(ratios):.2f}-x{max(ratios):.2f}), server CPU per call "
            f"x{cpu_us[k] / max(cpu_us[row.echo], 1e-9):.2f} the echo's: user {ours.user:.0f} vs {floor.user:.0f} us, "
            f"sys {ours.system:.0f} vs {floor.system:.0f} us"
        )
    for k, row in enumerate(rows):
        if row.baseline_of is not None:
            ours = rows[row.baseline_of]
            ratio = cpu_us[row.baseline_of] / max(cpu_us[k], 1e-9)
            mine, theirs = split_us[row.baseline_of], split_us[k]
            print(
                f"{ours.label} vs {row.label}: server CPU per call x{ratio:.2f} "
                f"({cpu_us[row.baseline_of]:.0f} vs {cpu_us[k]:.0f} us; user {mine.user:.0f} vs {theirs.user:.0f}, "
                f"sys {mine.system:.0f} vs {theirs.system:.0f})   goal <= x1.00: "
                f"{'met' if ratio <= 1.0 else 'NOT met'}"
            )
    stock = [k for k, r in enumerate(rows) if r.label.startswith("stock")]
    for k in stock:
        ratios = [a / b for a, b in zip(rps[rows[k].echo], rps[k], strict=True)]
        print(f"echo pygls+asyncio vs {rows[k].label}: throughput x{statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
