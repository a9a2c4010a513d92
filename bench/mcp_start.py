"""MCP start-up as Claude Code meets it: ``dsh-search mcp`` (the Claude Code plugin's command line
and ``sidecar.yml``) against a trivial MCP server on the same SDK, spawned in turn (trivial,
this tree, baseline, then the next round in another order) over ``--runs`` rounds.

**What a harness sees** (traced from Claude Code 2.1.328 driving the plugin headless against a
loopback model): it spawns the server in the project folder and speaks the 2026-07-28 protocol
(no ``initialize``): a ``server/discover`` probe, ``subscriptions/listen`` (answered with a
``notifications/subscriptions/acknowledged``), ``server/discover`` again, then
``prompts/list``, ``resources/list`` and ``tools/list`` at once; its session starts once all
three are answered (**ready**). Its **first** ``tools/call`` is the plugin's
``UserPromptSubmit`` hook, ``session_start`` with the prompt (about 0.3 s after ready in that
trace; here at once, the harder case); the ``post_tool_use`` hook (the suggester's note on the
agent's first search) comes only after a model turn. The bench sends the same messages (the
same ``_meta``) and times from the spawn, per flow:

* ``hooks``: ``session_start`` (**first answer**), then at once ``post_tool_use`` for a ``Bash
  grep -rn __version__ tests`` (**first note**: the suggester's first answer, a note or its
  abstention; the notes given are counted);
* ``where_is``: ``where_is`` of a free-text query as the first call (the suggester on demand: it
  answers from the whole workspace index, so it waits for it);
* ``web_search``: ``web_search`` as the first call, against a loopback SearXNG replaying a
  recorded answer (``SEARXNG_BASE_URL``, as the plugin's ``.mcp.json`` passes it).

The trivial server is an ``MCPServer`` of the same SDK with the same tool names: the hooks and
``where_is`` answer at once; its ``web_search`` imports httpx, sends the same GET and returns
the results. The sidecar runs with a fresh ``HOME`` and
``DSH_HOME`` every spawn and one ``DSH_CACHE_DIR`` per server (the workspace indexes warm after
an untimed first spawn, as for a repository opened before; this machine's own cache and config
are never read), on a git-initialised copy of the ``pyproj`` fixture. Also the server's CPU
seconds at ready and at the first answer (``/proc``, less sensitive to the load than the wall
times). Printed per flow and server: medians and minimums, and the per-round ratios to the
trivial server of the same round (median and range) with the goal (≤ 1.2×); the load beside
each round.

``--baseline-src DIR`` (another commit's source tree, e.g. ``git archive main | tar -x -C DIR``)
adds that commit's sidecar to the rotation, run from DIR through ``PYTHONPATH``.

**Bytecode.** Under ``PYTHONDONTWRITEBYTECODE`` a module whose ``.pyc`` is missing or older
than its source is compiled from source at every start (a checkout or an edit makes it stale):
the header counts such modules for each tree measured; compile both first
(``python -m compileall -q server protocol packs``, and the same in DIR) for a fair pair.

Usage: ``python bench/mcp_start.py [--runs 9] [--flows hooks,where_is,web_search] [--baseline-src DIR]``.
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
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests"))
from support.mockprovider import MockProvider, case_reply  # noqa: E402

FIXTURE = REPO / "tests" / "data" / "workspaces" / "pyproj"
PLUGIN_CONFIG = REPO / "harness-adapters" / "claude-code" / "sidecar.yml"
FLOWS = ("hooks", "where_is", "web_search")

TRIVIAL = textwrap.dedent(
    """
    import os
    from typing import Any
    import anyio
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("trivial", log_level="WARNING")

    @server.tool(description="hook")
    async def session_start(session_id: Any = None, hook_event_name: Any = None, source: Any = None,
                            prompt: Any = None) -> dict[str, Any]:
        return {}

    @server.tool(description="hook")
    async def post_tool_use(tool_name: Any = None, tool_input: Any = None, session_id: Any = None,
                            tool_response: Any = None, tool_use_id: Any = None,
                            hook_event_name: Any = None) -> dict[str, Any]:
        return {}

    @server.tool(description="where")
    async def where_is(query: str | None = None, tool_name: str | None = None,
                       tool_input: Any = None) -> dict[str, Any]:
        return {"intent": None, "targets": []}

    @server.tool(description="search")
    async def web_search(query: str, max_results: int = 5) -> dict[str, Any]:
        import httpx  # as the sidecar, imported for the first search

        async with httpx.AsyncClient() as client:
            r = await client.get(os.environ["SEARXNG_BASE_URL"] + "/search", params={"q": query, "format": "json"})
        rows = r.json().get("results", [])[:max_results]
        return {"sources": [{"url": x.get("url"), "title": x.get("title")} for x in rows]}

    anyio.run(server.run_stdio_async)
    """
)

#: What Claude Code 2.1.328 puts in every request's ``_meta``.
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {
        "name": "claude-code",
        "title": "Claude Code",
        "version": "2.1.328",
        "description": "Anthropic's agentic coding tool",
        "websiteUrl": "https://claude.com/claude-code",
    },
    "io.modelcontextprotocol/clientCapabilities": {
        "roots": {"listChanged": True},
        "elicitation": {"form": {}, "url": {}},
    },
}
SESSION = "5d02c739-852a-4240-b53b-abf901b83dde"
PROMPT = "Find where the package version is defined."
GREP = {
    "tool_name": "Bash",
    "tool_input": json.dumps({"command": "grep -rn __version__ tests", "description": "find the version"}),
    "session_id": SESSION,
    "tool_use_id": "toolu_723c1ac3abe843b38544f5ec",
}
FIRST_CALL = {
    "hooks": ("session_start", {"session_id": SESSION, "hook_event_name": "UserPromptSubmit", "prompt": PROMPT}),
    "where_is": ("where_is", {"query": "package version"}),
    "web_search": ("web_search", {"query": "bike chain cleaning"}),
}


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


class Spawn:
    """One server process spoken to as Claude Code does (newline-delimited JSON-RPC on its pipes:
    no client SDK on the timed path)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.waiting: dict[Any, asyncio.Future[dict]] = {}
        self.acknowledged: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while line := await self.proc.stdout.readline():
            msg = json.loads(line)
            if msg.get("method") == "notifications/subscriptions/acknowledged" and not self.acknowledged.done():
                self.acknowledged.set_result(msg)
            elif "method" not in msg and msg.get("id") in self.waiting:
                self.waiting.pop(msg["id"]).set_result(msg)
        for fut in self.waiting.values():
            fut.set_exception(EOFError("the server closed stdout"))

    def request(self, msg_id: Any, method: str, params: dict | None = None) -> asyncio.Future[dict]:
        assert self.proc.stdin is not None
        fut: asyncio.Future[dict] = asyncio.get_running_loop().create_future()
        self.waiting[msg_id] = fut
        body = {"method": method, "jsonrpc": "2.0", "id": msg_id, "params": {**(params or {}), "_meta": META}}
        self.proc.stdin.write(json.dumps(body).encode() + b"\n")
        return fut

    async def call(self, msg_id: int, name: str, arguments: dict) -> dict:
        msg = await asyncio.wait_for(self.request(msg_id, "tools/call", {"name": name, "arguments": arguments}), 120)
        assert "result" in msg and not msg["result"].get("isError"), msg
        return msg["result"]


async def spawn_once(cmd: list[str], env: dict[str, str], cwd: Path, flow: str) -> dict[str, Any]:
    """Timings (s from the spawn) and CPU seconds of one spawn and its ``flow``."""
    t0 = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *cmd,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        limit=1 << 22,
    )
    s = Spawn(proc)
    out: dict[str, Any] = {}
    try:
        probe = await asyncio.wait_for(s.request("server-discover-probe-1", "server/discover"), 120)
        assert "result" in probe, probe
        out["discover"] = time.perf_counter() - t0
        assert proc.stdin is not None
        listen = {"notifications": {"toolsListChanged": True, "promptsListChanged": True, "resourcesListChanged": True}}
        s.request("listen:0", "subscriptions/listen", listen)
        await asyncio.wait_for(s.acknowledged, 120)
        await asyncio.wait_for(s.request(0, "server/discover"), 120)
        lists = [s.request(i, m) for i, m in enumerate(("prompts/list", "resources/list", "tools/list"), 1)]
        listed = (await asyncio.wait_for(asyncio.gather(*lists), 120))[2]
        out["ready"] = time.perf_counter() - t0
        out["cpu_ready"] = cpu_s(proc.pid)
        assert any(t["name"] == "web_search" for t in listed["result"]["tools"]), listed
        name, arguments = FIRST_CALL[flow]
        first = await s.call(4, name, arguments)
        out["first"] = time.perf_counter() - t0
        out["cpu_first"] = cpu_s(proc.pid)
        if flow == "web_search":
            assert first["structuredContent"]["sources"], first
        if flow == "hooks":
            note = await s.call(5, "post_tool_use", GREP)
            out["note"] = time.perf_counter() - t0
            out["noted"] = "additionalContext" in json.dumps(note.get("structuredContent") or {})
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 20)
        except TimeoutError:
            proc.kill()
            await proc.wait()
        await s.reader
    return out


def workspace(tmp: Path) -> Path:
    ws = tmp / "pyproj"
    shutil.copytree(FIXTURE, ws)
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=ws, check=True, stdout=subprocess.DEVNULL)
    return ws


def ratio_text(ours: list[dict], triv: list[dict], key: str) -> str:
    r = [a[key] / t[key] for a, t in zip(ours, triv, strict=True) if t.get(key)]
    met = "met" if statistics.median(r) <= 1.2 else "NOT met"
    return f"{statistics.median(r):.2f} ({min(r):.2f}-{max(r):.2f}; goal <= 1.2 {met})"


def report(flow: str, res: dict[str, list[dict]]) -> None:
    def ms(rows: list[dict], key: str) -> str:
        xs = [r[key] * 1000 for r in rows]
        return f"{statistics.median(xs):5.0f} ms (min {min(xs):5.0f})"

    first = {"hooks": "first answer (session_start)", "where_is": "first answer (where_is)"}.get(
        flow, "first answer (web_search)"
    )
    triv = res["trivial"]
    print(f"flow {flow}:")
    for name, rows in res.items():
        line = (
            f"  {name:10} ready median {ms(rows, 'ready')}, CPU {statistics.median(r['cpu_ready'] for r in rows):.2f} s"
            f" | {first} median {ms(rows, 'first')}, CPU {statistics.median(r['cpu_first'] for r in rows):.2f} s"
        )
        if flow == "hooks":
            line += f" | first note (post_tool_use) median {ms(rows, 'note')}, notes {sum(r['noted'] for r in rows)}/{len(rows)}"
        if name != "trivial":
            line += f"\n  {'':10} x trivial, per round: ready {ratio_text(rows, triv, 'ready')}, {first.split(' (')[0]} {ratio_text(rows, triv, 'first')}"
            if flow == "hooks":
                line += f", first note {ratio_text(rows, triv, 'note')}"
            line += f"; CPU at the first answer {ratio_text(rows, triv, 'cpu_first')}"
        print(line)


async def main_async(args: argparse.Namespace) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="dsh-mcp-start-"))
    ws = workspace(tmp)
    trivial = tmp / "trivial_server.py"
    trivial.write_text(TRIVIAL)
    searx = MockProvider()
    searx.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    base_env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith("_API_KEY") and not k.startswith(("DSH_", "XDG_")) and k != "SEARXNG_BASE_URL"
    }
    base_env.update(SEARXNG_BASE_URL=searx.url, CLAUDE_PROJECT_DIR=str(ws))
    sidecar = [sys.executable, "-m", "dsh_sidecar", "mcp", "--config", str(PLUGIN_CONFIG)]
    servers: dict[str, tuple[list[str], dict[str, str]]] = {
        "trivial": ([sys.executable, str(trivial)], dict(base_env)),
        "this tree": (sidecar, dict(base_env)),
    }
    if args.baseline_src is not None:
        src = args.baseline_src.resolve()
        env = dict(base_env, PYTHONPATH=os.pathsep.join(str(src / d) for d in ("server", "protocol", "packs")))
        servers["baseline"] = (sidecar, env)
    names = list(servers)
    flows = args.flows.split(",")
    print(
        f"MCP start-up as Claude Code 2.1.328 speaks it, {args.runs} rounds, flows {flows}, servers {names}; load {load()}"
    )
    trees = {"this tree": REPO, **({"baseline": args.baseline_src.resolve()} if args.baseline_src else {})}
    counts = ", ".join(f"{name} {'%d of %d' % stale_bytecode(root)}" for name, root in trees.items())
    dont = "PYTHONDONTWRITEBYTECODE set: compiled at every start" if sys.flags.dont_write_bytecode else "written once"
    print(f"modules without up-to-date bytecode: {counts} ({dont})", flush=True)

    def env_of(name: str, tag: str) -> dict[str, str]:
        home = tmp / f"home-{name}-{tag}"
        (home / "dsh").mkdir(parents=True)
        return dict(
            servers[name][1], HOME=str(home), DSH_HOME=str(home / "dsh"), DSH_CACHE_DIR=str(tmp / f"cache-{name}")
        )

    for name in names:  # a first spawn each, not timed: the page cache and the workspace indexes warm
        await spawn_once(servers[name][0], env_of(name, "warm"), ws, "hooks")
    res: dict[str, dict[str, list[dict]]] = {f: {n: [] for n in names} for f in flows}
    for rnd in range(args.runs):
        order = names[rnd % len(names) :] + names[: rnd % len(names)]
        for flow in flows:
            for name in order:
                res[flow][name].append(await spawn_once(servers[name][0], env_of(name, f"{flow}-{rnd}"), ws, flow))
        print(f"round {rnd + 1}: load {load()}", flush=True)
    for flow in flows:
        report(flow, res[flow])
    print(f"load {load()}")
    searx.close()
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--flows", default=",".join(FLOWS), help="comma-separated: " + ", ".join(FLOWS))
    ap.add_argument("--baseline-src", type=Path, help="another commit's source tree, measured alongside")
    return asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    sys.exit(main())
