"""The query class the contextual bandit keeps separate posteriors for.

The bandit seed calls itself contextual but uses no context; here every query gets one of
three classes, from features a person can check by eye (no model, no network):

* ``recency`` – a recency word (``latest``, ``today``, ``news``, ``release``, ``this week`` …)
  or a year ``2000``–``2099``;
* ``operators`` – a quoted phrase or a search operator (``site:``, ``filetype:``,
  ``intitle:``, ``-term``, `` OR ``);
* ``open_cue`` – an open-ended cue (``how``, ``why``, ``explain``, ``compare``, ``vs``,
  ``best``, ``pros and cons``, ``difference``, ``should``, ``guide`` …);
* ``words`` – the number of word tokens.

The rule, first match wins:

1. ``fresh`` when ``recency`` (fresh results matter more than anything else);
2. ``factoid`` when ``operators`` (the user pinned down exactly what to find);
3. ``open`` when ``open_cue`` or ``words >= OPEN_MIN_WORDS``;
4. ``factoid`` otherwise (short lookups: names, definitions, ``what is X``, versions).
"""

from __future__ import annotations

import re
from typing import Final

#: The classes, in the order the status and the decision log list them.
CLASSES: Final = ("factoid", "open", "fresh")
#: A query of at least this many words is open-ended even without a cue (our choice: the
#: median web query is 2–3 words; 9+ words is a description, not a lookup).
OPEN_MIN_WORDS: Final = 9

_RECENCY = re.compile(
    r"\b(latest|newest|recent|recently|today|tonight|yesterday|tomorrow|now|current|currently|news|breaking|"
    r"update|updates|updated|release|released|releases|announced|announcement|upcoming|"
    r"this (?:week|month|year)|last (?:week|month|night)|20\d\d)\b",
    re.IGNORECASE,
)
_OPERATORS = re.compile(r'"[^"]+"|\b(?:site|filetype|intitle|inurl|ext):\S|(?:^|\s)-\w|\sOR\s')
_OPEN_CUE = re.compile(
    r"\b(how|why|explain|explained|compare|comparison|vs\.?|versus|best|pros and cons|difference|differences|"
    r"should|guide|tutorial|overview|ways to|ideas|tips|strategies|approaches|alternatives)\b",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w+", re.UNICODE)


def features(query: str) -> dict[str, bool | int]:
    """The features of ``query`` the class is derived from (see module docstring)."""
    return {
        "recency": bool(_RECENCY.search(query)),
        "operators": bool(_OPERATORS.search(query)),
        "open_cue": bool(_OPEN_CUE.search(query)),
        "words": len(_WORD.findall(query)),
    }


def classify(query: str) -> str:
    """One of :data:`CLASSES` for ``query`` by the rule of the module docstring."""
    f = features(query)
    if f["recency"]:
        return "fresh"
    if f["operators"]:
        return "factoid"
    if f["open_cue"] or int(f["words"]) >= OPEN_MIN_WORDS:
        return "open"
    return "factoid"
