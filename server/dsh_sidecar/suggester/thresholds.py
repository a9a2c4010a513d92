"""The suggester's shipped bars that its config block takes as defaults, in a module that
imports nothing: the config is parsed before the ``initialize`` reply, and taking them from the
engine that applies them (:mod:`.confidence`) imported the whole suggester there."""

from __future__ import annotations

from typing import Final

#: The bar shipped (``minConfidence``'s default), chosen with :data:`.confidence.MODEL` by
#: ``python bench/suggester_confidence.py --cache /work/corpus-cache-ii --min-lead 0`` (its fixed
#: fold's fit, on the tune traces): a code intent's note below it is ``suppressed low-confidence``.
MIN_CONFIDENCE: Final = 0.4644
