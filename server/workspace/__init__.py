"""The workspace projection: which files a workspace has (git-tracked, or a walk honouring
``.gitignore``), cached for the suggester."""

from dsh_sidecar.workspace.files import WorkspaceFiles, list_files

__all__ = ["WorkspaceFiles", "list_files"]
