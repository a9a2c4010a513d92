"""The workspace projection: which files a workspace has (git-tracked, or a walk honouring
``.gitignore``), what kind each is, how recently it changed, and which files define or use a
symbol (``graph.WorkspaceGraph``, built in the background by ``graph.GraphBuilder``)."""

from dsh_sidecar.workspace.files import WorkspaceFiles, list_files
from dsh_sidecar.workspace.graph import (
    FileNode,
    GraphBuilder,
    WorkspaceGraph,
)
from dsh_sidecar.workspace.kinds import KINDS, Kind, classify

__all__ = [
    "KINDS",
    "FileNode",
    "GraphBuilder",
    "Kind",
    "WorkspaceFiles",
    "WorkspaceGraph",
    "classify",
    "list_files",
]
