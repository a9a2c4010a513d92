"""Claude Code (the real CLI, pinned) with the harness-adapters/claude-code plugin, headless
against a loopback fake Anthropic API: the PostToolUse ``mcp_tool`` hook's note reaches the
next model request, ``web_search`` returns a loopback SearXNG's results, the sticky section
and ``suggestion_dismiss`` are present, and without the sidecar the run still exits 0."""

from __future__ import annotations

import json

import pytest

from harness import harnesses as h
from harness.fakemodel import texts

pytestmark = pytest.mark.skipif(h.claude_missing() is not None, reason=h.claude_missing() or "")

NOTE = "search-suggester: in this repository, look here for the package version:\n- src/demo_pkg/__init__.py — defines __version__"
PREFIX = "mcp__plugin_dsh-search_dsh-search__"


def after_tool_result(request: dict) -> str:
    """The text of every message after the last assistant turn (Claude Code appends a system
    message with hook context after the tool result)."""
    messages = request["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return texts(messages[last + 1 :])


@pytest.fixture(scope="module")
def note_web(tmp_path_factory):
    """One run: the note scenario's grep, then ``web_search`` (each harness run costs about
    2 s of CPU, so the checks that need the same setup share one)."""
    return h.scenario("claude", "noteweb", tmp_path_factory.mktemp("noteweb"))


def test_note_reaches_the_next_model_request(note_web):
    report = note_web
    assert report["returncode"] == 0, report["stderr"]
    first, second = report["requests"][:2]
    assert NOTE not in texts(first["messages"])
    tail = after_tool_result(second)
    assert '__version__ = "1.2.3"' in tail  # the real grep ran
    assert f"PostToolUse:Bash hook additional context: {NOTE}" in tail
    names = [t["name"] for t in first["tools"]]
    assert PREFIX + "suggestion_dismiss" in names and PREFIX + "web_search" in names
    assert json.loads(report["stdout"])["result"] == "All done."


def test_web_search_returns_the_loopback_searxng_results(note_web):
    report = note_web
    assert report["returncode"] == 0, report["stderr"]
    assert report["searxng_requests"] == 1
    tail = after_tool_result(report["requests"][2])
    for url in ("https://www.example.com/maintenance/clean-bike-chain", "https://en.wikipedia.org/wiki/Bicycle_chain"):
        assert url in tail
    assert '"strategy": "quick"' in tail or '"strategy":"quick"' in tail


def test_sticky_section_with_the_prompt(tmp_path):
    report = h.scenario("claude", "note", tmp_path, "--sticky")
    assert report["returncode"] == 0, report["stderr"]
    first = texts(report["requests"][0])
    assert "search-suggester: where things live in this repository:\n- Version: src/demo_pkg/__init__.py" in first


def test_without_the_sidecar_the_run_still_exits_0(tmp_path):
    report = h.scenario("claude", "note", tmp_path, "--no-sidecar")
    assert report["returncode"] == 0, report["stderr"]
    assert json.loads(report["stdout"])["result"] == "All done."
    assert NOTE not in texts(report["requests"][-1])


def test_denied_hook_tools_leave_the_model_list_and_still_serve_the_hook(tmp_path):
    report = h.scenario("claude", "note", tmp_path, "--deny-hook-tools")
    assert report["returncode"] == 0, report["stderr"]
    names = [t["name"] for t in report["requests"][0]["tools"] if t["name"].startswith(PREFIX)]
    assert sorted(names) == [PREFIX + "suggestion_dismiss", PREFIX + "web_search", PREFIX + "where_is"]
    assert f"PostToolUse:Bash hook additional context: {NOTE}" in after_tool_result(report["requests"][1])


def test_plugin_validates(tmp_path):
    env = h.isolated(tmp_path)
    done = h.run([str(h.CLAUDE), "plugin", "validate", str(h.CLAUDE_PLUGIN)], tmp_path, env, 120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Validation passed" in done.stdout + done.stderr


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
