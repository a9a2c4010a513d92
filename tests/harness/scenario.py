"""One real-harness run against loopback fakes; prints a JSON report on stdout.

Runs inside the caller's network namespace (the tests start it under ``unshare -n`` when
root), so the fake model, the fake SearXNG and the harness all live on that namespace's
loopback. Usage::

    python tests/harness/scenario.py claude|dsh note|noteweb|calls|restart|webseam|websearch|mixed WORKDIR
        [--no-sidecar] [--no-adapter] [--sticky] [--task-lead] [--steer] [--searx-fail] [--hang-sidecar] [--hang-once] [--hang-start-once] [--calls N]
        [--install file|link] [--package DIR]... [--profile-from WORK] [--log-capture] [--overlay-extra FILE]
        [--no-suggester-row] [--searx ok|fail|empty] [--deepseek-search] [--final TEXT] [--first-bound MS]
        [--no-builtin-packs]

Report: ``returncode``, ``stdout``, ``stderr`` (tail), ``requests`` (every main-loop request
body the fake model received), ``gaps_ms`` (per scripted tool call, answer → next request),
``bandit`` (the decision log's records and the posterior document under the run's ``DSH_HOME``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: the harness and support packages

from support.mockprovider import MockProvider, Reply, case_reply  # noqa: E402
from support.trees import copy_fixture  # noqa: E402

from harness import harnesses as h  # noqa: E402
from harness.fakemodel import FakeModel, ToolStep  # noqa: E402

CC_PREFIX = "mcp__plugin_dsh-search_dsh-search__"
WORKSPACE = h.REPO / "tests" / "data" / "workspaces" / "pyproj"


def copy_workspace(work: Path) -> Path:
    """``work/ws``: the fixture :data:`WORKSPACE` copied as the rest of the suite copies one
    (``support.trees.copy_fixture``: every file at the fixtures' time, so its recency ties
    wherever the repository was checked out); one already there (a run again) is kept."""
    dest = work / "ws"
    return dest if dest.exists() else copy_fixture(WORKSPACE.name, dest)


#: The Claude Code runs' final answer: it cites a source the loopback SearXNG returns (the
#: plugin's Stop hook reports it to the bandit).
CC_ANSWER = "Clean it with a degreaser ([guide](https://www.example.com/maintenance/clean-bike-chain))."


def steps_for(harness: str, scenario: str, calls: int, work: Path) -> list:
    if harness == "claude":  # Claude Code 2.1.328 has no Grep/Glob tools: search goes through Bash
        # the agent looks for the version where it is not (the tests): the note leads it there
        one = ToolStep("Bash", {"command": "grep -rn __version__ tests", "description": "find the version"})
        search = ToolStep(CC_PREFIX + "search", {"query": "bike chain cleaning"})
        builtin = ToolStep("WebSearch", {"query": "bike chain cleaning"})
        if scenario == "noteweb":  # the note, then our search, web_search and the built-in WebSearch
            web = ToolStep(CC_PREFIX + "web_search", {"query": "bike chain cleaning"})
            return [one, search, web, builtin]
        if scenario == "websearch":  # the built-in WebSearch (steered or not), then our search
            return [builtin, search]
    else:  # a search of the wrong folder: the note names the file the search did not show
        one = ToolStep("grep", {"pattern": "__version__", "path": "tests"})
    tool = "mcp__plugin_dsh-search_dsh-search__web_search" if harness == "claude" else "search"
    web = ToolStep(tool, {"query": "bike chain cleaning", "strategy": "quick"}, match="web_search")
    if scenario == "noteweb":  # the note scenario's search, then a web search: one run, two checks
        return [one, web]
    if scenario == "webseam":  # the search, then DSH's own web_search tool through the web seam
        return [one, ToolStep("web_search", {"queries": ["bike chain cleaning"]})]
    if scenario == "mixed":  # a note, the router seed's web_search, the bandit seed's search, an answer citing it
        return [
            one,
            ToolStep("web_search", {"queries": ["how do I clean a bike chain"]}),
            ToolStep("search", {"query": "how do I clean a bike chain"}),
        ]
    if scenario == "restart":  # a call while the first sidecar dies, then the Version call once it restarts
        return [
            ToolStep("grep", {"pattern": "zzz_not_an_intent"}),
            # the bundle's restart began (CRASH_ONCE's second run): the call then waits for its start
            ToolStep("grep", {"pattern": "__version__", "path": "tests"}, think_s=30.0, until=work / "restarted.flag"),
        ]
    return [one] * (calls if scenario == "calls" else 1)


#: The suggester's ``firstCallWaitMs`` in the Claude Code scenarios that expect the first prompt
#: to carry the sticky section or the task lead: the default 500 ms bounds how long a prompt hook waits for
#: the index (what is not ready then is owed, and comes later: tests/e2e/test_serve_prompt_path_build.py),
#: and a loaded machine may index even this small repository past it. Inside the bundle's own
#: first-section bound (5 s, the sidecar's start included).
PROMPT_WAIT_MS = 3000
#: DSH's bounds of the first step in those scenarios, ms: the bundle's wait for the sidecar's
#: start (``startWaitMs``), for the section (``firstSectionTimeoutMs``) and the lead
#: (``leadTimeoutMs``), and the sidecar's own wait for its index (``firstCallWaitMs``, in the
#: user's config file; the search-suggester row takes it too). At load 20-36 the start alone took 2-3 s and the
#: section missed the bundle's 5 s: the first step waits for them instead, ending when they come.
DSH_PROMPT_BOUND_MS = 60_000
#: The bundle's ``startTimeoutMs`` in the hung-start scenario: the first child never answers
#: ``initialize`` and the scenario waits this out once, so it is shorter than the bundle's default
#: (20 s, which waited 20 s of the test's ~27); the restarted real sidecar must answer within it
#: (it took 2.2-3.0 s at load 21-23, so 3000 ended every restart as hung, until the restart
#: budget was spent): 8000 is 2.7 times that, and each restart that misses it is tried again.
HUNG_START_TIMEOUT_MS = 8_000


def plugin_dir(work: Path, sticky: bool, task_lead: bool = False, bad_config: bool = False) -> Path:
    """A copy of the Claude Code plugin; with ``sticky`` (``task_lead``), the user's own config
    file (``~/.config/dsh-search/config.yml`` of the isolated home, which the plugin's sidecar
    discovers under its ``sidecar.yml``) sets sectionMode sticky (taskLead true)."""
    dest = work / "plugin"
    shutil.copytree(h.CLAUDE_PLUGIN, dest)
    knobs = ["  sectionMode: sticky"] * sticky + ["  taskLead: true"] * task_lead
    if knobs:  # the first prompt carries them even when a loaded machine indexes past 500 ms
        knobs.append(f"  firstCallWaitMs: {PROMPT_WAIT_MS}")
    user = work / "home" / ".config" / "dsh-search" / "config.yml"
    if knobs:
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text("suggester:\n" + "\n".join(knobs) + "\n")
    if bad_config:  # a misspelt block: the server refuses its config and exits before initialize
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text("routr:\n  order: [searxng]\n")
    return dest


def run_claude(args, work: Path, fake: FakeModel, searx: MockProvider) -> h.Run:
    """Claude Code headless with a copy of the plugin (``--plugin-dir``: its id is
    ``dsh-search@inline``); ``--steer`` turns the plugin's ``steer_web_search`` option on the way
    a user's settings do (``pluginConfigs``)."""
    env = h.isolated(work, with_sidecar=not args.no_sidecar)
    env.update(
        {
            "ANTHROPIC_BASE_URL": fake.url,
            "ANTHROPIC_API_KEY": "sk-ant-fake-key-for-loopback",
            "ENABLE_TOOL_SEARCH": "false",
            "MCP_CONNECTION_NONBLOCKING": "false",  # -p: wait for the plugin server before the first request
            "SEARXNG_BASE_URL": searx.url,
        }
    )
    argv = [str(h.CLAUDE), "-p", "Find where the package version is defined.", "--output-format", "json"]
    argv += ["--allowedTools", "Bash(grep:*)", "WebSearch", *(CC_PREFIX + t for t in ("search", "web_search"))]
    argv += ["--debug", "hooks", "--debug-file", str(work / "claude-debug.log")]  # hook timings, same in both modes
    if not args.no_adapter:
        argv += ["--plugin-dir", str(plugin_dir(work, args.sticky, args.task_lead, args.bad_config))]
    if args.steer:  # the plugin's option, as /config or a user's settings.json stores it
        settings = work / "settings.json"
        settings.write_text(
            json.dumps({"pluginConfigs": {"dsh-search@inline": {"options": {"steer_web_search": True}}}})
        )
        argv += ["--settings", str(settings)]
    return h.run(argv, work / "ws", env)


def run_dsh(args, work: Path, fake: FakeModel, searx: MockProvider) -> h.Run:
    env = h.isolated(work, with_sidecar=not args.no_sidecar)
    env["PATH"] = f"{h.PNPM_BIN}:{env['PATH']}"
    env.update(
        {
            "DEEPSEEK_BASE_URL": fake.url,
            "DEEPSEEK_API_KEY": "sk-fake-key-for-loopback",
            "SEARXNG_BASE_URL": searx.url,
            # DSH's built-in DeepSeek search provider (its own base URL): the loopback SearXNG
            # mock answers it 404, which is recorded
            "DEEPSEEK_SEARCH_BASE_URL": searx.url,
        }
    )
    env["SEARCH_SIDECAR_TIMINGS_FILE"] = str(work / "listener-times.txt")  # the bundle's own time per call
    if args.sticky or args.task_lead or args.patient:  # the sidecar's index wait: the user's config file
        user = Path(env["HOME"]) / ".config" / "dsh-search" / "config.yml"
        user.parent.mkdir(parents=True, exist_ok=True)
        user.write_text(f"suggester:\n  firstCallWaitMs: {DSH_PROMPT_BOUND_MS}\n")
    overlay = work / "overlay.yml"
    lines = ["- id: hmr", "  disabled: false"]  # rc.8's headless profile needs the hmr row back
    if args.log_capture:  # DSH's logger service, exported to a file (tests/harness/log_capture.mjs)
        capture = {"file": str(work / "dsh-log.jsonl")}
        lines += ["- insert:", "    - id: log-capture", f"      name: {json.dumps(str(LOG_CAPTURE))}"]
        lines += [f"      config: {json.dumps(capture)}"]
    if args.overlay_extra is not None:
        lines += args.overlay_extra.read_text().splitlines()
    if not args.no_adapter and not args.no_suggester_row:
        lines += dsh_adapter_rows(
            args.sticky,
            work,
            args.scenario == "restart",
            args.hang_sidecar,
            args.hang_once,
            args.hang_start_once,
            args.first_bound,
            not args.no_builtin_packs,
            args.task_lead,
            args.patient,
        )
    overlay.write_text("\n".join(lines) + "\n")
    if args.deepseek_search:  # DSH's own search provider answers from the loopback mock
        searx.route("POST", "/messages", deepseek_search_reply)
    if not args.no_adapter:
        installed = _installed_profiles(args.profile_from)
        if installed is not None:  # what `dsh plugin add` installed there: copied, not installed again
            shutil.copytree(installed, Path(env["DSH_HOME"]) / "profiles", symlinks=True)
        else:
            for package in args.package or [str(h.DSH_BUNDLE)]:
                argv = [str(h.DSH), "plugin", "--profile", "headless", "add", f"{args.install}:{package}"]
                install = h.run(argv, work, env, 300)
                if install.returncode != 0:
                    return install
    argv = [str(h.DSH), "--profile", "headless", "--patch", str(overlay), "Find where the package version is defined."]
    return h.run(argv, work / "ws", env)


def _installed_profiles(work: Path | None) -> Path | None:
    """The DSH profiles folder of an earlier run's ``work`` (``--profile-from``) when
    ``dsh plugin --profile headless add`` installed the bundle there, else ``None``. Its
    files are the bundle's copy and links into ``.harness/dsh`` (pnpm's hoisted layout), so a
    copy runs as the install does; the install costs ~0.9 s of CPU (DSH and pnpm)."""
    if work is None:
        return None
    profiles = work / "home" / ".dsh" / "profiles"
    name = json.loads((h.DSH_BUNDLE / "package.json").read_text())["name"]
    return profiles if (profiles / "headless" / "node_modules" / name / "package.json").is_file() else None


LOG_CAPTURE = Path(__file__).resolve().parent / "log_capture.mjs"


def deepseek_search_reply(seen) -> Reply:
    """What DSH's own DeepSeek search provider (Anthropic Messages with the native web_search
    server tool) gets: two results, one cited with an excerpt."""
    query = json.loads(seen.body or b"{}").get("messages", [{}])[0].get("content", [{}])[0].get("text", "")
    body = {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": "deepseek-v4-flash",
        "content": [
            {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": query}},
            {
                "type": "web_search_tool_result",
                "tool_use_id": "srvtoolu_1",
                "content": [
                    {
                        "type": "web_search_result",
                        "url": "https://deepseek.example/chain",
                        "title": "Chain care (DeepSeek)",
                    },
                    {"type": "web_search_result", "url": "https://deepseek.example/lube", "title": "Lube (DeepSeek)"},
                ],
            },
            {
                "type": "text",
                "text": "Found it.",
                "citations": [
                    {
                        "type": "web_search_result_location",
                        "url": "https://deepseek.example/chain",
                        "cited_text": "Degrease, scrub, rinse.",
                    }
                ],
            },
        ],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 5, "output_tokens": 5},
    }
    return Reply(200, {"content-type": "application/json"}, json.dumps(body).encode())


CRASH_ONCE = """import os, sys
flag = sys.argv[1]
if not os.path.exists(flag):
    open(flag, "w").close()
    sys.exit(3)  # the first sidecar dies at once: the bundle must restart it
open(os.path.join(os.path.dirname(flag), "restarted.flag"), "w").close()
os.execvp("dsh-search", ["dsh-search", "serve"])
"""


HANG_START_ONCE = """import os, sys, time
flag = sys.argv[1]
if os.path.exists(flag):
    os.execvp("dsh-search", ["dsh-search", "serve"])
open(flag, "w").close()
time.sleep(1000)  # the first sidecar hangs in its own start: initialize is never answered
"""


HANG_ONCE = """import json, os, sys
flag = sys.argv[1]
if os.path.exists(flag):
    os.execvp("dsh-search", ["dsh-search", "serve"])
open(flag, "w").close()
# the first sidecar answers initialize, then never answers again (a deadlocked sidecar)
inp, out = sys.stdin.buffer, sys.stdout.buffer
while True:
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        if line in (b"\\r\\n", b"\\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    msg = json.loads(inp.read(length or 0))
    if msg.get("method") == "initialize":
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"capabilities": {}}}).encode()
        out.write(b"Content-Length: %d\\r\\n\\r\\n" % len(body) + body)
        out.flush()
"""


def dsh_adapter_rows(
    sticky: bool,
    work: Path,
    crash_once: bool,
    hang: bool = False,
    hang_once: bool = False,
    hang_start_once: bool = False,
    first_bound_ms: int | None = None,
    builtin_packs: bool = True,
    task_lead: bool = False,
    patient: bool = False,
) -> list[str]:
    """The overlay's rows for the bundle: the suggester activated (it ships disabled), its
    sectionMode, and the sidecar process knobs of a scenario (``sidecar:`` of the suggester's
    row: one sidecar serves every plugin)."""
    # the workspace has no pack of its own: our built-in packs are opted into (the seed's
    # default, a repository without a pack stays silent, is --no-builtin-packs)
    config: dict = {"sectionMode": "sticky" if sticky else "off", "builtinPacks": builtin_packs}
    if task_lead:
        config["taskLead"] = True
    knobs: dict = {}
    if sticky or task_lead:  # the first step carries them even when a loaded machine starts and indexes slowly
        knobs.update(
            startWaitMs=DSH_PROMPT_BOUND_MS,
            firstSectionTimeoutMs=DSH_PROMPT_BOUND_MS,
            leadTimeoutMs=DSH_PROMPT_BOUND_MS,
        )
    if patient:  # a scenario about the note or the ledger, not the bounds: at load 25-46 the start,
        # the first post-execute call's 2 s and the index's 500 ms ran out, and the run ended first
        knobs.update(startWaitMs=DSH_PROMPT_BOUND_MS, firstPostExecuteTimeoutMs=DSH_PROMPT_BOUND_MS)
    if hang:  # a sidecar that never answers initialize (startTimeoutMs default 20 s)
        knobs.update(command=["sleep", "1000"], startWaitMs=2000)
    if hang_once:
        script = work / "hang_once.py"
        script.write_text(HANG_ONCE)
        knobs["command"] = [sys.executable, str(script), str(work / "hung.flag")]
        knobs["startWaitMs"] = 60000  # the call after the restart waits for it, however loaded the machine
        # the hung sidecar never answers the session's first section either: its bound (5 s by
        # default, a wait for the workspace projection this scenario is not about) is one miss
        # like the 500 ms post-execute ones
        knobs["firstSectionTimeoutMs"] = 500
    if hang_start_once:
        script = work / "hang_start_once.py"
        script.write_text(HANG_START_ONCE)
        knobs["command"] = [sys.executable, str(script), str(work / "hung-start.flag")]
        knobs["startTimeoutMs"] = HUNG_START_TIMEOUT_MS  # the first child never answers initialize
        knobs["startWaitMs"] = 60000  # calls after the abandoned start wait for the restart
    if crash_once:
        script = work / "crash_once.py"
        script.write_text(CRASH_ONCE)
        knobs["command"] = [sys.executable, str(script), str(work / "crashed.flag")]
    if first_bound_ms is not None:  # the first post-execute call's bound (bench/dsh_first_note.py)
        knobs["firstPostExecuteTimeoutMs"] = first_bound_ms
    if knobs:
        config["sidecar"] = knobs
    return ["- id: search-suggester", "  disabled: false", f"  config: {json.dumps(config)}"]


_STAMP = r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})Z "


def hook_times_ms(log: Path) -> list[float]:
    """Claude Code's own account of each PostToolUse mcp_tool hook: from its "mcp_tool
    calling …/post_tool_use" debug line to the hook's "success" line (ms resolution)."""
    import datetime as dt
    import re

    if not log.exists():
        return []
    times, start = [], None
    for line in log.read_text(errors="replace").splitlines():
        m = re.match(_STAMP, line)
        if not m:
            continue
        t = dt.datetime.fromisoformat(m.group(1)).timestamp()
        if "mcp_tool calling" in line and "/post_tool_use" in line:
            start = t
        elif start is not None and "Hook PostToolUse" in line and "success" in line:
            times.append((t - start) * 1000)
            start = None
    return times


def listener_times_ms(path: Path) -> dict[str, list[float]]:
    """The DSH bundle's own time per listener call (``SEARCH_SIDECAR_TIMINGS_FILE`` lines)."""
    out: dict[str, list[float]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            label, _, ms = line.partition(" ")
            out.setdefault(label, []).append(float(ms))
    return out


def _log_lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _text(path: Path) -> str:
    return path.read_text() if path.exists() else ""


def bandit_state(folder: Path) -> dict:
    """The run's decision-log records and posterior document (``None`` when absent)."""
    log, posteriors = folder / "decisions.jsonl", folder / "posteriors.json"
    return {
        "records": [json.loads(x) for x in log.read_text().splitlines()] if log.exists() else [],
        "posteriors": json.loads(posteriors.read_text()) if posteriors.exists() else None,
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("harness", choices=["claude", "dsh"])
    ap.add_argument("scenario", choices=["note", "noteweb", "calls", "restart", "webseam", "websearch", "mixed"])
    ap.add_argument("work", type=Path)
    ap.add_argument("--no-sidecar", action="store_true")
    ap.add_argument("--no-adapter", action="store_true")
    ap.add_argument("--sticky", action="store_true")
    ap.add_argument("--task-lead", action="store_true", help="the suggester's taskLead on")
    ap.add_argument(
        "--patient",
        action="store_true",
        help="dsh: the start, the first post-execute call and the index are waited for (DSH_PROMPT_BOUND_MS)",
    )
    ap.add_argument("--bad-config", action="store_true", help="claude: the user's config has a misspelt block")
    ap.add_argument("--steer", action="store_true", help="claude: the plugin's steer_web_search option on")
    ap.add_argument("--searx-fail", action="store_true", help="the loopback SearXNG answers 503")
    ap.add_argument("--hang-sidecar", action="store_true")
    ap.add_argument("--hang-once", action="store_true")
    ap.add_argument("--hang-start-once", action="store_true")
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--profile-from", type=Path, help="an earlier DSH run's work folder: copy its installed bundle")
    ap.add_argument("--install", choices=["file", "link"], default="file", help="how `dsh plugin add` installs it")
    ap.add_argument("--first-bound", type=int, help="the suggester's firstPostExecuteTimeoutMs, ms")
    ap.add_argument("--log-capture", action="store_true", help="export DSH's logger service to dsh-log.jsonl")
    ap.add_argument("--final", help="the fake model's final answer (default: All done.; Claude Code's scenario answer)")
    ap.add_argument("--no-builtin-packs", action="store_true", help="the suggester row without builtinPacks: true")
    ap.add_argument("--overlay-extra", type=Path, help="rows appended to the run's --patch overlay")
    ap.add_argument("--no-suggester-row", action="store_true", help="leave the suggester's row as installed")
    ap.add_argument("--searx", choices=["ok", "fail", "empty"], default="ok", help="what the SearXNG mock answers")
    ap.add_argument("--deepseek-search", action="store_true", help="DSH's own search provider answers (loopback)")
    ap.add_argument(
        "--package", action="append", help="a package folder to install (repeatable; default: the combined bundle)"
    )
    args = ap.parse_args()
    work: Path = args.work
    work.mkdir(parents=True, exist_ok=True)
    copy_workspace(work)
    api = "anthropic" if args.harness == "claude" else "openai"
    final = args.final if args.final is not None else CC_ANSWER if args.harness == "claude" else "All done."
    fake = FakeModel(api, steps_for(args.harness, args.scenario, args.calls, work), final=final)
    searx = MockProvider()
    reply, _ = case_reply("searxng", "ok", check=False)
    if args.harness == "claude":  # 3 sources: below both arms' caps, so the heuristic reward is < 1
        body = json.loads(reply.body)
        reply = Reply(reply.status, reply.headers, json.dumps({**body, "results": body["results"][:3]}).encode())
    if args.searx == "fail" or args.searx_fail:
        reply = Reply(503, {"content-type": "text/plain"}, b"down")
    elif args.searx == "empty":
        reply = Reply(200, {"content-type": "application/json"}, b'{"results": []}')
    searx.route("GET", "/search", reply)
    try:
        result = (run_claude if args.harness == "claude" else run_dsh)(args, work, fake, searx)
    finally:
        fake.close()
        searx.close()
    report = {
        "returncode": result.returncode,
        "stdout": result.stdout[-20000:],
        "stderr": result.stderr[-8000:],
        "requests": fake.main_requests(),
        "all_paths": [r.path for r in fake.requests],
        "gaps_ms": fake.tool_gaps_ms(),
        "crashed_once": (work / "crashed.flag").exists(),
        "hung_once": (work / "hung.flag").exists(),
        "hung_start_once": (work / "hung-start.flag").exists(),
        "searxng_requests": len(searx.requests),
        "provider_paths": [f"{seen.method} {seen.path}" for seen in searx.requests],
        "hook_ms": hook_times_ms(work / "claude-debug.log"),
        "listener_ms": listener_times_ms(work / "listener-times.txt"),
        "dsh_log": _log_lines(work / "dsh-log.jsonl"),
        "ledger": _text(work / "home" / ".dsh" / "search-suggester" / "ledger.log"),
        "searxng_queries": [seen.query.get("q") for seen in searx.requests if seen.path == "/search"],
        "bandit": bandit_state(work / "home" / ".dsh" / "bandit"),
    }
    sys.stdout.write(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
