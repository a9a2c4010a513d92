"""The prepared targets: what one preparation resolved over the workspace listing.

Preparation runs off the request path (on the graph builder's thread in the server) whenever
the listing or the content facts change; a call reads the :class:`PreparedTargets` of the last
preparation and never lists the workspace itself.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from dsh_sidecar.suggester import evidence
from dsh_sidecar.suggester.candidates import FileIndex, Target


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
    symbols: OrderedDict[tuple[Any, ...], list[Target]] = field(default_factory=OrderedDict)
    fact_of: dict[str, frozenset[str]] = field(default_factory=dict)
    #: a project-level intent's prepared targets inside the test tree (``in_test_tree``): named
    #: only to a call that scopes into them
    test_tree: dict[str, list[Target]] = field(default_factory=dict)


def evidence_view(prepared: PreparedTargets | None, graph: Any) -> evidence.Workspace:
    """What the structural evidence reads of the workspace (``evidence.Workspace``): the
    prepared listing's files, folders, kinds and facts, and ``graph``'s symbol index (``None``
    while its symbol pass runs). Built once per call."""
    if prepared is None:
        return evidence.Workspace()
    index = getattr(graph, "symbols", None) if graph is not None else None

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
    )
