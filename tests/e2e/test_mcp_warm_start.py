"""A later start of ``dsh-search mcp`` on the same workspace, its indexes read back from the
cache (the harness's usual start: the repository was opened before), answers the plugin's first
calls as the first start did: the first ``post_tool_use`` (a ``Bash`` grep) gets the same note,
``where_is`` the same targets. Real stdio with the official MCP client and the Claude Code
plugin's config, the first call's wait for the index (``firstCallWaitMs``) made long enough
for a loaded machine (the 500 ms default is a bound, and a note past it is an abstention)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from support.sidecar import forked, home_env
from support.trees import copy_fixture

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

PLUGIN_CONFIG = Path(__file__).resolve().parents[2] / "harness-adapters" / "claude-code" / "sidecar.yml"
#: The plugin's config (suggester on), and a first call that may wait for the index a minute.
CONFIG = {"suggester": {"enabled": True, "firstCallWaitMs": 60_000}}
NOTE = "search-suggester: in this repository, look here for the package version:\n- src/demo_pkg/__init__.py — defines __version__"
GREP = {"tool_name": "Bash", "tool_input": json.dumps({"command": "grep -rn __version__ tests"}), "tool_use_id": "t1"}
WHERE = {
    "intent": "Version",
    "targets": [
        {"path": "src/demo_pkg/__init__.py", "display": "src/demo_pkg/__init__.py", "reason": "defines __version__"}
    ],
}


async def first_calls(
    config: Path, home: Path, workspace: Path, session_id: str, errlog: Path
) -> tuple[str | None, dict]:
    """One start: its first call the plugin's ``post_tool_use`` of a grep, then ``where_is``."""
    script = str(Path(sys.executable).parent / "dsh-search")
    argv = forked([script, "mcp", "--config", str(config), "--workspace", str(workspace)])
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=home_env(home))
    with errlog.open("a") as err:
        async with stdio_client(params, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            note = await s.call_tool("post_tool_use", {**GREP, "session_id": session_id})
            where = await s.call_tool("where_is", {"query": "package version"})
    context = (note.structured_content or {}).get("hookSpecificOutput", {}).get("additionalContext")
    return context, {k: where.structured_content[k] for k in ("intent", "targets")}


async def test_a_start_from_the_cached_indexes_gives_the_same_first_note_and_where_is(tmp_path):
    workspace = tmp_path / "pyproj"
    copy_fixture("pyproj", workspace)
    home = tmp_path / "dsh-home"
    home.mkdir()
    assert PLUGIN_CONFIG.read_text().count("enabled: true") == 1  # the plugin's one setting, kept in CONFIG
    config = tmp_path / "sidecar.json"
    config.write_text(json.dumps(CONFIG))
    cold = await first_calls(config, home, workspace, "s-cold", tmp_path / "stderr.log")
    cache = Path(f"{home}-cache")
    cached = sorted(p.name for p in cache.rglob("*") if p.is_file())
    assert any(name.endswith(".kinds.json") for name in cached), cached
    warm = await first_calls(config, home, workspace, "s-warm", tmp_path / "stderr.log")
    assert cold == warm == (NOTE, WHERE)
