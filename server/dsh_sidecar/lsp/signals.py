"""SIGTERM (and SIGHUP) as the LSP ``exit``, from the first line of ``dsh-search serve`` to its last.

A harness's teardown may SIGTERM its children at any moment (DeepSeek Harness's child-process
teardown does), including while the server is still importing, before the ``initialize`` reply.
The process then ends with exit status 0 the way ``exit`` ends it, in three phases:

* the start (:func:`install_start_sigterm`, the first line of ``serve``): nothing is served nor
  learned yet, so the process ends at once (``os._exit(0)``). Raising ``SystemExit`` there would
  raise it inside whatever is importing, and a native module's init turns an exception in its
  own imports into another error (pydantic_core's pyo3 init panics: exit 1, a Rust panic trace);
* serving: :func:`dsh_sidecar.lsp.app.run_stdio` has the event loop stop serving
  (:func:`install_sigterm_callback`: the handler only schedules it, as SIGHUP does), and the
  state is flushed; until that loop runs, :func:`exit_on_sigterm` raises ``SystemExit(0)`` in
  the main thread;
* the final flush: SIGTERM is ignored (:func:`ignore_sigterm`): the process is already ending,
  cleanly, and a ``SystemExit`` raised inside the flush would cut it short.

SIGHUP (the harness's terminal or parent went away) is handled the same way in every phase
(:data:`ENDING_SIGNALS`): before, it was left to its default until the event loop took it, so a
SIGHUP during the start's imports killed the process (status -1) where SIGTERM exited 0.

This module imports nothing but :mod:`os` and :mod:`signal`, so ``serve`` installs the first
handler before its first heavy import.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

__all__ = [
    "ENDING_SIGNALS",
    "exit_at_once",
    "exit_on_sigterm",
    "ignore_sigterm",
    "install_sigterm_callback",
    "install_sigterm_exit",
    "install_start_sigterm",
]


#: The signals that end ``serve`` as ``exit`` does: a harness's teardown (SIGTERM), the harness's
#: terminal or parent gone (SIGHUP).
ENDING_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _install(handler: Any) -> Any:
    """Make every signal of :data:`ENDING_SIGNALS` call ``handler``; returns SIGTERM's previous one."""
    previous = signal.getsignal(signal.SIGTERM)
    for signum in ENDING_SIGNALS:
        signal.signal(signum, handler)
    return previous


def exit_on_sigterm(signum: int, frame: Any) -> None:
    """The SIGTERM handler: raise ``SystemExit(0)`` (in the main thread, between bytecodes)."""
    raise SystemExit(0)


def exit_at_once(signum: int, frame: Any) -> None:
    """The start's SIGTERM handler: end the process with status 0 now (``os._exit``: no
    exception is raised into the import under way; nothing is buffered for stdout yet)."""
    os._exit(0)


def install_start_sigterm() -> Any:
    """Make SIGTERM and SIGHUP :func:`exit_at_once` (the start of ``serve``); returns SIGTERM's
    previous handler."""
    return _install(exit_at_once)


def install_sigterm_exit() -> Any:
    """Make SIGTERM and SIGHUP :func:`exit_on_sigterm`; returns SIGTERM's previous handler
    (``signal.signal``). The event loop takes SIGHUP over while serving (``add_signal_handler``)."""
    return _install(exit_on_sigterm)


def install_sigterm_callback(callback: Callable[[], object]) -> Any:
    """Make SIGTERM call ``callback()`` (it must only schedule work, e.g. with
    ``loop.call_soon_threadsafe``: it runs in the main thread between two bytecodes of whatever
    runs there); returns the previous handler."""
    return signal.signal(signal.SIGTERM, lambda signum, frame: callback())


def ignore_sigterm() -> Any:
    """Ignore SIGTERM and SIGHUP from now on (the server is ending; the event loop's close put
    SIGHUP back to its default, which killed the flush); returns SIGTERM's previous handler."""
    return _install(signal.SIG_IGN)
