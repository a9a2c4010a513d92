"""SIGTERM as the LSP ``exit``, from the first line of ``dsh-search serve`` to its last.

A harness's teardown may SIGTERM its children at any moment (DeepSeek Harness's child-process
teardown does), including while the server is still importing, before the ``initialize`` reply.
:func:`exit_on_sigterm` turns it into ``SystemExit(0)`` in the main thread: the server ends the way
``exit`` ends it (exit status 0; while serving, the state is flushed first, see
:func:`dsh_sidecar.lsp.app.run_stdio`). Once serving has ended and the state is being flushed,
SIGTERM is ignored (:func:`ignore_sigterm`): the process is already ending, cleanly, and a
``SystemExit`` raised inside the flush would cut it short. This module imports nothing but
:mod:`signal`, so ``serve`` installs the handler before its first heavy import.
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = ["exit_on_sigterm", "ignore_sigterm", "install_sigterm_exit"]


def exit_on_sigterm(signum: int, frame: Any) -> None:
    """The SIGTERM handler: raise ``SystemExit(0)`` (in the main thread, between bytecodes)."""
    raise SystemExit(0)


def install_sigterm_exit() -> Any:
    """Make SIGTERM :func:`exit_on_sigterm`; returns the previous handler (``signal.signal``)."""
    return signal.signal(signal.SIGTERM, exit_on_sigterm)


def ignore_sigterm() -> Any:
    """Ignore SIGTERM from now on (the server is ending); returns the previous handler."""
    return signal.signal(signal.SIGTERM, signal.SIG_IGN)
