"""The bandit seed's heuristic reward (``bandit-search.README.txt``, "How it works").

``r = 0`` when there are no results, else
``r = 0.5 * min(results / armMax, 1) + 0.5 * min(speedMs / durationMs, 1)``, in [0, 1].
Quality is relative to the arm's own cap so neither arm is favoured by its cap; speed is
calibrated against realistic search latency (``speedMs`` = 6000 ms in the seed).
"""

from __future__ import annotations

from typing import Final

#: Speed calibration, milliseconds: a search at or under this gets the full speed half.
SPEED_CALIBRATION_MS: Final = 6000.0
#: Weight of the quality half (seed: "weighted equally").
QUALITY_WEIGHT: Final = 0.5


def heuristic_reward(
    result_count: int,
    arm_max: int,
    duration_ms: float,
    *,
    speed_ms: float = SPEED_CALIBRATION_MS,
    quality_weight: float = QUALITY_WEIGHT,
) -> float:
    """The seed's reward in [0, 1] for ``result_count`` results out of ``arm_max`` in
    ``duration_ms`` milliseconds. A zero or negative duration counts as instant."""
    if result_count <= 0 or arm_max <= 0:
        return 0.0
    quality = min(result_count / arm_max, 1.0)
    speed = 1.0 if duration_ms <= 0 else min(speed_ms / duration_ms, 1.0)
    return quality_weight * quality + (1.0 - quality_weight) * speed
