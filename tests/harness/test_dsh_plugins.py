"""The three seed plugins in real DeepSeek Harness 0.1.0-rc.8, installed as the seeds' users
install them (``dsh plugin --profile headless add file:…`` or ``link:…``), alone or together,
driven headless against the loopback fake model and SearXNG (tests/harness/scenario.py):

* both install kinds boot and serve, for the combined bundle and for the three packages
  (``link:`` used to make every DSH boot fail: the linked folder could not resolve
  ``@deepseek-ai/*``; the harness's packages now come from the running harness);
* each plugin alone brings its seed's surfaces and nothing else; together they share one
  ``dsh-search serve``;
* ``web_search`` is one backend query per query (the router seed), ``search`` runs over
  ``ctx.web`` (on DSH's own DeepSeek provider when the router is not installed);
* the bandit's ``[bandit-search] …`` line and the suggester's ledger lines reach DSH's logger
  service; an answer citing a returned URL re-credits its search (``dsh/searchFeedback``);
* the seed's own row (``- id: search-router``) configures the router; a misspelt key is a
  visible warning; the suggester stays silent until its row is activated.

The combined bundle installed with ``file:`` is test_dsh.py's own fixture.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from harness import harnesses as h
from harness.fakemodel import texts

pytestmark = pytest.mark.skipif(h.dsh_missing() is not None, reason=h.dsh_missing() or "")

PLUGINS = h.DSH_BUNDLE / "plugins"
ROUTER, BANDIT, SUGGESTER = (str(PLUGINS / p) for p in ("search-router", "bandit-search", "search-suggester"))
NOTE_HEAD = "search-suggester: in this repository, look here for the package version:"
STEER = (
    "Prefer the search tool over web_search for web searches: it picks a quick or a thorough strategy per "
    "query and learns which pays off. Cite the returned URLs as markdown links."
)
CITED = "https://www.example.com/maintenance/clean-bike-chain"
FINAL = f"Clean it as [this guide]({CITED}) says."
#: The `mixed` scenario's options: DSH's logger captured, the model's final answer, and the start,
#: the first post-execute call and the index waited for (`--patient`): these tests are about the
#: install kinds, not the first call's 2 s bound (test_dsh.py's busy-machine test is), which at
#: load 30 ran out before the note and no note reached the model.
MIXED = ("--log-capture", "--final", FINAL, "--patient")
#: The bandit seed's log line (its README, "Example output"), any arm and numbers.
BANDIT_LINE = re.compile(
    r"^\[bandit-search\] arm=(quick|thorough) reward=\d\.\d{3} durationMs=\d+ resultCount=\d+ "
    r'stats=\{"quick":\{"alpha":[\d.]+,"beta":[\d.]+\},"thorough":\{"alpha":[\d.]+,"beta":[\d.]+\}\}$'
)


def names(request: dict) -> set[str]:
    return {t["function"]["name"] for t in request["tools"]}


def tool_results(report: dict) -> list[str]:
    last = report["requests"][-1]["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


def logged(report: dict, name: str) -> list[str]:
    return [line["text"] for line in report["dsh_log"] if line["name"] == name]


def decisions(work: Path) -> list[dict]:
    path = work / "home" / ".dsh" / "bandit" / "decisions.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_each_plugin_package_carries_the_current_shared_code():
    """plugins/<seed>/lib (and client/ for the router) are generated copies (sync-plugins.mjs):
    `file:` installs copy a package without anything outside its folder."""
    carried = {"search-router": ("lib", "client"), "bandit-search": ("lib",), "search-suggester": ("lib",)}
    for plugin, folders in carried.items():
        for folder in ("lib", "client"):
            source, copy = h.DSH_BUNDLE / folder, PLUGINS / plugin / folder
            if folder not in folders:
                assert not copy.exists(), copy
                continue
            want = {p.relative_to(source): p.read_bytes() for p in source.rglob("*") if p.is_file()}
            have = {p.relative_to(copy): p.read_bytes() for p in copy.rglob("*") if p.is_file()}
            assert have == want, f"plugins/{plugin}/{folder} is stale: run `node harness-adapters/dsh/sync-plugins.mjs`"


def check_mixed(report: dict, work: Path) -> None:
    """What every install of all three plugins must do in the `mixed` scenario."""
    assert report["returncode"] == 0, report["stderr"]
    assert report["stdout"].strip() == FINAL
    first, second = report["requests"][:2]
    assert {"search", "suggestion_dismiss", "web_search"} <= names(first)
    assert STEER in texts(first["messages"][0])
    assert NOTE_HEAD in texts(second["messages"])  # the suggester's note for the grep
    web, search = tool_results(report)[1:3]
    assert web.startswith("Sources:\n- [How to Clean a Bike Chain in 10 Minutes](" + CITED + ")")
    assert search.startswith("1. How to Clean a Bike Chain in 10 Minutes\n   " + CITED)
    # web_search: the query, once (no reformulation); search: its arm's 1 or 3 queries
    queries = report["searxng_queries"]
    assert queries.count("how do I clean a bike chain") == 2, queries
    assert len(queries) in (2, 4), queries
    assert report["listener_ms"]["spawn"] == [0.0]  # one sidecar for the three plugins
    [line] = logged(report, "bandit-search")
    assert BANDIT_LINE.match(line), line
    ledger = logged(report, "search-suggester")
    assert ledger[0].endswith("activated (packs generic,python intents 10 threshold 0.75)"), ledger
    assert ledger[1].endswith("suggest Version 0.99 1 targets src/demo_pkg/__init__.py"), ledger
    assert "\n".join(ledger) + "\n" == report["ledger"]  # the ledger file's lines, byte for byte
    # the answer cites a URL the search returned: the search is re-credited with it
    decision, feedback = decisions(work)
    assert decision["event"] == "decision" and decision["class"] == "global"  # the seed's one posterior
    assert feedback == {**feedback, "event": "feedback", "searchId": decision["searchId"], "used": True}
    assert not [line for line in report["stderr"].splitlines() if "warning" in line], report["stderr"]


@pytest.fixture(scope="module")
def link_combined(tmp_path_factory):
    work = tmp_path_factory.mktemp("link-combined")
    return work, h.scenario("dsh", "mixed", work, "--install", "link", *MIXED)


def test_link_install_of_the_bundle_boots_and_serves(link_combined):
    work, report = link_combined
    check_mixed(report, work)
    manifest = json.loads((work / "home" / ".dsh" / "profiles" / "headless" / "package.json").read_text())
    assert manifest["dependencies"] == {"dsh-search-sidecar-bundle": f"link:{h.DSH_BUNDLE}"}


def test_file_install_of_the_three_packages_boots_and_serves(tmp_path):
    args = ["--package", ROUTER, "--package", BANDIT, "--package", SUGGESTER]
    report = h.scenario("dsh", "mixed", tmp_path, *args, *MIXED)
    check_mixed(report, tmp_path)
    manifest = json.loads((tmp_path / "home" / ".dsh" / "profiles" / "headless" / "package.json").read_text())
    assert set(manifest["dsh"]["profile"]["bundles"][-3:]) == {
        "dsh-search-sidecar-router",
        "dsh-search-sidecar-bandit",
        "dsh-search-sidecar-suggester",
    }


def test_link_install_of_the_three_packages_boots_and_serves(tmp_path):
    args = ["--install", "link", "--package", ROUTER, "--package", BANDIT, "--package", SUGGESTER]
    check_mixed(h.scenario("dsh", "mixed", tmp_path, *args, *MIXED), tmp_path)


def test_the_router_alone_is_web_search_and_nothing_else(tmp_path):
    args = ["--install", "link", "--package", ROUTER, "--no-suggester-row"]
    report = h.scenario("dsh", "webseam", tmp_path, *args)
    assert report["returncode"] == 0, report["stderr"]
    first = report["requests"][0]
    assert "web_search" in names(first) and not {"search", "suggestion_dismiss"} & names(first)
    assert "Prefer the search tool" not in texts(first["messages"][0])
    assert NOTE_HEAD not in texts(report["requests"][-1]["messages"])
    assert tool_results(report)[-1].startswith("Sources:\n- [How to Clean a Bike Chain in 10 Minutes]")
    assert report["searxng_queries"] == ["bike chain cleaning"]  # one backend query, no fan-out


def test_the_bandit_alone_runs_on_dshs_own_search_provider(tmp_path):
    """No router: ctx.web's provider is DSH's own dsh-web-search-deepseek (Anthropic Messages
    with its native web_search tool, here the loopback mock): `search` runs on it, learns, logs."""
    args = ["--install", "link", "--package", BANDIT, "--no-suggester-row", "--deepseek-search", "--log-capture"]
    report = h.scenario("dsh", "mixed", tmp_path, *args)
    assert report["returncode"] == 0, report["stderr"]
    first = report["requests"][0]
    assert "search" in names(first) and "suggestion_dismiss" not in names(first)
    assert STEER in texts(first["messages"][0])
    search = tool_results(report)[-1]
    assert search.startswith(
        "1. Chain care (DeepSeek)\n   https://deepseek.example/chain\n   Degrease, scrub, rinse.\n"
        "2. Lube (DeepSeek)\n   https://deepseek.example/lube"
    )
    assert report["searxng_queries"] == []  # no router: nothing went to SearXNG
    asked = [p for p in report["provider_paths"] if p == "POST /messages"]
    assert len(asked) in (2, 4)  # web_search's one query, then the arm's 1 or 3
    [line] = logged(report, "bandit-search")
    assert BANDIT_LINE.match(line), line


def test_the_suggester_alone_notes_once_activated(tmp_path):
    report = h.scenario("dsh", "note", tmp_path, "--install", "link", "--package", SUGGESTER)
    assert report["returncode"] == 0, report["stderr"]
    first, second = report["requests"][:2]
    assert "suggestion_dismiss" in names(first) and "search" not in names(first)
    assert NOTE_HEAD in texts(second["messages"])


SEED_ROW = """- id: search-router
  config:
    order: [exa, searxng]
    providers:
      exa: { apiKey: dummy-exa-key, baseURL: "http://127.0.0.1:9" }
    emptyResultFallback: true
"""


def test_the_seeds_own_row_configures_the_router_and_a_misspelt_key_is_a_visible_warning(tmp_path, link_combined):
    """The router seed's row shape (`- id: search-router`, its `config` keys) in the profile:
    its chain is the one asked (exa's dead endpoint, then SearXNG, here failing too: the seed's
    aggregated error, key-free), and its misspelt key is reported, not ignored in silence. The
    suggester is not activated: no note, no dismissal tool."""
    extra = tmp_path / "extra.yml"
    extra.write_text(SEED_ROW)
    flags = ["--profile-from", str(link_combined[0]), "--no-suggester-row", "--overlay-extra", str(extra)]
    report = h.scenario("dsh", "webseam", tmp_path, *flags, "--searx", "fail")
    assert report["returncode"] == 0, report["stderr"]
    assert tool_results(report)[-1] == (
        "Error: search-router: all configured search providers failed:\n"
        "- exa: network error: connection failed\n- searxng: HTTP 503"
    )
    assert "dummy-exa-key" not in json.dumps(report)
    assert (
        '[search-router] warning: search-router row: unknown key "emptyResultFallback" '
        '(did you mean "emptyResultsFallback"?); it is ignored'
    ) in report["stderr"].splitlines()
    assert "suggestion_dismiss" not in names(report["requests"][0])
    assert NOTE_HEAD not in texts(report["requests"][-1]["messages"])


def test_removing_the_plugins_restores_the_profiles_composition(tmp_path):
    """The router seed: ``dsh plugin … remove`` restores the original composition. The profile's
    bundles and dependencies after ``add`` then ``remove`` are the fresh profile's, and the
    package is gone from its node_modules (so its patch no longer applies)."""
    env = h.isolated(tmp_path)
    env["PATH"] = f"{h.PNPM_BIN}:{env['PATH']}"
    profile = Path(env["DSH_HOME"]) / "profiles" / "headless"

    def composition() -> tuple[list[str], dict]:
        manifest = json.loads((profile / "package.json").read_text())
        return manifest["dsh"]["profile"]["bundles"], manifest.get("dependencies") or {}

    plugin = [str(h.DSH), "plugin", "--profile", "headless"]
    listed = h.run([*plugin, "list"], tmp_path, env, 300)
    assert listed.returncode == 0, listed.stderr
    fresh = composition()
    assert h.run([*plugin, "add", f"file:{h.DSH_BUNDLE}"], tmp_path, env, 300).returncode == 0
    assert composition() == (
        fresh[0] + ["dsh-search-sidecar-bundle"],
        {"dsh-search-sidecar-bundle": f"file:{h.DSH_BUNDLE}"},
    )
    removed = h.run([*plugin, "remove", "dsh-search-sidecar-bundle"], tmp_path, env, 300)
    assert removed.returncode == 0, removed.stdout + removed.stderr
    assert composition() == fresh
    assert not (profile / "node_modules" / "dsh-search-sidecar-bundle").exists()
