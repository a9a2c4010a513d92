"""The gate (plan, "The gate"): ``k = sigmoid(sum(weights) + b)`` with ``b = -0.6``, so a
single weak signal never crosses the default threshold.

Thresholds (plan, "The intents"): 0.85 for the destructive Version/Path/Ledger, 0.75 for
the rest. With ``b = -0.6``, crossing 0.75 needs ``sum(weights) ≥ 1.6986`` (ln 3 + 0.6) and crossing 0.85
needs ``sum(weights) ≥ 2.3346`` (ln(17/3) + 0.6).
"""

from __future__ import annotations

import math
from typing import Final

#: The gate's bias (plan: ``b = -0.6``).
BIAS: Final = -0.6
#: Per-intent thresholds (plan): destructive intents are held to a higher bar.
DESTRUCTIVE_THRESHOLD: Final = 0.85
DEFAULT_THRESHOLD: Final = 0.75
#: The ten intents in priority order, destructive first (plan, "The intents").
INTENTS: Final = ("Version", "Path", "Ledger", "Config", "Dependency", "Test", "Symbol", "Doc", "Usage", "Owner")
DESTRUCTIVE: Final = frozenset({"Version", "Path", "Ledger"})


def sigmoid(x: float) -> float:
    """The logistic function, overflow-safe."""
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    z = math.exp(x)
    return z / (1.0 + z)


def gate(weights_sum: float, bias: float = BIAS) -> float:
    """``k = sigmoid(sum(weights) + b)``."""
    return sigmoid(weights_sum + bias)


def default_threshold(intent: str) -> float:
    """0.85 for Version/Path/Ledger, 0.75 otherwise."""
    return DESTRUCTIVE_THRESHOLD if intent in DESTRUCTIVE else DEFAULT_THRESHOLD
