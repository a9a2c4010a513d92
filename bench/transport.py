"""Transport benchmark: the sidecar's ``dsh/postExecute`` against a pygls+asyncio echo given
the same nested params, side by side in one run (issue 16, items 5 and 9).

Servers: raw Python framing (the floor), the **echo** (stock pygls ``start_io``, asyncio,
answering ``dsh/postExecute`` with an empty ``additionalContexts``), and the sidecar on the
``pyproj`` fixture workspace. Two paths, each sent to the echo and to the sidecar with the same
params: **silent** (a grep the suggester ignores) and **intent** (a grep for ``def main``
that matches the Symbol intent: a note, a ledger line and a ``window/logMessage``; a fresh
``sessionId`` per call so every call matches). The intent path runs with ``logMessages: all``
(the default) and ``none``.

Prints per row: sequential p50/p99 round trip (ms) and pipelined throughput (req/s,
``--window`` in flight), then each sidecar path's throughput ratio to the echo on the same
params (goals: intent >= 1.5x, silent >= 2x).
Usage: ``python bench/transport.py [--n 2000] [--window 64]``.
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


def measure(client: StdioClient, method: str, params_of, n: int, window: int) -> tuple[float, float, float]:
    """``params_of(i)`` gives the i-th call's params."""
    for i in range(50):  # warm up
        client.request(method, params_of(-1 - i))
    lat = []
    for i in range(n):
        params = params_of(i)
        t0 = time.perf_counter()
        reply = client.request(method, params)
        lat.append((time.perf_counter() - t0) * 1000)
    assert "result" in reply or "error" in reply
    t0 = time.perf_counter()
    sent = done = 0
    pending: set[int] = set()
    while done < n:
        while sent < n and len(pending) < window:
            pending.add(client.send(method, params_of(n + sent)))  # type: ignore[arg-type]
            sent += 1
        msg = client.read()
        if msg.get("id") in pending:
            pending.discard(msg["id"])
            done += 1
    rps = n / (time.perf_counter() - t0)
    return statistics.median(lat), percentile(lat, 0.99), rps


def silent(i: int) -> dict:
    return {"sessionId": "bench", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "frobnicate"}}}


def intent(i: int) -> dict:
    return {"sessionId": f"bench-{i}", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "def main"}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--window", type=int, default=64)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="dsh-bench-"))
    (tmp / "raw.py").write_text(RAW_ECHO)
    (tmp / "stock.py").write_text(STOCK_PYGLS)
    ws = Path(__file__).resolve().parents[1] / "tests" / "data" / "workspaces" / "pyproj"
    env = dict(os.environ, DSH_HOME=str(tmp / "home"))

    def init(options: dict) -> dict:
        return {"processId": None, "rootUri": ws.as_uri(), "capabilities": {}, "initializationOptions": options}

    on = {"suggester": {"enabled": True}}
    quiet = {"suggester": {"enabled": True}, "logMessages": "none"}
    echo = [sys.executable, str(tmp / "stock.py")]
    rows = []
    for label, cmd, options, method, params_of in (
        ("raw Python framing (floor), no-op", [sys.executable, str(tmp / "raw.py")], None, "bench/noop", silent),
        ("echo pygls+asyncio, silent params", echo, {}, "dsh/postExecute", silent),
        ("sidecar dsh/postExecute silent", sidecar_cmd(), on, "dsh/postExecute", silent),
        ("echo pygls+asyncio, intent params", echo, {}, "dsh/postExecute", intent),
        ("sidecar dsh/postExecute intent (logMessages all)", sidecar_cmd(), on, "dsh/postExecute", intent),
        ("sidecar dsh/postExecute intent (logMessages none)", sidecar_cmd(), quiet, "dsh/postExecute", intent),
    ):
        client = StdioClient(cmd, env)
        if options is not None:
            client.request("initialize", init(options))
            client.send("initialized", {}, notify=True)
            if cmd != echo:
                time.sleep(1.0)  # the workspace graph builds in the background
        p50, p99, rps = measure(client, method, params_of, args.n, args.window)
        client.close()
        rows.append((label, p50, p99, rps))
    width = max(len(r[0]) for r in rows)
    print(f"transport benchmark: n={args.n} sequential round trips, pipelined window={args.window}")
    print(f"{'server / method':<{width}}  {'p50 ms':>8}  {'p99 ms':>8}  {'req/s':>9}")
    for label, p50, p99, rps in rows:
        print(f"{label:<{width}}  {p50:>8.3f}  {p99:>8.3f}  {rps:>9.0f}")
    for side, base, goal in ((2, 1, 2.0), (4, 3, 1.5), (5, 3, 1.5)):
        ratio = rows[side][3] / rows[base][3]
        print(
            f"{rows[side][0]} vs {rows[base][0]}: throughput x{ratio:.2f}, p50 x{rows[side][1] / rows[base][1]:.2f}"
            f"   goal >= {goal}x: {'met' if ratio >= goal else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
