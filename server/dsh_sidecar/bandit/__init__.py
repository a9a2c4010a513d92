"""The strategy bandit core: picks ``quick`` or ``thorough`` per search by Thompson sampling.

``policy`` holds the Beta posteriors and the sampling, ``reward`` the seed's heuristic,
``variants`` the reframed queries of the thorough arm, ``arms`` runs a strategy over the
router, ``config`` is the ``bandit`` config block, ``core`` ties them together and writes the seed's log line. :func:`reset_posteriors`
forgets what was learned (``dsh-search bandit reset``).
"""

from dsh_sidecar.bandit.config import BanditConfig, parse_bandit_config
from dsh_sidecar.bandit.core import SearchOutcome, StrategyBandit
from dsh_sidecar.bandit.store import reset_posteriors

__all__ = ["BanditConfig", "SearchOutcome", "StrategyBandit", "parse_bandit_config", "reset_posteriors"]
