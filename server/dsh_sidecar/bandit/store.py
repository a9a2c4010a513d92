"""Persistent bandit posteriors: ``$DSH_HOME/bandit/posteriors.json`` via
:class:`~dsh_sidecar.state.StateFile` (atomic write, 0600, inter-process lock).

The document stores each row's evidence *above the prior* and how many posterior updates each
arm has had (``{"version": 1, "rows": {row: {arm: [a, b]}}, "updates": {arm: n}}``, see
:data:`~.policy.Evidence`; ``updates`` is optional on read). Every change is an operation
(:func:`~.policy.apply_update` / :func:`~.policy.apply_adjust`) applied to the in-memory
evidence at once and, **write-behind**, to the file's *current* document under the lock: one
writer thread collects the operations queued within :data:`WRITE_DELAY_S` and lands them in
one locked, fsynced write, in submission order. Two sidecars updating the same file both land,
and each sees the other's evidence after its next write. :meth:`PosteriorStore.flush` (called
on ``shutdown``, on close, and at interpreter exit) lands everything queued.

A corrupt or foreign file is moved aside and the bandit starts cold (StateFile warns). When
the file cannot be written (read-only, disk full, lock held too long) the bandit keeps serving
from memory: the first failure is warned about once and persistence stays off for the process.

**Fleet** (docs/fleet.md): with a shared state (:meth:`PosteriorStore.share`) the file is not used:
the same writer thread sends each queued update/re-credit as increments (``state/shared.py``:
exact totals and the discounted bucket sums), and the fleet's evidence and update counts, read
back at most every :data:`SHARED_REFRESH_S`, become the in-memory posterior. A store that is
away keeps the local posterior (its writes are re-sent when it returns).
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import math
import threading
import time
import uuid
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

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


#: Longest a queued posterior write waits before it lands, seconds (the bound on what a
#: crash without any exit path, kill -9, can lose).
WRITE_DELAY_S: Final = 1.0
#: Largest update count accepted from the file.
MAX_UPDATES: Final = 10**12
#: Least seconds between two reads of the fleet's posteriors from a shared store (each update
#: is applied locally at once; what other sidecars learned is adopted within this).
SHARED_REFRESH_S: Final = 0.25

Op = Callable[[Evidence], None]


def _evidence(rows: Any) -> Evidence:
    if not isinstance(rows, dict):
        raise ValueError("bad rows")
    out: Evidence = {}
    for row, cells in rows.items():
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


def _updates(value: Any) -> dict[str, int]:
    if value is None:
        return dict.fromkeys(ARMS, 0)
    if not isinstance(value, dict):
        raise ValueError("bad updates")
    out = {}
    for arm in ARMS:
        n = value.get(arm, 0)
        if isinstance(n, bool) or not isinstance(n, int) or not 0 <= n <= MAX_UPDATES:
            raise ValueError("bad update count")
        out[arm] = n
    return out


def validate_document(data: Any) -> dict[str, Any]:
    """``{"rows": Evidence, "updates": {arm: n}}`` of a posterior document (``updates`` 0
    when the file predates them). Raises ``ValueError`` for anything else."""
    if not isinstance(data, dict) or data.get("version") != VERSION or not isinstance(data.get("rows"), dict):
        raise ValueError("not a bandit posterior document")
    return {"rows": _evidence(data["rows"]), "updates": _updates(data.get("updates"))}


class PosteriorStore:
    """Keeps a :class:`ContextualPolicy`'s evidence in ``home/bandit/posteriors.json``
    (``home`` ``None``: memory only). ``warnings`` collects what went wrong, for ``dsh/status``;
    ``updates`` counts each arm's posterior updates (persisted with the evidence)."""

    def __init__(self, home: Path | None, write_delay_s: float = WRITE_DELAY_S) -> None:
        self.path = home / "bandit" / POSTERIORS_FILE if home is not None else None
        self.warnings: list[str] = []
        self.updates: dict[str, int] = dict.fromkeys(ARMS, 0)
        self.write_delay_s = write_delay_s
        self.file = (
            StateFile(self.path, validate_document, max_bytes=MAX_BYTES, warnings=self.warnings) if self.path else None
        )
        self.persisting = self.file is not None
        # one writer thread drains the queue; _landed counts operations written so far, so
        # flush() waits for what was queued before it, and the file's merged evidence is
        # adopted only when no newer local operation is still queued
        self._cond = threading.Condition()
        self._queue: list[tuple[Op, str | None]] = []
        self._queued = 0
        self._landed = 0
        self._urgent = False
        self._writer: threading.Thread | None = None
        self._policy: ContextualPolicy | None = None
        self.shared: SharedState | None = None
        self.fleet_updates = 0  # updates this process sent to a shared store (exact fleet counts)
        self.refresh_s = SHARED_REFRESH_S
        self._read_at = float("-inf")
        self._handed = 0  # operations handed to the shared store (the rest are in the queue or a batch)
        self._abandoned = False
        self._first_read = threading.Event()  # the fleet's first posterior read landed (or none comes)
        self._first_read.set()

    def share(self, shared: SharedState | None, policy: ContextualPolicy) -> None:
        """Keep the posteriors in ``shared`` instead of the file; the fleet's are read on the
        store's read threads and adopted when they land (:meth:`settle` waits for that). Until
        then the policy samples from what this process has (the prior): ``initialize`` and the
        MCP server's build never wait for the store (a slow one held them up to ``timeoutMs``
        per command, a flooding one 2.5 s)."""
        self.shared = shared
        self._first_read.clear()
        if shared is not None:
            self.file, self.path = None, None
            self.persisting = True
            with self._cond:
                queued = self._queued
            if not shared.read_behind(lambda: self._first_adopt(policy, queued)):
                self._first_read.set()  # the store is away or its queue full: the local posterior

    def settle(self, timeout_s: float) -> bool:
        """Wait at most ``timeout_s`` for the fleet's first posterior read (the command line's
        one-shot calls, tests); ``True`` when it has landed or none is coming."""
        return self._first_read.wait(timeout_s)

    def _first_adopt(self, policy: ContextualPolicy, queued: int) -> None:
        """The first read of the fleet's posteriors (a read thread). Adopted unless this process
        learned something since :meth:`share` (``queued`` operations then): the writer re-reads
        the fleet after sending it, and a read taken before that write landed would drop it
        from the in-memory posterior until then."""
        try:
            self._adopt_shared(policy, since=queued)
        finally:
            self._first_read.set()

    def _adopt_shared(self, policy: ContextualPolicy, since: int | None = None) -> None:
        """The fleet's evidence and update counts into ``policy`` (nothing when the store is
        away or a newer local operation is still queued; with ``since``, nothing when more than
        ``since`` operations were ever submitted)."""
        assert self.shared is not None
        ev, counts = self.shared.bandit_view(policy.rows, ARMS, policy.discount, ("global",))  # one round trip
        with self._cond:
            if since is not None and self._queued != since:
                return
            if ev is not None and not self._queue:
                policy.load(ev)
                if counts is not None:
                    self.updates = {arm: int(counts["global"][arm]["updates"]) for arm in ARMS}

    def load(self, policy: ContextualPolicy) -> None:
        """Adopt the persisted evidence and update counts (absent or corrupt: the prior, with
        a warning)."""
        if self.file is None:
            return
        doc = self.file.read()
        if doc is not None:
            policy.load(doc["rows"])
            self.updates = dict(doc["updates"])

    def start_writer(self) -> None:
        """Start the writer thread now, when this store persists (idempotent): the server's
        preparation calls it off the event loop, so a first :meth:`submit` on the loop only
        queues (a thread started there waits for the GIL and a CPU, tens of ms when loaded)."""
        with self._cond:
            if self._writer is None and (self.shared is not None or (self.file is not None and self.persisting)):
                self._writer = threading.Thread(target=self._run, name="dsh-bandit-state", daemon=True)
                self._writer.start()
                _LIVE.add(self)

    def submit(self, policy: ContextualPolicy, op: Op, counts_for: str | None = None) -> None:
        """Apply ``op`` to the in-memory evidence now and queue it for the file (landed within
        :data:`WRITE_DELAY_S`, in submission order). ``counts_for`` names the arm whose update
        count the operation adds one to (``None``: a re-credit, not an update).

        Thread-safe. A write failure turns persistence off for the process (warned once);
        the in-memory update stands either way."""
        with self._cond:
            op(policy.evidence)
            policy.invalidate()
            if counts_for is not None:
                self.updates[counts_for] = self.updates.get(counts_for, 0) + 1
                self.fleet_updates += self.shared is not None
            if self.shared is None and (self.file is None or not self.persisting):
                return
            self._policy = policy
            self._queue.append((op, counts_for))
            self._queued += 1
            if self._writer is None:
                self._writer = threading.Thread(target=self._run, name="dsh-bandit-state", daemon=True)
                self._writer.start()
                _LIVE.add(self)
            if len(self._queue) == 1:
                # only a writer waiting for an empty queue needs waking: one collecting a batch
                # (the bounded delay) takes this op with it, and waking it on every search would
                # make it take the GIL from the event loop each time for nothing
                self._cond.notify_all()

    def apply(self, policy: ContextualPolicy, op: Op, counts_for: str | None = None) -> None:
        """:meth:`submit`, then wait until the write (and every earlier one) has landed."""
        self.submit(policy, op, counts_for)
        self.flush()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    if self._writer is not threading.current_thread():
                        return  # closed
                    self._cond.wait()
                # bounded delay: collect what else comes within it; the process's first write
                # goes at once, so an unwritable state folder is known (and warned) right away
                if not self._urgent and self._landed > 0:
                    self._cond.wait_for(lambda: self._urgent, timeout=self.write_delay_s)
                batch, self._queue = self._queue, []
                self._urgent = False
                policy = self._policy
            self._persist(policy, batch)

    def _persist(self, policy: ContextualPolicy | None, batch: list[tuple[Op, str | None]]) -> None:
        if self.shared is not None:
            self._share(policy, batch)
            return
        doc = None
        if self.file is not None and self.persisting:

            def merge(current: Any | None) -> dict[str, Any]:
                ev: Evidence = current["rows"] if current is not None else {}
                updates = current["updates"] if current is not None else dict.fromkeys(ARMS, 0)
                for op, arm in batch:
                    op(ev)
                    if arm is not None:
                        updates[arm] = updates.get(arm, 0) + 1
                return {"version": VERSION, "rows": ev, "updates": updates}

            try:
                doc = self.file.update(merge)
            except OSError as exc:  # filelock's Timeout too (a TimeoutError)
                self.persisting = False
                reason = getattr(exc, "strerror", None) or type(exc).__name__
                message = (
                    f"bandit state {self.path} cannot be written ({reason}); keeping the posteriors in memory only"
                )
                self.warnings.append(message)
                log.warning("%s", message)
        with self._cond:
            self._landed += len(batch)
            if doc is not None and not self._queue and policy is not None:
                policy.load(doc["rows"])  # every other sidecar's evidence too
                self.updates = dict(doc["updates"])
            self._cond.notify_all()

    def _share(self, policy: ContextualPolicy | None, batch: list[tuple[Op, str | None]]) -> None:
        from dsh_sidecar.state.shared import YIELD_S, BanditOp

        assert self.shared is not None
        time.sleep(YIELD_S)  # the search's reply goes out first (state/shared.py, YIELD_S)
        try:
            ops: list[BanditOp] = []
            for op, _arm in batch:
                spec = getattr(op, "fleet", None)  # bandit/policy.py: what a shared store replays
                if spec is not None:
                    kind, rows, arm, value, discount = spec
                    ops.append(BanditOp(uuid.uuid4().hex, kind, rows, arm, value, discount, arms=ARMS))
            with contextlib.ExitStack() as handing:
                with self._cond:
                    abandoned = self._abandoned  # the exit stopped waiting: counted by abandon()
                    if not abandoned:
                        self._handed += len(batch)
                        # one step with the count: the exit's close waits for them from here
                        handing.enter_context(self.shared.handing(len(ops)))
                if not abandoned and ops:
                    self.shared.bandit_apply_many(ops)  # the batch in one round trip
            now = time.monotonic()
            if policy is not None and now - self._read_at >= self.refresh_s:
                self._read_at = now
                self._adopt_shared(policy)
        finally:
            with self._cond:
                self._landed += len(batch)
                self._cond.notify_all()

    def flush(self, timeout_s: float | None = None) -> bool:
        """Land every queued write now; ``True`` when all have landed within ``timeout_s``."""
        with self._cond:
            target = self._queued
            if self._landed >= target:
                return True
            self._urgent = True
            self._cond.notify_all()
            return self._cond.wait_for(lambda: self._landed >= target, timeout=timeout_s)

    def abandon(self) -> int:
        """The exit stops waiting for the writer: the operations it has not handed to the shared
        store are never sent; their number (the exit tells it). ``0`` without a shared store."""
        with self._cond:
            if self.shared is None:
                return 0
            self._abandoned = True
            return self._queued - self._handed

    def close(self, timeout_s: float | None = None) -> None:
        """Flush (waiting at most ``timeout_s``) and stop the writer thread (a later
        :meth:`submit` starts a new one)."""
        self.flush(timeout_s)
        with self._cond:
            self._writer = None
            self._cond.notify_all()
        _LIVE.discard(self)

    def reset(self, policy: ContextualPolicy) -> None:
        """Forget every posterior: the policy back at the prior, the counts at 0, the file
        rewritten so (under its lock). Raises ``OSError`` when the file cannot be written."""
        self.flush()
        with self._cond:
            policy.load({})
            self.updates = dict.fromkeys(ARMS, 0)
        if self.file is not None:
            self.file.update(lambda _current: empty_document())

    def describe(self) -> dict[str, Any]:
        """``{path, persisting, warnings}`` for ``dsh/status``."""
        out: dict[str, Any] = {
            "path": str(self.path) if self.path else None,
            "persisting": self.persisting,
            "warnings": list(self.warnings),
        }
        if self.shared is not None:
            out["shared"] = self.shared.status()["backend"]
        return out


def empty_document() -> dict[str, Any]:
    """The posterior document of a bandit that has learned nothing."""
    return {"version": VERSION, "rows": {}, "updates": dict.fromkeys(ARMS, 0)}


def reset_posteriors(home: Path, decisions: bool = False) -> list[Path]:
    """Forget what the bandit learned under ``home`` (``$DSH_HOME``), for ``dsh-search bandit
    reset``: remove ``bandit/posteriors.json``, the searches waiting for feedback
    (``bandit/pending.json``) and their moved-aside ``.corrupt-<epoch>`` copies and, with ``decisions``, the decision log ``bandit/decisions.jsonl`` and its rotated ``.1``,
    ``.2`` … files. Each state file is removed while holding its inter-process lock
    (``<name>.lock``), so a sidecar's write in flight lands before it or after it, never half;
    a sidecar still running keeps its in-memory posteriors and its next write merges into the
    empty file. Symlinks are removed, never followed. Returns the removed paths, sorted (``[]``
    when there was nothing to remove).

    Raises ``OSError`` when a file exists but cannot be removed, ``TimeoutError`` when the lock
    stays held for more than 10 s.
    """
    from filelock import FileLock, Timeout

    from dsh_sidecar.bandit.decisions import DECISIONS_FILE
    from dsh_sidecar.bandit.feedback import PENDING_FILE

    folder = home / "bandit"
    removed: list[Path] = []
    if not folder.is_dir() or folder.is_symlink():
        return removed
    # the searches waiting for answer-usage feedback go too: their re-credit is relative to
    # the evidence being forgotten
    for name in (POSTERIORS_FILE, PENDING_FILE):
        state = folder / name
        try:
            with FileLock(str(state) + ".lock", timeout=10, mode=0o600):
                for path in [state, *sorted(folder.glob(f"{name}.corrupt-*"))]:
                    if path.is_symlink() or path.exists():
                        path.unlink()
                        removed.append(path)
        except Timeout:
            raise TimeoutError(f"{state}.lock is held by another process") from None
    if decisions:
        for path in sorted(folder.glob(f"{DECISIONS_FILE}*")):
            if path.name == DECISIONS_FILE or path.name[len(DECISIONS_FILE) + 1 :].isdigit():
                path.unlink()
                removed.append(path)
    return sorted(removed)


#: Stores with a running writer: flushed at interpreter exit (EOF, SIGTERM turned into exit).
_LIVE: weakref.WeakSet[PosteriorStore] = weakref.WeakSet()


@atexit.register
def _flush_at_exit() -> None:
    for store in list(_LIVE):
        try:
            store.flush(timeout_s=5.0)
        except Exception:  # exit must go on
            log.warning("bandit: state flush at exit failed", exc_info=True)
