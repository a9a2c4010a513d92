"""Answers of git started early: a server that knows its workspace from its command line
(``dsh-search mcp``) starts the git commands its first build runs — the listing and recency scan
(``recency.git_scan``), the repository identity (``identity.repository_identity``) — on a thread
before it imports the rest of itself. Those commands are processes that wait on their own
(several rounds of them: the config listing, then the commands side by side), and the imports
are the server's own CPU: side by side, a fresh server's first answer no longer waits for git
after its imports (bench/mcp_start.py).

:func:`start` runs a function on a thread and keeps its result under a key; :func:`take` gives
that result to the first caller with the same key, waiting for it if it is still running (at
most :data:`WAIT_S`: a slow repository's git is waited for, not run a second time beside
itself), and runs the function itself when nothing was started, when the result was ready more
than :data:`FRESH_S` seconds before it was asked for (a scan is a snapshot near the start, never
reused later) or when it failed. Each result is taken once. The function run early is the very one run later (its
guards, its hardened git: ``gitcmd.py``), with the same arguments.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar

log = logging.getLogger(__name__)

#: Seconds a result made early stays fresh enough, after it is ready, for the build that asks.
FRESH_S: Final = 10.0
#: Most seconds :func:`take` waits for a result still being made (the git commands are bounded
#: by their own timeouts, ``gitcmd.py``; this only bounds a function that is not).
WAIT_S: Final = 60.0

_T = TypeVar("_T")


class _Job:
    def __init__(self) -> None:
        self.finished = 0.0
        self.done = threading.Event()
        self.result: Any = None
        self.failed = False


_jobs: dict[Hashable, _Job] = {}
_lock = threading.Lock()


def start(key: Hashable, fn: Callable[..., Any], *args: Any) -> None:
    """Run ``fn(*args)`` on a daemon thread now, its result kept under ``key`` for :func:`take`
    (a key already started is left as it is)."""
    job = _Job()
    with _lock:
        if key in _jobs:
            return
        _jobs[key] = job

    def run() -> None:
        try:
            job.result = fn(*args)
        except Exception as exc:  # the caller runs it again, and meets (and reports) the failure
            log.debug("prefetch %r failed: %s", key, exc)
            job.failed = True
        finally:
            job.finished = time.monotonic()
            job.done.set()

    threading.Thread(target=run, name="dsh-prefetch", daemon=True).start()


def take(key: Hashable, fn: Callable[..., _T], *args: Any) -> _T:
    """The result :func:`start` keeps under ``key`` (once; waiting for it while it runs), or
    ``fn(*args)`` run now when there is none, it failed, or it was ready too long ago. A job
    still running is waited for (it is the very work ``fn(*args)`` would start again, begun
    earlier): a git slower than :data:`FRESH_S` ran twice, the second run after the first."""
    with _lock:
        job = _jobs.pop(key, None)
    ready = job is not None and job.done.wait(WAIT_S) and not job.failed
    if ready and job is not None and time.monotonic() - job.finished <= FRESH_S:
        result: _T = job.result
        return result
    return fn(*args)
