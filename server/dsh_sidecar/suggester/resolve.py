"""The targets of a search call's intent, best first (the search trigger's resolution stage).

Sources, merged by score: symbol relations of the searched identifier, the call's own listed
results (ordered by the intent's :data:`ORDERS` entry), topic matches of the content index and
the prepared targets (ranked by what was learned); the pack's fallback paths only when the
row has symbol candidates and they name nothing. The files the call searches in lead.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from dsh_sidecar.recent import remember
from dsh_sidecar.suggester.candidates import (
    PROJECT_INTENTS,
    CallContext,
    ContentSearch,
    Target,
    in_test_tree,
    is_doc_path,
    is_test_path,
    merge,
    rank_definitions,
    resolve_results,
    resolve_symbols,
    resolve_topics,
    scoped_into,
)
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.knowledge import Knowledge
from dsh_sidecar.suggester.learning import rank
from dsh_sidecar.suggester.packs import Candidate
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.suggester.prepared import PreparedTargets
from dsh_sidecar.workspace.kinds import code_language_of

#: Most (intent, identifier, context) symbol lookups cached per preparation.
SYMBOL_CACHE_SIZE: Final = 1024
_INDEX_PAGE = re.compile(r"(?i)^(index|readme)\.")

#: How an intent orders the paths a call listed: ``(paths, prepared, symbols, call) → paths``.
Orderer = Callable[[list[str], PreparedTargets, "WorkspaceView | None", CallContext], list[str]]


@dataclass(frozen=True)
class Sources:
    """What resolution reads: the prepared targets, the active pack rows, the workspace graph
    (``None`` until its symbol index is built), the content index, and the knowledge whose
    learned order ranks the prepared targets (``None``: learning is off)."""

    prepared: PreparedTargets
    rows: dict[str, list[CompiledRow]]
    symbols: WorkspaceView | None
    content: ContentView | None
    knowledge: Knowledge | None


def resolve(q: Query, intent: str, src: Sources) -> list[Target]:
    """The intent's existing targets for this call, best first (module docstring)."""
    prepared = src.prepared
    scopes = q.scope + [g.rsplit("/", 1)[0] for g in q.name_patterns if "/" in g]
    static = _static(intent, prepared, scopes, src.knowledge)
    kinds = intent_candidates(src.rows, intent)
    cands = kinds.cands
    if not kinds.per_call:
        return sorted(static, key=lambda t: not in_test_tree(t.path)) if intent in PROJECT_INTENTS else static
    index = prepared.index
    call = CallContext(
        languages=frozenset(q.languages),
        tests=any(is_test_path(s + "/x") or is_test_path(s) for s in q.scope + q.name_patterns if s),
        name=q.identifier,
        reads=frozenset(q.reads),
    )
    has_symbol = kinds.symbol
    symbols = src.symbols if has_symbol else None
    found = _symbol_targets(q, intent, cands, prepared, symbols, call) if has_symbol else []
    subjects = [p for p in q.scope if p and index.exists(p)]
    listed = list(dict.fromkeys(subjects + q.result_paths))
    order = ORDERS.get(intent, _as_listed)

    def prefer(paths: list[str]) -> list[str]:
        return order(paths, prepared, src.symbols, call)

    if q.listing:
        # a listing's answer is what it listed: of those, what the intent wants (or nothing)
        return resolve_results(cands, listed, index, prefer, call.name)
    results = resolve_results(cands, listed, index, prefer, call.name) if listed else []
    # a definition pattern's hits are the definitions themselves (more exact than the index,
    # `impl X for Y` included): they lead; for a bare name the index's definitions lead
    groups = [results, found] if q.definition_keyword else [found, results]
    if kinds.match:
        content: ContentSearch | None = src.content if src.content is not None and src.content.ready else None
        groups.append(resolve_topics(cands, content, q.terms, index))
    groups.append(static)
    if has_symbol and not found:
        static_paths = {t.path for t in static}
        groups.append([t for t in prepared.fallback.get(intent, []) if t.path not in static_paths])
    return _subjects_first(merge(*groups), intent, subjects, scopes)


@dataclass(frozen=True)
class IntentCandidates:
    """An intent's candidates of the active rows (fallbacks left out), in row order, and what
    resolution asks of them: whether any depends on the call, names a symbol, matches topics."""

    cands: list[Candidate]  # never changed: shared by every call of the rows table
    per_call: bool
    symbol: bool
    match: bool


#: Most ``(rows table, intent)`` candidate lists kept (ten intents a table; a table changes
#: only when the packs are activated again).
CANDIDATES_KEPT: Final = 64
_CANDIDATES: OrderedDict[tuple[int, str], tuple[dict[str, list[CompiledRow]], IntentCandidates]] = OrderedDict()
_CANDIDATES_LOCK = threading.Lock()


def intent_candidates(rows: dict[str, list[CompiledRow]], intent: str) -> IntentCandidates:
    """``intent``'s :class:`IntentCandidates` of ``rows``: made once per rows table and intent
    (the active rows are built whole at activation and never changed after), kept for the last
    :data:`CANDIDATES_KEPT`."""
    key = (id(rows), intent)
    kept = _CANDIDATES.get(key)
    if kept is not None and kept[0] is rows:  # the table itself is held: its id is not reused
        return kept[1]
    cands = [c for r in rows.get(intent, ()) for c in r.candidates if not c.fallback]
    made = IntentCandidates(
        cands, any(c.per_call for c in cands), any(c.symbol for c in cands), any(c.match for c in cands)
    )
    with _CANDIDATES_LOCK:
        remember(_CANDIDATES, key, (rows, made), CANDIDATES_KEPT)
    return made


def _static(intent: str, prepared: PreparedTargets, scopes: list[str], knowledge: Knowledge | None) -> list[Target]:
    """The prepared (call-independent) targets, the test tree's only when the call looks
    inside it, in learned order."""
    static = prepared.targets.get(intent, [])
    if intent in PROJECT_INTENTS:
        static = static + [t for t in prepared.test_tree.get(intent, []) if scoped_into(t.path, scopes)]
    if knowledge is not None:  # what was learned orders the call-independent targets
        static = rank(intent, static, knowledge)
    return static


def _symbol_targets(
    q: Query,
    intent: str,
    cands: list[Candidate],
    prepared: PreparedTargets,
    symbols: WorkspaceView | None,
    call: CallContext,
) -> list[Target]:
    """The symbol candidates' targets for the searched identifier (cached per preparation),
    narrowed to the call's file-name globs."""
    if call.name is None or symbols is None:
        return []
    key = (intent, call.name, call.languages, call.tests)
    cached = prepared.symbols.get(key)
    if cached is None:
        cached = resolve_symbols(cands, symbols, call.name, prepared.index, call)
        remember(prepared.symbols, key, cached, SYMBOL_CACHE_SIZE)  # a hit keeps its place: first in, first out
    return _matching(cached, q.name_patterns)


def _subjects_first(merged: list[Target], intent: str, subjects: list[str], scopes: list[str]) -> list[Target]:
    """Inside the test tree only what the call scopes into (and then that leads); then the
    files the call searches in lead: they are what the agent asked about."""
    if intent in PROJECT_INTENTS:
        inside = [t for t in merged if in_test_tree(t.path) and scoped_into(t.path, scopes)]
        merged = inside + [t for t in merged if not in_test_tree(t.path)]
    if not subjects:
        return merged
    lead = [t for p in subjects for t in merged if t.path == p]
    named = set(subjects)
    return lead + [t for t in merged if t.path not in named]


def _matching(targets: list[Target], patterns: list[str]) -> list[Target]:
    """``targets`` whose path or name matches one of the call's file-name globs (``*.pyi``,
    ``*_test.go``); all of them when there is no glob or none matches."""
    globs = [g for g in patterns if not g.startswith("!")]
    if not globs:
        return targets
    kept = [
        t
        for t in targets
        if any(fnmatch.fnmatch(t.path, g) or fnmatch.fnmatch(t.path.rsplit("/", 1)[-1], g) for g in globs)
    ]
    return kept or targets


# ---------------------------------------------------------------------------- listed paths, per intent


def _as_listed(
    paths: list[str], prepared: PreparedTargets, symbols: WorkspaceView | None, call: CallContext
) -> list[str]:
    """The listing order."""
    return paths


def _docs_first(
    paths: list[str], prepared: PreparedTargets, symbols: WorkspaceView | None, call: CallContext
) -> list[str]:
    """Only doc pages, index/README pages first."""
    docs = [p for p in paths if is_doc_path(p)]
    return sorted(docs, key=lambda p: (0 if _INDEX_PAGE.match(p.rsplit("/", 1)[-1]) else 1, docs.index(p)))


def _changelogs_first(
    paths: list[str], prepared: PreparedTargets, symbols: WorkspaceView | None, call: CallContext
) -> list[str]:
    """The changelogs, then the ledger's set-up (templates, config, README), then its numbered
    fragments."""
    facts = prepared.fact_of

    def key(p: str) -> tuple[int, int]:
        name = p.rsplit("/", 1)[-1]
        tier = 0 if "changelog" in facts.get(p, ()) else (2 if name[:1].isdigit() else 1)
        return tier, paths.index(p)

    return sorted(paths, key=key)


def _definitions_first(
    paths: list[str], prepared: PreparedTargets, symbols: WorkspaceView | None, call: CallContext
) -> list[str]:
    """The files defining the identifier first (:func:`rank_definitions`), then code (the
    query's language first), tests and the rest: a name's definition, then its call sites
    (a Usage note keeps the same order)."""
    if not call.name:
        return paths
    defining = set(symbols.definitions(call.name)) if symbols is not None else set()
    first = rank_definitions([p for p in paths if p in defining], call)
    index = prepared.index

    def tier(p: str) -> int:
        kind = index.kind(p)
        if kind == "source":
            return 0 if not call.languages or code_language_of(p) in call.languages else 1
        return 2 if kind == "test" else 3

    rest = sorted((p for p in paths if p not in defining), key=lambda p: (tier(p), paths.index(p)))
    return first + rest


#: Each intent's order of a call's listed paths (the others keep the listing order).
ORDERS: Final[dict[str, Orderer]] = {
    "Doc": _docs_first,
    "Ledger": _changelogs_first,
    "Symbol": _definitions_first,
    "Usage": _definitions_first,
}
