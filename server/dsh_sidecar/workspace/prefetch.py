"""Answers of git started early: a server that knows its workspace from its command line
(``dsh-search mcp``) starts the git commands its first build runs — the listing and recency scan
(``recency.git_scan``), the repository identity (``identity.repository_identity``) — on a thread
before it imports the rest of itself. Those commands are processes that wait on their own
(several rounds of them: the config listing, then the commands side by side), and the imports
are the server's own CPU: side by side, a fresh server's first answer no longer waits for git
after its imports (bench/mcp_start.py).

:func:`start` runs a function on a thread and keeps its result under a key; :func:`take` gives
that result to the first caller with the same key, waiting for it if it is still running, and
runs the function itself when nothing was started, when it was started more than
:data:`FRESH_S` seconds ago (a scan is a snapshot near the start, never reused later) or when
it failed. Each result is taken once. The function run early is the very one run later (its
guards, its hardened git: ``gitcmd.py``), with the same arguments.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar

log = logging.getLogger(__name__)

#: Seconds a result started early is fresh enough for the build that asks for it.
FRESH_S: Final = 10.0

_T = TypeVar("_T")


class _Job:
    def __init__(self) -> None:
        self.started = time.monotonic()
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
            job.done.set()

    threading.Thread(target=run, name="dsh-prefetch", daemon=True).start()


def take(key: Hashable, fn: Callable[..., _T], *args: Any) -> _T:
    """The result :func:`start` keeps under ``key`` (once; waiting for it while it runs), or
    ``fn(*args)`` run now when there is none, it failed, or it is no longer fresh."""
    with _lock:
        job = _jobs.pop(key, None)
    if job is not None and time.monotonic() - job.started <= FRESH_S:
        job.done.wait(max(0.0, FRESH_S - (time.monotonic() - job.started)))
        if job.done.is_set() and not job.failed:
            result: _T = job.result
            return result
    return fn(*args)
