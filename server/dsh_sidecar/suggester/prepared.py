"""The prepared targets: what one preparation resolved over the workspace listing.

Preparation runs off the request path (on the graph builder's thread in the server) whenever
the listing or the content facts change; a call reads the :class:`PreparedTargets` of the last
preparation and never lists the workspace itself.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from dsh_sidecar.suggester import evidence
from dsh_sidecar.suggester.candidates import PROJECT_INTENTS, FileIndex, Target, in_test_tree, resolve
from dsh_sidecar.suggester.classify import CompiledRow
from dsh_sidecar.suggester.packs import ACTIVATION_BUDGET_S, RegexBudget, use_budget
from dsh_sidecar.suggester.ports import ContentView, WorkspaceView
from dsh_sidecar.workspace.facts import docs_pages, docs_roots, facts_of, kind_is_code
from dsh_sidecar.workspace.files import list_files
from dsh_sidecar.workspace.kinds import classify as classify_path

#: Path kinds (and the ``code`` fact), which every file has one of: no fact of its own.
_KIND_FACTS = frozenset({"source", "other", "config", "doc", "test", "manifest", "lock", "generated", "code"})


@dataclass
class PreparedTargets:
    """What one preparation resolved: the file index (with kinds and facts), each intent's
    call-independent targets and fallbacks, and the docs roots. Replaced whole, never mutated
    by a call (a preparation on another thread swaps in a new one); ``symbols`` is a cache of
    per-call symbol lookups that lives as long as it does."""

    index: FileIndex
    targets: dict[str, list[Target]] = field(default_factory=dict)
    fallback: dict[str, list[Target]] = field(default_factory=dict)
    docs_roots: frozenset[str] = frozenset()
    symbols: OrderedDict[tuple[str, str, frozenset[str], bool], list[Target]] = field(default_factory=OrderedDict)
    fact_of: dict[str, frozenset[str]] = field(default_factory=dict)
    #: a project-level intent's prepared targets inside the test tree (``in_test_tree``): named
    #: only to a call that scopes into them
    test_tree: dict[str, list[Target]] = field(default_factory=dict)


def listing(root: Path, graph: WorkspaceView | None, live: bool) -> tuple[list[str], dict[str, str]] | None:
    """``(files, {path: kind})`` to prepare from: the graph's listing when it has one; ``None``
    while a ``live`` graph source (the server's builder) is still listing (it prepares when it
    is done); else one listing of our own."""
    if graph is not None and graph.files:
        return list(graph.files), dict(graph.kind_map())
    if live and graph is None:
        return None
    files = list_files(root)
    return files, {f: classify_path(f) for f in files}


def prepare(
    root: Path,
    rows: dict[str, list[CompiledRow]],
    files: list[str],
    kind_map: dict[str, str],
    content: ContentView | None,
) -> tuple[PreparedTargets, list[str]]:
    """Resolve every intent's call-independent targets over the listing; return them and the
    reasons to refuse what did not resolve (untrusted regexes out of time, a candidate that
    leaves the workspace, globs past the matching bound), in that order."""
    index = FileIndex(root, files)
    index.kinds = kind_map
    index.facts = facts(files, kind_map, content)
    fact_of: dict[str, set[str]] = {}
    for fact, paths in index.facts.items():
        if fact not in _KIND_FACTS:
            for p in paths:
                fact_of.setdefault(p, set()).add(fact)
    prepared = PreparedTargets(
        index,
        docs_roots=frozenset(docs_roots(files)),
        fact_of={p: frozenset(v) for p, v in fact_of.items()},
    )
    budget = RegexBudget(ACTIVATION_BUDGET_S)  # shared by every untrusted row's `contains`
    for intent, intent_rows in rows.items():
        cands = [c for r in intent_rows for c in r.candidates]
        with use_budget(None if all(r.trusted for r in intent_rows) else budget):
            prepared.targets[intent] = resolve([c for c in cands if not c.fallback], index)
            prepared.fallback[intent] = resolve([c for c in cands if c.fallback], index)
        if intent in PROJECT_INTENTS:
            for table in (prepared.targets, prepared.fallback):
                ts = table[intent]
                prepared.test_tree.setdefault(intent, []).extend(t for t in ts if in_test_tree(t.path))
                table[intent] = [t for t in ts if not in_test_tree(t.path)]
    refusals = []
    if budget.exhausted:
        refusals.append(
            f"untrusted pack regexes used the {ACTIVATION_BUDGET_S:g} s activation budget; "
            "the remaining `contains` checks count as no match"
        )
    refusals += [f"candidate {rel}: resolves outside the workspace" for rel in index.refused]
    if index.glob_cut:
        refusals.append("pack globs used the activation's matching bound; the remaining globs match nothing")
    return prepared, refusals


def facts(files: list[str], kind_map: dict[str, str], content: ContentView | None) -> dict[str, list[str]]:
    """``{fact or kind: [paths]}``: path kinds, name-only facts, the content index's facts
    (when it has run) and the docs pages."""
    out: dict[str, set[str]] = {}
    for n, f in enumerate(files):
        if n % 1024 == 1023:
            time.sleep(0)  # a preparation runs beside requests: hand them the GIL often
        kind = kind_map.get(f, "other")
        out.setdefault(kind, set()).add(f)
        if kind_is_code(f):  # code by extension, in any folder (a docs example, a test)
            out.setdefault("code", set()).add(f)
        for fact in facts_of(f, kind, None):
            out.setdefault(fact, set()).add(f)
    if content is not None:
        present = set(files)
        for fact, paths in content.facts.items():
            out.setdefault(fact, set()).update(p for p in paths if p in present)
    out["docs-page"] = set(docs_pages(files, kind_map))
    return {k: sorted(v) for k, v in out.items()}


def evidence_view(
    prepared: PreparedTargets | None, graph: WorkspaceView | None, content: ContentView | None = None
) -> evidence.Workspace:
    """What the structural evidence reads of the workspace (``evidence.Workspace``): the
    prepared listing's files, folders, kinds and facts, ``graph``'s symbol index (``None``
    while its symbol pass runs) and the section words of the manifests ``content`` indexed.
    Built once per call."""
    if prepared is None:
        return evidence.Workspace()
    index = graph.symbols if graph is not None else None

    def defines(path: str, name: str) -> bool:
        return index is not None and name in index.defined_in(path)

    def defined(name: str) -> bool | None:
        return None if graph is None else bool(graph.definitions(name))

    return evidence.Workspace(
        is_file=prepared.index.exists,
        is_dir=prepared.index.has_dir,
        definitions=lambda name: list(graph.definitions(name)) if graph is not None else [],
        kind=prepared.index.kind,
        facts=lambda p: prepared.fact_of.get(p, frozenset()),
        defines=defines,
        defined=defined,
        docs_roots=prepared.docs_roots,
        code_folder=prepared.index.code_folder,
        keys=content.keys if content is not None else (lambda p: None),
        with_fact=prepared.index.with_kind,
    )
