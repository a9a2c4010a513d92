"""Thompson sampling over Beta(α, β) posteriors, one per arm (bandit seed, "How it works").

Each call samples every arm's Beta and picks the highest sample; a reward ``r`` in [0, 1]
updates the chosen arm by ``α += r``, ``β += 1 − r`` (the Bernoulli-Beta update generalised to
fractional rewards, Agrawal & Goyal 2012). Priors are Beta(1, 1).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final


def seeded_generator(seed: int | None) -> random.Random:
    """The decision generator of one bandit: the standard library's Mersenne Twister seeded
    with ``seed`` (``None``: fresh entropy from the operating system). Two Beta draws per
    decision (:meth:`random.Random.betavariate`, ~1.5 µs each) are all a decision samples; the
    propensity is an integral, not more draws (:func:`win_probability`)."""
    return random.Random(seed)


#: The two arms of the seed, in the seed's order (ties go to the first).
ARMS: Final = ("quick", "thorough")
#: Seed prior Beta(1, 1).
PRIOR_ALPHA: Final = 1.0
PRIOR_BETA: Final = 1.0


@dataclass
class Posterior:
    """One arm's Beta(α, β)."""

    alpha: float = PRIOR_ALPHA
    beta: float = PRIOR_BETA

    def update(self, reward: float) -> None:
        """``α += r``, ``β += 1 − r`` with ``r`` clipped to [0, 1]."""
        r = min(max(reward, 0.0), 1.0)
        self.alpha += r
        self.beta += 1.0 - r

    @property
    def mean(self) -> float:
        """Posterior mean ``α / (α + β)``."""
        return self.alpha / (self.alpha + self.beta)


@dataclass
class ThompsonPolicy:
    """Thompson sampling over :data:`ARMS`. ``rng`` is a :class:`random.Random` (seed it for
    reproducible choices)."""

    rng: random.Random = field(default_factory=random.Random)
    posteriors: dict[str, Posterior] = field(default_factory=lambda: {a: Posterior() for a in ARMS})

    def choose(self) -> str:
        """Sample each arm's Beta and return the arm with the highest sample (ties: the first)."""
        samples = [self.rng.betavariate(self.posteriors[a].alpha, self.posteriors[a].beta) for a in ARMS]
        return ARMS[samples.index(max(samples))]

    def update(self, arm: str, reward: float) -> None:
        """Credit ``reward`` to ``arm``. Raises ``KeyError`` for an unknown arm."""
        self.posteriors[arm].update(reward)

    def stats(self) -> dict[str, dict[str, float]]:
        """``{arm: {"alpha": α, "beta": β}}`` for both arms (the log line's ``stats``)."""
        return {a: {"alpha": p.alpha, "beta": p.beta} for a, p in self.posteriors.items()}


# --------------------------------------------------------------------------- contextual

#: The row every update also lands in, the fallback of a class with little data.
GLOBAL: Final = "global"
#: Default discount γ per update of a row (discounted Thompson sampling, Raj & Kalyani 2017,
#: "Taming non-stationary bandits: a Bayesian approach"): evidence older than ~1/(1−γ) = 100
#: updates of its row fades. Chosen with bench/bandit.py (sweep of γ ∈ [0.98, 0.998]: recovery
#: after a change stays under 300 calls).
DEFAULT_DISCOUNT: Final = 0.99
#: Default evidence (α+β above the prior) a class's arm needs before it stands alone; below
#: it the arm is topped up with the global posterior's evidence (see ContextualPolicy).
#: Chosen with bench/bandit.py (swept 0–20).
DEFAULT_MIN_CLASS_EVIDENCE: Final = 5.0
#: Default weight of one of a class's own observations when sampling (see ContextualPolicy):
#: a tempered posterior (Chapelle & Li 2011, "An empirical evaluation of Thompson
#: sampling", scaled the posterior variance and found less variance better). Chosen with
#: bench/bandit.py (swept 1–6; 1 is the plain Beta posterior).
DEFAULT_EVIDENCE_SCALE: Final = 5.0
#: Default points of the propensity's numerical integral (:func:`win_probability`): at most
#: 2e-4 from a 40,000-point integral over posteriors from Beta(1, 1) to Beta(600, 5)
#: (tests/unit/bandit/test_bandit_state.py), ~0.5 ms of CPU; the 2,000-draw Monte-Carlo estimate it
#: replaces had a standard error of up to 0.011.
DEFAULT_PROPENSITY_SAMPLES: Final = 512


def _log_beta_pdf(a: float, b: float) -> Callable[[float], float]:
    """``x → log pdf`` of Beta(a, b) on the open interval (0, 1)."""
    norm = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    return lambda x: norm + (a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x)


def _support(a: float, b: float) -> tuple[float, float]:
    """Where Beta(a, b) has practically all its mass: mean ± 12 standard deviations, in (0, 1)."""
    mean = a / (a + b)
    sd = math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1.0)))
    return max(0.0, mean - 12.0 * sd), min(1.0, mean + 12.0 * sd)


def win_probability(a1: float, b1: float, a2: float, b2: float, points: int = DEFAULT_PROPENSITY_SAMPLES) -> float:
    """P(X ≥ Y) for independent X ~ Beta(a1, b1), Y ~ Beta(a2, b2): ∫ f_X(x) F_Y(x) dx by the
    midpoint rule on ``points`` cells spanning both distributions' mass (:func:`_support`), the
    CDF accumulated over the same cells and both densities normalised on the grid (so the
    truncated tails and the rule's own error cancel to first order). Deterministic: the
    probability that a Thompson draw picks the first arm, without Monte-Carlo noise."""
    lo1, hi1 = _support(a1, b1)
    lo2, hi2 = _support(a2, b2)
    lo, hi = min(lo1, lo2), max(hi1, hi2)
    if hi1 <= lo2:
        return 0.0
    if hi2 <= lo1:
        return 1.0
    n = max(2, int(points))
    step = (hi - lo) / n
    xs = [lo + (i + 0.5) * step for i in range(n)]
    log_x, log_y = _log_beta_pdf(a1, b1), _log_beta_pdf(a2, b2)
    lx = [log_x(x) for x in xs]
    ly = [log_y(x) for x in xs]
    mx, my = max(lx), max(ly)
    fx = [math.exp(v - mx) for v in lx]
    fy = [math.exp(v - my) for v in ly]
    total_x, total_y = math.fsum(fx), math.fsum(fy)
    if total_x <= 0.0 or total_y <= 0.0:  # pragma: no cover (a density that underflows everywhere)
        return 0.5
    cdf = 0.0
    win = 0.0
    for px, py in zip(fx, fy):
        # Y's CDF at the cell's middle: the cells below plus half of this one
        win += px * (cdf + 0.5 * py)
        cdf += py
    return min(1.0, max(0.0, win / (total_x * total_y)))


#: A posterior document: ``{row: {arm: [a, b]}}``, ``a``/``b`` the evidence *above* the prior
#: (α = α0 + a, β = β0 + b), so discounting toward the prior is a multiplication and the
#: prior is a floor (a, b ≥ 0).
Evidence = dict[str, dict[str, list[float]]]


def empty_evidence(rows: tuple[str, ...]) -> Evidence:
    """No evidence: every row at the prior."""
    return {row: {a: [0.0, 0.0] for a in ARMS} for row in rows}


def apply_update(ev: Evidence, row: str, arm: str, reward: float, discount: float) -> None:
    """One discounted update of ``row`` in place: both arms' evidence × ``discount`` (toward
    the prior, never below it), then the chosen arm ``a += r``, ``b += 1 − r`` (r clipped to
    [0, 1])."""
    r = min(max(reward, 0.0), 1.0)
    cells = ev.setdefault(row, {a: [0.0, 0.0] for a in ARMS})
    for a in ARMS:
        cell = cells.setdefault(a, [0.0, 0.0])
        cell[0] *= discount
        cell[1] *= discount
    cells[arm][0] += r
    cells[arm][1] += 1.0 - r


def apply_adjust(ev: Evidence, row: str, arm: str, delta: float) -> None:
    """Re-credit one earlier observation of ``arm`` in ``row`` by ``delta`` (its reward
    changed from r to r + delta): ``a += delta``, ``b −= delta``, each floored at 0 (the
    prior), no discount (no new observation)."""
    cells = ev.setdefault(row, {a: [0.0, 0.0] for a in ARMS})
    cell = cells.setdefault(arm, [0.0, 0.0])
    cell[0] = max(cell[0] + delta, 0.0)
    cell[1] = max(cell[1] - delta, 0.0)


class ContextualPolicy:
    """Discounted Thompson sampling with one Beta posterior per (query class, arm) and a
    shared :data:`GLOBAL` row.

    Every update lands in its class's row and in the global row, each discounted by
    ``discount`` (γ = 1 is the seed's stationary rule). A decision for class ``c`` samples,
    per arm, Beta(α0 + a_c + s·a_g, β0 + b_c + s·b_g): the class's own evidence ``n_c = a_c +
    b_c`` topped up with the global row's evidence scaled to at most
    ``max(0, min_class_evidence − n_c)`` observations (``s = min(1, that / n_g)``). A new
    class thus starts from what all searches taught, and stands on its own data once it has
    ``min_class_evidence`` observations of that arm. Sampling tempers the class's own
    evidence by ``evidence_scale`` k: Beta(α0 + k·a_c + s·a_g, β0 + k·b_c + s·b_g). A
    fractional reward that averages several signals varies less than the Bernoulli trial the
    Beta update assumes, so k > 1 stops the policy from exploring noise; the borrowed global
    evidence stays untempered, so a sparse arm keeps being explored even when other classes
    disagree with it. The stored α/β (the log line, the status) keep the seed's update rule.

    ``rng`` (a :class:`random.Random`, seeded with ``seed``) draws the decisions: two Beta
    draws each. The propensity of a decision is computed, not drawn
    (:func:`win_probability`), so it never moves the decision stream.
    """

    def __init__(
        self,
        classes: tuple[str, ...],
        rng: random.Random | None = None,
        *,
        seed: int | None = None,
        discount: float = DEFAULT_DISCOUNT,
        min_class_evidence: float = DEFAULT_MIN_CLASS_EVIDENCE,
        evidence_scale: float = DEFAULT_EVIDENCE_SCALE,
        prior: tuple[float, float] = (PRIOR_ALPHA, PRIOR_BETA),
    ) -> None:
        self.classes = classes
        self.rows = (*classes, GLOBAL)
        self.rng = rng if rng is not None else seeded_generator(seed)
        self.discount = discount
        self.min_class_evidence = min_class_evidence
        self.evidence_scale = evidence_scale
        self.prior = prior
        self.evidence: Evidence = empty_evidence(self.rows)
        self._effective: dict[str, tuple[float, float, float, float]] = {}

    @property
    def ready(self) -> bool:
        """Always: the generator is the standard library's, made with the policy (a decision
        imports and builds nothing)."""
        return True

    def warm(self) -> None:
        """Nothing left to prepare (the generator is the standard library's, made with the
        policy); kept so a server's preparation thread can call it."""

    # -- state
    def load(self, ev: Evidence) -> None:
        """Adopt ``ev`` (e.g. the persisted document); rows/arms missing from it are at the prior."""
        fresh = empty_evidence(self.rows)
        for row, cells in ev.items():
            if row in fresh:
                for a in ARMS:
                    if a in cells:
                        fresh[row][a] = [float(cells[a][0]), float(cells[a][1])]
        self.evidence = fresh
        self._effective.clear()

    def invalidate(self) -> None:
        """Forget the cached effective posteriors (after ``evidence`` changed in place)."""
        self._effective.clear()

    def update_op(self, cls: str, arm: str, reward: float) -> Callable[[Evidence], None]:
        """The update of :meth:`update` as an operation on any evidence document (the
        persisted one, applied under its lock)."""
        discount = self.discount

        rows = (cls, GLOBAL) if cls != GLOBAL else (GLOBAL,)  # the global row alone: not twice

        def op(ev: Evidence) -> None:
            for row in rows:
                apply_update(ev, row, arm, reward, discount)

        # what a shared store replays as increments (state/shared.py BanditOp): kind, rows, arm, value, γ
        op.fleet = ("update", rows, arm, min(max(reward, 0.0), 1.0), discount)  # type: ignore[attr-defined]
        return op

    def adjust_op(self, cls: str, arm: str, delta: float) -> Callable[[Evidence], None]:
        """The re-credit of :meth:`adjust` as an operation on any evidence document."""
        rows = (cls, GLOBAL) if cls != GLOBAL else (GLOBAL,)

        def op(ev: Evidence) -> None:
            for row in rows:
                apply_adjust(ev, row, arm, delta)

        op.fleet = ("adjust", rows, arm, delta, self.discount)  # type: ignore[attr-defined]
        return op

    def update(self, cls: str, arm: str, reward: float) -> None:
        """Credit ``reward`` to ``arm`` in ``cls``'s row and the global row (discounted)."""
        self.update_op(cls, arm, reward)(self.evidence)
        self._effective.clear()

    def adjust(self, cls: str, arm: str, delta: float) -> None:
        """Re-credit an earlier observation by ``delta`` in ``cls``'s row and the global row."""
        self.adjust_op(cls, arm, delta)(self.evidence)
        self._effective.clear()

    # -- decisions
    def effective(self, cls: str) -> tuple[float, float, float, float]:
        """``(α_quick, β_quick, α_thorough, β_thorough)`` sampled for ``cls`` (fallback and
        tempering applied)."""
        eff = self._effective.get(cls)
        if eff is None:
            out: list[float] = []
            k = self.evidence_scale
            own, shared = self.evidence[cls], self.evidence[GLOBAL]
            for a in ARMS:
                ac, bc = own[a]
                ag, bg = shared[a]
                room = self.min_class_evidence - (ac + bc)
                ng = ag + bg
                s = min(1.0, room / ng) if room > 0 and ng > 0 and cls != GLOBAL else 0.0
                out += [self.prior[0] + k * ac + s * ag, self.prior[1] + k * bc + s * bg]
            eff = self._effective[cls] = (out[0], out[1], out[2], out[3])
        return eff

    def choose(self, cls: str) -> str:
        """Sample both arms' Beta for ``cls`` and return the higher (ties: ``quick``)."""
        aq, bq, at, bt = self.effective(cls)
        beta = self.rng.betavariate
        return ARMS[0] if beta(aq, bq) >= beta(at, bt) else ARMS[1]

    def propensity(self, cls: str, arm: str, samples: int = DEFAULT_PROPENSITY_SAMPLES) -> float:
        """The probability that :meth:`choose` picks ``arm`` for ``cls`` now, in [0, 1]
        (``samples``: the points of :func:`win_probability`'s integral)."""
        return self.propensity_from(self.effective(cls), arm, samples)

    def propensity_from(
        self, effective: tuple[float, float, float, float], arm: str, samples: int = DEFAULT_PROPENSITY_SAMPLES
    ) -> float:
        """:meth:`propensity` for a snapshot of :meth:`effective` (the posterior a decision was
        sampled from), so it can be computed later, off the request path (~1 ms for the
        default 2,000 points)."""
        aq, bq, at, bt = effective
        p_quick = win_probability(aq, bq, at, bt, samples)
        return p_quick if arm == ARMS[0] else 1.0 - p_quick

    # -- inspection
    def stats(self, row: str) -> dict[str, dict[str, float]]:
        """``{arm: {"alpha": α, "beta": β}}`` of ``row``'s own posterior (the log line's ``stats``)."""
        return {
            a: {"alpha": self.prior[0] + self.evidence[row][a][0], "beta": self.prior[1] + self.evidence[row][a][1]}
            for a in ARMS
        }
