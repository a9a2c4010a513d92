"""Ranking instead of filtering: a note's targets scored against the session's evidence, and the
rule that a note adds information or stays silent (plan: "the algebra's identity element is
silence").

**Support** of a target (:meth:`Scorer.support`, additive; the weights are :class:`Weights`):
it defines the identifier the call searches for, or else one the session searched before; it
is a file of a failing run's own code path (``triggers/traceback.py``: no import plumbing, no
script of the agent's own); its file name is a word the session searched for; it lies in the
folder of a file the agent opened or edited (a JVM source set's root made one: a class and its
test are neighbours, :func:`package_folder`). The targets of a code intent (Symbol, Usage,
Test) are ordered by support; a test file comes after the sources unless the call is about
tests (:func:`about_tests`); among equals, the resolver's order stays. A project intent's
targets (``candidates.PROJECT_INTENTS``: where the project keeps its version, changelog,
manifests…) keep the order the manifests and the learned habits give them: a word of the
search naming a file (``readme``) is no evidence against where the project says it is.

**What a note may say**, by how many workspace files the call showed (``shown.py``, the
evaluation's reading of a result):

* 1 to :data:`~dsh_sidecar.suggester.shown.ECHO_MAX_FILES`: a call whose own output answered
  it (:func:`answered_definition`, :func:`answered_usage`, :func:`answered_in_files`) is
  ``suppressed answered <Intent>``; the targets it showed are dropped (naming them back
  repeats it); none left is ``suppressed echo <Intent>``;
* :data:`~dsh_sidecar.suggester.shown.RANK_MIN_FILES` or more (a broad listing): a code
  intent's note has to rank it — its first target needs :attr:`Weights.broad_minimum` support,
  else ``suppressed unranked <Intent>``;
* otherwise (nothing shown, or a listing in between): the targets in order of support.

**With the task known** (``session.TaskEvidence``: the session's task text arrived through
``dsh/taskLead``), two more kinds of support count: the target is among the task lead's best
files (:attr:`Weights.task`, decaying linearly with its place in that ranking), and it defines
an identifier the task text names (:attr:`Weights.task_defines`). They order the targets; they
do not by themselves rank a broad listing (the first target's support from the calls alone has
to reach :attr:`Weights.broad_minimum`; counting the task's too gave the same notes on the tune
sample), and they add no target the call did not find (naming up to two of the task's files
that mention a code search's identifier lost tool-call precision on the tune traces, 0.53 →
0.47, and gained no lead: docs/corpus.md, "Task-aware notes"). A session without a task text
has no such support: its notes are what they were.

The weights and both thresholds were chosen on the tune traces, leave-one-agent-family-out and
leave-one-repository-out (docs/corpus.md, "Suggester IV: lead, not echo"): every training fold
chose the same values. Per call, the work is bounded by the targets (at most a few dozen) and
the session's bounded evidence (``session.py``): nothing grows with the workspace.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Final, Literal

from dsh_sidecar.suggester.candidates import PROJECT_INTENTS, Target, in_test_tree, is_test_path
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import WorkspaceView
from dsh_sidecar.suggester.session import MAX_TASK_FILES, SessionEvidence, TaskEvidence
from dsh_sidecar.suggester.shown import ECHO_MAX_FILES, RANK_MIN_FILES
from dsh_sidecar.workspace.kinds import code_language_of


@dataclass(frozen=True)
class Weights:
    """The support weights (ours; chosen on the tune traces, docs/corpus.md)."""

    #: the target defines the identifier the call searches for
    defines_searched: float = 3.0
    #: it defines an identifier the session searched for before (and not the current one)
    defines_earlier: float = 1.0
    #: it is a file of a failing run's own code path
    frame: float = 2.0
    #: its file name (stem) is a word or identifier the session searched for
    named: float = 1.0
    #: it lies in the folder of a file the agent opened or edited
    near: float = 0.5
    #: it is the task lead's best file (a file lower in that ranking: linearly less)
    task: float = 2.0
    #: it defines an identifier the task text names
    task_defines: float = 1.0
    #: least support the first target of a note on a broad listing needs (it has to rank it:
    #: defining the searched name, or a frame the session failed in and named like a word it
    #: searched for)
    broad_minimum: float = 3.0


WEIGHTS: Final = Weights()

#: Why a note would add nothing: its targets only repeat what the call showed (``echo``),
#: the call's own output already answered what it asked (``answered``: :func:`answered_definition`,
#: :func:`answered_usage`, :func:`in_scope`), or nothing in the session ranks the broad listing it answers (``unranked``).
NothingToAdd = Literal["echo", "answered", "unranked"]

#: The code intents (a note naming code, ordered by support).
CODE_INTENTS: Final = frozenset({"Symbol", "Usage", "Test"})

_WORDS = re.compile(r"[A-Za-z][a-z0-9]+|[A-Z]+(?![a-z])|[0-9]+")
#: A JVM source root (Maven/Gradle ``src/main/java``, ``src/test/kotlin``…): what follows is
#: the package's folder, the same for a class and its test.
_JVM_ROOT = re.compile(r"(^|/)src/[\w-]+/(?:java|kotlin|scala|groovy)/")


#: Paths whose :func:`package_folder`, :func:`stem_words` and test-ness are kept (pure
#: functions of the path; a note's targets and the session's files recur from call to call).
PATH_MEMO: Final = 4096


@functools.lru_cache(maxsize=PATH_MEMO)
def package_folder(path: str) -> str:
    """The folder a file's neighbours share: its folder, with a JVM source set's root made one
    (``m/src/main/java/org/x/A.java`` and ``m/src/test/java/org/x/ATest.java`` are both in
    ``m/src/*/org/x``), so a class's test is near the class and the other way round."""
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    return _JVM_ROOT.sub(r"\1src/*/", folder + "/", count=1)[:-1]


@functools.lru_cache(maxsize=PATH_MEMO)
def stem_words(path: str) -> frozenset[str]:
    """The lower-case words of a file name without its extension (``HttpClient.java`` →
    ``{http, client, httpclient}``; ``retry_policy.py`` → ``{retry, policy, retry_policy}``)."""
    name = path.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0] if not name.startswith(".") else name
    words = {w.lower() for w in _WORDS.findall(stem)}
    if stem:
        words.add(stem.lower())
    return frozenset(w for w in words if len(w) >= 3)


def about_tests(q: Query, intent: str) -> bool:
    """Whether the call is about tests (the Test intent, a test folder or test-file names)."""
    if intent == "Test":
        return True
    return any(is_test_path(s + "/x") or is_test_path(s) for s in q.scope + q.name_patterns if s)


class Scorer:
    """Support of a path (module docstring) for one call."""

    def __init__(self, q: Query, ev: SessionEvidence, graph: WorkspaceView | None, weights: Weights = WEIGHTS):
        self.q = q
        self.ev = ev
        self.w = weights
        symbols = graph.symbols if graph is not None else None
        self._defined: Callable[[str], frozenset[str]] = (
            symbols.defined_in if symbols is not None else (lambda path: frozenset())
        )
        self.name = q.identifier
        self.earlier = frozenset(n for n in ev.names if n != self.name)
        self.words = frozenset(w.lower() for w in ([self.name] if self.name else []) + list(ev.names)) | frozenset(
            t for t in ev.terms if len(t) >= 4
        )
        self.frames = frozenset(ev.frames)
        self.folders = frozenset(package_folder(p) for p in ev.opened if "/" in p)
        self.task: TaskEvidence | None = ev.task
        self._calls: dict[str, float] = {}

    def task_relevance(self, path: str) -> float:
        """How high the task lead ranks ``path``: 1 for its best file, linearly less down to
        ``1 / MAX_TASK_FILES`` for the last it keeps, 0 outside them or without a task."""
        r = self.task.rank(path) if self.task is not None else None
        return 0.0 if r is None else 1.0 - r / MAX_TASK_FILES

    def support(self, path: str) -> float:
        """The evidence for ``path`` (module docstring): the session's calls' and its task's."""
        defined = self._defined(path)
        return self.calls_support(path, defined) + self.task_support(path, defined)

    def calls_support(self, path: str, defined: frozenset[str] | None = None) -> float:
        """The part of :meth:`support` the session's tool calls give ``path`` (all of it in a
        session without a task text)."""
        known = self._calls.get(path)
        if known is not None:
            return known
        w = self.w
        score = 0.0
        if defined is None:
            defined = self._defined(path)
        if self.name and self.name in defined:
            score += w.defines_searched
        elif self.earlier and not self.earlier.isdisjoint(defined):
            score += w.defines_earlier
        if path in self.frames:
            score += w.frame
        if not self.words.isdisjoint(stem_words(path)):
            score += w.named
        if "/" in path and package_folder(path) in self.folders:
            score += w.near
        self._calls[path] = score
        return score

    def task_support(self, path: str, defined: frozenset[str] | None = None) -> float:
        """The part of :meth:`support` the session's task gives ``path`` (0 without a task)."""
        task, w = self.task, self.w
        if task is None:
            return 0.0
        score = w.task * self.task_relevance(path)
        if task.names:
            if defined is None:
                defined = self._defined(path)
            if not task.names.isdisjoint(defined):
                score += w.task_defines
        return score


class CallScorer:
    """The one :class:`Scorer` of a call, shared by the stages that score its targets (the
    ranking, the note's confidence): built when first asked for, again only for other inputs.
    It lives as long as the call's context, never longer (a session's evidence changes from
    one call to the next)."""

    __slots__ = ("_scorer", "_graph")

    def __init__(self) -> None:
        self._scorer: Scorer | None = None
        self._graph: WorkspaceView | None = None

    def of(self, q: Query, ev: SessionEvidence, graph: WorkspaceView | None) -> Scorer:
        """The scorer of ``q`` in the session whose evidence is ``ev``."""
        s = self._scorer
        if s is None or s.q is not q or s.ev is not ev or self._graph is not graph:
            s = self._scorer = Scorer(q, ev, graph)
            self._graph = graph
        return s


def answered_definition(q: Query, intent: str, shown: AbstractSet[str], graph: WorkspaceView | None) -> bool:
    """Whether a Symbol call's own output answered it: a text search for a definition
    (``class X``, ``def x``, ``type X struct``, ``fn x``, ``impl X``…) that showed 1 to
    :data:`~dsh_sidecar.suggester.shown.ECHO_MAX_FILES` files (``shown``), among them a file
    its hits name (a definition pattern's hits are definitions) or one the symbol index says
    defines the name. Where the name is defined is what the agent asked and what its search
    printed; the other files the resolver finds mention the name (its uses), which is another
    question. A symbol lookup (``Query.lookup``) answers with the symbol itself and is not
    such a search."""
    name = q.identifier
    if intent != "Symbol" or q.lookup or not name or not q.definition_keyword:
        return False
    if any(p in shown for p in q.result_paths):
        return True
    symbols = graph.symbols if graph is not None else None
    return symbols is not None and q.matched and any(name in symbols.defined_in(path) for path in shown)


def answered_usage(q: Query, intent: str, shown: AbstractSet[str]) -> bool:
    """Whether a Usage call's own output answered it: a text search confined to folders or
    files (its ``path``/``dir`` field, a grep's operands; not the whole repository) whose hits
    were printed — code files it listed among the 1 to
    :data:`~dsh_sidecar.suggester.shown.ECHO_MAX_FILES` it showed, or lines of the code file it
    searched inside (``grep -n X FILE``: a read of that file). Where the name is used there is
    what it asked, and a grep lists every file of its scope that matches: the uses the resolver
    adds lie outside the scope or are spelt otherwise. Hits only in translation catalogs or
    docs answer nothing about code; a symbol lookup (``Query.lookup``: callers, references) is
    no text search."""
    if intent != "Usage" or q.lookup or not q.patterns or not q.matched:
        return False
    scope = [s for s in q.scope if s and s not in (".", "./")]
    if not scope:
        return False
    hits = [p for p in q.result_paths if p in shown]
    if not hits and all(s in shown for s in scope):
        hits = scope  # lines of the files it searched inside
    return any(code_language_of(p) is not None for p in hits)


def in_scope(targets: list[Target], q: Query, shown: AbstractSet[str]) -> list[Target]:
    """Of a Usage note's ``targets``, those inside the folders the call searched (its
    ``path``/``dir`` field, a grep's folder operands): a search scoped to ``tests/`` asks where
    the tests use the name, and a use elsewhere answers a question it did not ask. All of them
    when the call names no folder (the whole repository is its scope)."""
    folders = [s.rstrip("/") for s in q.scope if s and s not in (".", "./") and s not in shown]
    if not folders:
        return targets
    return [t for t in targets if any(t.path.startswith(f + "/") for f in folders)]


def answered_in_files(q: Query, shown: AbstractSet[str]) -> bool:
    """Whether a text search confined to files printed its hits: every operand a file whose
    lines it printed (``grep -n X a.py``, ``cat a.py | grep X``, a grep tool's path naming one
    file), every file its hits name among them. It asked about those files and they answered;
    files elsewhere answer another question. A search that printed nothing is not answered
    (what it looked for is elsewhere); a symbol lookup is no text search."""
    if q.lookup or not q.patterns or not q.matched:
        return False
    scope = [s for s in q.scope if s and s not in (".", "./")]
    return bool(scope) and all(s in shown for s in scope) and all(p in shown for p in q.result_paths)


@functools.lru_cache(maxsize=PATH_MEMO)
def _is_test(path: str) -> bool:
    return is_test_path(path) or in_test_tree(path)


def _ranking_support(scorer: Scorer, first: tuple[float, int, Target]) -> float:
    """The first target's support as the broad-listing rule reads it: the calls' alone (the
    task's support orders the targets; it ranks no listing by itself)."""
    return first[0] - scorer.task_support(first[2].path)


def choose(
    targets: list[Target],
    q: Query,
    intent: str,
    ev: SessionEvidence,
    graph: WorkspaceView | None,
    scorers: CallScorer | None = None,
) -> list[Target] | NothingToAdd:
    """The targets a note shows, best first, or the suppression reason (``echo``,
    ``unranked``) when the note would add nothing (module docstring); ``scorers``: the call's
    shared scorer (a new one without it)."""
    shown = ev.current
    n = len(shown)
    if 1 <= n <= ECHO_MAX_FILES:
        if (
            answered_definition(q, intent, shown, graph)
            or answered_usage(q, intent, shown)
            or (intent in CODE_INTENTS and answered_in_files(q, shown))
        ):
            return "answered"
        if intent == "Usage":
            targets = in_scope(targets, q, shown)
            if not targets:
                return "answered"
        # the call showed its best target: the agent is where the intent lives; only source
        # files it did not show may follow (a project file, or a test, after it is noise)
        there = targets[0].path in shown
        if there and intent in PROJECT_INTENTS:
            return "echo"
        targets = [t for t in targets if t.path not in shown and not (there and _is_test(t.path))]
        if not targets:
            return "echo"
    if intent in PROJECT_INTENTS:  # where the project keeps it: the manifests' order stays
        return targets
    scorer = (scorers or CallScorer()).of(q, ev, graph)
    tests_last = not about_tests(q, intent)
    scored = [(scorer.support(t.path), pos, t) for pos, t in enumerate(targets)]

    def key(item: tuple[float, int, Target]) -> tuple[int, float, int, int]:
        s, pos, t = item
        return (1 if tests_last and _is_test(t.path) else 0, -s, 1 if t.path in shown else 0, pos)

    ordered = sorted(scored, key=key)
    if n >= RANK_MIN_FILES and (not ordered or _ranking_support(scorer, ordered[0]) < WEIGHTS.broad_minimum):
        return "unranked"
    return [t for _, _, t in ordered]
