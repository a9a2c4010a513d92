"""Claude Code (the real CLI, pinned) with the harness-adapters/claude-code plugin, headless
against a loopback fake Anthropic API: the PostToolUse ``mcp_tool`` hook's note reaches the
next model request; the model's tool list has ``search`` (no strategy) and no hook-only tool;
``search`` and ``web_search`` return a loopback SearXNG's results without strategy, reward or
attempts; the final answer's citation reaches the bandit through the Stop hook and moves its
posterior as docs/bandit.md says; the built-in WebSearch runs as usual unless the plugin's
``steer_web_search`` option is on, then its call is denied with the steer; a failing search's
only text is the router's aggregated error; the sticky section and ``suggestion_dismiss`` are
present; the task lead reaches the first request with the prompt (``taskLead`` on); and without
the sidecar the run still exits 0."""

from __future__ import annotations

import json

import pytest

from harness import harnesses as h
from harness.fakemodel import texts
from harness.scenario import CC_ANSWER

pytestmark = pytest.mark.skipif(h.claude_missing() is not None, reason=h.claude_missing() or "")

NOTE = "search-suggester: in this repository, look here for the package version:\n- src/demo_pkg/__init__.py — defines __version__"
PREFIX = "mcp__plugin_dsh-search_dsh-search__"
LEAD_HEADING = "search-suggester: in this repository, look here for the code this task is about:"
# The task lead for "Find where the package version is defined.": the code whose tokens match the
# task's words (the package's __init__ defines __version__), by the code's BM25 over the symbol index.
LEAD = LEAD_HEADING + (
    "\n- src/demo_pkg/__init__.py — its code matches the task's words"
    "\n- src/demo_pkg/core.py — its code matches the task's words"
)
CITED = "https://www.example.com/maintenance/clean-bike-chain"  # the source CC_ANSWER cites
SEED_STEER = (
    "Prefer the search tool over web_search for web searches: it picks a quick or a thorough "
    "strategy per query and learns which pays off. Cite the returned URLs as markdown links."
)
STEERED = (
    "PreToolUse:WebSearch hook error: Search the web with the mcp__plugin_dsh-search_dsh-search__search tool "
    "instead of WebSearch: it picks a quick or a thorough strategy per query and learns which pays off. "
    "Cite the returned URLs as markdown links."
)


def after_tool_result(request: dict) -> str:
    """The text of every message after the last assistant turn (Claude Code appends a system
    message with hook context after the tool result)."""
    messages = request["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return texts(messages[last + 1 :])


def tool_result(request: dict) -> dict:
    """The tool_result block answering the last assistant turn of ``request``."""
    messages = request["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    for m in messages[last + 1 :]:
        for block in m["content"] if isinstance(m["content"], list) else []:
            if block.get("type") == "tool_result":
                return block
    raise AssertionError(f"no tool_result after the last assistant turn: {messages[last + 1 :]}")


def result_text(block: dict) -> str:
    content = block["content"]
    return content if isinstance(content, str) else "".join(c.get("text", "") for c in content)


@pytest.fixture(scope="module")
def note_web(tmp_path_factory):
    """One run: the note scenario's grep, then ``search``, ``web_search`` and the built-in
    WebSearch (steer off), then an answer citing a source (each harness run costs about 2 s of
    CPU, so the checks that need the same setup share one)."""
    return h.scenario("claude", "noteweb", tmp_path_factory.mktemp("noteweb"))


def test_note_reaches_the_next_model_request(note_web):
    report = note_web
    assert report["returncode"] == 0, report["stderr"]
    first, second = report["requests"][:2]
    assert NOTE not in texts(first["messages"])
    tail = after_tool_result(second)
    assert '__version__ = "1.2.3"' not in tail  # the real grep ran, in the tests: nothing found
    assert f"PostToolUse:Bash hook additional context: {NOTE}" in tail
    assert json.loads(report["stdout"])["result"] == CC_ANSWER


def test_the_model_sees_search_without_strategy_and_no_hook_only_tool(note_web):
    """The hook-only tools (post_tool_use, session_start, pre_tool_use, stop) are absent from
    the model's tool list with no deny rule, and still serve their hooks (the note above, the
    feedback below)."""
    last = note_web["requests"][-1]  # after every call (on a loaded machine the server may connect after the first)
    tools = {t["name"]: t for t in last["tools"]}
    ours = sorted(n.removeprefix(PREFIX) for n in tools if n.startswith(PREFIX))
    assert ours == ["search", "search_feedback", "suggestion_dismiss", "web_search", "where_is"]
    schema = tools[PREFIX + "search"]["input_schema"]
    assert schema["properties"].keys() == {"query"} and schema["additionalProperties"] is False
    assert "WebSearch" in tools  # the built-in stays (the steer is off by default)
    # the bandit seed's steer toward search, byte for byte: the server's instructions, which Claude
    # Code 2.1.328 sends as a system message ("# MCP Server Instructions")
    assert f"## plugin:dsh-search:dsh-search\n{SEED_STEER}" in texts(last["messages"])


def test_search_and_web_search_return_sources_only(note_web):
    search, web = (tool_result(r) for r in note_web["requests"][2:4])
    for block in (search, web):
        assert not block.get("is_error")
        out = json.loads(result_text(block))
        assert CITED in [s["url"] for s in out["sources"]]
        for hidden in ("strategy", "reward", "attempts", "quick", "thorough", "searxng"):
            assert hidden not in result_text(block)
    assert set(json.loads(result_text(search))) == {"search_id", "sources", "truncated"}
    assert set(json.loads(result_text(web))) == {"sources", "truncated"}


def test_websearch_runs_when_the_steer_is_off(note_web):
    builtin = tool_result(note_web["requests"][4])
    assert "PreToolUse:WebSearch" not in result_text(builtin)


def test_the_answers_citation_moves_the_posterior_by_the_formula(note_web):
    """One bandit search (web_search is the router's, no bandit) finds n ≤ 3 sources: its
    heuristic h = 0.5·min(n/cap, 1) + 0.5·min(6000/durationMs, 1), below 1. The Stop hook reports the answer, which cites one of them: reward 0.5 + 0.5·h,
    and the search's class row and the global row hold exactly [0.5 + 0.5·h, 0.5 − 0.5·h] (one
    observation; the first update of a row is not discounted, a re-credit never is)."""
    records = note_web["bandit"]["records"]
    decisions = [r for r in records if r["event"] == "decision"]
    feedback = [r for r in records if r["event"] == "feedback"]
    assert len(decisions) == 1 and len(feedback) == 1
    d, f = decisions[0], feedback[0]
    cap = {"quick": 5, "thorough": 10}[d["arm"]]
    h_reward = d["reward"]
    n = d["resultCount"]  # the 3 sources the provider sent, less what the router dropped as duplicates
    assert 1 <= n <= 3
    assert h_reward == pytest.approx(0.5 * n / cap + 0.5 * min(6000 / max(d["durationMs"], 1), 1.0), abs=1e-6)
    assert (f["searchId"], f["used"], f["previousReward"]) == (d["searchId"], True, h_reward)
    assert f["reward"] == pytest.approx(0.5 + 0.5 * h_reward, abs=1e-6) and f["reward"] > h_reward
    rows = note_web["bandit"]["posteriors"]["rows"]
    for row in (d["class"], "global"):
        assert rows[row][d["arm"]] == pytest.approx([0.5 + 0.5 * h_reward, 0.5 - 0.5 * h_reward], abs=1e-6)
        other = "quick" if d["arm"] == "thorough" else "thorough"
        assert rows[row][other] == [0.0, 0.0]
    assert note_web["bandit"]["posteriors"]["updates"] == {d["arm"]: 1, other: 0}


def test_the_steer_denies_websearch_and_a_failed_search_says_only_the_seed_text(tmp_path):
    """The plugin's steer_web_search option on (as a user's settings.json stores it) and the
    only provider failing: the built-in WebSearch is denied with the steer, and the model's
    search then fails with the router seed's aggregated error as its whole text."""
    report = h.scenario("claude", "websearch", tmp_path, "--steer", "--searx-fail")
    assert report["returncode"] == 0, report["stderr"]
    builtin, search = (tool_result(r) for r in report["requests"][1:3])
    assert builtin["is_error"] is True and result_text(builtin) == STEERED
    assert search["is_error"] is True
    assert result_text(search) == (  # the zero-config chain: SEARXNG_BASE_URL's SearXNG, then DuckDuckGo (no network)
        "search-router: all configured search providers failed:\n"
        "- searxng: HTTP 503\n"
        "- duckduckgo: network error: connection failed"
    )
    paths = report["provider_paths"]  # only our search reached the provider (1 request, or 2-3 query variants)
    assert 1 <= len(paths) <= 3 and set(paths) == {"GET /search"}


def test_sticky_section_with_the_prompt(tmp_path):
    report = h.scenario("claude", "note", tmp_path, "--sticky")
    assert report["returncode"] == 0, report["stderr"]
    first = texts(report["requests"][0])
    assert "search-suggester: where things live in this repository:\n- Version: src/demo_pkg/__init__.py" in first


def test_task_lead_with_the_first_prompt(tmp_path):
    """taskLead on (the user's config): the real CLI's UserPromptSubmit hook passes the prompt to
    ``session_start``, and the files it points to reach the first model request, once."""
    report = h.scenario("claude", "note", tmp_path, "--task-lead")
    assert report["returncode"] == 0, report["stderr"]
    assert f"UserPromptSubmit hook additional context: {LEAD}" in texts(report["requests"][0])
    assert texts(report["requests"][-1]).count(LEAD_HEADING) == 1


def test_without_the_sidecar_the_run_still_exits_0(tmp_path):
    report = h.scenario("claude", "note", tmp_path, "--no-sidecar")
    assert report["returncode"] == 0, report["stderr"]
    assert json.loads(report["stdout"])["result"] == CC_ANSWER
    assert NOTE not in texts(report["requests"][-1])


def provider_hosts() -> list[str]:
    """The hosts the router reaches, read from its code: each provider's default origin
    (``DEFAULTS.base_url``). SearXNG has none (the user names the instance), nor has the offline
    docs index (``local:``)."""
    from urllib.parse import urlsplit

    from dsh_sidecar.router.providers import PROVIDERS

    urls = [p.DEFAULTS.base_url for p in PROVIDERS.values()]
    return sorted(str(urlsplit(u).hostname) for u in urls if u and u.startswith("https://"))


def test_plugin_validates_and_declares_the_hosts_the_router_reaches(tmp_path):
    """``network.hosts`` in plugin.json lists the providers' API hosts (what ``claude plugin
    validate`` shows as declared), so the validator no longer asks for them."""
    manifest = json.loads((h.CLAUDE_PLUGIN / ".claude-plugin" / "plugin.json").read_text("utf-8"))
    assert sorted(manifest["network"]["hosts"]) == provider_hosts()
    env = h.isolated(tmp_path)
    done = h.run([str(h.CLAUDE), "plugin", "validate", str(h.CLAUDE_PLUGIN)], tmp_path, env, 120)
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "Validation passed" in out, out
    assert "Hosts not declared" not in out and "network.hosts" not in out, out
    assert "Hosts: " + ", ".join(f"{host} (declared)" for host in provider_hosts()) + "\n" in out, out


def test_the_repository_root_is_a_marketplace_claude_code_installs_from(tmp_path):
    """``/plugin marketplace add <owner>/<repo>`` reads ``.claude-plugin/marketplace.json`` at the
    repository root: validated there, then added from a git clone of the repository (what a
    GitHub add fetches) and the plugin installed from it, by the real Claude Code."""
    env = h.isolated(tmp_path)
    done = h.run([str(h.CLAUDE), "plugin", "validate", str(h.REPO)], tmp_path, env, 120)
    assert done.returncode == 0 and "Validation passed" in done.stdout + done.stderr, done.stdout + done.stderr
    clone = tmp_path / "dsh-search-sidecar"
    files = [".claude-plugin/marketplace.json"] + [
        str(p.relative_to(h.REPO)) for p in h.CLAUDE_PLUGIN.rglob("*") if p.is_file()
    ]
    for rel in files:  # the committed layout: the marketplace at the root, the plugin in its folder
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_bytes((h.REPO / rel).read_bytes())
        (clone / rel).chmod((h.REPO / rel).stat().st_mode)
    added = h.run([str(h.CLAUDE), "plugin", "marketplace", "add", str(clone)], tmp_path, env, 120)
    assert added.returncode == 0 and "dsh-search-sidecar" in added.stdout + added.stderr, added.stdout + added.stderr
    installed = h.run([str(h.CLAUDE), "plugin", "install", "dsh-search@dsh-search-sidecar"], tmp_path, env, 120)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    listed = h.run([str(h.CLAUDE), "mcp", "list"], tmp_path, env, 180)
    assert "plugin:dsh-search:dsh-search:" in listed.stdout and "✔ Connected" in listed.stdout, listed.stdout


def test_without_dsh_search_claude_code_names_it_and_how_to_install_it(tmp_path):
    """The plugin's launcher does not depend on the PATH Claude Code has: without dsh-search
    anywhere it looked, ``claude mcp list`` says so (the launcher answers the MCP client's
    requests with that message), instead of ``ENOENT … "stdio"``."""
    env = h.isolated(tmp_path, with_sidecar=False)
    listed = h.run([str(h.CLAUDE), "--plugin-dir", str(h.CLAUDE_PLUGIN), "mcp", "list"], tmp_path, env, 180)
    line = next(line for line in listed.stdout.splitlines() if line.startswith("plugin:dsh-search:dsh-search:"))
    assert (
        "✘ Failed to connect — -32603: dsh-search not found: the dsh-search plugin needs the dsh-search command" in line
    )
    assert "uv tool install 'dsh-search-sidecar[mcp] @ file:///path/to/dsh-search-sidecar'" in line
    # an absolute DSH_SEARCH_COMMAND is enough (no PATH)
    env["DSH_SEARCH_COMMAND"] = str(h.sidecar_bin() / "dsh-search")
    listed = h.run([str(h.CLAUDE), "--plugin-dir", str(h.CLAUDE_PLUGIN), "mcp", "list"], tmp_path, env, 180)
    assert "✔ Connected" in listed.stdout, listed.stdout


def test_a_refused_config_is_a_clear_line_in_claude_codes_mcp_log(tmp_path):
    """A misspelt block in the user's config: the server refuses it and exits before
    ``initialize`` (exit 2), the run still ends 0 without the plugin's tools, and Claude Code's
    per-server MCP log (what ``claude --debug`` and ``/mcp`` show for a failed server) carries
    the one line that says what is wrong."""
    report = h.scenario("claude", "note", tmp_path, "--bad-config")
    assert report["returncode"] == 0, report["stderr"]
    logs = [p for p in (tmp_path / "home" / ".cache").rglob("*.jsonl") if "mcp-logs-" in str(p.parent)]
    errors = [json.loads(line).get("error") for p in logs for line in p.read_text().splitlines()]
    assert (
        "Server stderr: dsh-search: invalid config: routr: unknown key "
        "(expected one of: router, bandit, suggester, state, logMessages)\n"
    ) in errors
