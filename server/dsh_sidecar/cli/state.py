"""State chores of the CLI: ``dsh-search bandit reset``.

:func:`reset_bandit` is the one place that knows how to forget the bandit's learning; it
removes the files the bandit store names (``bandit/posteriors.json`` with its moved-aside
``.corrupt-<epoch>`` copies, and with ``decisions`` the decision log and its rotations) under
``$DSH_HOME``. When the bandit package grows its own reset function, re-point this one to it.
"""

from __future__ import annotations

from pathlib import Path

from filelock import FileLock, Timeout


def reset_bandit(home: Path, decisions: bool = False) -> list[Path]:
    """Remove the bandit's persisted posteriors under ``home`` (and, with ``decisions``, the
    decision log ``bandit/decisions.jsonl`` and its rotated ``.1``, ``.2`` … files).

    The posterior file is removed while holding its inter-process lock (``<name>.lock``), so a
    sidecar's write in flight lands before it or after it, never half. A sidecar still running
    keeps its in-memory posteriors until it restarts; its next update writes only that update.
    Symlinks are removed, never followed. Returns the removed paths, sorted.

    Raises ``OSError`` when a file exists but cannot be removed, ``TimeoutError`` when the lock
    stays held for more than 10 s.
    """
    from dsh_sidecar.bandit.decisions import DECISIONS_FILE
    from dsh_sidecar.bandit.store import POSTERIORS_FILE

    folder = home / "bandit"
    removed: list[Path] = []
    if not folder.is_dir() or folder.is_symlink():
        return removed
    posteriors = folder / POSTERIORS_FILE
    try:
        with FileLock(str(posteriors) + ".lock", timeout=10, mode=0o600):
            for path in [posteriors, *sorted(folder.glob(f"{POSTERIORS_FILE}.corrupt-*"))]:
                if path.is_symlink() or path.exists():
                    path.unlink()
                    removed.append(path)
    except Timeout:
        raise TimeoutError(f"{posteriors}.lock is held by another process") from None
    if decisions:
        for path in sorted(folder.glob(f"{DECISIONS_FILE}*")):
            if path.name == DECISIONS_FILE or path.name[len(DECISIONS_FILE) + 1 :].isdigit():
                path.unlink()
                removed.append(path)
    return sorted(removed)
