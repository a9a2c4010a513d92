"""The bandit learns only from real outcomes: a search no provider could
answer for configuration, network, auth or cooldown reasons leaves the posteriors (memory and
file) alone; a real empty answer or a provider's real failure still scores 0 as the seed says.
Also: per-arm update counts in ``dsh/status`` and the reset behind ``dsh-search bandit reset``.
Real HTTP to loopback mocks; a closed port for "network down"."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest
from dsh_sidecar.bandit import StrategyBandit, parse_bandit_config, reset_posteriors
from dsh_sidecar.bandit.store import POSTERIORS_FILE
from dsh_sidecar.router import AllProvidersFailed, Router, parse_router_config
from support.mockprovider import Reply, case_reply

PRIOR = {"quick": {"alpha": 1.0, "beta": 1.0}, "thorough": {"alpha": 1.0, "beta": 1.0}}
JSON = {"content-type": "application/json"}


def closed_port() -> str:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now: connection refused, as offline
    return f"http://127.0.0.1:{port}"


def bandit_for(router_cfg: dict, home: Path, env: dict | None = None, lines: list | None = None) -> StrategyBandit:
    router = Router.from_config(parse_router_config({"cache": False, **router_cfg}), env or {})
    sink = lines.append if lines is not None else (lambda _l: None)
    return StrategyBandit(router, parse_bandit_config({"seed": 3}), log=sink, home=home)


def posterior_file(home: Path) -> dict | None:
    path = home / "bandit" / POSTERIORS_FILE
    return json.loads(path.read_text()) if path.exists() else None


async def fails_without_learning(bandit: StrategyBandit, home: Path, strategy: str = "quick") -> AllProvidersFailed:
    with pytest.raises(AllProvidersFailed) as info:
        await bandit.search("how do I clean a bike chain", strategy)
    bandit.flush()
    assert info.value.outage is True
    for row in ("global", "open", "factoid"):
        assert bandit.policy.stats(row) == PRIOR
    assert bandit.store.updates == {"quick": 0, "thorough": 0}
    doc = posterior_file(home)
    assert doc is None or all(v == [0.0, 0.0] for cells in doc["rows"].values() for v in cells.values())
    return info.value


@pytest.mark.parametrize("strategy", ["quick", "thorough"])
async def test_network_down_teaches_nothing(dsh_home, strategy):
    """The README's first command run offline: every provider unreachable."""
    down = closed_port()
    lines: list[str] = []
    bandit = bandit_for(
        {
            "order": ["searxng", "duckduckgo"],
            "providers": {"searxng": {"baseUrl": down}, "duckduckgo": {"baseURL": down}},
        },
        dsh_home,
        lines=lines,
    )
    try:
        failed = await fails_without_learning(bandit, dsh_home, strategy)
    finally:
        bandit.close()
        await bandit.router.aclose()
    assert {a.outcome for a in failed.attempts} == {"network error: connection failed"}
    assert len(lines) == 1 and lines[0].startswith(f"[bandit-search] arm={strategy} reward=none ")
    assert lines[0].endswith(" learned=false")
    decision = json.loads((dsh_home / "bandit" / "decisions.jsonl").read_text().splitlines()[-1])
    assert decision["reward"] is None and decision["rewardSource"].startswith("none")


async def test_not_configured_and_auth_and_cooldown_teach_nothing(dsh_home, mock_provider):
    mock_provider.route(
        "POST", "/search", Reply(401, dict(JSON), b'{"requestId": "r", "error": "Invalid API key", "tag": "X"}')
    )
    bandit = bandit_for(
        {"order": ["exa", "tavily"], "providers": {"exa": {"baseURL": mock_provider.url}}},
        dsh_home,
        env={"EXA_API_KEY": "exa-test-key-123"},  # tavily has no key: not configured
    )
    try:
        first = await fails_without_learning(bandit, dsh_home)
        assert [a.outcome for a in first.attempts] == [
            "HTTP 401: Invalid API key",
            "skipped: not configured (no API key: set TAVILY_API_KEY or providers.tavily.apiKey)",
        ]
        second = await fails_without_learning(bandit, dsh_home)  # exa now cooling down (auth)
        assert second.attempts[0].outcome.startswith("skipped: auth cooldown ")
    finally:
        bandit.close()
        await bandit.router.aclose()


async def test_a_real_empty_answer_still_scores_zero(dsh_home, mock_provider):
    """Seed: ``resultCount=0 reward=0.000`` and the update ``β += 1``."""
    mock_provider.route("GET", "/search", Reply(200, dict(JSON), b'{"query": "q", "results": []}'))
    lines: list[str] = []
    bandit = bandit_for(
        {"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}}, dsh_home, lines=lines
    )
    try:
        out = await bandit.search("bike chain length", "quick")
        bandit.flush()
    finally:
        bandit.close()
        await bandit.router.aclose()
    assert out.sources == [] and out.reward == 0.0
    assert " reward=0.000 " in lines[0] and " resultCount=0 " in lines[0]
    assert bandit.store.updates == {"quick": 1, "thorough": 0}
    assert posterior_file(dsh_home)["updates"] == {"quick": 1, "thorough": 0}
    assert bandit.policy.evidence["global"]["quick"][1] == pytest.approx(1.0)


@pytest.mark.parametrize(
    "reply",
    [
        Reply(502, {"content-type": "text/html"}, b"<html>bad gateway</html>"),
        Reply(200, dict(JSON), b"{not json"),
    ],
    ids=["5xx", "unreadable"],
)
async def test_a_providers_real_failure_still_scores_zero(dsh_home, mock_provider, reply):
    mock_provider.route("GET", "/search", reply)
    bandit = bandit_for({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}}, dsh_home)
    try:
        with pytest.raises(AllProvidersFailed) as info:
            await bandit.search("bike chain length", "quick")
        bandit.flush()
    finally:
        bandit.close()
        await bandit.router.aclose()
    assert info.value.outage is False
    assert bandit.store.updates == {"quick": 1, "thorough": 0}
    assert bandit.policy.evidence["global"]["quick"][1] == pytest.approx(1.0)


async def test_an_outage_among_real_answers_only_skips_itself(dsh_home, mock_provider):
    ok, _ = case_reply("searxng", "ok", check=False)
    mock_provider.route("GET", "/search", ok)
    down = closed_port()
    bandit = bandit_for({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}}, dsh_home)
    offline = bandit_for({"provider": "searxng", "providers": {"searxng": {"baseUrl": down}}}, dsh_home)
    try:
        await bandit.search("bike chain length", "quick")
        offline.router, router = bandit.router, offline.router
        bandit.router = router  # the same bandit, now offline
        with pytest.raises(AllProvidersFailed):
            await bandit.search("bike chain length", "quick")
        bandit.flush()
        assert bandit.store.updates == {"quick": 1, "thorough": 0}
    finally:
        bandit.close()
        offline.close()
        await bandit.router.aclose()
        await offline.router.aclose()


async def test_status_counts_updates_and_reset_forgets_them(dsh_home, mock_provider):
    ok, _ = case_reply("searxng", "ok", check=False)
    mock_provider.route("GET", "/search", ok)
    bandit = bandit_for({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}}, dsh_home)
    try:
        for strategy in ("quick", "quick", "thorough"):
            await bandit.search("bike chain length", strategy)
        assert bandit.status()["updates"] == {"quick": 2, "thorough": 1}
        bandit.flush()
        assert posterior_file(dsh_home)["updates"] == {"quick": 2, "thorough": 1}
        bandit.reset()
        assert bandit.status()["updates"] == {"quick": 0, "thorough": 0}
        assert bandit.policy.stats("global") == PRIOR
        assert posterior_file(dsh_home) == {"version": 1, "rows": {}, "updates": {"quick": 0, "thorough": 0}}
        await bandit.search("bike chain length", "quick")
        bandit.flush()
        assert posterior_file(dsh_home)["updates"] == {"quick": 1, "thorough": 0}
    finally:
        bandit.close()
        await bandit.router.aclose()
    # the CLI's reset, on the file alone (a sidecar may be running: it merges into the reset file)
    assert reset_posteriors(dsh_home) == [dsh_home / "bandit" / "pending.json", dsh_home / "bandit" / "posteriors.json"]
    restarted = bandit_for({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}}, dsh_home)
    try:
        assert restarted.status()["updates"] == {"quick": 0, "thorough": 0}
        assert restarted.policy.stats("global") == PRIOR
    finally:
        restarted.close()
        await restarted.router.aclose()
    assert reset_posteriors(dsh_home / "nowhere") == []


def test_an_older_file_without_update_counts_loads_with_zero(dsh_home):
    folder = dsh_home / "bandit"
    folder.mkdir()
    (folder / POSTERIORS_FILE).write_text('{"version": 1, "rows": {"global": {"quick": [2.0, 1.0]}}}')
    router = Router.from_config(parse_router_config({"provider": "duckduckgo"}), {})
    bandit = StrategyBandit(router, parse_bandit_config(None), home=dsh_home)
    assert bandit.status()["updates"] == {"quick": 0, "thorough": 0}
    assert bandit.policy.stats("global")["quick"] == {"alpha": 3.0, "beta": 2.0}
    bandit.close()
