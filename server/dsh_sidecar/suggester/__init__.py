"""The search suggester core (``search-suggester.PLAN.txt``).

``packs`` loads and validates intent packs, ``probe`` turns a tool call into the text the
signals read, ``gate`` scores intents (``k = sigmoid(sum(weights) + b)``), ``candidates``
resolves target files in the workspace, ``noise`` holds cooldown/dedupe/turn cap/recent
filter, ``notes`` writes the note, ``ledger`` the plan's ledger lines, ``core`` ties them.
"""

from dsh_sidecar.suggester.config import SuggesterConfig, parse_suggester_config
from dsh_sidecar.suggester.core import Suggester

__all__ = ["Suggester", "SuggesterConfig", "parse_suggester_config"]
