"""The strategy bandit core: picks ``quick`` or ``thorough`` per search by Thompson sampling.

``policy`` holds the Beta posteriors and the sampling, ``reward`` the seed's heuristic,
``variants`` the reframed queries of the thorough arm, ``arms`` runs a strategy over the
router, ``config`` is the ``bandit`` config block, ``core`` ties them together and writes the seed's log line. :func:`reset_posteriors`
forgets what was learned (``dsh-search bandit reset``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_sidecar.lazy import lazy_exports

if TYPE_CHECKING:
    from dsh_sidecar.bandit.config import BanditConfig, parse_bandit_config
    from dsh_sidecar.bandit.core import SearchOutcome, StrategyBandit
    from dsh_sidecar.bandit.store import reset_posteriors

#: Where each public name lives; each is imported on first use (PEP 562), so importing one
#: submodule (the config parser a server's ``initialize`` needs) does not import the whole core.
_EXPORTS = {
    "BanditConfig": "config",
    "parse_bandit_config": "config",
    "SearchOutcome": "core",
    "StrategyBandit": "core",
    "reset_posteriors": "store",
}

__all__ = ["BanditConfig", "SearchOutcome", "StrategyBandit", "parse_bandit_config", "reset_posteriors"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
