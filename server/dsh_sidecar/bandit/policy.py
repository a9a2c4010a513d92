"""Thompson sampling over Beta(α, β) posteriors, one per arm (bandit seed, "How it works").

Each call samples every arm's Beta and picks the highest sample; a reward ``r`` in [0, 1]
updates the chosen arm by ``α += r``, ``β += 1 − r`` (the Bernoulli-Beta update generalised to
fractional rewards, Agrawal & Goyal 2012). Priors are Beta(1, 1).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    import numpy as np


def _numpy() -> Any:
    """numpy, imported on first use: the first reply (``initialize``) never waits for it
    (~0.1 s here). numpy stays because the propensity needs thousands of Beta draws per
    decision: 2 × 2,000 take 0.16 ms with numpy and 6.2 ms with ``random.betavariate``
    (measured on this machine), over the router's whole 1 ms budget."""
    import numpy

    return numpy


def seeded_generators(seed: int | None) -> tuple[np.random.Generator, np.random.Generator]:
    """The decision and the propensity generators of one bandit, independent streams of
    ``SeedSequence(seed)`` (``None``: fresh entropy)."""
    np_ = _numpy()
    seeds = np_.random.SeedSequence(seed).spawn(2)
    return np_.random.default_rng(seeds[0]), np_.random.default_rng(seeds[1])


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
    """Thompson sampling over :data:`ARMS`. ``rng`` is a numpy ``Generator`` (seed it for
    reproducible choices)."""

    rng: np.random.Generator = field(default_factory=lambda: _numpy().random.default_rng())
    posteriors: dict[str, Posterior] = field(default_factory=lambda: {a: Posterior() for a in ARMS})

    def choose(self) -> str:
        """Sample each arm's Beta and return the arm with the highest sample."""
        samples = [self.rng.beta(self.posteriors[a].alpha, self.posteriors[a].beta) for a in ARMS]
        return ARMS[int(_numpy().argmax(samples))]

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
#: Default Monte-Carlo draws for the propensity of a decision.
DEFAULT_PROPENSITY_SAMPLES: Final = 2000

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

    ``rng`` draws the decisions, ``mc_rng`` the propensity estimates (separate streams so
    computing a propensity never changes the next decision). Decisions use two scalar Beta
    draws: numpy's per-call overhead on tiny arrays is larger than the sampling itself.
    """

    def __init__(
        self,
        classes: tuple[str, ...],
        rng: np.random.Generator | None = None,
        *,
        seed: int | None = None,
        discount: float = DEFAULT_DISCOUNT,
        min_class_evidence: float = DEFAULT_MIN_CLASS_EVIDENCE,
        mc_rng: np.random.Generator | None = None,
        evidence_scale: float = DEFAULT_EVIDENCE_SCALE,
        prior: tuple[float, float] = (PRIOR_ALPHA, PRIOR_BETA),
    ) -> None:
        self.classes = classes
        self.rows = (*classes, GLOBAL)
        self._rng = rng
        self._mc_rng = mc_rng
        self._seed = seed
        self.discount = discount
        self.min_class_evidence = min_class_evidence
        self.evidence_scale = evidence_scale
        self.prior = prior
        self.evidence: Evidence = empty_evidence(self.rows)
        self._effective: dict[str, tuple[float, float, float, float]] = {}
        self._generators_lock = threading.Lock()

    # -- generators (created on first use: numpy is imported lazily)
    def _generators(self) -> None:
        with self._generators_lock:  # warm() on its thread and a first decision may race
            if self._rng is not None and self._mc_rng is not None:
                return
            rng, mc_rng = seeded_generators(self._seed)
            if self._rng is None:
                self._rng = rng
            if self._mc_rng is None:
                self._mc_rng = mc_rng

    @property
    def ready(self) -> bool:
        """Whether both generators exist (a decision imports and builds nothing)."""
        return self._rng is not None and self._mc_rng is not None

    def warm(self) -> None:
        """Import numpy and create both generators now (the server runs this on a thread
        after the ``initialize`` reply), so the first ``auto`` decision does not import numpy
        on the event loop (~0.1–0.2 s, issue 16). Idempotent; the streams are those a first
        decision would have created (same ``seed``)."""
        self._generators()

    @property
    def rng(self) -> np.random.Generator:
        """The generator of the decisions (``seed``'s first stream unless one was given)."""
        if self._rng is None:
            self._generators()
        assert self._rng is not None
        return self._rng

    @rng.setter
    def rng(self, value: np.random.Generator) -> None:
        self._rng = value

    @property
    def mc_rng(self) -> np.random.Generator:
        """The generator of the propensity estimates (``seed``'s second stream)."""
        if self._mc_rng is None:
            self._generators()
        assert self._mc_rng is not None
        return self._mc_rng

    @mc_rng.setter
    def mc_rng(self, value: np.random.Generator) -> None:
        self._mc_rng = value

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

        def op(ev: Evidence) -> None:
            apply_update(ev, cls, arm, reward, discount)
            apply_update(ev, GLOBAL, arm, reward, discount)

        # what a shared store replays as increments (state/shared.py BanditOp): kind, rows, arm, value, γ
        op.fleet = ("update", (cls, GLOBAL), arm, min(max(reward, 0.0), 1.0), discount)  # type: ignore[attr-defined]
        return op

    def adjust_op(self, cls: str, arm: str, delta: float) -> Callable[[Evidence], None]:
        """The re-credit of :meth:`adjust` as an operation on any evidence document."""

        def op(ev: Evidence) -> None:
            apply_adjust(ev, cls, arm, delta)
            apply_adjust(ev, GLOBAL, arm, delta)

        op.fleet = ("adjust", (cls, GLOBAL), arm, delta, self.discount)  # type: ignore[attr-defined]
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
        beta = self.rng.beta
        return ARMS[0] if beta(aq, bq) >= beta(at, bt) else ARMS[1]

    def propensity(self, cls: str, arm: str, samples: int = DEFAULT_PROPENSITY_SAMPLES) -> float:
        """Monte-Carlo probability that :meth:`choose` picks ``arm`` for ``cls`` now, in [0, 1]."""
        return self.propensity_from(self.effective(cls), arm, samples)

    def propensity_from(
        self, effective: tuple[float, float, float, float], arm: str, samples: int = DEFAULT_PROPENSITY_SAMPLES
    ) -> float:
        """:meth:`propensity` for a snapshot of :meth:`effective` (the posterior a decision was
        sampled from), so it can be computed later, off the request path (numpy fills the
        draws without holding the GIL)."""
        aq, bq, at, bt = effective
        q = self.mc_rng.beta(aq, bq, samples)
        t = self.mc_rng.beta(at, bt, samples)
        p_quick = float(_numpy().count_nonzero(q >= t)) / samples
        return p_quick if arm == ARMS[0] else 1.0 - p_quick

    # -- inspection
    def stats(self, row: str) -> dict[str, dict[str, float]]:
        """``{arm: {"alpha": α, "beta": β}}`` of ``row``'s own posterior (the log line's ``stats``)."""
        return {
            a: {"alpha": self.prior[0] + self.evidence[row][a][0], "beta": self.prior[1] + self.evidence[row][a][1]}
            for a in ARMS
        }
