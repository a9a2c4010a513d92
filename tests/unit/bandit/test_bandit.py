"""The bandit seed: reward, update rule, log line (exact bytes), arms over a real router."""

from __future__ import annotations

import random

import pytest
from dsh_sidecar.bandit import StrategyBandit, parse_bandit_config
from dsh_sidecar.bandit.arms import _parsed_key, _plain_key, normalise_url
from dsh_sidecar.bandit.core import format_log_line
from dsh_sidecar.bandit.policy import Posterior, ThompsonPolicy
from dsh_sidecar.bandit.reward import heuristic_reward
from dsh_sidecar.bandit.variants import reframe
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.router import Router, parse_router_config
from support.mockprovider import case_reply


def test_reward_formula():
    assert heuristic_reward(0, 5, 100) == 0.0
    assert heuristic_reward(5, 5, 4393) == 1.0
    assert heuristic_reward(10, 10, 8481) == pytest.approx(0.5 + 0.5 * 6000 / 8481)
    assert round(heuristic_reward(10, 10, 8481), 3) == 0.854  # the seed's example line
    assert heuristic_reward(3, 10, 12000) == pytest.approx(0.5 * 0.3 + 0.5 * 0.5)
    assert heuristic_reward(20, 10, 0) == 1.0


def test_update_rule():
    p = Posterior()
    p.update(0.85)
    assert (p.alpha, p.beta) == pytest.approx((1.85, 1.15))
    p.update(1.7)  # clipped to 1
    assert (p.alpha, p.beta) == pytest.approx((2.85, 1.15))


def test_log_line_is_byte_exact_with_the_seed_examples():
    stats = {"quick": {"alpha": 2.0, "beta": 1.0}, "thorough": {"alpha": 1.0, "beta": 1.0}}
    assert format_log_line("quick", 1.0, 4393, 5, stats) == (
        "[bandit-search] arm=quick reward=1.000 durationMs=4393 resultCount=5 "
        'stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1,"beta":1}}'
    )
    policy = ThompsonPolicy()
    policy.update("quick", 1.0)
    reward = heuristic_reward(10, 10, 8481)  # 0.85375...: the seed's own numbers, unrounded
    policy.update("thorough", reward)
    assert format_log_line("thorough", reward, 8481, 10, policy.stats()) == (
        "[bandit-search] arm=thorough reward=0.854 durationMs=8481 resultCount=10 "
        'stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1.85,"beta":1.15}}'
    )


def test_thompson_prefers_the_better_arm_and_is_reproducible():
    def run(seed):
        policy = ThompsonPolicy(rng=random.Random(seed))
        for _ in range(50):
            policy.update("quick", 0.9)
            policy.update("thorough", 0.2)
        return [policy.choose() for _ in range(200)]

    a, b = run(7), run(7)
    assert a == b
    assert a.count("quick") > 190


def test_variants_are_deterministic_and_distinct():
    assert reframe("How do I configure logging in Django?") == [
        "How do I configure logging in Django?",
        "configure logging Django",
        "configure logging Django tutorial example",
    ]
    assert reframe("react vs vue") == ["react vs vue", "react vs vue comparison differences"]
    assert reframe("  python   ") == ["python", "python overview"]


def test_normalise_url():
    assert normalise_url("HTTPS://Example.com:443/a/?utm_source=x&b=1#frag") == "https://example.com/a?b=1"
    assert normalise_url("http://example.com/a") == normalise_url("http://EXAMPLE.com/a/")
    # no query, an empty one, one left empty by the utm_ parameters: the same key
    for url in ("HTTP://Example.com:80/a/#x", "http://example.com/a?", "http://example.com/a/?utm_source=x"):
        assert normalise_url(url) == "http://example.com/a"
    assert normalise_url("https://Example.com:8443/") == "https://example.com:8443"
    assert normalise_url("https://example.com/s?q=a+b&x=%2F") == "https://example.com/s?q=a+b&x=%2F"
    # a port urllib cannot read (an untrusted answer's URL) is its own key; it raised before
    for url in ("http://example.com:99999/a", "http://Example.com:x/a/", "https://h.com:443 /"):
        assert normalise_url(url) == url


def test_normalise_url_plain_path_gives_the_parsed_key():
    """The plain path (no ``urlsplit``) gives the general path's key for every URL it takes, and
    declines every other: schemes, hosts (case, user info, ports, IPv6, non-ASCII), paths,
    queries, fragments, whitespace and control characters, combined."""
    schemes = ["http://", "https://", "HTTPS://", "Https://", "ftp://", "https:/", "https:", "", "mailto:"]
    hosts = ["example.com", "Example.COM", "a.b.c", "", "user@h.com", "u:p@h.com", "h.com:443", "h.com:80"]
    hosts += ["h.com:8080", "h.com:", "h.com:x", "[::1]", "[::1]:8080", "[::1", "h%41.com", "bücher.de", "h.com\t"]
    paths = ["", "/", "/a", "/a/", "/a//", "//", "/A/b c", "/a%2F/", "/é", "/a\\b", "/a;p", "/x\x7f", "/@:[]"]
    tails = ["", "?", "?utm_source=x", "?b=1&utm_medium=y", "#frag", "?a=1#f", " ", "\n", "\r\n", "/"]
    taken = set()
    for lead in ("", " ", "\x00"):
        for url in (lead + s + h + p + t for s in schemes for h in hosts for p in paths for t in tails):
            assert normalise_url(url) == _parsed_key(url), url
            if _plain_key(url) is not None:
                taken.add(url)
    plain_paths = [p for p in paths if p.isascii() and p.isprintable()]
    common = {
        s + h + p + t for s in schemes[:2] for h in hosts[:3] + ["h%41.com"] for p in plain_paths for t in ("", "/")
    }
    assert common <= taken  # the usual answer's URL takes the plain path


def test_bandit_config_errors():
    with pytest.raises(ConfigError) as info:
        parse_bandit_config({"speedMs": 0})
    assert info.value.key == "bandit.speedMs"
    with pytest.raises(ConfigError) as info:
        parse_bandit_config({"nope": 1})
    assert info.value.key == "bandit.nope"


async def test_thorough_runs_three_queries_and_merges(mock_provider):
    reply, case = case_reply("searxng", "ok", check=False)
    mock_provider.route("GET", "/search", reply)
    cfg = parse_router_config({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}})
    router = Router.from_config(cfg, {})
    lines: list[str] = []
    bandit = StrategyBandit(router, parse_bandit_config({"seed": 1}), log=lines.append)
    try:
        out = await bandit.search("how do I clean a bike chain", strategy="thorough")
        queries = sorted(r.query["q"] for r in mock_provider.requests)
        assert queries == sorted(reframe("how do I clean a bike chain"))
        assert len(queries) == 3
        # same 6 URLs from each variant: merged and de-duplicated
        assert [s.url for s in out.sources] == case["expect"]["urls"]
        assert out.truncated is False
        assert len(out.attempts) == 3
        assert out.strategy == "thorough"
        assert lines[0].startswith("[bandit-search] arm=thorough reward=") and " resultCount=6 " in lines[0]
        assert out.query_class == "open"
        st = bandit.policy.stats("open")["thorough"]
        assert st["alpha"] + st["beta"] == pytest.approx(3.0)
        assert st["alpha"] - 1 == pytest.approx(out.reward)
    finally:
        await router.aclose()


async def test_search_ids_are_one_random_prefix_and_a_counter(mock_provider, monkeypatch):
    """The bandit draws its id prefix once (no urandom call per search): 16 hex digits, then a
    16-digit counter from 1."""
    import uuid

    reply, _case = case_reply("searxng", "ok", check=False)
    mock_provider.route("GET", "/search", reply)
    cfg = parse_router_config({"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}})
    router = Router.from_config(cfg, {})
    bandit = StrategyBandit(router, parse_bandit_config({"seed": 1}))
    drawn: list[int] = []
    real_uuid4 = uuid.uuid4
    monkeypatch.setattr(uuid, "uuid4", lambda: drawn.append(1) or real_uuid4())
    try:
        ids = [(await bandit.search(f"query {i}", strategy="quick")).search_id for i in range(3)]
    finally:
        await router.aclose()
    assert drawn == []  # the prefix was drawn when the bandit was built, not per search
    assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)
    assert len({i[:16] for i in ids}) == 1
    assert [int(i[16:], 16) for i in ids] == [1, 2, 3]
