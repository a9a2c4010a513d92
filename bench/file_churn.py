"""File churn on a large workspace: what an agent editing files costs the sidecar, against the
same run's floors, this tree and a baseline tree side by side.

On a synthetic tree (default 100k files, ``bench/workspace.py``'s mix), for this tree and, with
``--baseline-src DIR`` (another commit's source, e.g. ``git archive <commit> server protocol packs
| tar -x -C DIR``), for that tree too:

1. **ready, cold and warm**: a sidecar with a fresh ``DSH_HOME`` is initialised and polled until
   ``graph.ready``: its process CPU seconds (``/proc/<pid>/stat``) and RSS then; later a second
   sidecar on the same ``DSH_HOME`` (an unchanged tree: the symbol cache and content database of
   the first) gives the warm figure. Goals: ≤ 10 s CPU cold, ≤ 1 s warm, RSS ≤ 300 MiB.
2. **churn**: with both cold sidecars ready, rounds alternate between them (and in each round a
   quiet phase and a churn phase): during a churn phase one ``.py`` file of the tree is rewritten
   and ``workspace/didChangeWatchedFiles`` sent every ``--interval`` s (200 ms); all along,
   ``dsh/postExecute`` calls alternate between a search-class call (intent) and the no-op call
   (the server's floor), and a bare pygls echo with an asyncio pipe reader (the machine's floor)
   is called between them. Printed: intent and no-op p50/p99 during churn and quiet, the echo's,
   p99 over the echo's and over the quiet phase; process CPU per change (churn CPU minus quiet
   CPU at the same call rate, over the changes) and, where the server reports them
   (``graph.changes``), the workspace side (graph batches; the content sync's CPU) apart from
   the suggester's full re-preparation (``targetsCpuMs``).

Goals (Performance III): a one-file change ≤ 50 ms of CPU on the workspace side; postExecute p99
≤ 2 ms over the floor during churn. The load average is printed with every figure: compare the
ratios of one run, never absolute numbers of different runs.

What the run makes (the synthetic tree: ~380 MiB for 100k files; the sidecars' homes and caches)
is in one ``dsh-churn-*`` temporary folder, removed when the run ends, also on Ctrl-C or a
``kill``, with its sidecars stopped; ``--keep`` keeps it and prints where, so a later run can
skip making the tree (``--tree <folder>/synthetic-<files>``). A ``--tree`` of yours is never removed.

    python bench/file_churn.py [--files 100000] [--tree DIR] [--baseline-src DIR] [--rounds 3]
        [--phase 6] [--interval 0.2] [--keep] [--after-ready 3]

``--after-ready S`` measures instead the first ``S`` seconds after ready (:func:`after_ready`):
each tree started cold once, then ``--rounds`` times warm, calls from ready on.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _rpc import StdioClient, pipe_floor, sidecar_cmd  # noqa: E402
from content_index import CALLS, FLOOR, pct, rss_mib  # noqa: E402
from workspace import synthetic  # noqa: E402

#: The machine's floor: pygls with an asyncio pipe reader answering dsh/postExecute at once.
ECHO = pipe_floor(
    """
@server.feature("dsh/postExecute")
def echo(ls, params):
    return {"additionalContexts": []}
"""
)


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 1)[0]


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def env_for(src: Path | None, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DSH_HOME"] = str(home)
    # the workspace indexes live in the cache directory, not under DSH_HOME: a fresh home has a
    # fresh cache too (else a "cold" start reads the symbol cache and content index of the last run)
    env["DSH_CACHE_DIR"] = str(home / "cache")
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src / p) for p in ("server", "protocol", "packs"))
    return env


class Server:
    """One sidecar on the tree, initialised; :meth:`ready` polls until the projection is ready."""

    def __init__(self, name: str, src: Path | None, home: Path, root: Path) -> None:
        self.name, self.root = name, root
        self.client = StdioClient(sidecar_cmd(), env_for(src, home))
        self.pid = self.client.proc.pid
        try:
            self.client.request("dsh/status", {})
            self.client.initialize(root, {"suggester": {"enabled": True}})
        except BaseException:  # Ctrl-C or a kill before the caller has it to close: stopped here
            self.client.proc.kill()
            self.client.proc.wait()
            raise
        self.seq = 0

    def status(self) -> dict:
        return self.client.call("dsh/status", {})["suggester"]["graph"]

    def ready(self, timeout_s: float = 600.0) -> dict:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            graph = self.status()
            if graph.get("ready"):
                return graph
            time.sleep(0.1)
        raise SystemExit(f"{self.name}: not ready after {timeout_s:.0f} s")

    def post(self, tool: dict) -> float:
        self.seq += 1
        t0 = time.perf_counter()
        reply = self.client.request(
            "dsh/postExecute",
            {
                "sessionId": f"s{self.seq // 50}",
                "turn": self.seq,
                "callId": f"c{self.seq}",
                "tool": tool,
                "result": {"text": ""},
            },
        )
        assert "result" in reply, reply
        return (time.perf_counter() - t0) * 1000

    def close(self) -> None:
        self.client.close()


#: Quiescence: the process's CPU grew by at most this much over one window (``/proc`` counts
#: in clock ticks of 10 ms; the idle server's heartbeat and freezer stay well under it). The
#: window is longer than the delay of the search path's warm-up (the shell parser's and the HTTP
#: client's imports, ~0.2 s of CPU, started 0.5 s after the projection is ready and at least 1 s
#: after the sidecar is built: ``sidecar/__init__.py``, ``WARM_AFTER_*``): with a 1 s window the
#: 15-file floor was judged quiescent before its warm-up began (its CPU grew by ~0.2 s after), the
#: large tree's warm-up fell inside its first window, and "to quiescence, over the floor" counted
#: the warm-up for the large tree only.
QUIET_CPU_S = 0.03
QUIET_WINDOW_S = 2.0


def quiet_figures(pid: int, t0: float, timeout_s: float = 120.0) -> tuple[float, float]:
    """``(CPU seconds, wall seconds since t0)`` of process ``pid`` once it is quiescent: its CPU
    grew by at most :data:`QUIET_CPU_S` over a :data:`QUIET_WINDOW_S` window (the window itself
    not counted in the wall figure). What a server still does after it said "ready" (the symbol
    cache's write, a preparation the content sync queued) is work of its start all the same."""
    deadline = time.monotonic() + timeout_s
    last, at = cpu_s(pid), time.perf_counter()
    while time.monotonic() < deadline:
        time.sleep(QUIET_WINDOW_S)
        now = cpu_s(pid)
        if now - last <= QUIET_CPU_S:
            return now, at - t0
        last, at = now, time.perf_counter()
    return cpu_s(pid), time.perf_counter() - t0


def verified_wall(server: Server, t0: float, timeout_s: float = 120.0) -> float:
    """Wall seconds since ``t0`` until the graph's listing is verified (``"verified"`` not
    ``False`` in ``dsh/status``: a session ready from a past session's listing walks the tree
    after ready, ``workspace/listingcache.py``; a tree without the field is verified at ready)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and server.status().get("verified") is False:
        time.sleep(0.05)
    return time.perf_counter() - t0


def ready_figures(
    name: str,
    src: Path | None,
    home: Path,
    root: Path,
    opened: list[Server | StdioClient] | None = None,
    quiet: bool = False,
    first_call: bool = False,
) -> tuple[Server, dict]:
    """Spawn -> ``graph.ready``: wall, process CPU and RSS then; with ``quiet``, also the CPU and
    wall once the process is quiescent after it (:func:`quiet_figures`); with ``first_call``, the
    latency of one ``dsh/postExecute`` (a Grep) sent at ready and the wall until the listing is
    verified (:func:`verified_wall`), both before quiescence is waited for. The sidecar is put in
    ``opened`` as soon as it runs (the caller closes it however the wait ends)."""
    t0 = time.perf_counter()
    server = Server(name, src, home, root)
    if opened is not None:
        opened.append(server)
    graph = server.ready()
    wall, cpu = time.perf_counter() - t0, cpu_s(server.pid)
    first_ms = server.post(CALLS[0]) if first_call else None
    verified = verified_wall(server, t0) if first_call else None
    quiet_cpu, quiet_wall = quiet_figures(server.pid, t0) if quiet else (cpu, wall)
    return server, {
        "first_call_ms": first_ms,
        "verified_wall_s": verified,
        "wall_s": wall,
        "cpu_s": cpu,
        "quiet_cpu_s": quiet_cpu,
        "quiet_wall_s": quiet_wall,
        "rss": rss_mib(server.pid),
        "symbols": graph.get("symbolFiles"),
        "truncated": graph.get("symbolsTruncated"),
        "cacheHits": graph.get("cacheHits"),
        "cacheSaved": graph.get("cacheSaved"),
        **content_figures(graph),
    }


def content_figures(graph: dict) -> dict:
    """What the content index's sync at the start did (``dsh/status``, read at ready: the sync
    is part of it): whether it was a full one (the stored listing fingerprint did not match: every
    row compared with its file's stat), the files it read and those it found unchanged."""
    content = graph.get("content") or {}
    return {
        "content_full": not content.get("fingerprint"),
        "content_read": content.get("read"),
        "content_unchanged": content.get("unchanged"),
        "content_cpu_s": content.get("cpuS"),
    }


def phase(server: Server, echo: StdioClient, seconds: float, churn: list[Path] | None, interval: float) -> dict:
    """Calls for ``seconds``: intent / no-op / echo in turn; with ``churn``, a file rewritten and
    notified every ``interval`` s."""
    intent: list[float] = []
    floor: list[float] = []
    machine: list[float] = []
    c0 = cpu_s(server.pid)
    t_end = time.monotonic() + seconds
    next_change = time.monotonic()
    changes = 0
    k = 0
    while time.monotonic() < t_end:
        if churn is not None and time.monotonic() >= next_change:
            target = churn[changes % len(churn)]
            with open(target, "a") as fh:
                fh.write(f"\n# churn {changes}\n")
            server.client.send(
                "workspace/didChangeWatchedFiles", {"changes": [{"uri": target.as_uri(), "type": 2}]}, notify=True
            )
            changes += 1
            next_change += interval
        k += 1
        intent.append(server.post(CALLS[k % len(CALLS)]))
        floor.append(server.post(FLOOR))
        t0 = time.perf_counter()
        echo.request("dsh/postExecute", {"k": k})
        machine.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.002)
    return {"intent": intent, "floor": floor, "echo": machine, "cpu": cpu_s(server.pid) - c0, "changes": changes}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--tree", type=Path, help="an existing synthetic tree (else one is made)")
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--phase", type=float, default=6.0, help="seconds of each quiet and churn phase")
    ap.add_argument("--interval", type=float, default=0.2, help="seconds between two file changes")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder (its tree, for --tree)")
    ap.add_argument(
        "--after-ready",
        type=float,
        default=0.0,
        help="instead of the churn: seconds of calls from each start's ready on (cold once, then --rounds warm)",
    )
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="dsh-churn-"))
    signal.signal(signal.SIGTERM, _terminated)  # a kill cleans up as Ctrl-C does
    opened: list[Server | StdioClient] = []
    try:
        return run(args, tmp, opened)
    finally:
        for closable in opened:
            closable.close()
        if args.keep:
            print(f"kept {tmp} (its tree: --tree {tmp / f'synthetic-{args.files}'})", flush=True)
        else:
            _remove(tmp)


#: How long the folder's removal is tried again, seconds: a closed sidecar's own worker
#: processes end a moment after it and may still write its home (a loaded machine: seconds).
REMOVE_S = 30.0


def _remove(tmp: Path) -> None:
    """Remove ``tmp``, again while something still writes in it, up to :data:`REMOVE_S`."""
    deadline = time.monotonic() + REMOVE_S
    shutil.rmtree(tmp, ignore_errors=True)
    while tmp.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
        shutil.rmtree(tmp, ignore_errors=True)


def _terminated(signum: int, _frame: object) -> None:
    raise SystemExit(128 + signum)


def run(args: argparse.Namespace, tmp: Path, opened: list[Server | StdioClient]) -> int:
    """The bench in ``tmp``; every sidecar and client it starts is put in ``opened`` (closed by
    the caller, however the run ends) until it is closed here."""
    root = args.tree
    if root is None:
        root = tmp / f"synthetic-{args.files}"
        print(f"making {args.files} files: {synthetic(root, args.files, with_content=True):.1f} s", flush=True)
    root = root.resolve()
    churn = sorted(root.glob("src/p000*/d0*/m*.py"))[:20]
    if not churn:  # a tree of another bench's layout (coldstart's): nothing this bench knows how to change
        print(f"file_churn: {root} has no src/p000*/d0*/m*.py to change (a tree this bench made, with --keep)")
        return 2
    trees: list[tuple[str, Path | None]] = [("this tree", None)]
    if args.baseline_src is not None:
        trees.append(("baseline", args.baseline_src.resolve()))
    print(f"tree {root} ({args.files} files); load {load()}", flush=True)
    if args.after_ready:
        return after_ready(args, root, trees, tmp, opened)

    servers: dict[str, Server] = {}
    homes = {name: tmp / f"home-{i}" for i, (name, _) in enumerate(trees)}
    print("\n== ready (process CPU to graph.ready; RSS then) ==")
    for temp in ("cold", "warm"):
        for name, src in trees:
            server, fig = ready_figures(name, src, homes[name], root, opened)
            print(
                f"{name:10} {temp}: CPU {fig['cpu_s']:6.2f} s  wall {fig['wall_s']:5.1f} s  RSS {fig['rss']:5.0f} MiB  "
                f"symbols {fig['symbols']} truncated {fig['truncated']} cacheHits {fig['cacheHits']} "
                f"cacheSaved {fig['cacheSaved']}  load {load()}",
                flush=True,
            )
            if temp == "cold":
                servers[name] = server
            else:
                server.close()
                opened.remove(server)
    echo = StdioClient([sys.executable, "-c", ECHO])
    opened.append(echo)
    for _ in range(20):  # started and warm before it is a floor
        echo.request("dsh/postExecute", {})
    results: dict[str, dict[str, list]] = {name: {} for name, _ in trees}
    tails: dict[str, list[float]] = {name: [] for name, _ in trees}  # wall s to quiescence after a phase
    # a quiet phase before any change warms each server up; it is not the per-call floor (the
    # first calls after ready cost more, so a per-call CPU taken there made the CPU per change
    # come out negative): that comes from the quiet phases interleaved with the churn ones
    for s in servers.values():
        phase(s, echo, args.phase, None, args.interval)
    before = {name: s.status().get("changes") for name, s in servers.items()}
    cpu0 = {name: cpu_s(s.pid) for name, s in servers.items()}
    print(f"\n== churn: a file every {args.interval * 1000:.0f} ms, {args.rounds} rounds x {args.phase:.0f} s ==")
    for r in range(args.rounds):
        order = trees if r % 2 == 0 else list(reversed(trees))
        for name, _ in order:
            for kind in ("quiet", "churn") if r % 2 == 0 else ("churn", "quiet"):
                out = phase(servers[name], echo, args.phase, churn if kind == "churn" else None, args.interval)
                acc = results[name].setdefault(kind, [])
                acc.append(out)
                # a churn phase's work goes on after it: the next phase (of either server) starts
                # once this server is quiescent, so a backlog of changes is never the other's load
                settled = time.perf_counter()
                quiet_figures(servers[name].pid, settled, timeout_s=60.0)
                tails[name].append(time.perf_counter() - settled - QUIET_WINDOW_S)
        print(f"round {r + 1} done; load {load()}", flush=True)
    time.sleep(args.phase)  # the last spaced re-preparation, for the totals
    for name, s in servers.items():
        rss = rss_mib(s.pid)
        total_cpu = cpu_s(s.pid) - cpu0[name]
        after = s.status().get("changes")
        res = results[name]

        def cat(kind: str, key: str, res: dict[str, list] = res) -> list[float]:
            return [x for out in res[kind] for x in out[key]]

        calls = 2 * sum(len(o["intent"]) for kind in res for o in res[kind])
        # the CPU one call costs, from this run's quiet phases (interleaved with the churn ones;
        # the median, as the quiet phase that follows a churn phase may still carry its work):
        # what the calls of the rounds cost, taken out of the process CPU to leave the changes'
        per_call = statistics.median(o["cpu"] / max(1, 2 * len(o["intent"])) for o in res["quiet"])
        changes = sum(o["changes"] for o in res["churn"])
        per_change = (total_cpu - per_call * calls) / max(1, changes) * 1000
        print(
            f"\n{name}: RSS after churn {rss:.0f} MiB; {changes} changes; quiescent after a phase in "
            f"{statistics.median(tails[name]):.1f} s (median; max {max(tails[name]):.1f} s)"
        )
        for kind in ("quiet", "churn"):
            it, fl, ec = cat(kind, "intent"), cat(kind, "floor"), cat(kind, "echo")
            print(
                f"  {kind:5}: intent p50 {pct(it, 50):6.2f} p99 {pct(it, 99):7.2f} | no-op p50 {pct(fl, 50):6.2f} "
                f"p99 {pct(fl, 99):7.2f} | echo floor p50 {pct(ec, 50):5.2f} p99 {pct(ec, 99):6.2f} ms  (n={len(it)})"
            )
        it_c, it_q, ec_c = cat("churn", "intent"), cat("quiet", "intent"), cat("churn", "echo")
        print(
            f"  intent p99 during churn over the echo floor: {pct(it_c, 99) - pct(ec_c, 99):+.2f} ms; "
            f"over the quiet phase: {pct(it_c, 99) - pct(it_q, 99):+.2f} ms; max {max(it_c):.1f} ms "
            f"(goal <= +2 ms)"
        )
        print(
            f"  process CPU per change, all of it (the rounds' CPU minus their calls' at the per-call CPU of the "
            f"quiet phases between them, median: "
            f"{per_call * 1000:.2f} ms): {per_change:.1f} ms"
        )
        if isinstance(before.get(name), dict) and isinstance(after, dict):
            b, a = before[name], after
            events = max(1, a["events"] - b["events"])
            batches = max(1, a["batches"] - b["batches"])
            graph_ms = (a["graphCpuMs"] - b["graphCpuMs"]) / batches
            content_ms = (a["contentCpuMs"] - b["contentCpuMs"]) / max(1, a["contentSyncs"] - b["contentSyncs"])
            targets_ms = (a["targetsCpuMs"] - b["targetsCpuMs"]) / events
            print(
                f"  workspace side per batch (its threads' CPU): graph {graph_ms:.1f} ms + content sync "
                f"{content_ms:.1f} ms; {a['batches'] - b['batches']} batches for {changes} changes "
                f"(goal <= 50 ms a change)"
            )
            print(
                f"  the suggester's re-preparation: {targets_ms:.0f} ms CPU per event x "
                f"{a['events'] - b['events']} events = {(a['targetsCpuMs'] - b['targetsCpuMs']) / max(1, changes):.0f} ms"
                f" a change"
            )
    print(f"\nload {load()}")
    return 0  # the sidecars and the echo are closed by main()


def after_ready(
    args: argparse.Namespace, root: Path, trees: list[tuple[str, Path | None]], tmp: Path, opened: list
) -> int:
    """``--after-ready``: what a call costs in the first seconds after ready, while the work
    started at ready (the missing-path tables: built, or taken back from the kept file) runs. Each
    tree starts once cold (a fresh home), then ``--rounds`` times warm on that home (an unchanged
    tree), the trees alternated; from ``graph.ready`` on, for ``--after-ready`` seconds, the no-op
    and a search-class call alternate with the echo (the machine's floor). Printed per tree and
    temperature: p50/p99/max of each and the no-op's p99 over the echo's."""
    echo = StdioClient([sys.executable, "-c", ECHO])
    opened.append(echo)
    for _ in range(20):
        echo.request("dsh/postExecute", {})
    homes = {name: tmp / f"home-{i}" for i, (name, _) in enumerate(trees)}
    out: dict[tuple[str, str], list[dict]] = {}
    print(f"\n== calls for {args.after_ready:.1f} s from ready on, cold once then {args.rounds} warm rounds ==")
    for r in range(args.rounds + 1):
        temp = "cold" if r == 0 else "warm"
        for name, src in trees if r % 2 == 0 else list(reversed(trees)):
            server = Server(name, src, homes[name], root)
            opened.append(server)
            server.ready()
            got = phase(server, echo, args.after_ready, None, args.interval)
            out.setdefault((name, temp), []).append(got)
            quiet_figures(server.pid, time.perf_counter(), timeout_s=60.0)
            server.close()
            opened.remove(server)
            print(f"{name:10} {temp}: {len(got['floor'])} no-op calls; load {load()}", flush=True)
    for (name, temp), phases in out.items():
        it = [x for o in phases for x in o["intent"]]
        fl = [x for o in phases for x in o["floor"]]
        ec = [x for o in phases for x in o["echo"]]
        print(
            f"{name:10} {temp}: no-op p50 {pct(fl, 50):6.2f} p99 {pct(fl, 99):7.2f} max {max(fl):7.1f} | intent p50 "
            f"{pct(it, 50):6.2f} p99 {pct(it, 99):7.2f} max {max(it):7.1f} | echo p50 {pct(ec, 50):5.2f} p99 "
            f"{pct(ec, 99):6.2f} ms | no-op p99 over the echo's {pct(fl, 99) - pct(ec, 99):+.2f} ms (n={len(fl)})"
        )
    print(f"\nload {load()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
