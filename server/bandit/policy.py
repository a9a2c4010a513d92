"""Thompson sampling over Beta(α, β) posteriors, one per arm (bandit seed, "How it works").

Each call samples every arm's Beta and picks the highest sample; a reward ``r`` in [0, 1]
updates the chosen arm by ``α += r``, ``β += 1 − r`` (the Bernoulli-Beta update generalised to
fractional rewards, Agrawal & Goyal 2012). Priors are Beta(1, 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

import numpy as np

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

    rng: np.random.Generator = field(default_factory=np.random.default_rng)
    posteriors: dict[str, Posterior] = field(default_factory=lambda: {a: Posterior() for a in ARMS})

    def choose(self) -> str:
        """Sample each arm's Beta and return the arm with the highest sample."""
        samples = [self.rng.beta(self.posteriors[a].alpha, self.posteriors[a].beta) for a in ARMS]
        return ARMS[int(np.argmax(samples))]

    def update(self, arm: str, reward: float) -> None:
        """Credit ``reward`` to ``arm``. Raises ``KeyError`` for an unknown arm."""
        self.posteriors[arm].update(reward)

    def stats(self) -> dict[str, dict[str, float]]:
        """``{arm: {"alpha": α, "beta": β}}`` for both arms (the log line's ``stats``)."""
        return {a: {"alpha": p.alpha, "beta": p.beta} for a, p in self.posteriors.items()}
