"""Transport benchmark: round trip of the sidecar's ``dsh/postExecute`` and of a no-op
method, against the floors of DESIGN.md (raw Python framing, stock pygls ``start_io``),
all side by side in one run.

Prints, per server: sequential p50/p99 round trip (ms) and pipelined throughput (req/s,
``--window`` requests in flight). Usage: ``python bench/transport.py [--n 2000] [--window 64]``.
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
    server.start_io()
    """
)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def measure(client: StdioClient, method: str, params, n: int, window: int) -> tuple[float, float, float]:
    for _ in range(50):  # warm up
        client.request(method, params)
    lat = []
    for _ in range(n):
        t0 = time.perf_counter()
        reply = client.request(method, params)
        lat.append((time.perf_counter() - t0) * 1000)
    assert "result" in reply or "error" in reply
    t0 = time.perf_counter()
    sent = done = 0
    pending: set[int] = set()
    while done < n:
        while sent < n and len(pending) < window:
            pending.add(client.send(method, params))  # type: ignore[arg-type]
            sent += 1
        msg = client.read()
        if msg.get("id") in pending:
            pending.discard(msg["id"])
            done += 1
    rps = n / (time.perf_counter() - t0)
    return statistics.median(lat), percentile(lat, 0.99), rps


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
    post = {"sessionId": "bench", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "frobnicate"}}}
    init = {
        "processId": None,
        "rootUri": ws.as_uri(),
        "capabilities": {},
        "initializationOptions": {"suggester": {"enabled": True}},
    }
    rows = []
    for label, cmd, method, params in (
        ("raw Python framing (floor), no-op", [sys.executable, str(tmp / "raw.py")], "bench/noop", {}),
        ("stock pygls start_io, no-op", [sys.executable, str(tmp / "stock.py")], "bench/noop", {}),
        ("sidecar, no-op (unknown method -> -32601)", sidecar_cmd(), "bench/noop", {}),
        ("sidecar, dsh/status", sidecar_cmd(), "dsh/status", {}),
        ("sidecar, dsh/postExecute (silent grep)", sidecar_cmd(), "dsh/postExecute", post),
    ):
        client = StdioClient(cmd, env)
        if label.startswith(("stock", "sidecar")):
            client.request("initialize", init)
            client.send("initialized", {}, notify=True)
        p50, p99, rps = measure(client, method, params, args.n, args.window)
        client.close()
        rows.append((label, p50, p99, rps))
    width = max(len(r[0]) for r in rows)
    print(f"transport benchmark: n={args.n} sequential round trips, pipelined window={args.window}")
    print(f"{'server / method':<{width}}  {'p50 ms':>8}  {'p99 ms':>8}  {'req/s':>9}")
    for label, p50, p99, rps in rows:
        print(f"{label:<{width}}  {p50:>8.3f}  {p99:>8.3f}  {rps:>9.0f}")
    base = rows[1]
    side = rows[4]
    print(f"ratio postExecute/stock-pygls no-op: p50 x{side[1] / base[1]:.2f}, throughput x{side[3] / base[3]:.2f}")


if __name__ == "__main__":
    main()
