"""The search suggester core (``search-suggester.PLAN.txt``).

``service`` is the suggester's lifecycle (packs, prepared targets, status); ``pipeline`` is one
call read top to bottom: ``parse/`` turns it into a query, ``paths`` makes it workspace-relative,
``triggers/`` recognise its intent (``classify`` + ``evidence`` + ``gate`` for a search),
``resolve`` and ``candidates`` name the targets, ``filters`` and ``suppression`` hold back
what the agent knows or was just told, ``notes`` writes the note, ``decision`` is the outcome
and ``ledger`` its line. ``packs``/``activation`` load the intent packs, ``prepared`` their
call-independent targets, ``learning``/``knowledge``/``dismissals``/``section`` what lasts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_sidecar.lazy import lazy_exports

if TYPE_CHECKING:
    from dsh_sidecar.suggester.config import SuggesterConfig, parse_suggester_config
    from dsh_sidecar.suggester.service import Suggester

#: Where each public name lives; each is imported on first use (PEP 562), so importing one
#: submodule (the config parser a server's ``initialize`` needs) does not import the whole core.
_EXPORTS = {
    "SuggesterConfig": "config",
    "parse_suggester_config": "config",
    "Suggester": "service",
}

__all__ = ["Suggester", "SuggesterConfig", "parse_suggester_config"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
