"""SIGTERM as the LSP ``exit``, from the first line of ``dsh-search serve`` to its last.

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

This module imports nothing but :mod:`os` and :mod:`signal`, so ``serve`` installs the first
handler before its first heavy import.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from typing import Any

__all__ = [
    "exit_at_once",
    "exit_on_sigterm",
    "ignore_sigterm",
    "install_sigterm_callback",
    "install_sigterm_exit",
    "install_start_sigterm",
]


def exit_on_sigterm(signum: int, frame: Any) -> None:
    """The SIGTERM handler: raise ``SystemExit(0)`` (in the main thread, between bytecodes)."""
    raise SystemExit(0)


def exit_at_once(signum: int, frame: Any) -> None:
    """The start's SIGTERM handler: end the process with status 0 now (``os._exit``: no
    exception is raised into the import under way; nothing is buffered for stdout yet)."""
    os._exit(0)


def install_start_sigterm() -> Any:
    """Make SIGTERM :func:`exit_at_once` (the start of ``serve``); returns the previous handler."""
    return signal.signal(signal.SIGTERM, exit_at_once)


def install_sigterm_exit() -> Any:
    """Make SIGTERM :func:`exit_on_sigterm`; returns the previous handler (``signal.signal``)."""
    return signal.signal(signal.SIGTERM, exit_on_sigterm)


def install_sigterm_callback(callback: Callable[[], object]) -> Any:
    """Make SIGTERM call ``callback()`` (it must only schedule work, e.g. with
    ``loop.call_soon_threadsafe``: it runs in the main thread between two bytecodes of whatever
    runs there); returns the previous handler."""
    return signal.signal(signal.SIGTERM, lambda signum, frame: callback())


def ignore_sigterm() -> Any:
    """Ignore SIGTERM from now on (the server is ending); returns the previous handler."""
    return signal.signal(signal.SIGTERM, signal.SIG_IGN)
