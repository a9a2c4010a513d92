"""A wrong guess: the call looked for a file or folder this workspace does not have.

``evidence.wrong_guess`` recognises it (a missing lock file or manifest → Dependency, a missing
or empty docs folder → Doc: a search of any tool scoped to a docs folder the workspace does not
have, or a listing of one without doc pages, answered with the docs it has: the home page of
its docs root, ``doc/index.md`` where the call looked in ``docs/``, else the README); the note
names where that intent really lives here — its prepared targets, in learned order, none of
what the call looked for. Example: ``cat Pipfile.lock`` fails in a repository without one →
Dependency at ``k = sigmoid(3.0 − 0.6) ≈ 0.92``, noted with the manifests (``pyproject.toml``…).
A named tool's configuration looked for where it is not (``ls ruff.toml``) is noted the way
the tool reads it (``toolconfig.py``): the files holding its section first, then the
configuration that runs it; such a note is a project question, never scored by the code
intents' confidence. A guess whose best target an earlier call of the session showed (``cat
go.sum`` after a listing showed ``go.mod``) is ``suppressed seen``: the agent was shown where the
intent lives (``seen_suppresses``).
"""

from __future__ import annotations

from typing import ClassVar, Final

from dsh_sidecar.suggester import evidence, meant, toolconfig
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.context import Context
from dsh_sidecar.suggester.decision import Classification, Decision
from dsh_sidecar.suggester.learning import rank
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.triggers.base import claimed

#: The intents a missing path answered with what it meant is noted as (``evidence._meant_intent``).
MEANT_INTENTS: Final = frozenset({"Test", "Symbol"})


def meant_targets(q: Query, ctx: Context) -> list[Target]:
    """The listed files a missing path most likely meant (``evidence.meant``), best first."""
    found = evidence.meant(q, ctx.evidence)
    if found is None:
        return []
    return [Target(p, meant.REASON, 1.0) for p in found[1]]


class WrongGuess:
    """The first trigger: a failed or empty look at a place every repository has."""

    name: ClassVar[str] = "wrong-guess"
    one_a_turn: ClassVar[bool] = False
    abstains: ClassVar[bool] = True
    recent_suppresses: ClassVar[bool] = False
    partly_read_known: ClassVar[bool] = False
    seen_suppresses: ClassVar[bool] = True

    def detect(self, q: Query, ctx: Context) -> Classification | Decision | None:
        """The intent the guess hunts for, at the subject gate's score."""
        if ctx.prepared is None:
            return None
        intent = evidence.wrong_guess(q, ctx.evidence)
        return None if intent is None else claimed(intent, ctx)

    def targets(self, q: Query, hit: Classification, ctx: Context) -> list[Target]:
        """The intent's prepared targets, in learned order; for a docs folder guessed wrong,
        the home pages of the docs roots the workspace has first."""
        assert ctx.prepared is not None
        if hit.intent in MEANT_INTENTS:
            meant = meant_targets(q, ctx)
            if meant:
                return meant
        targets = ctx.prepared.targets.get(hit.intent, [])
        targets = rank(hit.intent, targets, ctx.knowledge) if ctx.config.learn else targets
        if hit.intent == "Doc":
            homes = set(ctx.prepared.index.facts.get("docs-home", ()))
            targets = sorted(targets, key=lambda t: t.path not in homes)
        if hit.intent in toolconfig.INTENTS:
            missing = [p for p in q.reads + q.scope if p and not ctx.prepared.index.exists(p)]
            tools = toolconfig.asked(q, missing)
            ranked = toolconfig.rank(tools, targets, ctx.evidence, ctx.content, q.result_paths)
            if ranked is not None:
                return ranked
            if tools:  # a tool this project does not use: where its tests or tools are set up instead
                return toolconfig.settings_only(targets, ctx.evidence)
        return targets

    def never_named(self, q: Query) -> set[str]:
        """Everything the call looked at: what it reads and where it searched."""
        return set(q.reads + q.scope)

    def noted_name(self, q: Query, hit: Classification) -> str | None:
        """A wrong guess is about no name."""
        return None
