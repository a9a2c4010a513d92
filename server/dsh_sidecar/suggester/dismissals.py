"""Durable dismissals (plan, "The dismissal"): ``dsh/dismiss {family, path?}``.

A family dismissal (no path, stored as ``*``) suppresses that intent's notes (ledger
``suppressed dismissed <Intent>``); a path dismissal drops that one candidate. The record line
is ``dismissed <Intent> <path|*>``. Dismissals live in the knowledge file, so they survive a
restart and are shared by every sidecar on the file; each expires ``dismissTtl`` seconds
after it was made (default 86400, plan), and expired ones are pruned when read: no timers.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Final

from dsh_sidecar.suggester import ledger
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.knowledge import MAX_PATH_CHARS, Knowledge

#: The path of a family dismissal (plan: ``dismissed <intent> <path|*>``).
FAMILY: Final = "*"


def iso_seconds(epoch: float) -> str:
    """Epoch seconds → ISO-8601 UTC with a ``Z``, to the second (``expiresAt`` on the wire)."""
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def normalize_path(path: str, root: str = "") -> str:
    """A dismissed path as candidates spell it: POSIX, repo-relative (an absolute path inside
    ``root`` is made relative), no leading ``./``.

    Raises ``ValueError`` for a path with control characters (it would forge ledger lines),
    longer than :data:`~dsh_sidecar.suggester.knowledge.MAX_PATH_CHARS`, or outside the
    workspace (absolute elsewhere, or climbing with ``..``): no candidate can have such a path.
    """
    if _CONTROL.search(path):
        raise ValueError("path: must not contain control characters")
    if len(path) > MAX_PATH_CHARS:
        raise ValueError(f"path: longer than {MAX_PATH_CHARS} characters")
    p = path.replace("\\", "/")
    if root and p.startswith(root.rstrip("/") + "/"):
        p = p[len(root.rstrip("/")) + 1 :]
    while p.startswith("./"):
        p = p[2:]
    if p.startswith("/") or ".." in p.split("/"):
        raise ValueError("path: must be a repo-relative path inside the workspace")
    return p


class Dismissals:
    """Dismissals of one workspace, kept in ``knowledge``; ``clock`` returns epoch seconds;
    ``root`` is the absolute workspace root."""

    def __init__(
        self, knowledge: Knowledge, ttl: Callable[[], int], clock: Callable[[], float], root: str = ""
    ) -> None:
        self.knowledge = knowledge
        self.root = root  # the absolute workspace root (absolute dismissed paths are made relative)
        self.ttl = ttl
        self.clock = clock

    def dismiss(self, family: str, path: str | None) -> tuple[str, float]:
        """Record and persist a dismissal; return ``(record line, expiresAt epoch seconds)``.

        Raises ``ValueError`` for an unknown family (not one of the ten intents). A failed write
        keeps the dismissal in memory (it still applies) and is retried on the next flush.
        """
        if family not in INTENTS:
            raise ValueError(f"family: unknown intent {family!r} (known: {', '.join(INTENTS)})")
        target = normalize_path(path, self.root) if path else FAMILY
        if not target:
            raise ValueError("path: empty after normalisation")
        expires = self.clock() + self.ttl()
        self.knowledge.dismiss(family, target, expires)
        self.knowledge.flush_now()
        return ledger.dismissed(family, target), expires

    def family_dismissed(self, intent: str) -> bool:
        """Whether ``intent``'s notes are dismissed now."""
        return (intent, FAMILY) in self.knowledge.active_dismissals()

    def path_dismissed(self, intent: str, path: str) -> bool:
        """Whether candidate ``path`` of ``intent`` is dismissed now."""
        return (intent, path) in self.knowledge.active_dismissals()

    def paths_dismissed(self, intent: str) -> frozenset[str]:
        """The candidate paths of ``intent`` dismissed now, read at once (a note's targets are
        filtered against one reading of the dismissals, not one reading a target)."""
        return frozenset(path for (family, path), _ in self.knowledge.active_dismissals().items() if family == intent)
