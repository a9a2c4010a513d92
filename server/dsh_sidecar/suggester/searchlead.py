"""The session's searches as a task text: the workspace ranked by the task lead's ranker
(``lead/ranker.py``: symbol index, code BM25, file-name words, the graph around the named
definitions) against what the agent has searched for so far — the identifiers and the words of
its search calls — so that a code note can name the file the agent is converging on before it
opens it (``searchLead``, off by default: docs/corpus.md, "The session's searches as a task
text").

``searchLead`` (``initializationOptions.suggester``):

* ``off`` — nothing here runs (the default);
* ``order`` — a code intent's targets are ordered with this ranking's support beside the calls'
  (:data:`WEIGHT`, decaying linearly with the file's place, as the task's support);
* ``add`` — as ``order``, and the ranking's best file the session has not been shown, when it is
  among its first :data:`ADD_WITHIN` and the session searched at least :data:`MIN_SEARCHES`
  identifiers or words, joins the note as its second target;
* ``second`` — only that added file: the note's targets keep the order the calls' evidence gives
  them (no support from this ranking), and the file joins as the second target.

The ranking is computed when a code note reaches the ranking and what the session searched
changed since the last one (one ranking per session and evidence: a cache of one), bounded as the
task lead is (the text is a few dozen names and words; the ranker's loops are bounded by counts).
It reads only workspace paths and the session's own search words: nothing of it reaches the model
but workspace paths, escaped as every target is (``notes.make_note``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.session import MAX_TASK_FILES, SessionEvidence, TaskEvidence

#: The knob's values.
Mode = Literal["off", "order", "add", "second"]
#: Support of the ranking's best file when ordering a note's targets (a file lower in it:
#: linearly less), the task's own weight (``ranking.Weights.task``).
WEIGHT: Final = 2.0
#: Least identifiers and words searched before the ranking may add a target.
MIN_SEARCHES: Final = 2
#: The added file is among the ranking's first this many.
ADD_WITHIN: Final = 3
#: Most of the session's names and of its words made into the text (most recent first).
MAX_NAMES: Final = 16
MAX_WORDS: Final = 24
#: The reason an added target gives.
REASON: Final = "matches what this session searched for"


@dataclass(frozen=True)
class SearchedLead:
    """One ranking of the workspace against the session's searches: the evidence it was made
    from (``key``) and the ranked files (``ranks``, best first, at most
    :data:`~.session.MAX_TASK_FILES`)."""

    key: tuple[tuple[str, ...], tuple[str, ...]]
    ranks: TaskEvidence

    def relevance(self, path: str) -> float:
        """1 for the best file, linearly less down the ranking, 0 outside it."""
        r = self.ranks.rank(path)
        return 0.0 if r is None else 1.0 - r / MAX_TASK_FILES


def _key(ev: SessionEvidence) -> tuple[tuple[str, ...], tuple[str, ...]]:
    names = tuple(list(ev.names)[-MAX_NAMES:])
    words = tuple(t for t in list(ev.terms)[-MAX_WORDS:] if len(t) >= 3)
    return names, words


def text_of(names: Iterable[str], words: Iterable[str]) -> str:
    """The task-like text of a session's searches: its identifiers in backticks (the ranker
    reads a backticked name as the text's subject), then its words."""
    return " ".join([f"`{n}`" for n in names if "`" not in n] + [w for w in words if "`" not in w])


def searched_lead(ev: SessionEvidence, graph: WorkspaceView | None, content: ContentView | None) -> SearchedLead | None:
    """The ranking of the workspace against ``ev``'s searches (cached on ``ev`` while they do
    not change); ``None`` without a symbol index or a search."""
    if graph is None or graph.symbols is None:
        return None
    key = _key(ev)
    if not key[0] and not key[1]:
        return None
    known = ev.searched_lead
    if isinstance(known, SearchedLead) and known.key == key:
        return known
    from dsh_sidecar.suggester.lead.mentions import mentions
    from dsh_sidecar.suggester.lead.ranker import DEFAULT_WEIGHTS, rank

    m = mentions(text_of(*key))
    leads = [] if m.empty else rank(m, cast(Any, graph), cast(Any, content), DEFAULT_WEIGHTS, MAX_TASK_FILES)
    made = SearchedLead(key, TaskEvidence.of((lead.path for lead in leads), ()))
    ev.searched_lead = made
    return made


def add_target(targets: list[Target], lead: SearchedLead, ev: SessionEvidence) -> list[Target]:
    """``targets`` with the ranking's best file the session was not shown as the second
    (module docstring: ``add``); ``targets`` unchanged when there is none."""
    if len(lead.key[0]) + len(lead.key[1]) < MIN_SEARCHES:
        return targets
    named = {t.path for t in targets}
    for path, place in lead.ranks.ranks.items():
        if place >= ADD_WITHIN:
            break
        if path in ev.seen or path in named:
            continue
        added = Target(path, REASON, 0.0)
        return targets[:1] + [added] + targets[1:]
    return targets
