"""What the suggester reads of the workspace: the typed seam to ``workspace/``.

The server passes the live objects (``workspace.graph.WorkspaceGraph``, ``workspace.content.
ContentIndexer``); the suggester names only these protocols, so what it may ask of them is
written down here and checked by mypy, not probed at run time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol


class SymbolsView(Protocol):
    """The workspace graph's symbol index, per file."""

    def defined_in(self, path: str) -> frozenset[str]:
        """The names ``path`` defines."""
        ...

    def mentions(self, name: str) -> int:
        """How many files mention the identifier ``name`` (defining it or not)."""
        ...

    def mentioned_in(self, name: str, path: str) -> bool:
        """Whether ``path`` mentions the identifier ``name`` (defining it or not)."""
        ...


class WorkspaceView(Protocol):
    """The workspace graph: its listing with path kinds, its symbol index (``symbols`` is
    ``None`` while the symbol pass runs) and its proof of a target."""

    @property
    def files(self) -> Sequence[str]:
        """The listed files, repo-relative."""
        ...

    @property
    def symbols(self) -> SymbolsView | None:
        """The symbol index, ``None`` until it is built."""
        ...

    def kind_map(self) -> Mapping[str, str]:
        """``{path: kind}`` of every listed file (``workspace/kinds.py``)."""
        ...

    def definitions(self, name: str) -> list[str]:
        """The files defining ``name``, best first."""
        ...

    def usages(self, name: str, limit: int = 5) -> list[str]:
        """Up to ``limit`` files using ``name`` without defining it, best first."""
        ...

    def proof(self, path: str, expected_kinds: Iterable[str] = ()) -> float:
        """How strongly the graph proves ``path`` is of one of ``expected_kinds``."""
        ...


class ContentView(Protocol):
    """The content index: facts read from file contents and topic search (BM25)."""

    @property
    def ready(self) -> bool:
        """Whether a database answers lookups."""
        ...

    @property
    def pending(self) -> bool:
        """Whether a database is still to come (none answers yet; one is being built)."""
        ...

    @property
    def facts(self) -> Mapping[str, Sequence[str]]:
        """``{fact: [paths]}`` read from contents (a changelog, a licence…)."""
        ...

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]:
        """BM25 matches of any of ``words``, best first."""
        ...

    def keys(self, path: str) -> Mapping[str, Mapping[str, float]] | None:
        """The words of a manifest's sections, ``{word: {intent: weight}}`` (``None``: not a
        manifest a reader knows, or not indexed yet)."""
        ...

    def points_of(self, path: str) -> Sequence[tuple[str, str]]:
        """What the manifest at ``path`` points to: ``(fact, file)`` pairs (its dynamic
        version's module is ``version-declared``, its release tool's template
        ``ledger-declared``…; ``workspace/manifests/``); empty for any other file."""
        ...

    def status(self) -> Mapping[str, object]:
        """State and figures for ``dsh/status``."""
        ...
