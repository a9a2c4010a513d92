"""The search suggester core (``search-suggester.PLAN.txt``).

``packs`` loads and validates intent packs, ``probe`` turns a tool call into the text the
signals read, ``gate`` scores intents (``k = sigmoid(sum(weights) + b)``), ``candidates``
resolves target files in the workspace, ``noise`` holds cooldown/dedupe/turn cap/recent
filter, ``notes`` writes the note, ``ledger`` the plan's ledger lines, ``core`` ties them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_sidecar.lazy import lazy_exports

if TYPE_CHECKING:
    from dsh_sidecar.suggester.config import SuggesterConfig, parse_suggester_config
    from dsh_sidecar.suggester.core import Suggester

#: Where each public name lives; each is imported on first use (PEP 562), so importing one
#: submodule (the config parser a server's ``initialize`` needs) does not import the whole core.
_EXPORTS = {
    "SuggesterConfig": "config",
    "parse_suggester_config": "config",
    "Suggester": "core",
}

__all__ = ["Suggester", "SuggesterConfig", "parse_suggester_config"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
