"""Class 2: a file swapped for a link into ``.git`` (or out of the tree) after the listing is
named by no note and no ``where_is`` (docs/SECURITY.md). ``FileIndex.inside`` keeps its answer
per path, and MCP has no file-change events, so the index still lists the file and holds its
symbols: the few targets a note is about to name are asked of the file system again
(``filters.named_now``). Before, a ``where_is`` asked again after the swap named the link."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from dsh_sidecar.suggester.fileindex import FileIndex
from support.sidecar import forked, home_env
from support.trees import copy_fixture
from support.waiting import workspace_indexed

mcp = pytest.importorskip("mcp", reason="the [mcp] extra (official MCP SDK) is not installed")
from mcp.client.session import ClientSession  # noqa: E402
from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: E402

SECRET = "[remote]\n\turl = https://TOP-SECRET-TOKEN@example.invalid/x.git\n"
TARGET = "src/demo_pkg/__init__.py"
ASK = {"tool_name": "Bash", "tool_input": '{"command": "grep -rn __version__ ."}'}


def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "pyproj"
    copy_fixture("pyproj", root)
    env = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "-C", str(root), "init", "-q"], check=True, env=env)
    with (root / ".git" / "config").open("a") as f:
        f.write(SECRET)
    return root


async def test_a_target_swapped_for_a_link_into_git_after_the_listing_is_not_named_over_mcp(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    cfg = tmp_path / "sidecar.json"
    cfg.write_text(json.dumps({"suggester": {"enabled": True}}))
    argv = forked(
        [str(Path(sys.executable).parent / "dsh-search"), "mcp", "--config", str(cfg), "--workspace", str(root)]
    )
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=home_env(tmp_path / "home"))
    with (tmp_path / "stderr.log").open("w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            await workspace_indexed(s)
            before = (await s.call_tool("where_is", ASK)).structured_content
            (root / TARGET).unlink()
            os.symlink("../../.git/config", root / TARGET)  # no file-change event reaches MCP
            after = (await s.call_tool("where_is", ASK)).structured_content
            hook = await s.call_tool(
                "post_tool_use", {"tool_name": "Grep", "tool_input": '{"pattern": "__version__"}', "session_id": "s1"}
            )
    assert before is not None and [t["path"] for t in before["targets"]] == [TARGET]
    assert after is not None and TARGET not in [t["path"] for t in after["targets"]]
    assert TARGET not in json.dumps(hook.structured_content)
    assert "TOP-SECRET" not in json.dumps([after, hook.structured_content])


def test_inside_now_asks_again_and_keeps_a_refusal(tmp_path: Path) -> None:
    root = checkout(tmp_path)
    index = FileIndex(root.resolve(), [TARGET, "README.md"])
    assert index.inside(TARGET) and index.inside_now(TARGET)
    (root / TARGET).unlink()
    os.symlink("../../.git/config", root / TARGET)
    assert index.inside(TARGET)  # the cached answer
    assert not index.inside_now(TARGET)
    assert not index.inside(TARGET)  # the refusal is kept
    assert TARGET in index.refused
    assert index.inside_now("README.md")
