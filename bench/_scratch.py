"""The benchmarks' temp folders: removed however a run ends (its end, an error, Ctrl-C, a
``kill``), so a bench run leaves nothing under the temp directory."""

from __future__ import annotations

import contextlib
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

__all__ = ["scratch"]


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    """SIGTERM as ``SystemExit``: the ``finally`` blocks run (the default ends the process
    where it stands)."""
    raise SystemExit(128 + signum)


@contextlib.contextmanager
def scratch(prefix: str) -> Iterator[Path]:
    """A new temp folder named ``prefix…``, removed with what is in it on the way out. Inside
    it (on the main thread) SIGTERM ends the run as ``SystemExit`` does, so the folder goes then
    too; Ctrl-C is ``KeyboardInterrupt`` already."""
    tmp = Path(tempfile.mkdtemp(prefix=prefix))
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _exit_on_term) if main else None
    try:
        yield tmp
    finally:
        if main:
            signal.signal(signal.SIGTERM, before)
        shutil.rmtree(tmp, ignore_errors=True)
