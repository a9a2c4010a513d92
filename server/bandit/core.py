"""The strategy bandit: choose an arm, run it over the router, reward, update, log.

The log line is byte-exact from the bandit seed ("Example output")::

    [bandit-search] arm=quick reward=1.000 durationMs=4393 resultCount=5 stats={"quick":{"alpha":2,"beta":1},"thorough":{"alpha":1,"beta":1}}

``stats`` is the compact JSON of both arms' α/β *after* the update, numbers written the way
JavaScript writes them (``2``, not ``2.0``).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dsh_protocol import Attempt, Source
from dsh_sidecar.bandit.arms import QUICK_MAX, THOROUGH_MAX, ArmResult, run_quick, run_thorough
from dsh_sidecar.bandit.policy import ThompsonPolicy
from dsh_sidecar.bandit.reward import QUALITY_WEIGHT, SPEED_CALIBRATION_MS, heuristic_reward
from dsh_sidecar.errors import ConfigError, config_error_from_pydantic
from dsh_sidecar.router import AllProvidersFailed, Router

#: Prefix of every bandit log line (seed).
LOG_PREFIX: Final = "[bandit-search]"


class BanditConfig(BaseModel):
    """The ``bandit`` block of the sidecar config. Defaults are the seed's constants."""

    model_config = ConfigDict(extra="forbid", strict=True, populate_by_name=True)

    seed: int | None = Field(default=None, description="numpy Generator seed, for reproducible choices")
    speed_ms: float = Field(default=SPEED_CALIBRATION_MS, gt=0, alias="speedMs")
    quality_weight: float = Field(default=QUALITY_WEIGHT, ge=0, le=1, alias="qualityWeight")
    quick_max_results: int = Field(default=QUICK_MAX, ge=1, le=50, alias="quickMaxResults")
    thorough_max_results: int = Field(default=THOROUGH_MAX, ge=1, le=50, alias="thoroughMaxResults")


def parse_bandit_config(raw: Any) -> BanditConfig:
    """Validate the ``bandit`` block (``None`` = defaults). Raises :class:`ConfigError`."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ConfigError("bandit", "must be an object")
    try:
        return BanditConfig.model_validate(raw)
    except ValidationError as exc:
        raise config_error_from_pydantic("bandit", exc) from None


@dataclass
class SearchOutcome:
    """One search as the bandit ran it. ``duration_ms`` in milliseconds, ``reward`` in [0, 1]."""

    search_id: str
    strategy: str
    sources: list[Source]
    truncated: bool
    attempts: list[Attempt]
    duration_ms: int
    reward: float
    content: str | None = None


def js_number(x: float) -> int | float:
    """A float as JavaScript's JSON would write it: integral values without ``.0``."""
    return int(x) if float(x).is_integer() else x


def format_log_line(arm: str, reward: float, duration_ms: int, result_count: int, stats: dict) -> str:
    """The seed's log line, byte-exact (see module docstring)."""
    compact = {a: {k: js_number(v) for k, v in ab.items()} for a, ab in stats.items()}
    return (
        f"{LOG_PREFIX} arm={arm} reward={reward:.3f} durationMs={duration_ms} "
        f"resultCount={result_count} stats={json.dumps(compact, separators=(',', ':'))}"
    )


class StrategyBandit:
    """Chooses ``quick``/``thorough`` per search and learns from each call's reward.

    ``log`` receives each seed log line (the server forwards it as ``window/logMessage`` and
    to stderr).
    """

    def __init__(self, router: Router, config: BanditConfig, log: Callable[[str], None] = lambda _l: None) -> None:
        self.router = router
        self.config = config
        self.policy = ThompsonPolicy(rng=np.random.default_rng(config.seed))
        self.log = log

    def arm_max(self, arm: str) -> int:
        """The arm's own result cap."""
        return self.config.quick_max_results if arm == "quick" else self.config.thorough_max_results

    async def search(
        self, query: str, strategy: str = "auto", max_results: int | None = None, deadline_ms: int | None = None
    ) -> SearchOutcome:
        """Run one search. ``strategy`` ``auto`` samples an arm; ``quick``/``thorough`` force it.

        The forced arm is still rewarded and updated (its evidence is real). Raises
        :class:`AllProvidersFailed` after crediting reward 0 when no provider answered.
        """
        arm = self.policy.choose() if strategy == "auto" else strategy
        cap = self.arm_max(arm)
        run = run_quick if arm == "quick" else run_thorough
        started = time.monotonic()
        try:
            result: ArmResult = await run(self.router, query, cap, deadline_ms)
        except AllProvidersFailed:
            self._learn(arm, 0, int((time.monotonic() - started) * 1000))
            raise
        duration_ms = int((time.monotonic() - started) * 1000)
        reward = self._learn(arm, len(result.sources), duration_ms)
        sources, truncated = result.sources, result.truncated
        if max_results is not None and len(sources) > max_results:
            sources, truncated = sources[:max_results], True
        return SearchOutcome(
            search_id=uuid.uuid4().hex,
            strategy=arm,
            sources=sources,
            truncated=truncated,
            attempts=result.attempts,
            duration_ms=duration_ms,
            reward=reward,
            content=result.content,
        )

    def _learn(self, arm: str, result_count: int, duration_ms: int) -> float:
        reward = heuristic_reward(
            result_count,
            self.arm_max(arm),
            duration_ms,
            speed_ms=self.config.speed_ms,
            quality_weight=self.config.quality_weight,
        )
        self.policy.update(arm, reward)
        self.log(format_log_line(arm, reward, duration_ms, result_count, self.policy.stats()))
        return reward

    def status(self) -> dict[str, Any]:
        """Posteriors for ``dsh/status``: ``{arms: {arm: {alpha, beta, mean}}}``."""
        return {
            "arms": {
                a: {"alpha": p.alpha, "beta": p.beta, "mean": round(p.mean, 4)}
                for a, p in self.policy.posteriors.items()
            }
        }
