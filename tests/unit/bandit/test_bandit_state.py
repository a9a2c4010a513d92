"""Bandit persistence, discounting, contextual fallback, feedback and the decision log."""

from __future__ import annotations

import json
import multiprocessing
import os
import random
from pathlib import Path

import pytest
from dsh_sidecar.bandit import StrategyBandit, parse_bandit_config
from dsh_sidecar.bandit.context import CLASSES, classify, features
from dsh_sidecar.bandit.core import format_log_line
from dsh_sidecar.bandit.decisions import DecisionLog
from dsh_sidecar.bandit.feedback import PendingSearches, UnknownSearch, usage_reward
from dsh_sidecar.bandit.policy import GLOBAL, ContextualPolicy, apply_adjust, apply_update, win_probability
from dsh_sidecar.bandit.store import PosteriorStore
from dsh_sidecar.bandit.usage import url_keys
from dsh_sidecar.cli import render_status
from dsh_sidecar.errors import ConfigError


def policy(seed: int = 0, **kw) -> ContextualPolicy:
    return ContextualPolicy(CLASSES, random.Random(seed), **kw)


# ------------------------------------------------------------------ class features


@pytest.mark.parametrize(
    ("query", "cls"),
    [
        ("python dataclass slots", "factoid"),
        ("what is a monad", "factoid"),
        ('"connection reset by peer" site:github.com', "factoid"),
        ("how do I configure logging in Django?", "open"),
        ("react vs vue for a small dashboard", "open"),
        ("tips for a first marathon", "open"),
        ("an eleven word description of a problem with my home network router", "open"),
        ("latest numpy release", "fresh"),
        ("how to upgrade to python 3.13 in 2025", "fresh"),
        ('news "open source"', "fresh"),
    ],
)
def test_query_classes(query, cls):
    assert classify(query) == cls


def test_features_are_the_documented_ones():
    assert features('how to use "site:" in  2024') == {"recency": True, "operators": True, "open_cue": True, "words": 6}
    assert features("numpy") == {"recency": False, "operators": False, "open_cue": False, "words": 1}
    assert features("x -y") == {"recency": False, "operators": True, "open_cue": False, "words": 2}


# ------------------------------------------------------------------ update, discount, fallback


def test_discounted_update_decays_toward_the_prior_never_below():
    ev = {"open": {"quick": [4.0, 2.0], "thorough": [1.0, 3.0]}}
    apply_update(ev, "open", "thorough", 0.25, 0.5)
    assert ev["open"] == {"quick": [2.0, 1.0], "thorough": [0.75, 2.25]}
    for _ in range(200):
        apply_update(ev, "open", "thorough", 1.0, 0.5)
    assert ev["open"]["quick"][0] == pytest.approx(0.0, abs=1e-12) and ev["open"]["quick"][0] >= 0.0
    assert ev["open"]["thorough"] == pytest.approx([2.0, 0.0])  # fixed point r / (1 - γ)
    apply_adjust(ev, "open", "thorough", -3.0)
    assert ev["open"]["thorough"] == [0.0, 3.0]  # a floored at the prior


def test_policy_update_lands_in_class_and_global_and_stats_are_the_class_row():
    p = policy(discount=1.0)
    p.update("open", "quick", 1.0)
    p.update("open", "thorough", 0.85)
    p.update("fresh", "quick", 0.0)
    assert p.stats("open") == {
        "quick": {"alpha": 2.0, "beta": 1.0},
        "thorough": {"alpha": 1.85, "beta": pytest.approx(1.15)},
    }
    assert p.stats(GLOBAL)["quick"] == {"alpha": 2.0, "beta": 2.0}
    assert format_log_line("thorough", 0.854, 8481, 10, p.stats("open")) == (
        "[bandit-search] arm=thorough reward=0.854 durationMs=8481 resultCount=10 "
        'stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1.85,"beta":1.15}}'
    )


def test_log_line_rounds_discounted_stats_to_two_decimals_as_the_seed():
    p = policy(discount=0.99)
    p.update("factoid", "quick", 1.0)
    p.update("factoid", "thorough", 1 / 3)
    assert format_log_line("thorough", 1 / 3, 7000, 9, p.stats("factoid")) == (
        "[bandit-search] arm=thorough reward=0.333 durationMs=7000 resultCount=9 "
        'stats={"quick":{"alpha":1.99,"beta":1},"thorough":{"alpha":1.33,"beta":1.67}}'
    )


def test_sparse_class_borrows_global_evidence_up_to_the_threshold():
    p = policy(discount=1.0, min_class_evidence=10, evidence_scale=1.0)
    for _ in range(40):
        p.update("factoid", "quick", 1.0)  # global quick: a=40
    # "fresh" has no own data: its quick arm is the global evidence scaled to 10 observations
    assert p.effective("fresh") == pytest.approx((11.0, 1.0, 1.0, 1.0))
    for _ in range(4):
        p.update("fresh", "quick", 0.0)  # own n = 4, global now a=40, b=4 (n=44): top-up 6 obs
    aq, bq, _, _ = p.effective("fresh")
    assert (aq, bq) == pytest.approx((1 + 6 * 40 / 44, 1 + 4 + 6 * 4 / 44))
    for _ in range(6):
        p.update("fresh", "quick", 0.0)  # own n = 10: stands alone
    assert p.effective("fresh")[:2] == pytest.approx((1.0, 11.0))
    p.evidence_scale = 5.0  # tempering multiplies the evidence sampled from, not the stored α/β
    p.invalidate()
    assert p.effective("fresh")[:2] == pytest.approx((1.0, 51.0))
    assert p.stats("fresh")["quick"] == {"alpha": 1.0, "beta": 11.0}


def test_policy_is_reproducible_and_propensity_matches_choice_frequency():
    def run(seed):
        p = policy(seed)
        for _ in range(6):
            p.update("open", "quick", 0.6)
            p.update("open", "thorough", 0.4)
        return p, [p.choose("open") for _ in range(4000)]

    (p1, a), (_p2, b) = run(5), run(5)
    assert a == b
    assert a != run(6)[1]
    freq = a.count("quick") / len(a)
    prop = p1.propensity("open", "quick")
    assert abs(freq - prop) < 0.03
    assert 0.6 < prop < 0.95
    assert p1.propensity("open", "thorough") == pytest.approx(1 - prop, abs=1e-12)


@pytest.mark.parametrize(
    ("posterior", "exact"),
    [
        ((1.0, 1.0, 1.0, 1.0), 0.5),
        ((2.0, 1.0, 1.0, 2.0), 5 / 6),  # P(max of 2 uniforms ≥ min of 2) = 5/6
        ((1.0, 1.0, 2.0, 1.0), 1 / 3),  # P(U ≥ max(U1, U2)) = 1/3
        ((3.0, 1.0, 1.0, 1.0), 3 / 4),  # X has density 3x²: ∫ 3x²·x dx = 3/4
        ((1.0, 1.0, 1.0, 3.0), 3 / 4),  # Y = 1 - max of 3 uniforms: ∫ (1 - (1-x)³) dx = 3/4
    ],
)
def test_propensity_integral_is_exact_where_the_answer_is_known(posterior, exact):
    assert win_probability(*posterior) == pytest.approx(exact, abs=2e-4)


@pytest.mark.slow
@pytest.mark.parametrize(
    "posterior",
    [
        (31.0, 1.0, 26.0, 6.0),
        (600.0, 5.0, 590.0, 15.0),
        (1.0, 51.0, 1.0, 11.0),
        (1.5, 1.2, 300.0, 300.0),
        (3.7, 2.2, 3.9, 2.0),
        (250.0, 250.0, 251.0, 249.0),
    ],
)
def test_propensity_integral_agrees_with_a_fine_integral_and_with_sampling(posterior):
    """The default grid is within 2e-4 of a 40,000-point integral, and both within sampling
    error of 200,000 pairs of Beta draws (the Monte-Carlo estimate it replaces)."""
    fine = win_probability(*posterior, points=40_000)
    assert win_probability(*posterior) == pytest.approx(fine, abs=2e-4)
    rng = random.Random(11)
    aq, bq, at, bt = posterior
    n = 200_000
    wins = sum(rng.betavariate(aq, bq) >= rng.betavariate(at, bt) for _ in range(n)) / n
    assert wins == pytest.approx(fine, abs=4 * (fine * (1 - fine) / n) ** 0.5 + 1e-3)


def test_propensity_of_disjoint_posteriors_is_certain():
    assert win_probability(600.0, 5.0, 5.0, 600.0) == 1.0
    assert win_probability(5.0, 600.0, 600.0, 5.0) == 0.0


def test_discounting_recovers_after_a_change_and_the_stationary_rule_does_not():
    def run(discount):
        p = policy(3, discount=discount)
        for _ in range(500):
            arm = p.choose("factoid")
            p.update("factoid", arm, 0.9 if arm == "quick" else 0.6)
        for _ in range(200):  # quick degrades
            arm = p.choose("factoid")
            p.update("factoid", arm, 0.1 if arm == "quick" else 0.6)
        return [p.choose("factoid") for _ in range(200)].count("thorough")

    assert run(0.99) > 180
    assert run(1.0) < 100


# ------------------------------------------------------------------ persistence


def test_state_survives_a_restart(dsh_home: Path):
    a = policy()
    store = PosteriorStore(dsh_home)
    store.apply(a, a.update_op("open", "thorough", 0.75))
    b = policy()
    PosteriorStore(dsh_home).load(b)
    assert b.evidence == a.evidence
    assert b.stats("open")["thorough"] == {"alpha": 1.75, "beta": 1.25}
    path = dsh_home / "bandit" / "posteriors.json"
    assert json.loads(path.read_text())["version"] == 1
    assert path.stat().st_mode & 0o777 == 0o600


def _writer(home: str, arm: str, n: int) -> None:
    p = ContextualPolicy(CLASSES, random.Random(), discount=1.0)
    store = PosteriorStore(Path(home))
    for _ in range(n):
        store.apply(p, p.update_op("factoid", arm, 1.0))


@pytest.mark.slow
def test_two_processes_lose_no_update(dsh_home: Path):
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(dsh_home), arm, 25)) for arm in ("quick", "thorough", "quick")]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    p = policy(discount=1.0)
    PosteriorStore(dsh_home).load(p)
    assert p.evidence["factoid"] == {"quick": [50.0, 0.0], "thorough": [25.0, 0.0]}
    assert p.evidence[GLOBAL] == {"quick": [50.0, 0.0], "thorough": [25.0, 0.0]}


@pytest.mark.parametrize("content", [b"{not json", b'{"version": 1, "rows": {"open": {"quick": [-1, 0]}}}', b"[]"])
def test_corrupt_state_is_set_aside_and_the_bandit_starts_cold(dsh_home: Path, content: bytes):
    path = dsh_home / "bandit" / "posteriors.json"
    path.parent.mkdir()
    path.write_bytes(content)
    p = policy()
    store = PosteriorStore(dsh_home)
    store.load(p)
    assert p.stats("open")["quick"] == {"alpha": 1.0, "beta": 1.0}
    assert len(store.warnings) == 1 and "moved aside" in store.warnings[0]
    assert [f.name.startswith("posteriors.json.corrupt-") for f in path.parent.iterdir() if "corrupt" in f.name] == [
        True
    ]
    store.apply(p, p.update_op("open", "quick", 1.0))
    assert json.loads(path.read_text())["rows"]["open"]["quick"] == [1.0, 0.0]


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores file modes")
def test_read_only_state_keeps_serving_in_memory_with_one_warning(dsh_home: Path):
    folder = dsh_home / "bandit"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        p = policy(discount=1.0)
        store = PosteriorStore(dsh_home)
        for _ in range(3):
            store.apply(p, p.update_op("open", "quick", 1.0))
        assert p.evidence["open"]["quick"] == [3.0, 0.0]
        assert len(store.warnings) == 1 and "memory only" in store.warnings[0]
        assert store.persisting is False
    finally:
        folder.chmod(0o700)


def test_unwritable_state_keeps_serving_in_memory_with_one_warning(dsh_home: Path):
    (dsh_home / "bandit").write_text("a file where the folder should be")
    p = policy(discount=1.0)
    store = PosteriorStore(dsh_home)
    store.load(p)
    for _ in range(3):
        store.apply(p, p.update_op("open", "quick", 1.0))
    assert p.evidence["open"]["quick"] == [3.0, 0.0]
    assert [w for w in store.warnings if "memory only" in w] == [store.warnings[-1]]
    log = DecisionLog(dsh_home)
    log.append({"event": "decision"})
    assert log.enabled is False and len(log.warnings) == 1


def test_disk_full_keeps_serving_in_memory_with_one_warning(dsh_home: Path, monkeypatch):
    import errno

    from dsh_sidecar.state import files

    p = policy(discount=1.0)
    store = PosteriorStore(dsh_home)
    store.apply(p, p.update_op("open", "quick", 1.0))  # persisted

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "atomic_write_bytes", full)
    for _ in range(3):
        store.apply(p, p.update_op("open", "quick", 0.0))
    assert p.evidence["open"]["quick"] == [1.0, 3.0]
    assert store.warnings == [
        f"bandit state {store.path} cannot be written (No space left on device); keeping the posteriors in memory only"
    ]
    assert json.loads(store.path.read_text())["rows"]["open"]["quick"] == [1.0, 0.0]


# ------------------------------------------------------------------ feedback


def test_usage_reward_formula():
    assert usage_reward(True, 0.6) == pytest.approx(0.8)
    assert usage_reward(False, 0.6) == pytest.approx(0.3)
    assert usage_reward(True, 0.6, weight=1.0) == 1.0
    assert usage_reward(False, 0.6, weight=0.0) == pytest.approx(0.6)


def test_pending_searches_are_bounded_and_expire():
    now = [100.0]
    pending = PendingSearches(max_pending=2, ttl_s=10, clock=lambda: now[0])
    for sid in ("a", "b", "c"):
        pending.add(sid, "open", "quick", 0.5, url_keys(["https://x.example/1"]))
    with pytest.raises(UnknownSearch, match=r"^searchId: unknown or expired search 'a'"):
        pending.get("a")
    assert pending.get("c").keys == url_keys(["HTTPS://X.example:443/1/"])
    now[0] = 111.0
    with pytest.raises(UnknownSearch):
        pending.get("c")
    assert len(pending) == 0


class _NoRouter:
    async def search(self, *a, **k):  # pragma: no cover - never called
        raise AssertionError


def test_feedback_recredits_the_search_once(dsh_home: Path):
    bandit = StrategyBandit(_NoRouter(), parse_bandit_config({"discount": 1.0}), home=dsh_home)  # type: ignore[arg-type]
    bandit.store.apply(bandit.policy, bandit.policy.update_op("open", "thorough", 0.6))
    bandit.pending.add("s1", "open", "thorough", 0.6, url_keys(["https://a.example/x"]))
    assert bandit.feedback("s1", ["https://A.example/x/"]).reward == pytest.approx(0.8)
    assert bandit.policy.evidence["open"]["thorough"] == pytest.approx([0.8, 0.2])
    assert bandit.feedback("s1", ["https://A.example/x/"]).reward == pytest.approx(0.8)  # idempotent
    assert bandit.policy.evidence["open"]["thorough"] == pytest.approx([0.8, 0.2])
    # usage only turns on: a later report that the answer used none of it changes nothing
    assert bandit.feedback("s1", []).reward == pytest.approx(0.8)
    assert bandit.policy.evidence[GLOBAL]["thorough"] == pytest.approx([0.8, 0.2])
    bandit.close()
    records = [json.loads(x) for x in (dsh_home / "bandit" / "decisions.jsonl").read_text().splitlines()]
    assert [(r["event"], r["used"], r["reward"], r["previousReward"]) for r in records] == [
        ("feedback", True, 0.8, 0.6),
        ("feedback", True, 0.8, 0.8),
        ("feedback", True, 0.8, 0.8),
    ]
    with pytest.raises(UnknownSearch):
        bandit.feedback("s2", [])


# ------------------------------------------------------------------ decision log, config, status


def test_decision_log_rotates_and_stays_bounded(dsh_home: Path):
    log = DecisionLog(dsh_home, max_bytes=4096, backups=2)
    for i in range(300):
        log.append({"event": "decision", "i": i, "pad": "x" * 40})
    log.close()
    folder = dsh_home / "bandit"
    names = sorted(f.name for f in folder.iterdir())
    assert names == ["decisions.jsonl", "decisions.jsonl.1", "decisions.jsonl.2"]
    assert all(f.stat().st_size <= 4096 for f in folder.iterdir())
    assert (folder / "decisions.jsonl").stat().st_mode & 0o777 == 0o600
    last = json.loads((folder / "decisions.jsonl").read_text().splitlines()[-1])
    assert last["i"] == 299


def test_new_config_keys_are_validated():
    cfg = parse_bandit_config({"discount": 0.95, "minClassEvidence": 5, "feedbackWeight": 1, "persist": False})
    assert (cfg.discount, cfg.min_class_evidence, cfg.feedback_weight, cfg.persist) == (0.95, 5, 1, False)
    for key, bad in (("discount", 0), ("discount", 1.5), ("feedbackWeight", -0.1), ("propensitySamples", 10)):
        with pytest.raises(ConfigError) as info:
            parse_bandit_config({key: bad})
        assert info.value.key == f"bandit.{key}"


def test_persist_false_writes_nothing(dsh_home: Path):
    bandit = StrategyBandit(_NoRouter(), parse_bandit_config({"persist": False}), home=dsh_home)  # type: ignore[arg-type]
    bandit.store.apply(bandit.policy, bandit.policy.update_op("open", "quick", 1.0))
    assert list(dsh_home.iterdir()) == []
    assert bandit.status()["state"] == {"path": None, "persisting": False, "warnings": []}


def test_status_and_its_table(dsh_home: Path):
    bandit = StrategyBandit(_NoRouter(), parse_bandit_config({"discount": 1.0}), home=dsh_home)  # type: ignore[arg-type]
    for _ in range(12):
        bandit.store.apply(bandit.policy, bandit.policy.update_op("open", "thorough", 0.75))
    st = bandit.status()
    assert st["classes"]["open"]["thorough"] == {"alpha": 10.0, "beta": 4.0, "mean": 0.7143}
    assert st["classes"]["open"]["evidence"] == 12
    assert st["classes"]["open"]["usesGlobalFallback"] is True  # quick has no own data
    assert st["arms"]["thorough"] == {"alpha": 10.0, "beta": 4.0, "mean": 0.7143}
    table = render_status(st).splitlines()
    assert table[1].split() == ["class", "arm", "alpha", "beta", "mean", "evidence", "fallback"]
    assert table[4].split() == ["open", "quick", "1.000", "1.000", "0.500", "12", "yes"]
    assert table[5].split() == ["thorough", "10.000", "4.000", "0.714"]
    bandit.close()


@pytest.mark.slow
def test_cli_status_shows_each_class_posteriors(dsh_home: Path):
    import subprocess
    import sys

    from support.sidecar import clean_env

    p = policy(discount=1.0)
    store = PosteriorStore(dsh_home)
    for _ in range(3):
        store.apply(p, p.update_op("fresh", "thorough", 0.5), counts_for="thorough")
    out = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "status"],
        env=clean_env(dsh_home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    lines = lines[lines.index(next(x for x in lines if x.startswith("bandit posteriors"))) :]  # after servers, chain
    assert lines[0].startswith("bandit posteriors Beta(alpha, beta) per query class (discount 0.99;")
    assert lines[6].split() == ["fresh", "quick", "1.000", "1.000", "0.500", "3", "yes"]
    assert lines[7].split() == ["thorough", "2.500", "2.500", "0.500"]
    assert lines[10].strip() == "updates per arm (searches learnt from): quick 0, thorough 3"
    assert lines[11].strip() == f"state: {dsh_home / 'bandit' / 'posteriors.json'}; pending feedback: 0"
    js = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "status", "--json"],
        env=clean_env(dsh_home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert json.loads(js.stdout)["bandit"]["classes"]["fresh"]["thorough"] == {"alpha": 2.5, "beta": 2.5, "mean": 0.5}


@pytest.mark.slow
def test_cli_status_names_the_fleet_store_where_the_posteriors_live(dsh_home: Path, tmp_path: Path):
    """With a Redis backend the posteriors live in the fleet store: the status names it (its
    password redacted), where it said "memory only"."""
    import subprocess
    import sys

    from support.sidecar import clean_env

    config = tmp_path / "fleet.yml"
    config.write_text("state:\n  backend: redis://:pw-Fleet-9x@127.0.0.1:9/0\n")
    out = subprocess.run(
        [sys.executable, "-m", "dsh_sidecar", "status", "--config", str(config)],
        env=clean_env(dsh_home),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    lines = [x.strip() for x in out.stdout.splitlines()]
    assert "state: redis://127.0.0.1:9/0 (fleet store); pending feedback: 0" in lines
    assert "pw-Fleet-9x" not in out.stdout + out.stderr
