"""MCP start-up: ``dsh-search mcp`` against a trivial MCP server on the same SDK, spawned in
turn (echo, this tree, baseline, then the next round in another order) over ``--runs`` rounds.

The trivial server is an ``MCPServer`` of the same official SDK with one async
``post_tool_use`` tool of the same argument shape, answering ``{}``; the sidecar runs
``python -m dsh_sidecar mcp --config FILE --workspace WS`` (the suggester on, ``sectionMode``
off: the Claude Code plugin's ``sidecar.yml``) on a git-initialised copy of the ``pyproj``
fixture, with a fresh ``DSH_HOME`` for every spawn and one cache directory per server
(``DSH_CACHE_DIR``: the workspace indexes, warm after the untimed first spawn, as they are for a
repository the user opened before; this machine's own cache is never read). The client is a plain newline-delimited
JSON-RPC writer and reader on the process's pipes (no client SDK on the timed path) and talks
as an MCP client does at start-up: ``initialize``, then ``notifications/initialized`` with
``tools/list`` at once (what a client such as Claude Code waits for before its session
starts), then, once the tools are listed, a ``tools/call`` of ``post_tool_use`` for a
``Grep __version__`` (the hook a harness calls after the agent's first tool call: here at once,
where a real session has a model turn before it). Timed from the spawn: the ``initialize``
reply, the ``tools/list`` reply (**ready**: the server's tools are known) and the **first
hook answer** (the ``post_tool_use`` reply: for the sidecar, its suggester's first note, which
needs the workspace listed); also the server process's CPU seconds at each (``/proc``, less
sensitive to the machine's load than the wall times). Printed per server: medians and minimums,
and the per-round ratios to the trivial server of the same round (median and range). Goal:
≤ 1.2× the trivial server, shown for both the ready and the first hook answer.

``--baseline-src DIR`` (another commit's source tree, e.g. ``git archive main | tar -x -C DIR``)
adds that commit's sidecar to the rotation, run from DIR through ``PYTHONPATH``.

**Bytecode.** Under ``PYTHONDONTWRITEBYTECODE`` a module whose ``.pyc`` is missing or older
than its source is compiled from source at every start (a checkout or an edit makes it stale):
the header counts such modules for each tree measured; compile both first
(``python -m compileall -q server protocol packs``, and the same in DIR) for a fair pair.

Usage: ``python bench/mcp_start.py [--runs 9] [--baseline-src DIR]``.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURE = HERE.parent / "tests" / "data" / "workspaces" / "pyproj"

TRIVIAL = textwrap.dedent(
    """
    from typing import Any
    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("trivial", log_level="WARNING")

    @server.tool(description="echo")
    async def post_tool_use(tool_name: Any = None, tool_input: Any = None, session_id: Any = None,
                            tool_response: Any = None, tool_use_id: Any = None) -> dict[str, Any]:
        return {}

    anyio.run(server.run_stdio_async)
    """
)

CALL = {"tool_name": "Grep", "tool_input": {"pattern": "__version__"}, "session_id": "bench"}


def load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 1)[0]


def stale_bytecode(root: Path) -> tuple[int, int]:
    """``(modules without an up-to-date .pyc, modules)`` of ``root``'s ``server``, ``protocol``
    and ``packs`` trees."""
    sources = [f for d in ("server", "protocol", "packs") for f in (root / d).rglob("*.py")]
    stale = 0
    for source in sources:
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not cached.exists() or cached.stat().st_mtime < source.stat().st_mtime:
            stale += 1
    return stale, len(sources)


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def spawn_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float, float, float, float]:
    """``(initialize s, ready s, first hook answer s, CPU s when ready, CPU s at the first hook
    answer)`` of one spawn."""
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        limit=1 << 22,
    )
    assert proc.stdin is not None and proc.stdout is not None

    def send(msg: dict) -> None:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(msg).encode() + b"\n")

    async def reply(msg_id: int) -> dict:
        assert proc.stdout is not None
        while True:
            line = await asyncio.wait_for(proc.stdout.readline(), 120)
            if not line:
                raise EOFError("the server closed stdout")
            msg = json.loads(line)
            if msg.get("id") == msg_id and "method" not in msg:
                return msg

    try:
        send(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "bench", "version": "0"},
                },
            }
        )
        init = await reply(1)
        t_init = time.perf_counter() - t0
        assert "result" in init, init
        send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        listed = await reply(2)
        t_ready = time.perf_counter() - t0
        cpu_ready = cpu_s(proc.pid)
        assert any(t["name"] == "post_tool_use" or t["name"] == "search" for t in listed["result"]["tools"]), listed
        send(
            {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "post_tool_use", "arguments": CALL}}
        )
        first = await reply(3)
        t_first = time.perf_counter() - t0
        cpu = cpu_s(proc.pid)
        assert "result" in first and not first["result"].get("isError"), first
    finally:
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
    return t_init, t_ready, t_first, cpu_ready, cpu


def workspace(tmp: Path) -> Path:
    ws = tmp / "pyproj"
    shutil.copytree(FIXTURE, ws)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=ws, check=True, stdout=subprocess.DEVNULL)
    return ws


async def main_async(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="dsh-mcp-start-"))
    ws = workspace(tmp)
    cfg = tmp / "sidecar.json"
    cfg.write_text(json.dumps({"suggester": {"enabled": True, "sectionMode": "off"}}))
    trivial = tmp / "trivial_server.py"
    trivial.write_text(TRIVIAL)
    base_env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k != "SEARXNG_BASE_URL"}
    base_env.pop("CLAUDE_PROJECT_DIR", None)
    servers: dict[str, tuple[list[str], dict[str, str]]] = {
        "trivial": ([sys.executable, str(trivial)], dict(base_env)),
        "this tree": (
            [sys.executable, "-m", "dsh_sidecar", "mcp", "--config", str(cfg), "--workspace", str(ws)],
            dict(base_env),
        ),
    }
    if args.baseline_src is not None:
        src = args.baseline_src.resolve()
        env = dict(base_env, PYTHONPATH=os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs")))
        servers["baseline"] = (servers["this tree"][0], env)
    names = list(servers)
    print(f"MCP start-up, {args.runs} rounds, servers {names}; load {load()}", flush=True)
    trees = {"this tree": HERE.parent, **({"baseline": args.baseline_src.resolve()} if args.baseline_src else {})}
    counts = ", ".join(f"{name} {'%d of %d' % stale_bytecode(root)}" for name, root in trees.items())
    dont = "PYTHONDONTWRITEBYTECODE set: compiled at every start" if sys.flags.dont_write_bytecode else "written once"
    print(f"modules without up-to-date bytecode: {counts} ({dont})", flush=True)
    for name in names:  # a first spawn each, not timed: the page cache warm for all alike
        cmd, env = servers[name]
        await spawn_once(cmd, dict(env, DSH_HOME=str(tmp / f"warm-{name}"), DSH_CACHE_DIR=str(tmp / f"cache-{name}")))
    res: dict[str, list[tuple[float, ...]]] = {n: [] for n in names}
    for rnd in range(args.runs):
        order = names[rnd % len(names) :] + names[: rnd % len(names)]
        for name in order:
            cmd, env = servers[name]
            home = {"DSH_HOME": str(tmp / f"home-{name}-{rnd}"), "DSH_CACHE_DIR": str(tmp / f"cache-{name}")}
            res[name].append(await spawn_once(cmd, dict(env, **home)))
        print(f"round {rnd + 1}: load {load()}", flush=True)
    triv = res["trivial"]
    for name in names:
        rows = res[name]
        ini, rdy, fst, cpu_r, cpu_f = ([r[i] for r in rows] for i in range(5))
        line = (
            f"{name:10} initialize median {statistics.median(ini) * 1000:5.0f} ms | "
            f"ready (tools/list) median {statistics.median(rdy) * 1000:5.0f} ms (min {min(rdy) * 1000:5.0f}), "
            f"CPU {statistics.median(cpu_r):.2f} s | "
            f"first hook answer median {statistics.median(fst) * 1000:5.0f} ms (min {min(fst) * 1000:5.0f}), "
            f"CPU {statistics.median(cpu_f):.2f} s"
        )
        if name != "trivial":

            def ratios(i: int, rows: list[tuple[float, ...]] = rows) -> str:
                r = [a[i] / t[i] for a, t in zip(rows, triv, strict=True) if t[i] > 0]
                met = "met" if statistics.median(r) <= 1.2 else "NOT met"
                return f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f}; goal <= 1.2 {met})"

            line += (
                f"\n{'':10} x trivial, per round: initialize {ratios(0)}, ready {ratios(1)}, "
                f"first hook answer {ratios(2)}; CPU ready {ratios(3)}, CPU first hook answer {ratios(4)}"
            )
        print(line)
    print(f"load {load()}")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
