"""Keep the cyclic garbage collector's full collections short while a big build allocates.

A workspace build of 200,000 files allocates millions of long-lived objects (the listing, the
symbol index, the prepared targets). CPython runs a full (generation 2) collection whenever the
objects that survived since the last one exceed a quarter of the long-lived total (CPython's
``gc`` module, "long_lived_pending"), so during such a build a full collection runs every few
seconds, each one scanning the whole heap with the GIL held: 250–590 ms each on this machine,
a stop of the event loop, so of every ``dsh/postExecute`` in flight (measured with
``bench/build_pauses.py``).

:class:`HeapFreezer` calls :func:`gc.freeze` (Python 3.7+: move every tracked object to the
permanent generation, which collections do not scan) every ``interval_s`` while a build is
running and once when it ends, so a collection only scans what was allocated since the last
freeze. The cost is the one :func:`gc.freeze` documents: a reference cycle that is garbage at a
freeze is never collected; so every freeze (these steps, the graph's ready, the frozen pauses)
collects the young generation first (:func:`freeze_heap`), and a step is put off while a
:func:`collections_paused` block runs (all it made is young then: the step would scan it all).
10 rebuilds of a 2,000-file workspace beside a thread making garbage cycles
(``bench/frozen_garbage.py``, 6 runs) left 3,400-5,900 garbage objects frozen, now 400-570;
2 rebuilds of 30,000 files 29,600-35,700, now 2,000-2,300; the freezer's collections took at
most 0.4 ms.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

#: Seconds between two freezes while a build runs: a collection then scans at most what this
#: long a stretch of the build allocated (bench/build_pauses.py).
FREEZE_INTERVAL_S: Final = 0.5


class HeapFreezer:
    """Freezes the heap every ``interval_s`` seconds while ``busy()`` is true, on a daemon
    thread, and once more when it turns false (the thread then ends). :meth:`start` is
    idempotent while the thread runs; :meth:`stop` ends it at once (no final freeze)."""

    def __init__(self, busy: Callable[[], bool], interval_s: float = FREEZE_INTERVAL_S) -> None:
        self.busy = busy
        self.interval_s = interval_s
        self.freezes = 0
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()

    def start(self) -> None:
        """Follow a build that has just been started (no-op when already following one)."""
        with self._lock:
            if self._thread is not None and self._thread.is_alive():
                return
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="dsh-heap-freezer", daemon=True)
            self._thread.start()

    def stop(self, timeout_s: float = 1.0) -> None:
        """End the thread (at most ``timeout_s`` of waiting)."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            busy = self.busy()
            if not _freeze_unless_paused():
                continue  # a paused block runs: the next step (or the block's own end) freezes
            self.freezes += 1
            if not busy:
                return


def freeze_heap() -> None:
    """:func:`gc.freeze` after one young collection (generation 0): the garbage cycles made since
    the last collection are collected, not frozen for good (a frozen cycle is never collected,
    and every rebuild froze more), and what is left, long-lived, is frozen. Every freeze of the
    sidecar goes through it: the build freezer's steps, the graph's ready, the frozen pauses
    (:func:`collections_paused`)."""
    gc.collect(0)
    gc.freeze()


def _freeze_unless_paused() -> bool:
    """:func:`freeze_heap` for the build freezer, unless a :func:`collections_paused` block runs
    (``False``): while one runs, every container since it began is young (no collection ran),
    so a young collection then would scan all the block's tables; the block's own end (a frozen
    pause) or the freezer's next step does it once the collector is back."""
    with _pause_lock:
        if _paused:
            return False
        freeze_heap()
        return True


_paused = 0
_pause_lock = threading.Lock()
_was_enabled = True


@contextmanager
def collections_paused(freeze: bool = False, once: bool = False) -> Iterator[None]:
    """No automatic collection while the block runs: for the bulk builds of long-lived tables
    (a listing's dicts, a cache read back, the suggester's one-pass tables) that make tens of
    thousands of containers and no garbage cycle. Each container would count towards the next
    collection, and the collections that follow scan them again and again while the build goes
    on: 20-60 % of such a build's CPU on 100k files (a JSON array of 50,000 lists: 115 ms with
    the collector, 43 ms without). Process-wide and nested (from several threads, the collector
    comes back when the last block ends, as it was before the first); the blocks are short
    (a fraction of a second each), so another thread's garbage waits that long at most.

    With ``freeze``, what was allocated meanwhile is frozen at the block's end (:func:`gc.freeze`,
    O(1)), after one young collection (generation 0: what the block and the other threads
    allocated meanwhile, since no collection ran): the garbage cycles other threads made
    meanwhile (the event loop's, while a build runs) are collected, not frozen for good, and
    what the block made is left to the full collections' scans no more. Freezing without that
    collection stranded every such cycle: 10 full rebuilds of a 2,000-file workspace beside a
    thread making cycles left 22,700-50,700 garbage objects frozen (3,000-4,100 without the
    frozen pauses), more with every rebuild.

    ``once``: a block a process runs once, before it serves (the MCP start's imports and
    config), is frozen without that collection: it would visit every object the imports made
    (about 155,000, 29 ms of CPU before the first answer) to find the few cycles they left
    (about 1,300 objects, 390 KB), frozen with them instead, a bound that does not grow."""
    global _paused, _was_enabled
    with _pause_lock:
        if _paused == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _paused += 1
    try:
        yield
    finally:
        with _pause_lock:
            if freeze:
                # the garbage cycles any thread made meanwhile are all young (no collection ran):
                # collected first, since a frozen one is never collected (every rebuild would
                # strand more); what is left, the block's tables, is then frozen
                if once:
                    gc.freeze()
                else:
                    freeze_heap()
            _paused -= 1
            if _paused == 0 and _was_enabled:
                gc.enable()


#: Items per slice of a bulk dict build on a builder thread (:func:`sliced_dict`).
SLICE: Final = 8192


def sliced_dict(keys: list[str], values: list[Any]) -> dict[str, Any]:
    """``dict(zip(keys, values))`` built slice by slice: one ``dict(zip(…))`` call over 200,000
    items runs in C for 150–330 ms on this machine without releasing the GIL, which stops the
    server's event loop that long; between slices the interpreter can switch threads."""
    out: dict[str, Any] = {}
    for i in range(0, len(keys), SLICE):
        out.update(zip(keys[i : i + SLICE], values[i : i + SLICE]))
    return out
