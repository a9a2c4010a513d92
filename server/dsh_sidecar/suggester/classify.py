"""Classification: which intent a call is, by the gate (plan, "The intents" and "The gate").

For every intent in priority order (``gate.INTENTS``) and every pack row of it, the weights of
the row's signals whose regex matches the call's text are summed, plus the structural evidence
of the call (``evidence/``) for that intent, and ``k = sigmoid(Σw + b)``. The first intent
whose best row crosses its threshold wins, with that ``k``. A row with no matching signal and
no evidence does not score.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.recent import remember
from dsh_sidecar.suggester.gate import INTENTS, default_threshold, gate
from dsh_sidecar.suggester.packs import Candidate, IntentRow, check_regex, compile_trusted, search
from dsh_sidecar.suggester.parse import Query

if TYPE_CHECKING:  # annotations only; the patterns are compiled in .packs
    import regex


@dataclass(frozen=True)
class CompiledRow:
    """One pack's row for one intent, its regexes compiled once at activation."""

    pack_id: str
    about: str | None
    threshold: float
    signals: tuple[tuple[regex.Pattern[str] | re.Pattern[str] | LazyPattern[str], float, frozenset[str] | None], ...]
    candidates: tuple[Candidate, ...]
    trusted: bool = True  # a built-in pack's row; repo/user rows run under a time budget
    #: a trusted row's signals as the compiled patterns' own ``search`` (:meth:`_bind`)
    _searches: tuple[tuple[Callable[[str], object], float, frozenset[str] | None], ...] | None = field(
        default=None, init=False, compare=False, repr=False
    )

    @classmethod
    def of(cls, pack_id: str, intent: str, row: IntentRow, trusted: bool = False) -> CompiledRow:
        """Compile ``row`` (its patterns were validated when the pack loaded); a built-in
        (``trusted``) row uses ``re``, a repo/user row the ``regex`` module with a timeout."""
        compile_ = compile_trusted if trusted else check_regex
        return cls(
            pack_id,
            row.about,
            row.threshold or default_threshold(intent),
            tuple(
                (compile_(sig.pattern), sig.weight, frozenset(sig.tools) if sig.tools else None) for sig in row.signals
            ),
            tuple(row.candidates),
            trusted,
        )

    def _bind(self) -> tuple[tuple[Callable[[str], object], float, frozenset[str] | None], ...]:
        """A trusted row's signals with each pattern's compiled ``search`` (no wrapper call a
        signal): compiled at the row's first use, when every signal for any tool is searched
        anyway; a signal kept to some tools stays compiled at its first match."""
        searches = tuple(
            (
                pattern.compiled.search if tools is None and isinstance(pattern, LazyPattern) else pattern.search,
                w,
                tools,
            )
            for pattern, w, tools in self.signals
        )
        object.__setattr__(self, "_searches", searches)  # frozen; the same tuple whichever thread binds it
        return searches

    def signal_sum(self, q: Query) -> float | None:
        """Σ of the matching signals' weights, ``None`` when none matched."""
        total, matched = 0.0, False
        text, tool = q.text, q.tool
        if self.trusted:  # a built-in row's patterns are the standard ``re``'s: no budget to keep
            searches = self._searches
            for find, weight, tools in searches if searches is not None else self._bind():
                if (tools is None or tool in tools) and find(text) is not None:
                    total += weight
                    matched = True
            return total if matched else None
        for pattern, weight, tools in self.signals:
            if tools is not None and tool not in tools:
                continue
            if search(pattern, text):
                total += weight
                matched = True
        return total if matched else None


#: One intent's rows as the classifier reads them for one tool: ``(threshold, the row's signals
#: that apply to the tool as ``(search, weight)``, or ``None`` for a repo/user row, searched
#: under the call's budget by :meth:`CompiledRow.signal_sum`, the row)``.
_Entry = tuple[float, "tuple[tuple[Callable[[str], object], float], ...] | None", CompiledRow]

#: Most ``(rows, tool)`` plans kept: the active rows change only when the packs are activated
#: again, and a call's tool is one of the query model's few kinds.
PLANS_KEPT: Final = 32
_Plan = tuple[tuple[str, tuple[_Entry, ...]], ...]
_PLANS: OrderedDict[tuple[int, str], tuple[dict[str, list[CompiledRow]], _Plan, bool]] = OrderedDict()
_PLANS_LOCK = threading.Lock()


def plan(rows: dict[str, list[CompiledRow]], tool: str) -> _Plan:
    """The intents of ``rows`` in priority order, each with its rows' signals that can apply to
    a call of ``tool`` (a signal kept to other tools is never searched for it): made once per
    rows table and tool (the active rows are built whole at activation and never changed
    after), kept for the last :data:`PLANS_KEPT`."""
    return _kept_plan(rows, tool)[1]


def searches_untrusted(rows: dict[str, list[CompiledRow]], tool: str) -> bool:
    """Whether classifying a call of ``tool`` by ``rows`` can search a repo/user row's regexes
    (:meth:`CompiledRow.signal_sum` under the call's budget); without one, no search the
    classification makes reads a budget (from the same kept plan as :func:`plan`)."""
    return _kept_plan(rows, tool)[2]


def _kept_plan(rows: dict[str, list[CompiledRow]], tool: str) -> tuple[dict[str, list[CompiledRow]], _Plan, bool]:
    key = (id(rows), tool)
    kept = _PLANS.get(key)
    if kept is not None and kept[0] is rows:  # the table itself is held: its id is not reused
        return kept
    made = tuple((intent, tuple(_entry(row, tool) for row in rows[intent])) for intent in INTENTS if rows.get(intent))
    untrusted = any(searches is None for _, entries in made for _, searches, _ in entries)
    entry = (rows, made, untrusted)
    with _PLANS_LOCK:
        remember(_PLANS, key, entry, PLANS_KEPT)
    return entry


def _entry(row: CompiledRow, tool: str) -> _Entry:
    if not row.trusted:
        return row.threshold, None, row
    searches = row._searches if row._searches is not None else row._bind()
    return row.threshold, tuple((find, w) for find, w, tools in searches if tools is None or tool in tools), row


def classify(
    q: Query, rows: dict[str, list[CompiledRow]], bias: float, evidence: dict[str, float]
) -> tuple[str, float] | None:
    """The first intent (priority order) whose gate crosses its threshold in any of its rows,
    with the best such ``k``; ``None`` when none does. The signals searched are the call's
    tool's (:func:`plan`)."""
    text = q.text
    for intent, entries in plan(rows, q.tool):
        best: float | None = None
        extra = evidence.get(intent)
        for threshold, searches, row in entries:
            total: float | None
            if searches is None:  # an untrusted row's, under the call's budget
                total = row.signal_sum(q)
            else:  # :meth:`CompiledRow.signal_sum` of a built-in row, without a call a row
                total, matched = 0.0, False
                for find, weight in searches:
                    if find(text) is not None:
                        total += weight
                        matched = True
                if not matched:
                    total = None
            if total is None and extra is None:
                continue
            k = gate((total or 0.0) + (extra or 0.0), bias)
            if k >= threshold and (best is None or k > best):
                best = k
        if best is not None:
            return intent, best
    return None
