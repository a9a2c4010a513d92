"""Answer-usage feedback (docs/bandit.md, "Reward"): the URLs an answer cites, usage that only
turns on, the re-credit's exact effect on the posterior, and the pending searches kept in
``$DSH_HOME/bandit/pending.json`` (a restart, two sidecars, bounds, a corrupt file)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from dsh_protocol import Attempt, Source
from dsh_sidecar.bandit import StrategyBandit, parse_bandit_config
from dsh_sidecar.bandit.feedback import MAX_PERSISTED, PendingFile, PendingSearches, UnknownSearch
from dsh_sidecar.bandit.policy import GLOBAL
from dsh_sidecar.bandit.usage import MAX_CITED_URLS, cited_urls, url_key, url_keys
from dsh_sidecar.router.chain import RouterResult

URLS = ["https://example.org/a", "https://example.org/b", "https://example.org/c"]


class ThreeSources:
    """A router answering every query at once with the three :data:`URLS` (a quick search:
    3 of 5 results, instant, so its heuristic reward is 0.5 * 3/5 + 0.5 * 1 = 0.8)."""

    def __init__(self, urls: list[str] = URLS) -> None:
        self.urls = urls

    async def search(self, query: str, cap: int, deadline_ms: int | None = None) -> RouterResult:
        sources = [Source(url=u, title=f"t{i}") for i, u in enumerate(self.urls)]
        return RouterResult(sources[:cap], False, [Attempt(provider="stub", outcome="ok", ms=0)], "stub")


def bandit(home: Path | None, router: ThreeSources | None = None, **config) -> StrategyBandit:
    cfg = parse_bandit_config({"discount": 1.0, **config})
    return StrategyBandit(router or ThreeSources(), cfg, home=home)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the URLs an answer cites


def test_cited_urls_of_an_answer():
    answer = (
        "Clean it with degreaser ([guide](https://www.example.com/clean-bike-chain)), see "
        "<https://en.wikipedia.org/wiki/Chain_(unit)> and https://example.org/a/, or "
        "(https://example.org/b). Also https://example.org/a/. Not ftp://x.example/ nor `https://`."
    )
    assert cited_urls(answer) == [
        "https://www.example.com/clean-bike-chain",
        "https://en.wikipedia.org/wiki/Chain_(unit)",
        "https://example.org/a/",
        "https://example.org/b",  # the second "https://example.org/a/" (it ends a sentence) is the same citation
    ]
    many = " ".join(f"https://x.example/{i}" for i in range(MAX_CITED_URLS + 5))
    assert len(cited_urls(many)) == MAX_CITED_URLS
    # compared by the normalised URL's digest: case, default port, trailing slash, fragment, utm_*
    assert url_key("HTTPS://Example.ORG:443/a/#top") == url_key("https://example.org/a?utm_source=x")
    assert url_key("https://example.org/a") != url_key("https://example.org/b")
    assert len(url_key(URLS[0])) == 16


# ------------------------------------------------------------------ the reward


async def test_usage_only_turns_on_and_each_report_recredits_exactly(dsh_home: Path):
    """heuristic h = 0.8, w = 0.5: not used → 0.5·0 + 0.5·0.8 = 0.4; used → 0.5 + 0.4 = 0.9; a
    later "not used" leaves 0.9. The posterior (discount 1: α−1 = Σ rewards, β−1 = Σ 1−r)
    follows each re-credit exactly, in the class row and the global row."""
    b = bandit(dsh_home)
    out = await b.search("bike chain length", "quick")
    assert (out.strategy, out.query_class, out.reward) == ("quick", "factoid", pytest.approx(0.8))
    assert b.policy.evidence["factoid"]["quick"] == pytest.approx([0.8, 0.2])
    steps = [([], False, 0.4), (["HTTPS://Example.org/b/"], True, 0.9), (["https://elsewhere.example/"], True, 0.9)]
    for urls, used, reward in steps:
        done = b.feedback(out.search_id, urls)
        assert (done.used, done.reward) == (used, pytest.approx(reward))
        for row in ("factoid", GLOBAL):
            assert b.policy.evidence[row]["quick"] == pytest.approx([reward, 1 - reward])
    b.close()
    doc = json.loads((dsh_home / "bandit" / "posteriors.json").read_text())
    assert doc["rows"]["factoid"]["quick"] == pytest.approx([0.9, 0.1])
    assert doc["updates"] == {"quick": 1, "thorough": 0}  # a re-credit is not another observation
    lines = [json.loads(x) for x in (dsh_home / "bandit" / "decisions.jsonl").read_text().splitlines()]
    assert [(r["event"], r.get("used"), r["reward"]) for r in lines] == [
        ("decision", None, 0.8),
        ("feedback", False, 0.4),
        ("feedback", True, 0.9),
        ("feedback", True, 0.9),
    ]


async def test_feedback_weight_1_replaces_the_heuristic(dsh_home: Path):
    b = bandit(None, feedbackWeight=1)
    out = await b.search("bike chain length", "quick")
    assert b.feedback(out.search_id, [URLS[0]]).reward == 1.0
    assert b.policy.evidence["factoid"]["quick"] == pytest.approx([1.0, 0.0])
    other = await b.search("bike chain length", "quick")
    assert b.feedback(other.search_id, []).reward == 0.0
    assert b.policy.evidence["factoid"]["quick"] == pytest.approx([1.0, 1.0])


async def test_an_answer_reports_this_bandits_searches_only(dsh_home: Path):
    """The answer text cites the second search's source and a source of a search another
    sidecar (same state folder) ran: this bandit's first search is reported unused, its second
    used, the other sidecar's search stays unreported; a second identical answer changes nothing."""
    mine = bandit(dsh_home)
    other = bandit(dsh_home, ThreeSources(["https://other.example/1"]))
    first = await mine.search("bike chain length", "quick")
    mine.router = ThreeSources(["https://example.org/z"])  # type: ignore[assignment]
    second = await mine.search("bike chain wear", "quick")
    theirs = await other.search("bike chain tool", "quick")
    answer = "Measure it ([how](https://example.org/z)); see also https://other.example/1."
    done = mine.answer_feedback(answer)
    assert [(d.search_id, d.used, round(d.reward, 6)) for d in done] == [
        (first.search_id, False, 0.4),
        (second.search_id, True, 0.8),  # 1 of 5 sources, instant: h = 0.6, then 0.5 + 0.3
    ]
    assert mine.answer_feedback(answer) == []
    assert other.pending.get(theirs.search_id).used is None
    mine.close()
    other.close()


# ------------------------------------------------------------------ the pending file


async def test_a_restarted_sidecar_takes_the_report_and_two_sidecars_count_it_once(dsh_home: Path):
    first = bandit(dsh_home)
    out = await first.search("bike chain length", "quick")
    first.close()  # the process ends; its pending search is in the file
    path = dsh_home / "bandit" / "pending.json"
    assert path.stat().st_mode & 0o777 == 0o600
    entry = json.loads(path.read_text())["searches"][out.search_id]
    assert entry["keys"] == sorted(url_keys(URLS)) and entry["used"] is None
    assert "example.org" not in path.read_text()  # digests, never the URLs
    a, b = bandit(dsh_home), bandit(dsh_home)  # two sidecars started after it
    assert a.feedback(out.search_id, [URLS[2]]).reward == pytest.approx(0.9)
    assert b.feedback(out.search_id, [URLS[2]]).reward == pytest.approx(0.9)  # already credited
    a.close()
    b.close()
    doc = json.loads((dsh_home / "bandit" / "posteriors.json").read_text())
    assert doc["rows"]["factoid"]["quick"] == pytest.approx([0.9, 0.1])  # re-credited once: 0.8 + 0.1
    assert json.loads(path.read_text())["searches"][out.search_id]["credited"] == pytest.approx(0.9)


async def test_the_pending_file_is_bounded_and_a_corrupt_one_starts_cold(dsh_home: Path):
    b = bandit(dsh_home, feedbackMaxPending=3)
    ids = [(await b.search(f"bike chain {i}", "quick")).search_id for i in range(5)]
    b.flush()
    path = dsh_home / "bandit" / "pending.json"
    assert sorted(json.loads(path.read_text())["searches"]) == sorted(ids[2:])
    with pytest.raises(UnknownSearch, match=r"^searchId: unknown or expired search"):
        b.feedback(ids[0], [])
    b.close()
    path.write_text('{"version": 1, "searches": {"x": {"class": "factoid"}}}')
    again = bandit(dsh_home)
    assert len(again.pending) == 0
    assert any("moved aside" in w for w in again.pending_file.warnings)
    assert list(path.parent.glob("pending.json.corrupt-*"))
    again.close()
    assert MAX_PERSISTED == 10_000


async def test_expired_searches_are_not_loaded_or_credited(dsh_home: Path):
    now = [1000.0]
    pending = PendingSearches(max_pending=10, ttl_s=60, clock=lambda: now[0])
    store = PendingFile(dsh_home, write_delay_s=0.0)
    store.load(pending)
    item = pending.add("s1", "factoid", "quick", 0.8, url_keys(URLS))
    store.submit("s1", item, pending)
    store.flush()
    now[0] = 1061.0
    assert store.recredit(pending, [("s1", url_keys(URLS))], 0.5) == [None]
    later = PendingSearches(max_pending=10, ttl_s=60, clock=lambda: now[0])
    PendingFile(dsh_home).load(later)
    assert len(later) == 0
    store.close()


async def test_a_full_disk_keeps_feedback_in_memory_with_one_warning(dsh_home: Path, monkeypatch):
    import errno

    from dsh_sidecar.state import files

    def full(*_a, **_k):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files, "atomic_write_bytes", full)
    b = bandit(dsh_home)
    out = await b.search("bike chain length", "quick")
    assert b.feedback(out.search_id, [URLS[0]]).reward == pytest.approx(0.9)
    assert b.policy.evidence["factoid"]["quick"] == pytest.approx([0.9, 0.1])
    assert b.feedback(out.search_id, [URLS[0]]).reward == pytest.approx(0.9)  # still once
    assert b.policy.evidence["factoid"]["quick"] == pytest.approx([0.9, 0.1])
    path = dsh_home / "bandit" / "pending.json"
    assert [w for w in b.status()["state"]["warnings"] if "pending" in w] == [
        f"bandit feedback state {path} cannot be written (No space left on device); keeping pending searches in memory only"
    ]
    b.close()


async def test_two_pending_files_sharing_a_folder_keep_each_others_searches(dsh_home: Path):
    """Each writer takes what it wrote instead of reading the file back only while no other
    writer replaced it: no search is lost, and a report re-credits a copy (the written search
    stays as written)."""
    pending = PendingSearches()
    a, b = PendingFile(dsh_home, write_delay_s=0.0), PendingFile(dsh_home, write_delay_s=0.0)
    for i, store in enumerate((a, b, a, a, b)):
        item = pending.add(f"s{i}", "factoid", "quick", 0.8, url_keys(URLS))
        store.submit(f"s{i}", item, pending)
        store.flush()
    path = dsh_home / "bandit" / "pending.json"
    assert sorted(json.loads(path.read_text())["searches"]) == ["s0", "s1", "s2", "s3", "s4"]
    written = a._written["s3"]
    [done] = a.recredit(pending, [("s3", url_keys(URLS[:1]))], 0.5)
    assert done is not None and done.used and done.reward == pytest.approx(0.9)
    assert (written.used, written.credited) == (None, 0.8)
    assert json.loads(path.read_text())["searches"]["s3"]["used"] is True
    later = PendingSearches()
    PendingFile(dsh_home).load(later)
    assert later.get("s3").used is True and len(later) == 5
    a.close()
    b.close()


def test_the_pending_encoder_writes_what_json_dumps_writes_and_keeps_only_unchanged_entries():
    import random

    from dsh_sidecar.bandit.feedback import PendingEncoder, PendingSearch, pending_document

    rng = random.Random(7)
    names = ["s", "é", "\u2028", '"q"', "\\", "\x00", "z" * 200, "日本"]

    def entry() -> PendingSearch:
        keys = frozenset(f"{rng.getrandbits(64):016x}" for _ in range(rng.randrange(6)))
        used = rng.choice([None, True, False])
        return PendingSearch(
            rng.choice(["factoid", "open"]),
            rng.choice(["quick", "thorough"]),
            rng.random(),
            rng.random(),
            keys,
            rng.uniform(0, 2e9),
            used,
        )

    encode = PendingEncoder()
    items = {f"{rng.choice(names)}{i}": entry() for i in range(300)}
    for _ in range(4):
        assert encode(items) == json.dumps(pending_document(items), separators=(",", ":"), sort_keys=True).encode()
        changed = rng.sample(sorted(items), 20)
        for sid in changed:  # a report re-credits a copy; a new search comes; an old one goes
            old = items[sid]
            items[sid] = PendingSearch(old.query_class, old.arm, old.heuristic, rng.random(), old.keys, old.at, True)
        items[f"new{rng.random()}"] = entry()
        del items[rng.choice(sorted(items))]
    assert encode({}) == b'{"searches":{},"version":1}'
    assert encode._entries == {}
