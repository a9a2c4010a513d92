"""The workspace projection: which files a workspace has (git-tracked, or a walk honouring
``.gitignore``), what kind each is, how recently it changed, and which files define or use a
symbol (``graph.WorkspaceGraph``, built in the background by ``graph.GraphBuilder``)."""

from dsh_sidecar.workspace.files import WorkspaceFiles, list_files
from dsh_sidecar.workspace.graph import (
    NEUTRAL_LITERAL,
    NEUTRAL_SCOPE,
    FileNode,
    GraphBuilder,
    WorkspaceGraph,
    literal_score,
    scope_score,
)
from dsh_sidecar.workspace.kinds import KINDS, Kind, classify

__all__ = [
    "KINDS",
    "NEUTRAL_LITERAL",
    "NEUTRAL_SCOPE",
    "FileNode",
    "GraphBuilder",
    "Kind",
    "WorkspaceFiles",
    "WorkspaceGraph",
    "classify",
    "list_files",
    "literal_score",
    "scope_score",
]
