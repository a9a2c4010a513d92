"""The fleet on a real Redis (docs/fleet.md): 8 sidecar processes share one ``redis-server`` while
they search through a faulty provider and learn from ``dsh/postExecute`` calls, the server is
killed (``SIGKILL``) at 20% of the calls and restarted at 70% (and at least 3 s later), and then:

* no bandit update and no knowledge update is lost: the store's exact totals equal the sums of
  what every process reports it wrote (and the bandit's equal the number of searches);
* nothing crashed: every call was answered, every process exits 0, each warned once per outage;
* a 429 seen by one sidecar makes every other skip that provider on its very next call;
* no API key reaches the store or the logs.

Size: ``DSH_FLEET_PROCESSES`` (8) × ``DSH_FLEET_CALLS`` searches and as many postExecute calls
per process. The full size, 8 × 500, takes 50–85 s on this 2-core machine (every call crosses two
processes and the store, whose ``appendfsync always`` costs a disk flush per write); CI runs
8 × 60 (15–25 s), ``DSH_FLEET_CALLS=500 pytest -s tests/e2e/test_fleet.py`` the full size. Besides
the kill, a flush slower than ``timeoutMs`` (50 ms) on a loaded machine is an outage too: it is
served locally and re-synced like the kill, and counted in ``outages``. Needs Debian's
``redis-server`` (``.ci/run`` installs it); skipped without it.
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
import redis
from dsh_sidecar.state import keys
from support.fleetkit import (
    REDIS_SERVER,
    SESSION,
    Providers,
    RedisServer,
    Sidecar,
    make_workspace,
    options,
    sidecar_env,
)

pytestmark = pytest.mark.skipif(
    REDIS_SERVER is None, reason="redis-server not installed (Debian package redis-server; .ci/run installs it)"
)

PROCESSES = int(os.environ.get("DSH_FLEET_PROCESSES", "8"))
CALLS = int(os.environ.get("DSH_FLEET_CALLS", "60"))
KEY = "tvly-FLEET-KEY"
REPO = "remote:example.org/fleet/demo"
#: Shortest outage, seconds: longer than the bandit's write-behind delay (1 s, bandit/store.py
#: WRITE_DELAY_S) and the suggester's flush interval (2 s), so every sidecar has writes queued
#: while the store is gone, whatever the speed of the run.
MIN_OUTAGE_S = 3.0


def test_fleet_loses_nothing_and_shares_a_429(tmp_path: Path) -> None:
    store = RedisServer(tmp_path / "redis")
    store.start()
    providers = Providers(error_every=5, limit_every=97, retry_after_s=1)
    sidecars: list[Sidecar] = []
    try:
        for k in range(PROCESSES):  # each its own checkout (path) and $DSH_HOME: as on separate machines
            ws = make_workspace(tmp_path / f"checkout-{k}" / "demo")
            sc = Sidecar(sidecar_env(tmp_path / f"home-{k}"), tmp_path / f"stderr-{k}.log")
            # timeoutMs 1000 (default 50): the outage here is the killed store (refused at once),
            # not a loaded CI machine's slow reply, which would count as an outage of its own
            sc.initialize(ws, options(providers, store.url, seed=k, retryMs=100, timeoutMs=1000))
            sidecars.append(sc)

        progress = [0] * PROCESSES
        problems: list[str] = []
        outcomes: Counter[str] = Counter()
        cached = [0]  # searches the shared cache answered
        cond = threading.Condition()

        def worker(k: int) -> None:
            sc = sidecars[k]
            try:
                for i in range(CALLS):
                    reply = sc.request("dsh/search", {"query": f"fleet topic {i % 200}"})
                    if "error" in reply:
                        problems.append(f"search {k}/{i}: {reply['error']}")
                    else:
                        attempts = reply["result"]["attempts"]
                        with cond:
                            outcomes.update(f"{a['provider']} {a['outcome'][:24]}" for a in attempts)
                            # the fleet's shared cache answered: no update (0 ms is no evidence);
                            # an answered search has an answer (an unanswered one is an error)
                            answers = [a["outcome"] for a in attempts if a["outcome"].startswith("ok")]
                            assert answers, attempts
                            cached[0] += all(o == "ok (cached)" for o in answers)
                    name, tool_input = SESSION[i % len(SESSION)]
                    params = {
                        "sessionId": f"w{k}-s{i // len(SESSION)}",
                        "turn": i,
                        "tool": {"name": name, "input": tool_input},
                    }
                    reply = sc.request("dsh/postExecute", params)
                    if "error" in reply:
                        problems.append(f"postExecute {k}/{i}: {reply['error']}")
                    with cond:
                        progress[k] += 1
                        cond.notify_all()
            except Exception as exc:  # a dead sidecar: reported, not hung
                problems.append(f"worker {k}: {type(exc).__name__}: {exc}")
                with cond:
                    progress[k] = CALLS
                    cond.notify_all()

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(PROCESSES)]
        for t in threads:
            t.start()
        total = PROCESSES * CALLS
        with cond:
            cond.wait_for(lambda: sum(progress) >= 0.2 * total, timeout=600)
        store.kill()  # mid-run, without warning
        killed = time.monotonic()
        with cond:  # to 70% of the calls, and long enough for every sidecar to queue writes
            cond.wait_for(lambda: sum(progress) >= 0.7 * total, timeout=600)
        while time.monotonic() - killed < MIN_OUTAGE_S:
            threading.Event().wait(0.05)
        store.start()  # same port and folder: the AOF brings back every acknowledged write
        for t in threads:
            t.join(600)
        assert not problems, problems[:5]
        assert any(o.startswith("tavily skipped: rate_limited") for o in outcomes), outcomes  # faults happened

        # every sidecar uses the store again and has re-sent what it queued
        for sc in sidecars:
            for _ in range(600):
                state = sc.call("dsh/status")["state"]
                if state["available"] and state["queuedWrites"] == 0:
                    break
                threading.Event().wait(0.1)
            assert state["available"] and state["queuedWrites"] == 0, state

        # a 429 seen by one sidecar: every other skips Tavily on its next call
        providers.retry_after_s = 60
        for _ in range(600):  # the run's own 1 s cooldowns end first: the fleet's, which the status reads
            health = {h["provider"]: h for h in sidecars[0].call("dsh/status")["router"]["health"]}
            if health["tavily"]["cooldownSecondsLeft"] == 0:
                break
            threading.Event().wait(0.05)
        providers.force_429 = 1
        first = sidecars[0].call("dsh/search", {"query": "a 429 for everyone", "strategy": "quick"})
        assert first["attempts"][0]["provider"] == "tavily" and "429" in first["attempts"][0]["outcome"], first
        tavily_seen = providers.counts["tavily"]
        for k, sc in enumerate(sidecars[1:], 1):
            reply = sc.call("dsh/search", {"query": f"a 429 for sidecar {k} too", "strategy": "quick"})
            first_attempt = reply["attempts"][0]
            m = re.fullmatch(r"skipped: rate_limited cooldown (\d+)s left", first_attempt["outcome"])
            assert first_attempt["provider"] == "tavily" and first_attempt["ms"] == 0 and m, reply["attempts"]
            assert 50 <= int(m.group(1)) <= 60  # the 60 s Retry-After, less the seconds since
            assert reply["attempts"][1]["provider"] == "searxng" and reply["attempts"][1]["outcome"] == "ok"
        assert providers.counts["tavily"] == tavily_seen  # no other sidecar sent Tavily a request

        # one warning per outage: each log is read before its status (the warning is written
        # with the count raised, under the store's lock), so the status counts every warned
        # outage, plus at most one that began between the two reads (a 50 ms timeout on a
        # loaded machine is an outage too); the exit's own flush may add one after both
        warned = [sc.stderr().count("unavailable (") for sc in sidecars]
        statuses = [sc.call("dsh/status")["state"] for sc in sidecars]
        for sc in sidecars:
            sc.close()
        for k, sc in enumerate(sidecars):
            assert sc.proc.returncode == 0, (k, sc.stderr()[-2000:])
            log = sc.stderr()
            assert 1 <= warned[k] <= statuses[k]["outages"] <= warned[k] + 1, (k, warned[k], statuses[k])
            assert KEY not in log

        # half the run without the store: bandit writes (≤ 1 s apart) and knowledge flushes (≤ 2 s)
        # were queued during it and re-sent after it, none lost
        assert all(s["resentWrites"] > 0 for s in statuses), statuses
        client = redis.Redis.from_url(store.url)
        searches = PROCESSES * CALLS + PROCESSES - cached[0]  # a cache hit is never credited
        bandit_updates = sum(s["banditUpdates"] for s in statuses)
        assert bandit_updates == searches
        glob = client.hgetall(keys.bandit_counts_key("global"))
        at_exit = [line for sc in sidecars for line in sc.stderr().splitlines() if "not sent at exit" in line]
        assert float(glob[b"quick:updates"]) + float(glob[b"thorough:updates"]) == searches, at_exit
        per_class = 0.0
        for row in ("fresh", "factoid", "open"):
            h = client.hgetall(keys.bandit_counts_key(row))
            per_class += float(h.get(b"quick:updates", 0)) + float(h.get(b"thorough:updates", 0))
        assert per_class == searches

        rows = client.hgetall(f"{keys.repo_key(REPO)}:rows")
        followed = sum(int(v) for f, v in rows.items() if f.startswith(b"f:"))
        ignored = sum(int(v) for f, v in rows.items() if f.startswith(b"i:"))
        assert followed == sum(s["knowledgeCounted"]["followed"] for s in statuses) > 0
        assert ignored == sum(s["knowledgeCounted"]["ignored"] for s in statuses) > 0

        for name in client.scan_iter(count=1000):  # no key in any key or value
            assert KEY.encode() not in name
            if client.type(name) == b"string":
                assert KEY.encode() not in (client.get(name) or b"")
        print(
            f"fleet: {PROCESSES}x{CALLS}: bandit updates {bandit_updates}/{searches}, knowledge followed {followed} "
            f"ignored {ignored}, outages per sidecar {[s['outages'] for s in statuses]}, "
            f"re-sent {[s['resentWrites'] for s in statuses]}, dropped {[s['droppedWrites'] for s in statuses]}, provider {dict(providers.counts)}"
        )
    finally:
        for sc in sidecars:
            if sc.proc.poll() is None:
                sc.proc.kill()
                sc.proc.wait()
        providers.close()
        store.stop()


def test_status_shows_the_cooldown_another_sidecar_started(tmp_path: Path) -> None:
    """``dsh/status`` reads the fleet's cooldowns from the store (off the event loop, bounded):
    a 429 one sidecar saw shows as the other's cooldown before the other searches at all, so
    what the status says is what that sidecar's next search will do."""
    store = RedisServer(tmp_path / "redis")
    store.start()
    providers = Providers(error_every=0, retry_after_s=60)
    sidecars: list[Sidecar] = []
    try:
        for k in range(2):
            ws = make_workspace(tmp_path / f"checkout-{k}" / "demo")
            sc = Sidecar(sidecar_env(tmp_path / f"home-{k}"), tmp_path / f"stderr-{k}.log")
            sc.initialize(ws, options(providers, store.url, seed=k, timeoutMs=1000))
            sidecars.append(sc)
        before = {h["provider"]: h for h in sidecars[1].call("dsh/status")["router"]["health"]}
        assert before["tavily"]["cooldownSecondsLeft"] == 0 and before["tavily"]["state"] == "unknown"
        providers.force_429 = 1
        first = sidecars[0].call("dsh/search", {"query": "a 429 for one", "strategy": "quick"})
        assert "429" in first["attempts"][0]["outcome"], first
        health = {h["provider"]: h for h in sidecars[1].call("dsh/status")["router"]["health"]}
        assert health["tavily"]["state"] == "cooling_down" and health["tavily"]["failureClass"] == "rate_limited"
        assert 55 <= health["tavily"]["cooldownSecondsLeft"] <= 60, health["tavily"]
        assert providers.counts["tavily"] == 1  # the status sent no request
    finally:
        for sc in sidecars:
            sc.close()
        providers.close()
        store.stop()
