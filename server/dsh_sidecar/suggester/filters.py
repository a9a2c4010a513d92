"""The filters every trigger's targets pass, in one place.

In order: dismissed paths leave (when they were all it found: an abstention, whatever the
trigger); the paths the call itself opens are never named back to it
(``Trigger.never_named``); nothing left is an abstention (or silence, for a trigger whose
files came from the call's own output); the agent already where the intent lives — it reads a
target, or the best target was read recently — suppresses the note as ``recent``; the other
recently read targets leave; at most ``maxTargets`` remain. What "recently read" means and
whether it suppresses is the trigger's (``triggers/base.py``). A project question asked of a
manifest that points elsewhere for its answer names where it points (:func:`pointed_to`);
otherwise the ranking chooses (``ranking.py``: an echo, a broad listing unranked, or the
targets in order).
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Set as AbstractSet
from typing import Final

from dsh_sidecar.suggester import ranking
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Abstained, Classification, Decision, Silent, Suppressed
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import ContentView
from dsh_sidecar.suggester.shown import ECHO_MAX_FILES
from dsh_sidecar.suggester.triggers.base import Trigger

#: Per project intent, the facts a manifest's pointer gives the file that holds the answer
#: (``workspace/manifests/``): the version a manifest reads from a module or a file; the
#: changelog and the template its release tool writes with.
POINTED: Final = {"Version": frozenset({"version-declared"}), "Ledger": frozenset({"ledger-declared", "changelog"})}


def apply(
    trigger: Trigger, hit: Classification, targets: list[Target], q: Query, ctx: Context
) -> list[Target] | Decision:
    """The targets a note shows, best first, or the decision that none is shown."""
    intent = hit.intent
    found = bool(targets)
    if targets:
        dismissed = ctx.dismissals.paths_dismissed(intent)
        targets = [t for t in targets if t.path not in dismissed]
    if found and not targets:  # every target found was dismissed: a note was due, none is left
        return Abstained(hit.intent, hit.k)
    reads = set(q.reads)
    reads_a_target = q.tool == "read" and any(t.path in reads for t in targets)
    never = trigger.never_named(q)
    targets = [t for t in targets if t.path not in never]
    if not targets and not reads_a_target:
        return _nothing(trigger, hit)
    known = _known(trigger, q, ctx)
    if trigger.recent_suppresses and (reads_a_target or known(targets[0].path)):
        # the agent is already where the intent lives (it reads one of the targets, or the
        # best one was just read): naming weaker targets instead would be noise
        return Suppressed("recent", intent)
    fresh = [t for t in targets if not known(t.path)]
    if not fresh:
        return _nothing(trigger, hit)
    shown = ctx.state.evidence.current
    pointed = pointed_to(intent, fresh, shown, ctx.content)
    if pointed:
        return named_now(pointed[: ctx.config.max_targets], ctx) or _nothing(trigger, hit)
    chosen = ranking.choose(fresh, q, intent, ctx.state.evidence, ctx.symbols, ctx.scorers)
    if isinstance(chosen, str):
        return Suppressed(chosen, intent)  # the note would add nothing: `echo`, `unranked`
    return named_now(chosen[: ctx.config.max_targets], ctx) or _nothing(trigger, hit)


def named_now(targets: list[Target], ctx: Context) -> list[Target]:
    """Of the few ``targets`` about to be named, those that still resolve inside the workspace
    and outside its git folders, asked of the file system now (``FileIndex.inside_now``): the
    index's answer is cached per path, and a file swapped since for a link into ``.git`` or out
    of the tree is named by nothing."""
    index = ctx.prepared.index if ctx.prepared is not None else None
    return targets if index is None else [t for t in targets if index.inside_now(t.path)]


def pointed_to(
    intent: str, targets: list[Target], shown: AbstractSet[str], content: ContentView | None
) -> list[Target]:
    """Of a project intent's ``targets``, the files a manifest the call showed points to, when
    the call showed (1 to :data:`~dsh_sidecar.suggester.shown.ECHO_MAX_FILES` files) the best
    target: the manifest's answer is elsewhere and the call did not show it — a
    ``pyproject.toml`` whose dynamic version reads ``pkg/_version.py``, a gemspec reading
    ``VERSION``, a ``CMakeLists.txt`` parsing the version out of a header, a towncrier table
    naming the changelog and its template (:data:`POINTED`). Otherwise (the call showed
    nothing, or a broad listing, or not the best target; no manifest it showed points to a
    target) empty: the ranking decides, and a note naming what the call showed is an echo."""
    facts = POINTED.get(intent)
    if not facts or content is None or not targets or not 1 <= len(shown) <= ECHO_MAX_FILES:
        return []
    if targets[0].path not in shown:
        return []
    named = {f for s in sorted(shown) for fact, f in content.points_of(s) if fact in facts}
    return [t for t in targets if t.path in named and t.path not in shown]


def _nothing(trigger: Trigger, hit: Classification) -> Decision:
    return Abstained(hit.intent, hit.k) if trigger.abstains else Silent()


def _known(trigger: Trigger, q: Query, ctx: Context) -> Callable[[str], bool]:
    """Whether the session read a path recently: a file read whole is known; one read in part
    (``head``, ``sed -n``, an offset) only for a trigger that counts it, and not when the call
    itself searched or listed it (then it is what the agent asks about)."""
    reads = set(q.reads)
    whole = ctx.state.wholly_read() - reads
    if not trigger.partly_read_known:
        return lambda path: path in whole
    seen = ctx.state.recently_read() - reads
    own = set(q.scope) | set(q.result_paths)
    return lambda path: path in whole or (path in seen and path not in own)
