"""Bandit operations as the sidecar queues them for the shared state (``BanditOp``), for the
state backends' contract tests."""

from __future__ import annotations

from dsh_sidecar.bandit.policy import ARMS, GLOBAL
from dsh_sidecar.state.shared import BanditOp


def op(i: int, arm: str, reward: float, discount: float = 0.99, kind: str = "update") -> BanditOp:
    """Operation ``op{i}-{kind}`` on the global row of class ``factoid``: ``arm`` rewarded
    ``reward`` (0..1) under discount ``discount``."""
    return BanditOp(f"op{i}-{kind}", kind, ("factoid", GLOBAL), arm, reward, discount, ARMS)  # type: ignore[arg-type]
