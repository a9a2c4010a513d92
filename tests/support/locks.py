"""Locks for the few things tests share outside their own tmp dirs, so the suite can run on
several pytest-xdist workers: a lock file per resource and checkout under the temp dir (never
in the repository), held with :mod:`filelock` for the duration of a ``with`` block."""

from __future__ import annotations

import hashlib
import tempfile
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parents[2]

#: ``editor-clients/vscode``: ``npm test`` (its ``pretest`` build) and ``npm run package`` both
#: write ``out/``, and the package writes ``dsh-search.vsix``.
VSCODE_BUILD = "vscode-build"


def shared(resource: str, timeout_s: float = 900.0) -> FileLock:
    """The lock of ``resource`` in this checkout (``with shared(VSCODE_BUILD): ...``); waiting
    longer than ``timeout_s`` raises ``filelock.Timeout`` (another worker hung on it)."""
    key = hashlib.sha256(str(REPO).encode()).hexdigest()[:12]
    return FileLock(Path(tempfile.gettempdir()) / f"dsh-tests-{key}-{resource}.lock", timeout=timeout_s)
