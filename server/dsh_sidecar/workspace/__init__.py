"""The workspace projection: which files a workspace has (git-tracked, or a walk honouring
``.gitignore``), what kind each is, how recently it changed, and which files define or use a
symbol (``graph.WorkspaceGraph``, built in the background by ``builder.GraphBuilder``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dsh_sidecar.lazy import lazy_exports

if TYPE_CHECKING:
    from dsh_sidecar.workspace.builder import GraphBuilder
    from dsh_sidecar.workspace.files import WorkspaceFiles, list_files
    from dsh_sidecar.workspace.graph import FileNode, WorkspaceGraph
    from dsh_sidecar.workspace.kinds import KINDS, Kind, classify

#: Where each public name lives; each is imported on first use (PEP 562), so importing one
#: submodule (the config parser a server's ``initialize`` needs) does not import the whole core.
_EXPORTS = {
    "WorkspaceFiles": "files",
    "list_files": "files",
    "FileNode": "graph",
    "GraphBuilder": "builder",
    "WorkspaceGraph": "graph",
    "KINDS": "kinds",
    "Kind": "kinds",
    "classify": "kinds",
}

__all__ = ["FileNode", "GraphBuilder", "KINDS", "Kind", "WorkspaceFiles", "WorkspaceGraph", "classify", "list_files"]


__getattr__ = lazy_exports(__name__, _EXPORTS)
