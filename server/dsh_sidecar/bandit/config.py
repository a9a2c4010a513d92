"""The ``bandit`` block of the sidecar config (:class:`BanditConfig`).

Reward defaults are the bandit seed's constants; the rest are ours, each with its source in the
module that defines it (:mod:`.policy`, :mod:`.feedback`, :mod:`.decisions`). Keys are the
camelCase of the field names (``speedMs``); every error is a
:class:`~dsh_sidecar.errors.ConfigError` naming the key (``bandit.speedMs``).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from dsh_sidecar.bandit.arms import QUICK_MAX, THOROUGH_MAX
from dsh_sidecar.bandit.decisions import DEFAULT_BACKUPS, DEFAULT_MAX_BYTES
from dsh_sidecar.bandit.feedback import DEFAULT_FEEDBACK_WEIGHT, DEFAULT_MAX_PENDING, DEFAULT_TTL_S
from dsh_sidecar.bandit.policy import (
    DEFAULT_DISCOUNT,
    DEFAULT_EVIDENCE_SCALE,
    DEFAULT_MIN_CLASS_EVIDENCE,
    DEFAULT_PROPENSITY_SAMPLES,
)
from dsh_sidecar.bandit.reward import QUALITY_WEIGHT, SPEED_CALIBRATION_MS
from dsh_sidecar.configmodel import ConfigModel, parse_block

__all__ = ["BanditConfig", "parse_bandit_config"]


class BanditConfig(ConfigModel):
    """The ``bandit`` block: the Thompson-sampling policy, its reward, feedback and decision log."""

    seed: int | None = Field(default=None, ge=0, le=2**128)
    """Seed of the decision generator (Python's random.Random), for reproducible choices (unset: fresh entropy per process)."""
    speed_ms: float = Field(default=SPEED_CALIBRATION_MS, gt=0, le=3_600_000)
    """Speed calibration of the reward, milliseconds: a search at or under it gets the whole speed half."""
    quality_weight: float = Field(default=QUALITY_WEIGHT, ge=0, le=1)
    """Weight of the quality half of the reward (0.5: the seed's "weighted equally")."""
    quick_max_results: int = Field(default=QUICK_MAX, ge=1, le=50)
    """Most sources the quick arm returns (seed: 5)."""
    thorough_max_results: int = Field(default=THOROUGH_MAX, ge=1, le=50)
    """Most sources the thorough arm returns, merged over its query variants (seed: 10)."""
    contextual: bool = True
    """One posterior pair per query class, topped up from the global one (false: the seed's one pair for every query)."""
    discount: float = Field(default=DEFAULT_DISCOUNT, gt=0, le=1)
    """Discount γ applied to the posteriors at each update; 1 is the seed's stationary rule."""
    min_class_evidence: float = Field(default=DEFAULT_MIN_CLASS_EVIDENCE, ge=0, le=1e6)
    """Evidence (α+β above the prior) a query class's arm needs before it stands alone; below it the global posterior tops it up."""
    evidence_scale: float = Field(default=DEFAULT_EVIDENCE_SCALE, gt=0, le=100)
    """Tempering of the posterior a choice samples from (1: the plain Beta posterior)."""
    feedback_weight: float = Field(default=DEFAULT_FEEDBACK_WEIGHT, ge=0, le=1)
    """Weight of the usage half of the reward re-credited from dsh/searchFeedback."""
    feedback_ttl_s: float = Field(default=DEFAULT_TTL_S, gt=0, le=7 * 86400)
    """How long a search waits for its dsh/searchFeedback, seconds."""
    feedback_max_pending: int = Field(default=DEFAULT_MAX_PENDING, ge=1, le=100_000)
    """Most searches kept waiting for feedback (the oldest is dropped past it)."""
    propensity_samples: int = Field(default=DEFAULT_PROPENSITY_SAMPLES, ge=100, le=100_000)
    """Points of the numerical integral giving the propensity of a sampled choice (decision log only)."""
    persist: bool = True
    """Keep the posteriors under $DSH_HOME/bandit/ (false: learn in memory only)."""
    decision_log_max_bytes: int = Field(default=DEFAULT_MAX_BYTES, ge=4096, le=1 << 30)
    """Size at which the decision log ($DSH_HOME/bandit/decisions.jsonl) rotates, bytes."""
    decision_log_backups: int = Field(default=DEFAULT_BACKUPS, ge=0, le=20)
    """Rotated decision-log files kept."""


def parse_bandit_config(raw: Any) -> BanditConfig:
    """Validate the ``bandit`` block (``None`` = defaults). Raises :class:`ConfigError`."""
    return parse_block(BanditConfig, raw, "bandit")
