"""Waiting for the event a test is about (a status field, a notification, a progress report)
instead of sleeping a fixed time: poll a probe until it holds, under a deadline generous enough
that only a real hang fails (a loaded 2-core CI machine is slow, never minutes slow)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")

#: Default deadline of a wait, seconds: far above any healthy latency, still a bounded test run.
HANG_S = 60.0
#: Pause between two probes, seconds.
POLL_S = 0.02


def wait_until(probe: Callable[[], T], what: str, timeout_s: float = HANG_S, poll_s: float = POLL_S) -> T:
    """Call ``probe()`` until it returns a truthy value and return that value. Raises
    ``AssertionError`` naming ``what`` (and the last value) after ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not reached within {timeout_s:g} s (last: {value!r})")
        time.sleep(poll_s)


async def until(
    probe: Callable[[], T | Awaitable[T]], what: str, timeout_s: float = HANG_S, poll_s: float = POLL_S
) -> T:
    """:func:`wait_until` for the event loop: ``probe`` may be a plain or a coroutine function
    (e.g. a ``dsh/status`` request); the loop keeps running between probes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout_s
    while True:
        value: Any = probe()
        if inspect.isawaitable(value):
            value = await value
        if value:
            return value
        if loop.time() >= deadline:
            raise AssertionError(f"{what}: not reached within {timeout_s:g} s (last: {value!r})")
        await asyncio.sleep(poll_s)


#: Bound of :func:`workspace_indexed`, seconds: a fresh server's index of a test workspace on a
#: loaded 2-core machine (load 25-36 took it past 500 ms; never minutes).
INDEX_S = 90.0


async def workspace_indexed(session: Any, query: str = "__version__") -> None:
    """Ask an MCP session's ``where_is`` (no ledger line, no cooldown: asking teaches nothing)
    until its answer no longer says the workspace index is being built (no ``index`` field):
    a test about a note or a section, not about the first call's window
    (``suggester.firstCallWaitMs``), waits for the index it means instead of racing it."""

    async def whole() -> bool:
        answer = (await session.call_tool("where_is", {"query": query})).structured_content
        return answer is not None and "index" not in answer

    await until(whole, "the workspace indexed (where_is without `index`)", timeout_s=INDEX_S, poll_s=0.2)
