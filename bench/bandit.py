"""Strategy-bandit benchmark: a simulated search environment with drift (docs/bandit.md).

Environment (numbers from docs/bandit.md): query classes factoid 60% / open 30% / fresh 10%; per
class and arm (median latency ms, fill rate, zero-result rate, P(answer uses sources))::

    factoid  quick (3000, .95, .02, .80)  thorough (7000, .90, .01, .82)
    open     quick (3500, .80, .05, .45)  thorough (8000, .90, .02, .75)
    fresh    quick (3000, .60, .15, .35)  thorough (7500, .80, .05, .65)

latency lognormal σ 0.35 around the median; a non-empty result has
``max(1, Binomial(armMax, fill))`` sources. Calls 5,000–7,499 of 10,000: the quick provider
degrades (zero-result rate +0.45, latency ×1.5), then recovers.

Rewards: **R1** the seed's heuristic (:func:`dsh_sidecar.bandit.reward.heuristic_reward`);
**R2** the answer-usage reward of the feedback path
(:func:`dsh_sidecar.bandit.feedback.usage_reward`, default weight), ``used`` ~ Bernoulli(P(use))
when there are results. Each scenario's policies learn from and are scored by that reward;
``ours`` gets R2 the way the sidecar does: the heuristic when the search runs, then the
feedback re-credit (:meth:`ContextualPolicy.adjust`).

Policies: always-quick, always-thorough, the seed's stationary non-contextual Thompson
sampling (:class:`ThompsonPolicy`), ours (:class:`ContextualPolicy`, the sidecar's defaults).
All policies of a seed see the same environment draws (common random numbers).

Figures (mean over seeds): cumulative pseudo-regret against the per-class best arm (expected
rewards by Monte Carlo, 400k draws per cell) in total and in the 1,000 calls after each
change; calls to recover after each change (first call k after which the 100-call mean regret,
averaged over seeds, is within 0.01 of the policy's own mean over calls 4,000–4,999);
decisions/s of the real policy classes' ``choose`` in-process.

Usage: ``python bench/bandit.py [--seeds 20] [--calls 10000]``.
"""

from __future__ import annotations

import argparse
import os
import random
import time
from dataclasses import dataclass

import numpy as np
from dsh_sidecar.bandit.arms import QUICK_MAX, THOROUGH_MAX
from dsh_sidecar.bandit.context import CLASSES
from dsh_sidecar.bandit.feedback import usage_reward
from dsh_sidecar.bandit.policy import ARMS, ContextualPolicy, ThompsonPolicy
from dsh_sidecar.bandit.reward import heuristic_reward

#: The two reward models, named by what they are (the tables keep the short tags R1/R2).
REWARD_MODELS = {
    "R1": "seed heuristic (result count + speed, the seed's reward)",
    "R2": "answer usage (did the final answer use the sources; the feedback path)",
}
CLASS_P = {"factoid": 0.60, "open": 0.30, "fresh": 0.10}
# (median latency ms, fill rate, zero-result rate, P(answer uses sources)), docs/bandit.md
ENV = {
    ("factoid", "quick"): (3000, 0.95, 0.02, 0.80),
    ("factoid", "thorough"): (7000, 0.90, 0.01, 0.82),
    ("open", "quick"): (3500, 0.80, 0.05, 0.45),
    ("open", "thorough"): (8000, 0.90, 0.02, 0.75),
    ("fresh", "quick"): (3000, 0.60, 0.15, 0.35),
    ("fresh", "thorough"): (7500, 0.80, 0.05, 0.65),
}
SIGMA = 0.35
DRIFT_ZERO, DRIFT_LATENCY = 0.45, 1.5
CAP = {"quick": QUICK_MAX, "thorough": THOROUGH_MAX}
POLICIES = ("always-quick", "always-thorough", "seed TS", "ours")


@dataclass
class Phase:
    """Calls ``[start, end)`` and whether the quick provider is degraded."""

    start: int
    end: int
    degraded: bool


def cell(cls: str, arm: str, degraded: bool) -> tuple[float, float, float, float]:
    med, fill, zero, use = ENV[(cls, arm)]
    if degraded and arm == "quick":
        med, zero = med * DRIFT_LATENCY, min(zero + DRIFT_ZERO, 1.0)
    return med, fill, zero, use


_heuristic = np.vectorize(heuristic_reward, otypes=[float])


def draw(rng: np.random.Generator, cls: str, arm: str, degraded: bool, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``n`` draws of (R1, R2) for one cell."""
    med, fill, zero, use = cell(cls, arm, degraded)
    empty = rng.random(n) < zero
    count = np.where(empty, 0, np.maximum(1, rng.binomial(CAP[arm], fill, n)))
    latency = med * np.exp(rng.normal(0.0, SIGMA, n))
    r1 = _heuristic(count, CAP[arm], latency)
    used = (~empty) & (rng.random(n) < use)
    r2 = np.array([usage_reward(bool(u), h) for u, h in zip(used, r1)])
    return r1, r2


def expected(n: int = 400_000) -> dict[tuple[str, str, bool], tuple[float, float]]:
    rng = np.random.default_rng(12345)
    out = {}
    for cls in CLASSES:
        for arm in ARMS:
            for deg in (False, True):
                r1, r2 = draw(rng, cls, arm, deg, n)
                out[(cls, arm, deg)] = (float(r1.mean()), float(r2.mean()))
    return out


def run_seed(seed: int, calls: int, phases: list[Phase], mu: dict) -> dict[str, dict[str, np.ndarray]]:
    """Per reward scenario, per policy: the per-call pseudo-regret array."""
    rng = np.random.default_rng(seed)
    classes = rng.choice(len(CLASSES), size=calls, p=[CLASS_P[c] for c in CLASSES])
    degraded = np.zeros(calls, dtype=bool)
    for ph in phases:
        degraded[ph.start : ph.end] = ph.degraded
    # every call's outcome under both arms (common random numbers)
    r = {arm: np.zeros((2, calls)) for arm in ARMS}
    for ci, cls in enumerate(CLASSES):
        for arm in ARMS:
            for deg in (False, True):
                idx = np.nonzero((classes == ci) & (degraded == deg))[0]
                if len(idx):
                    r1, r2 = draw(rng, cls, arm, deg, len(idx))
                    r[arm][0, idx], r[arm][1, idx] = r1, r2
    # per-call expected reward of each arm and of the best arm
    mu_arm = {arm: np.zeros((2, calls)) for arm in ARMS}
    for ci, cls in enumerate(CLASSES):
        for deg in (False, True):
            idx = (classes == ci) & (degraded == deg)
            for arm in ARMS:
                for k in (0, 1):
                    mu_arm[arm][k, idx] = mu[(cls, arm, deg)][k]
    best = np.maximum(mu_arm["quick"], mu_arm["thorough"])
    out: dict[str, dict[str, np.ndarray]] = {}
    for k, name in ((0, "R1"), (1, "R2")):
        res = {}
        for pol in POLICIES:
            chosen = np.zeros(calls, dtype=bool)  # True = thorough
            if pol == "always-thorough":
                chosen[:] = True
            elif pol == "seed TS":
                p = ThompsonPolicy(rng=random.Random(f"{seed}-seed-ts"))
                for t in range(calls):
                    arm = p.choose()
                    chosen[t] = arm == "thorough"
                    p.update(arm, r[arm][k, t])
            elif pol == "ours":
                p2 = ContextualPolicy(CLASSES, random.Random(f"{seed}-ours"))
                for t in range(calls):
                    cls = CLASSES[classes[t]]
                    arm = p2.choose(cls)
                    chosen[t] = arm == "thorough"
                    p2.update(cls, arm, r[arm][0, t])  # the heuristic, when the search runs
                    if k == 1:  # then the feedback re-credit
                        p2.adjust(cls, arm, r[arm][1, t] - r[arm][0, t])
            got = np.where(chosen, mu_arm["thorough"][k], mu_arm["quick"][k])
            res[pol] = best[k] - got
        out[name] = res
    return out


def recovery(
    curve: np.ndarray, change: int, end: int, baseline: float, window: int = 100, tol: float = 0.01
) -> int | None:
    """Calls after ``change`` until the ``window``-call mean regret is within ``tol`` of
    ``baseline`` (``None``: not before the phase ends at ``end``)."""
    csum = np.concatenate([[0.0], np.cumsum(curve)])
    for k in range(0, end - change - window + 1):
        if (csum[change + k + window] - csum[change + k]) / window <= baseline + tol:
            return k
    return None


def decisions_per_s(n: int = 200_000) -> dict[str, float]:
    ours = ContextualPolicy(CLASSES, random.Random(0))
    seed = ThompsonPolicy(rng=random.Random(0))
    rng = np.random.default_rng(1)
    for t in range(300):
        cls = CLASSES[t % 3]
        ours.update(cls, ARMS[t % 2], float(rng.random()))
        seed.update(ARMS[t % 2], float(rng.random()))
    out = {}
    for name, fn in (("ours", lambda: ours.choose("open")), ("seed TS", seed.choose)):
        best = 0.0
        for _ in range(3):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            best = max(best, n / (time.perf_counter() - t0))
        out[name] = best
    t0 = time.perf_counter()
    for _ in range(n // 4):
        arm = ours.choose("open")
        ours.update("open", arm, 0.5)
    out["ours choose+update"] = (n // 4) / (time.perf_counter() - t0)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--calls", type=int, default=10_000)
    ap.add_argument("--first-seed", type=int, default=0, help="seeds first-seed … first-seed+seeds-1")
    args = ap.parse_args()
    calls = args.calls
    c1, c2 = calls // 2, calls * 3 // 4
    phases = [Phase(0, c1, False), Phase(c1, c2, True), Phase(c2, calls, False)]
    t0 = time.perf_counter()
    mu = expected()
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    runs = [run_seed(s, calls, phases, mu) for s in seeds]
    print(
        f"bandit bench: {args.seeds} seeds ({seeds.start}-{seeds.stop - 1}) x {calls} calls, drift {c1}-{c2 - 1} (quick zero-rate +{DRIFT_ZERO}, "
        f"latency x{DRIFT_LATENCY}); pseudo-regret vs per-class best arm, mean (sd) over seeds"
    )
    print(
        "per-class best arm:",
        ", ".join(
            f"{sc}/{cls}: " + "/".join(max(ARMS, key=lambda a: mu[(cls, a, d)][k]) for d in (False, True))
            for k, sc in ((0, "R1"), (1, "R2"))
            for cls in CLASSES
        ),
        "(normal/degraded)",
    )
    for tag, name in REWARD_MODELS.items():
        print(f"{tag} = {name}")
    header = f"{'reward':6} {'policy':16} {'regret total':>16} {'after change 1':>15} {'after change 2':>15} {'recover 1':>10} {'recover 2':>10}"
    print(header)
    print("-" * len(header))
    totals: dict[tuple[str, str], float] = {}
    for sc in ("R1", "R2"):
        for pol in POLICIES:
            arr = np.stack([r[sc][pol] for r in runs])
            tot = arr.sum(axis=1)
            a1 = arr[:, c1 : c1 + 1000].sum(axis=1).mean()
            a2 = arr[:, c2 : c2 + 1000].sum(axis=1).mean()
            curve = arr.mean(axis=0)
            base = curve[c1 - 1000 : c1].mean()
            rec = [recovery(curve, c, e, base) for c, e in ((c1, c2), (c2, calls))]
            totals[(sc, pol)] = tot.mean()
            rs = [str(x) if x is not None else f">{e - c}" for x, c, e in zip(rec, (c1, c2), (c2, calls))]
            print(f"{sc:6} {pol:16} {tot.mean():9.1f} ({tot.std():5.1f}) {a1:15.1f} {a2:15.1f} {rs[0]:>10} {rs[1]:>10}")
    print("regret against the seed's stationary Thompson sampling (the baseline), per reward model:")
    for sc, name in REWARD_MODELS.items():
        ours, seed = totals[(sc, "ours")], totals[(sc, "seed TS")]
        print(f"  {sc} {name}: ours {ours:.1f} vs seed TS {seed:.1f} = {ours / seed:.1%} of the baseline")
    dps = decisions_per_s()
    print("decisions/s in-process: " + ", ".join(f"{k} {v:,.0f}" for k, v in dps.items()))
    load = "/".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"(bench wall time {time.perf_counter() - t0:.0f} s; load average 1/5/15 min {load}, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
