"""The first call of a fresh server on a loaded machine, over stdio and MCP: is its note the one
the ready server gives, a guess, or held back (``suppressed not-ready``)?

Each session is a fresh ``dsh-search serve`` (stdio) or ``dsh-search mcp`` on a workspace, with a
fresh ``$DSH_HOME`` (a cold index), asked one search-class call right after the handshake, while
``--busy N`` CPU-bound processes (``python3 -c 'while 1: pass'``) run beside it. The *right*
answer is what a ready server of this tree answers the same call (its first target); each
session's answer is **right** (the same first target), a **guess** (a note naming another), or
**held back** (no note: ``suppressed not-ready`` in its ledger), or **silent** (no note, no such
line). Settings alternate session by session so the load hits them alike:

* ``stdio``: no ``waitMs`` (the server's ``firstCallWaitMs``, 500 ms);
* ``stdio waitMs=2000``: the call gives its own bound, as a harness whose first call of a start
  may take 2 s (the DSH bundle's) can (this tree only: the baseline refuses the field);
* ``mcp``: Claude Code's PostToolUse hook as ``post_tool_use`` (``firstCallWaitMs`` 500);
* ``mcp firstCallWaitMs=2000``: the same with the knob set (this tree only);
* ``--baseline-src DIR``: the stdio and mcp sessions of another commit's source (before).

Prints per setting: sessions, right / guess / held back / silent, the call's time (median, max).
With ``--later N`` an MCP session whose first call got no note makes up to N later calls
(``git status``, nothing to note of its own, 0.5 s apart) and prints, per setting, how many
sessions got the first note with one of them (the note owed to the session,
``suggester/owednote.py``), how many of those named the right first target, and with which later
call. ``--only`` runs the named settings alone (comma-separated).

    python bench/first_note.py [--workspace DIR --call JSON]... [--sessions 6] [--busy 2] [--baseline-src DIR]
        [--later N] [--only SETTINGS]

Default workspace: the ``psf/requests`` checkout of the corpus cache (``DSH_CORPUS_CACHE`` or
``/work/corpus-cache-ii``) asked ``grep -rn "def merge_setting"`` (the symbol pass it needs).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _rpc import StdioClient, sidecar_cmd  # noqa: E402
from _scratch import scratch  # noqa: E402

DEFAULT_CALL = {"name": "Bash", "input": {"command": 'grep -rn "def merge_setting" .'}}


def env_for(src: Path | None, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env["DSH_HOME"] = str(home)
    env["DSH_CACHE_DIR"] = str(home / "cache")  # a cold start: no index of an earlier run (and inside
    # home: a sibling folder outlived the temp folder home is made in)
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(str(src / p) for p in ("server", "protocol", "packs"))
    return env


def ledger(home: Path) -> list[str]:
    path = home / "search-suggester" / "ledger.log"
    if not path.exists():
        return []
    return [re.sub(r"^\[[^\]]+\] ", "", line) for line in path.read_text().splitlines()]


def stdio_session(ws: Path, call: dict, src: Path | None, home: Path, options: dict, wait_ms: int | None) -> dict:
    client = StdioClient(sidecar_cmd(), env_for(src, home))
    try:
        client.initialize(ws, {"suggester": {"enabled": True, **options}})
        params: dict[str, Any] = {"sessionId": "s", "turn": 1, "tool": call, "result": {"text": ""}}
        if wait_ms is not None:
            params["waitMs"] = wait_ms
        t0 = time.perf_counter()
        result = client.call("dsh/postExecute", params)
        ms = (time.perf_counter() - t0) * 1000
        client.call("shutdown", None)
    finally:
        client.close()
    notes = result["additionalContexts"]
    return {"targets": notes[0]["source"]["targets"] if notes else [], "ms": ms, "ledger": ledger(home)}


#: The session's later calls (``--later``): nothing of its own to note, one every
#: :data:`LATER_GAP_S`, as an agent's next tool calls; the first that carries a note was owed it.
LATER_CALL = {"name": "Bash", "input": {"command": "git status"}}
LATER_GAP_S = 0.5


def hook_targets(text: str) -> list[str]:
    """The targets of a hook output's note text (its ``- path — reason`` lines)."""
    return [x[2:].split(" — ", 1)[0] for x in text.splitlines() if x.startswith("- ")]


def mcp_session(ws: Path, call: dict, src: Path | None, home: Path, options: dict, later: int = 0) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    cfg = home / "sidecar.json"
    home.mkdir(parents=True, exist_ok=True)
    cfg.write_text(json.dumps({"suggester": {"enabled": True, **options}}))
    argv = [sys.executable, "-m", "dsh_sidecar", "mcp", "--config", str(cfg), "--workspace", str(ws)]
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env_for(src, home))

    async def run() -> tuple[str, float, list[str], int | None]:
        with open(os.devnull, "w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
                await s.initialize()

                async def hook(tool: dict) -> str:
                    answer = await s.call_tool(
                        "post_tool_use", {"tool_name": tool["name"], "tool_input": tool["input"], "session_id": "m"}
                    )
                    return (answer.structured_content or {}).get("hookSpecificOutput", {}).get("additionalContext", "")

                t0 = time.perf_counter()
                text = await hook(call)
                ms = (time.perf_counter() - t0) * 1000
                for k in range(1, later + 1 if not text else 1):
                    await asyncio.sleep(LATER_GAP_S)
                    owed = hook_targets(await hook(LATER_CALL))
                    if owed:
                        return text, ms, owed, k
                return text, ms, [], None

    text, ms, owed, at = asyncio.run(run())
    time.sleep(1.2)  # the ledger's buffer (written within 1 s, and at exit)
    return {"targets": hook_targets(text), "ms": ms, "ledger": ledger(home), "owed": owed, "owed_at": at}


def verdict(out: dict, right: str) -> str:
    if out["targets"]:
        return "right" if out["targets"][0] == right else "guess"
    return "held back" if any(line.startswith("suppressed not-ready") for line in out["ledger"]) else "silent"


def ready_answer(ws: Path, call: dict, home: Path) -> str:
    """The first target a ready server of this tree (its home and cache in ``home``) gives
    ``call`` on ``ws``."""
    client = StdioClient(sidecar_cmd(), env_for(None, home))
    try:
        client.initialize(ws, {"suggester": {"enabled": True}})
        deadline = time.monotonic() + 600
        while not client.call("dsh/status", {})["suggester"]["graph"]["ready"]:
            if time.monotonic() > deadline:
                raise SystemExit("the reference server was not ready in 600 s")
            time.sleep(0.1)
        result = client.call("dsh/postExecute", {"sessionId": "r", "turn": 1, "tool": call})
    finally:
        client.close()
    notes = result["additionalContexts"]
    if not notes:
        raise SystemExit(f"a ready server gives no note for {call} on {ws}: pick another call")
    return str(notes[0]["source"]["targets"][0])


def default_workspace() -> Path:
    cache = Path(os.environ.get("DSH_CORPUS_CACHE", "/work/corpus-cache-ii"))
    found = sorted(cache.glob("psf__requests@*"))
    if not found:
        raise SystemExit(f"no psf/requests checkout under {cache}: pass --workspace and --call")
    return found[0]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workspace", type=Path, action="append", help="a workspace (repeatable; --call for each)")
    ap.add_argument("--call", action="append", help='the call, JSON: {"name": …, "input": {…}}')
    ap.add_argument("--sessions", type=int, default=6)
    ap.add_argument("--busy", type=int, default=2)
    ap.add_argument("--baseline-src", type=Path)
    ap.add_argument(
        "--later", type=int, default=0, help="MCP: later calls (0.5 s apart) a first note held back may come with"
    )
    ap.add_argument("--only", help="settings to run, comma-separated (default: all)")
    args = ap.parse_args()
    workspaces = args.workspace or [default_workspace()]
    calls = [json.loads(c) for c in args.call] if args.call else [DEFAULT_CALL] * len(workspaces)
    settings: list[tuple[str, str, Path | None, dict, int | None]] = [
        ("stdio", "stdio", None, {}, None),
        ("stdio waitMs=2000", "stdio", None, {}, 2000),
        ("mcp", "mcp", None, {}, None),
        ("mcp firstCallWaitMs=2000", "mcp", None, {"firstCallWaitMs": 2000}, None),
    ]
    if args.baseline_src is not None:
        base = args.baseline_src.resolve()
        settings += [("baseline stdio", "stdio", base, {}, None), ("baseline mcp", "mcp", base, {}, None)]
    if args.only:
        settings = [s for s in settings if s[0] in args.only.split(",")]
    # one scratch folder for every home and cache of the run (the reference server's too),
    # removed however the run ends: Ctrl-C and kill included (the burners are ended then too)
    with scratch("dsh-first-") as tmp:
        for ws, call in zip(workspaces, calls, strict=True):
            right = ready_answer(ws, call, tmp / f"ref-{ws.name}")
            print(f"{ws.name}: {json.dumps(call)} -> a ready server names {right} first", flush=True)
            burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.busy)]
            results: dict[str, list[dict]] = {name: [] for name, *_ in settings}
            try:
                for i in range(args.sessions):
                    for name, kind, src, options, wait_ms in settings:
                        home = tmp / ws.name / f"{i}-{len(results[name])}-{kind}-{'b' if src else 't'}-{name[-4:]}"
                        if kind == "stdio":
                            out = stdio_session(ws, call, src, home, options, wait_ms)
                        else:
                            out = mcp_session(ws, call, src, home, options, args.later)
                        out["verdict"] = verdict(out, right)
                        results[name].append(out)
                    print(
                        f"round {i + 1}/{args.sessions}; load {Path('/proc/loadavg').read_text().split()[0]}",
                        flush=True,
                    )
            finally:
                for b in burners:
                    b.kill()
            print(
                f"{'setting':<28} {'n':>3} {'right':>6} {'guess':>6} {'held back':>10} {'silent':>7} {'ms med':>8} {'ms max':>8}"
            )
            for name, outs in results.items():
                count = {v: sum(o["verdict"] == v for o in outs) for v in ("right", "guess", "held back", "silent")}
                ms = [o["ms"] for o in outs]
                print(
                    f"{name:<28} {len(outs):>3} {count['right']:>6} {count['guess']:>6} {count['held back']:>10} "
                    f"{count['silent']:>7} {statistics.median(ms):>8.0f} {max(ms):>8.0f}"
                )
            for name, outs in results.items():
                late = [o for o in outs if o.get("owed")]
                if args.later and any("owed" in o for o in outs):
                    right_late = sum(o["owed"][0] == right for o in late)
                    print(
                        f"{name}: first note given later (--later {args.later}): {len(late)} of {len(outs)} "
                        f"({right_late} right), at later call {[o['owed_at'] for o in late]}"
                    )
            guesses = sorted({o["targets"][0] for outs in results.values() for o in outs if o["verdict"] == "guess"})
            if guesses:
                print(f"guessed first targets: {', '.join(guesses)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
