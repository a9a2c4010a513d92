"""Never guess before the index covers the call: what a note needs of the workspace index.

A fresh server lists the workspace in well under a second, but its symbol pass and its content
index take seconds more (tens on a large tree). A note decided meanwhile would fall back to what
the packs guess (``__init__.py — the package's public names`` for ``def merge_setting``, where
four seconds later the symbol index names ``sessions.py``). So a classified call that needs a
part of the index that is still being built is held back as ``suppressed not-ready <intent>``
(a ledger line, like every silence the suggester chooses), and the call may wait for it within
its bound (the service's first-call wait, or the call's own ``waitMs``).

What needs what (:func:`missing`):

* every note — the **targets** (``prepared.py``: the listing, its kinds and facts);
* the **symbol pass** — a call whose classification asked the symbol index (whether a name is
  defined, and where: ``prepared.evidence_view`` records it through :func:`asked`), a search
  whose intent resolves the searched identifier through symbol candidates (``symbol:
  definitions|usages``), and a script's names (``triggers/script.py``);
* the **content index** — a search whose intent matches the call's words against file
  contents (``match: terms``), and any intent with a candidate of a fact read from contents
  (``kind: version-module``, ``manifest-version``, ``test-module``…) while the targets were
  prepared before the content index's first sync.

A part that will never come counts as there: no graph source (an in-process suggester lists the
workspace itself and has no symbol index), a symbol pass that failed or was cancelled, a content
index without FTS5 or whose build failed. A truncated symbol index (a very large tree) is as
complete as it gets: it counts as there too.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING, Final, Protocol

from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.workspace.facts import FACTS

if TYPE_CHECKING:
    from dsh_sidecar.suggester.classify import CompiledRow

#: The parts of the index a note may need.
TARGETS: Final = "targets"
SYMBOLS: Final = "symbols"
CONTENT: Final = "content"

#: The facts a file's name alone gives (``workspace/facts.py``: read without its text); every
#: other fact may come from contents, so the targets of its ``kind`` candidates wait for them.
NAME_FACTS: Final = frozenset({"owners", "ci-workflow", "docs-page", "docs-home"})
#: Facts read from contents (the content index's first sync adds them).
CONTENT_FACTS: Final = frozenset(FACTS) - NAME_FACTS

_ASKED: ContextVar[set[str] | None] = ContextVar("dsh_readiness_asked", default=None)


class recording:  # noqa: N801 -- used as a function: ``with recording() as asked``
    """Collect, for the call run inside, the parts of the index it asked for and found missing
    (a class, not a generator context manager: every call enters one)."""

    __slots__ = ("_token",)

    def __enter__(self) -> set[str]:
        asked: set[str] = set()
        self._token = _ASKED.set(asked)
        return asked

    def __exit__(self, *exc_info: object) -> None:
        _ASKED.reset(self._token)


def asked(part: str) -> None:
    """The running call asked ``part`` of the index, which is not built yet (no call recording:
    nothing happens)."""
    seen = _ASKED.get()
    if seen is not None:
        seen.add(part)


class _Rows(Protocol):
    def active_rows(self) -> dict[str, list[CompiledRow]]: ...


class CallView(Protocol):
    """What :func:`missing` reads of a call: the call context (``context.py``) is one. A
    protocol, because the call context imports the prepared view, which records through here."""

    @property
    def prepared(self) -> object | None: ...
    @property
    def service(self) -> _Rows: ...
    @property
    def pending(self) -> frozenset[str]: ...


def missing(intent: str, q: Query, ctx: CallView) -> set[str]:
    """The parts of the index ``ctx`` lacks that a note of ``intent`` for ``q`` needs (module
    docstring); empty when it may be decided now. Those found missing are also recorded.

    What counts as being built is what was when the call took its view (``ctx.pending``, read
    before it), not what is now: a part that finished since is still missing from this view, and
    a call judged on "not pending any more" would be decided without it (the packs' guess, or
    ``abstained no-companions`` for uses read from the symbol index). A view taken before the
    targets were prepared lacks them even when a preparation swapped some in since."""
    pending = ctx.pending
    out = set(_ASKED.get() or ()) & pending
    if ctx.prepared is None or TARGETS in pending:
        out.add(TARGETS)
    if SYMBOLS in pending or CONTENT in pending:  # (else the candidates ask for nothing missing)
        cands = [c for r in ctx.service.active_rows().get(intent, ()) for c in r.candidates if not c.fallback]
        if SYMBOLS in pending and q.identifier is not None and any(c.symbol for c in cands):
            out.add(SYMBOLS)
        if CONTENT in pending:
            if q.terms and any(c.match for c in cands):
                out.add(CONTENT)
            if any(c.kind in CONTENT_FACTS for c in cands):
                out.add(CONTENT)
    for part in out:
        asked(part)
    return out
