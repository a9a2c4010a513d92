"""The benchmarks' temp folders: removed however a run ends (its end, an error, Ctrl-C, a
``kill``), so a bench run leaves nothing under the temp directory; and a run's own cache folder
for the sidecars it starts (:func:`own_cache`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import tempfile
import threading
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from types import FrameType

__all__ = ["own_cache", "scratch"]


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


@contextlib.contextmanager
def own_cache(folder: Path, env: MutableMapping[str, str] | None = None) -> Iterator[Path | None]:
    """``DSH_CACHE_DIR`` (of ``env``, default this process's environment, which the sidecars a
    run starts inherit) set to ``folder`` inside the block, unless the user set one: the
    rebuildable indexes (the content index's rows, keyed by the rules' version) then belong to
    this run. Two branches that raised ``RULES_VERSION`` to the same number read each other's
    rows from the shared ``~/.cache/dsh-search``. Yields the folder used (``None``: the user's)."""
    env = os.environ if env is None else env
    if env.get("DSH_CACHE_DIR"):
        yield None
        return
    env["DSH_CACHE_DIR"] = str(folder)
    try:
        yield folder
    finally:
        env.pop("DSH_CACHE_DIR", None)
