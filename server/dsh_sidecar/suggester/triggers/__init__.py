"""The triggers, in the order they are asked: the first whose ``detect`` answers takes the call.

A wrong guess first (a failed look is no search to classify), then a failed run's traceback,
then a reproduction script, then any search. Adding a trigger is adding one module here
(the shape: ``base.Trigger``); nothing else lists them.
"""

from __future__ import annotations

from typing import Final

from dsh_sidecar.suggester.triggers.base import Trigger
from dsh_sidecar.suggester.triggers.script import Script
from dsh_sidecar.suggester.triggers.search import Search
from dsh_sidecar.suggester.triggers.traceback import Traceback
from dsh_sidecar.suggester.triggers.wrong_guess import WrongGuess

TRIGGERS: Final[tuple[Trigger, ...]] = (WrongGuess(), Traceback(), Script(), Search())

__all__ = ["TRIGGERS", "Trigger"]
