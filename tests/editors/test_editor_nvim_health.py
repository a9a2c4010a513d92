"""dsh.nvim's ``:checkhealth dsh`` and command completion, in a real headless Neovim (every
Neovim ``tests/editors/test_editor_nvim.py`` finds: Debian's 0.7.2 and a current one)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from support.editors import PLUGIN
from support.mockprovider import MockProvider
from support.providerbodies import answer
from support.sidecar import clean_env, server_command
from support.trees import copy_fixture


def _nvim(nvim: str, tmp_path: Path, lua: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    """Run ``lua`` in a headless Neovim with the plugin on the runtimepath; returns what it
    wrote to ``$DSH_TEST_OUT``."""
    out = tmp_path / "out.txt"
    script = tmp_path / "script.lua"
    script.write_text(lua)
    full = clean_env(
        tmp_path / "dsh-home",
        {
            "DSH_TEST_OUT": str(out),
            "DSH_TEST_CMD": server_command()[0],
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
            **(env or {}),
        },
    )
    proc = subprocess.run(
        [
            nvim,
            "--headless",
            "-u",
            "NONE",
            "-i",
            "NONE",
            "-n",
            "--cmd",
            f"set rtp^={PLUGIN}",
            "-c",
            f"luafile {script}",
        ],
        env=full,
        cwd=cwd or tmp_path,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return out.read_text()


def _ok(line: str) -> bool:
    """An OK line of a health report: ``- OK …`` (0.7: ``- OK: …``) or ``- ✅ OK …`` (0.10+)."""
    return line.startswith(("- OK", "- ✅ OK"))


HEALTH = """
vim.cmd('runtime plugin/dsh.lua')
-- the doctor's wait for each endpoint (2 s by default) is not the subject: at load the loopback
-- provider's answer came later
require('dsh.health').endpoint_timeout_s = 60
require('dsh').setup({ cmd = { vim.env.DSH_TEST_CMD, 'serve' }, init_options = vim.fn.json_decode(vim.env.DSH_TEST_OPTS) })
vim.cmd('checkhealth dsh')
vim.fn.writefile(vim.api.nvim_buf_get_lines(0, 0, -1, false), vim.env.DSH_TEST_OUT)
vim.cmd('qa!')
"""


def test_checkhealth_runs_the_doctor_with_the_plugins_config(nvim, tmp_path):
    up = MockProvider()
    up.route("GET", "/search", answer("searxng", [{"url": "https://a.example/", "title": "A", "snippet": "s"}]))
    try:
        opts = {"router": {"provider": "searxng", "providers": {"searxng": {"baseUrl": up.url}}}}
        text = _nvim(nvim, tmp_path, HEALTH, {"DSH_TEST_OPTS": json.dumps(opts), "EXA_API_KEY": "sk-nvim-secret-77"})
    finally:
        up.close()
    assert "sk-nvim-secret-77" not in text and "nvim-secret" not in text
    lines = [line.strip() for line in text.splitlines()]
    from dsh_sidecar import __version__

    assert any(_ok(line) and "Neovim " in line for line in lines), text
    assert any(_ok(line) and f"dsh-search {__version__}" in line for line in lines), text
    assert any(_ok(line) and f"provider searxng: chain #1, {up.url}" in line for line in lines), text
    assert any(_ok(line) and f"endpoint searxng: {up.url} answers searches (HTTP 200" in line for line in lines), text
    # exa's key is set in the environment, but the plugin's config names searxng only
    assert any("provider exa: not in the configured chain" in line for line in lines), text
    assert any("sqlite: SQLite" in line for line in lines), text
    assert any("sidecar not started" in line for line in lines), text


def test_checkhealth_says_how_to_install_a_missing_sidecar(nvim, tmp_path):
    lua = HEALTH.replace("vim.env.DSH_TEST_CMD", "'/nonexistent/dsh-search'")
    text = _nvim(nvim, tmp_path, lua, {"DSH_TEST_OPTS": "{}"})
    assert "/nonexistent/dsh-search not found or not executable" in text
    assert "uv tool install 'dsh-search-sidecar @ file:///path/to/dsh-search-sidecar'" in text


COMPLETE = """
vim.cmd('runtime plugin/dsh.lua')
require('dsh').setup({ cmd = { vim.env.DSH_TEST_CMD, 'serve' } })
local out = {}
local function add(label, line)
  table.insert(out, label .. '=' .. table.concat(vim.fn.getcompletion(line, 'cmdline'), ','))
end
add('tools', 'DshSuggest ')
add('g', 'DshSuggest g')
add('second', 'DshSuggest grep ')
add('families-cold', 'DshDismiss ')
require('dsh').status()
assert(vim.wait(60000, function() return vim.fn.bufexists('dsh://status') == 1 end, 50), 'no status in 60 s')
-- the packs activate off the request path (after the graph's listing); until then dsh/status
-- reports no intents, and each completion asks again
assert(vim.wait(60000, function() return #vim.fn.getcompletion('DshDismiss ', 'cmdline') > 0 end, 100),
  'no intent families to complete in 60 s')
add('families', 'DshDismiss ')
add('V', 'DshDismiss V')
add('path', 'DshDismiss Version sr')
vim.fn.writefile(out, vim.env.DSH_TEST_OUT)
require('dsh').stop()
vim.cmd('qa!')
"""


def test_command_completion(nvim, tmp_path):
    workspace = tmp_path / "pyproj"  # a Python project: the suggester activates its packs there
    copy_fixture("pyproj", workspace)
    text = _nvim(nvim, tmp_path, COMPLETE, cwd=workspace)
    got = dict(line.split("=", 1) for line in text.splitlines())
    assert got["tools"] == "grep,glob,read,bash"
    assert got["g"] == "grep,glob"
    assert got["second"] == ""
    assert got["families-cold"] == ""  # the sidecar is never started just to complete
    assert got["families"] == "Version,Path,Ledger,Config,Dependency,Test,Symbol,Doc,Usage,Owner"
    assert got["V"] == "Version"
    assert got["path"] == "src/"


HELP = """
vim.cmd('runtime plugin/dsh.lua')
vim.cmd('help dsh-setup')
vim.fn.writefile({ vim.fn.expand('%:t'), vim.fn.getline('.') }, vim.env.DSH_TEST_OUT)
vim.cmd('qa!')
"""


def test_help_works_from_the_runtimepath_alone(nvim, tmp_path):
    """What a plugin manager does (the folder on 'runtimepath', nothing else): ``:help dsh-setup``
    opens the plugin's help, through the committed doc/tags."""
    text = _nvim(nvim, tmp_path, HELP)
    name, line = text.splitlines()
    assert name == "dsh.txt" and "*dsh-setup*" in line


def test_the_committed_doc_tags_are_current(nvim, tmp_path):
    doc = tmp_path / "doc"
    shutil.copytree(PLUGIN / "doc", doc)
    (doc / "tags").unlink()
    subprocess.run([nvim, "--headless", "--clean", "-c", f"helptags {doc}", "-c", "qa!"], check=True, timeout=60)
    assert (doc / "tags").read_text() == (PLUGIN / "doc" / "tags").read_text()
