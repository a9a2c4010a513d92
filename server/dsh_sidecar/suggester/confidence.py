"""How likely a code intent's note is to help: a per-note confidence, and silence below a bar.

A note on a code intent (Symbol, Usage, Test: the intents whose targets ``ranking.py`` orders by
the session's evidence) is scored at decision time, from what is known when the call is
decided — nothing of the trace's future — by a logistic model of nine features
(:class:`Features`):

* ``source`` — its first target is a source file (``workspace/kinds.py``), not a test, a
  config, a manifest or a doc;
* ``support`` — the first target's support from the session's calls (``ranking.Scorer.
  calls_support``: it defines the searched name, a name searched before, a failing run's own
  frame, a file-name word, the folder of an opened file);
* ``margin`` — by how much the first target's support exceeds the second's (the first's own
  when it is alone; never negative);
* ``failing_run`` — the trigger is a failing run (a traceback, a script the agent runs), not a
  search;
* ``one_shown`` — the call showed exactly one workspace file (a ``grep`` that found the
  definition: the note can only name other files, its uses);
* ``common_name`` — the searched identifier is mentioned in more than
  :data:`COMMON_NAME_FILES` files of the workspace (``find``, ``name``, ``value``: a name that
  says little about where the task is);
* ``task`` — how high the session's task ranks the first target (``ranking.Scorer.
  task_relevance``: 1 for the task lead's best file, linearly less down its kept ranking, 0
  outside it) — always 0 in a session without a task text, so there the confidence is what
  the other features give. Its weight ships as 0: on a tune sample (60 traces, bar
  off) the weight that maximised useful-precision was −1 (0.48 → 0.57), and on the held-out
  set that weight lowered it (0.39 → 0.33) and the lead share (0.20 → 0.16): not kept
  (docs/corpus.md, "Task-aware notes");
* ``edited`` — the session has already changed a file of the workspace (``SessionState.
  edited``: an edit or write of a listed file, a patch): the agent knows where it works (on
  the tune traces 37% of the notes after the first repository edit were useful, 62% before
  it; 1 of their 33 lead notes came after it);
* ``said`` — how many notes the session already had (at most :data:`MAX_SAID`): the first
  notes of a session carry its leads (28 of the tune traces' 33 lead notes were a session's
  first), the third and later ones were useful 38% of the time.

``confidence = sigmoid(bias + Σ weight × feature)``. A note below ``minConfidence`` (the
suggester knob; default :data:`.thresholds.MIN_CONFIDENCE`) is ``suppressed low-confidence <Intent>``, a
ledger line like every silence the pipeline chooses. A project intent's note (where the
project keeps its version, changelog, manifests…) is not scored: its targets come from the
manifests, and none of these features says whether they are right. Neither is a wrong guess
answered with the files its missing path most likely meant (``meant.py``: every target's
reason is :data:`~dsh_sidecar.suggester.meant.REASON`): the workspace's names chose them, not
the session's searches the features read.

**How the constants were chosen** (``docs/corpus.md``, "Per-note confidence"): by
``bench/suggester_confidence.py`` on the tune trajectories only — every note of an in-process
replay with the abstention off, labelled *useful* (it names a gold file or a file the agent
opens later), the model fitted by regularised logistic regression, and the bar chosen to
maximise useful-precision subject to a lead note in at least 15% of the traces, at least 90%
of the traces with a lead note kept, and at least 8 notes per 100 search calls. The same bench
refits and rechooses on every leave-one-agent-family-out and leave-one-repository-out training
fold and scores the held-out fold, so what the model and its bar generalise to is in the table,
not only the fixed held-out set. Per call the work is a few set and dictionary reads (two
supports, one kind, one posting's size, a flag and a counter of the session): nothing grows
with the workspace. The tune traces' own lead share without abstention (0.14) is under the
absolute 15% floor, so the shipped bar was chosen with that floor off (``--min-lead 0``) and
the relative one (90% of the lead traces kept) on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Final

from dsh_sidecar.suggester import meant, toolconfig
from dsh_sidecar.suggester.candidates import PROJECT_INTENTS, Target
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import WorkspaceView
from dsh_sidecar.suggester.ranking import CallScorer
from dsh_sidecar.suggester.session import SessionEvidence
from dsh_sidecar.workspace.kinds import classify

#: A searched identifier mentioned in more files than this is a common name (``common_name``).
COMMON_NAME_FILES: Final = 100
#: The trigger of a look for a project file that is not where the call looked: its notes name
#: where the project keeps it (a test runner's configuration among them), a project question.
WRONG_GUESS: Final = "wrong-guess"
#: The triggers of a failing run (``failing_run``).
FAILING_RUN_TRIGGERS: Final = frozenset({"traceback", "script"})
#: The notes already said in the session counted by ``said``, at most.
MAX_SAID: Final = 3


@dataclass(frozen=True)
class Features:
    """What the model reads of one note (module docstring); numbers, a flag being 0 or 1."""

    source: float
    support: float
    margin: float
    failing_run: float
    one_shown: float
    common_name: float
    task: float = 0.0
    edited: float = 0.0
    said: float = 0.0

    def values(self) -> tuple[float, ...]:
        """The features in declaration order (the order of :class:`Model`'s weights)."""
        return tuple(float(getattr(self, name)) for name in _FEATURE_NAMES)


#: :class:`Features`' field names in declaration order (read once: ``fields()`` builds its tuple
#: anew at every call, twice a note)
_FEATURE_NAMES: Final = tuple(f.name for f in fields(Features))


@dataclass(frozen=True)
class Model:
    """A logistic model over :class:`Features`: a bias and one weight per feature (``weights``,
    a :class:`Features` whose values are the weights: the features are listed once)."""

    bias: float
    weights: Features

    def confidence(self, f: Features) -> float:
        """``sigmoid(bias + Σ weight × feature)``."""
        z = self.bias + sum(w * x for w, x in zip(self.weights.values(), f.values(), strict=True))
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))


#: The model shipped (fitted on the tune trajectories: ``python bench/suggester_confidence.py
#: --cache /work/corpus-cache-ii --min-lead 0``, the fixed fold's fit).
MODEL: Final = Model(
    bias=-0.6691,
    weights=Features(
        source=0.8502,
        support=0.1965,
        margin=0.3659,
        failing_run=0.2254,
        one_shown=-0.4436,
        common_name=-0.9128,
        edited=-0.4778,
        said=-0.4226,
    ),
)


@dataclass(frozen=True)
class Assessment:
    """A note's features and its confidence under the model."""

    features: Features
    value: float


def features(
    trigger: str,
    targets: list[Target],
    q: Query,
    ev: SessionEvidence,
    view: WorkspaceView | None,
    scorers: CallScorer | None = None,
    edited: bool = False,
    said: int = 0,
) -> Features:
    """The features of a note naming ``targets`` (best first) for the call ``q``, raised by the
    trigger named ``trigger``, in the session whose evidence is ``ev`` (``view``: the workspace
    graph once its symbol index is built; ``scorers``: the call's scorer, shared with its
    ranking)."""
    scorer = (scorers or CallScorer()).of(q, ev, view)
    # the calls' evidence alone: what the task adds is the ``task`` feature
    first = scorer.calls_support(targets[0].path)
    second = scorer.calls_support(targets[1].path) if len(targets) > 1 else 0.0
    symbols = view.symbols if view is not None else None
    name = q.identifier
    common = bool(name) and symbols is not None and symbols.mentions(name or "") > COMMON_NAME_FILES
    return Features(
        source=float(classify(targets[0].path) == "source"),
        support=first,
        margin=max(0.0, first - second),
        failing_run=float(trigger in FAILING_RUN_TRIGGERS),
        one_shown=float(len(ev.current) == 1),
        common_name=float(common),
        task=scorer.task_relevance(targets[0].path),
        edited=float(edited),
        said=float(min(said, MAX_SAID)),
    )


def _unscored_guess(q: Query, targets: list[Target]) -> bool:
    """A wrong guess the features say nothing of: a tool's configuration looked for where it is
    not (a project question), or a missing path answered with what it most likely meant."""
    return bool(toolconfig.asked(q)) or all(t.reason == meant.REASON for t in targets)


def assess(
    trigger: str,
    intent: str,
    targets: list[Target],
    q: Query,
    ev: SessionEvidence,
    view: WorkspaceView | None,
    scorers: CallScorer | None = None,
    edited: bool = False,
    said: int = 0,
) -> Assessment | None:
    """The confidence of a note of ``intent`` naming ``targets`` (:func:`features`); ``None``
    for a project intent or no target (module docstring)."""
    if intent in PROJECT_INTENTS or not targets or (trigger == WRONG_GUESS and _unscored_guess(q, targets)):
        return None
    f = features(trigger, targets, q, ev, view, scorers, edited=edited, said=said)
    return Assessment(f, MODEL.confidence(f))
