"""The bytes one pass over a listing read, handed to the next pass over the same files.

A cold build reads each code file twice: the symbol pass (``symbolpass.py``, the graph builder's
thread) reads and parses it, then the content index's full sync (``fts.py``, its own thread,
started once the symbol pass is done: ``GraphBuilder.wait_symbols``) reads its head again for
its words and facts. Both run in the one server process, one after the other, so the symbol
pass keeps what it read here (:meth:`SharedReads.put`) and the content sync takes it
(:meth:`SharedReads.take`) instead of a second read of the file: its folder's descriptor, a
``stat``, an ``open``, an ``fstat``, a ``read`` and a ``close`` (~15–20 µs a file).

The hand-over is bounded: at most :data:`BUDGET_BYTES` are held at once, counted as each
file's bytes (up to the ``head`` the content sync reads) plus :data:`ENTRY_BYTES` for the
entry itself; past it a file is not kept and the content sync reads it as before. An entry is
taken only for the stat it was read at (``(mtime_ns, size, inode)``: the listing's, which both
passes use), so a file the sync would find otherwise is read again; a taken entry leaves the
store, and :meth:`SharedReads.close` drops what is left (files the sync found unchanged in its
rows, or a build that was cancelled). Whatever the two threads do, the answer is the one a
second read of an unchanged file gives: the same bytes, read through the same guard
(``fsguard.FolderReader``) with a cap no larger than the content sync's.
"""

from __future__ import annotations

import threading
from typing import Final

from dsh_sidecar.workspace.stats import Stat

#: Most bytes held between the passes: about 60,000 small code files (RSS goal ≤ 300 MiB at 100k
#: files, where a cold start's RSS at ready is ~250 MiB).
BUDGET_BYTES: Final = 24 * 1024 * 1024
#: What an entry costs beside its bytes (a dictionary slot, the entry's tuple, the stat's tuple
#: and its three integers, the bytes object's header), counted against the budget.
ENTRY_BYTES: Final = 320


class SharedReads:
    """Files' bytes by repo-relative path, each with the stat it was read at; thread-safe.
    ``head``: the most bytes of a file the taker reads (more are not kept)."""

    def __init__(self, head: int, budget: int = BUDGET_BYTES) -> None:
        self.head = head
        self._held: dict[str, tuple[Stat, bytes]] = {}
        self._left = budget
        self._closed = False
        self._lock = threading.Lock()
        #: files kept, files past the budget (not kept), files taken
        self.kept = 0
        self.over = 0
        self.taken = 0

    def put(self, rel: str, st: Stat, data: bytes) -> None:
        """Keep ``rel``'s bytes ``data`` (read at the stat ``st``) while the budget allows."""
        if len(data) > self.head:
            data = data[: self.head]
        cost = len(data) + ENTRY_BYTES
        with self._lock:
            if self._closed or cost > self._left or rel in self._held:
                self.over += not self._closed
                return
            self._held[rel] = (st, data)
            self._left -= cost
            self.kept += 1

    def take(self, rel: str, st: Stat | None) -> bytes | None:
        """The bytes kept of ``rel`` if they were read at the stat ``st`` (``None``: not kept,
        or read at another stat: read it). The entry leaves the store either way."""
        with self._lock:
            entry = self._held.pop(rel, None)
            if entry is None:
                return None
            self._left += len(entry[1]) + ENTRY_BYTES
            if entry[0] != st:
                return None
            self.taken += 1
        return entry[1]

    def close(self) -> None:
        """Drop every entry left; later puts keep nothing."""
        with self._lock:
            self._closed = True
            self._held.clear()

    def __len__(self) -> int:
        return len(self._held)
