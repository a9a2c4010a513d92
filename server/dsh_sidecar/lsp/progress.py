"""``$/progress`` for the background workspace graph build (LSP work-done progress).

A build the builder reports (a large workspace: at least ``graph.LARGE_REPO_FILES`` files) on a
client that declares ``window.workDoneProgress`` is reported as ``window/workDoneProgress/create`` followed by
``$/progress`` ``begin`` → ``report``… → ``end``. The builder calls :class:`GraphProgress` from
its worker thread; every message is sent from the server's event loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from typing import TYPE_CHECKING, Final

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

log = logging.getLogger(__name__)

#: Title of the progress (shown by editors).
PROGRESS_TITLE: Final = "Indexing workspace"
#: Prefix of each build's progress token (``dsh/workspaceGraph/<n>``).
TOKEN_PREFIX: Final = "dsh/workspaceGraph/"


def client_supports_progress(caps: lsp.ClientCapabilities | None) -> bool:
    """Whether the client declared ``window.workDoneProgress: true``."""
    window = getattr(caps, "window", None)
    return bool(getattr(window, "work_done_progress", False))


class GraphProgress:
    """The ``progress(done, total)`` callback of a :class:`~dsh_sidecar.workspace.GraphBuilder`:
    ``(0, total)`` starts a new progress token, ``done >= total`` ends it."""

    def __init__(self, server: LanguageServer, loop: asyncio.AbstractEventLoop) -> None:
        self.server = server
        self.loop = loop
        self._queue: asyncio.Queue[tuple[int, int]] | None = None
        self._builds = itertools.count(1)

    def __call__(self, done: int, total: int) -> None:
        """Thread-safe: hand the update to the event loop."""
        with contextlib.suppress(RuntimeError):  # the loop is closed (shutdown): nothing to report to
            self.loop.call_soon_threadsafe(self._update, done, total)

    def _update(self, done: int, total: int) -> None:
        if done == 0:  # a new build
            self._queue = asyncio.Queue()
            self.loop.create_task(self._run(f"{TOKEN_PREFIX}{next(self._builds)}", self._queue))
        if self._queue is not None:
            self._queue.put_nowait((done, total))
            if done >= total:
                self._queue = None

    async def _run(self, token: str, queue: asyncio.Queue[tuple[int, int]]) -> None:
        progress = self.server.work_done_progress
        try:
            await progress.create_async(token)
        except Exception as exc:  # the client refused or failed: no progress for this build
            log.debug("work done progress refused: %s", exc)
            return
        done, total = await queue.get()
        progress.begin(
            token,
            lsp.WorkDoneProgressBegin(
                title=PROGRESS_TITLE, message=f"symbols 0/{total}", percentage=0, cancellable=False
            ),
        )
        while done < total:
            done, total = await queue.get()
            if done < total:
                progress.report(
                    token,
                    lsp.WorkDoneProgressReport(
                        message=f"symbols {done}/{total}", percentage=min(99, done * 100 // max(1, total))
                    ),
                )
        progress.end(token, lsp.WorkDoneProgressEnd(message=f"symbols {total}/{total}"))
