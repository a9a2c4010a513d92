"""Persistent bandit posteriors: ``$DSH_HOME/bandit/posteriors.json`` via
:class:`~dsh_sidecar.state.StateFile` (atomic write, 0600, inter-process lock).

The document stores each row's evidence *above the prior* (``{"version": 1, "rows": {row:
{arm: [a, b]}}}``, see :data:`~.policy.Evidence`). Every change is applied as an operation
(:func:`~.policy.apply_update` / :func:`~.policy.apply_adjust`) to the file's **current**
document under the lock, and the result becomes the in-memory posterior: two sidecars updating
the same file both land, and each sees the other's evidence from its next update on.

A corrupt or foreign file is moved aside and the bandit starts cold (StateFile warns). When
the file cannot be written (read-only, disk full, lock held too long) the bandit keeps serving
from memory: the first failure is warned about once and persistence stays off for the process.
"""

from __future__ import annotations

import logging
import math
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from filelock import Timeout

from dsh_sidecar.bandit.policy import ARMS, ContextualPolicy, Evidence
from dsh_sidecar.state import StateFile

if TYPE_CHECKING:
    from dsh_sidecar.state.shared import SharedState

log = logging.getLogger(__name__)

#: Format version of the posterior document.
VERSION: Final = 1
#: File name under ``$DSH_HOME/bandit/``.
POSTERIORS_FILE: Final = "posteriors.json"
#: Largest evidence value accepted from the file (anything above is not ours).
MAX_EVIDENCE: Final = 1e9
#: Largest posterior document accepted, bytes (a few rows of numbers).
MAX_BYTES: Final = 64 * 1024
#: Least seconds between two reads of the fleet's posteriors from a shared store (each update
#: is applied locally at once; what other sidecars learned is adopted within this).
SHARED_REFRESH_S: Final = 0.25


def validate_document(data: Any) -> Evidence:
    """The evidence of a posterior document. Raises ``ValueError`` for anything else."""
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("rows"), dict):
        raise ValueError("not a bandit posterior document")
    out: Evidence = {}
    for row, cells in data["rows"].items():
        if not isinstance(row, str) or not isinstance(cells, dict):
            raise ValueError("bad row")
        out[row] = {}
        for arm in ARMS:
            cell = cells.get(arm, [0.0, 0.0])
            if not (isinstance(cell, list) and len(cell) == 2):
                raise ValueError("bad cell")
            vals = []
            for v in cell:
                if (
                    isinstance(v, bool)
                    or not isinstance(v, (int, float))
                    or not math.isfinite(v)
                    or not 0 <= v <= MAX_EVIDENCE
                ):
                    raise ValueError("bad evidence value")
                vals.append(float(v))
            out[row][arm] = vals
    return out


class PosteriorStore:
    """Keeps a :class:`ContextualPolicy`'s evidence in ``home/bandit/posteriors.json``
    (``home`` ``None``: memory only). ``warnings`` collects what went wrong, for ``dsh/status``."""

    def __init__(self, home: Path | None) -> None:
        self.path = home / "bandit" / POSTERIORS_FILE if home is not None else None
        self.warnings: list[str] = []
        self.file = (
            StateFile(self.path, validate_document, max_bytes=MAX_BYTES, warnings=self.warnings) if self.path else None
        )
        self.persisting = self.file is not None
        # Writes go through one worker thread, in submission order, so a search never waits
        # for the lock and the fsync; ``_pending`` counts queued writes so that the file's
        # merged evidence is adopted only when no newer local update is still queued.
        self._mutex = threading.Lock()
        self._pending = 0
        self._writer: ThreadPoolExecutor | None = None
        self.shared: SharedState | None = None
        self.updates = 0  # updates submitted by this process (exact counting across a fleet)
        self._read_at = float("-inf")
        self.refresh_s = SHARED_REFRESH_S

    def share(self, shared: SharedState | None, policy: ContextualPolicy) -> None:
        """Keep the posteriors in ``shared`` instead of the file, and adopt the fleet's now."""
        self.shared = shared
        if shared is not None:
            self.file, self.path = None, None
            ev = shared.bandit_evidence(policy.rows, ARMS, policy.discount)
            if ev is not None:
                policy.load(ev)

    def load(self, policy: ContextualPolicy) -> None:
        """Adopt the persisted evidence (absent or corrupt: the prior, with a warning)."""
        if self.file is None:
            return
        doc = self.file.read()
        if doc is not None:
            policy.load(doc)

    def submit(self, policy: ContextualPolicy, op: Callable[[Evidence], None]) -> Future[None] | None:
        """Apply ``op`` to the in-memory evidence now and queue the same ``op`` for the file
        (applied under the lock to the file's current evidence, in submission order, by one
        worker thread). Returns the write's future, ``None`` when nothing is persisted.

        Thread-safe. A write failure turns persistence off for the process (warned once);
        the in-memory update stands either way."""
        with self._mutex:
            op(policy.evidence)
            policy.invalidate()
            self.updates += getattr(op, "fleet", ("",))[0] == "update"
            if self.shared is None and (self.file is None or not self.persisting):
                return None
            self._pending += 1
            if self._writer is None:
                self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dsh-bandit-state")
            return self._writer.submit(self._persist, policy, op)

    def apply(self, policy: ContextualPolicy, op: Callable[[Evidence], None]) -> None:
        """:meth:`submit`, then wait until the write (and every earlier one) has landed."""
        future = self.submit(policy, op)
        if future is not None:
            future.result()

    def _persist(self, policy: ContextualPolicy, op: Callable[[Evidence], None]) -> None:
        if self.shared is not None:
            self._share(policy, op)
            return
        doc = None
        if self.file is not None and self.persisting:

            def merge(current: Any | None) -> dict[str, Any]:
                ev: Evidence = current if current is not None else {}
                op(ev)
                return {"version": VERSION, "rows": ev}

            try:
                doc = self.file.update(merge)
            except (OSError, Timeout) as exc:
                self.persisting = False
                reason = getattr(exc, "strerror", None) or type(exc).__name__
                message = (
                    f"bandit state {self.path} cannot be written ({reason}); keeping the posteriors in memory only"
                )
                self.warnings.append(message)
                log.warning("%s", message)
        with self._mutex:
            self._pending -= 1
            if doc is not None and self._pending == 0:
                policy.load(doc["rows"])  # every other sidecar's evidence too

    def _share(self, policy: ContextualPolicy, op: Callable[[Evidence], None]) -> None:
        from dsh_sidecar.state.shared import YIELD_S, BanditOp

        assert self.shared is not None
        spec = getattr(op, "fleet", None)
        ev = None
        time.sleep(YIELD_S)  # the search's reply goes out first (state/shared.py, YIELD_S)
        try:
            if spec is not None:
                self.shared.bandit_apply(BanditOp(uuid.uuid4().hex, *spec, arms=ARMS))
            now = time.monotonic()
            if now - self._read_at >= self.refresh_s:  # the fleet's evidence, at most this often
                self._read_at = now
                ev = self.shared.bandit_evidence(policy.rows, ARMS, policy.discount)
        finally:
            with self._mutex:
                self._pending -= 1
                if ev is not None and self._pending == 0:
                    policy.load(ev)  # the fleet's evidence, this update included

    def flush(self) -> None:
        """Wait until every queued write has landed."""
        writer = self._writer
        if writer is not None:
            writer.submit(lambda: None).result()

    def close(self) -> None:
        """Flush and stop the writer thread (a later :meth:`submit` starts a new one)."""
        writer, self._writer = self._writer, None
        if writer is not None:
            writer.shutdown(wait=True)

    def describe(self) -> dict[str, Any]:
        """``{path, persisting, warnings}`` for ``dsh/status``."""
        out: dict[str, Any] = {
            "path": str(self.path) if self.path else None,
            "persisting": self.persisting,
            "warnings": list(self.warnings),
        }
        if self.shared is not None:
            out["shared"] = self.shared.status()["backend"]
            out["updates"] = self.updates
        return out
