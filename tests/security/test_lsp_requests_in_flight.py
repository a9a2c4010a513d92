"""The stdio transport holds a bounded number of the client's requests (``lsp/transport.py``,
``MAX_IN_FLIGHT``), as the MCP transport does. A ``dsh/postExecute`` that waits (for the
workspace index within its ``waitMs``, or behind such a call: calls keep their order) is held by
pygls while the transport reads on: a client writing calls faster than they were answered (one
waiting for the index of a 45,000-file tree) grew a real ``dsh-search serve`` from 63 MiB to 549
MiB in two minutes, 20 KB calls, without bound. Past the bound the transport reads no more of the
wire until one is answered: the pipe fills and the client's writes wait; every call is answered
once the wait ends. Driven over a real pipe, with calls that wait until the test lets them go."""

from __future__ import annotations

import asyncio
import json
import os
import threading
from typing import Any

from dsh_sidecar.lsp import transport
from support.inprocess_lsp import Answer, replies, served
from support.rawrpc import frame

PARAMS = {"sessionId": "s", "turn": 1, "waitMs": 60000, "tool": {"name": "Grep", "input": {"pattern": "x" * 4000}}}
TOTAL = 3000


class WaitingSidecar:
    """Every call waits until :attr:`release` is set (a call waiting for the index, and those
    queued behind it)."""

    def __init__(self) -> None:
        self.calls = 0
        self.release: asyncio.Event | None = None

    def post_execute_soon(self, params: Any) -> asyncio.Future[Answer]:
        self.calls += 1
        assert self.release is not None
        n = self.calls

        async def answer() -> Answer:
            assert self.release is not None
            await self.release.wait()
            return Answer(n)

        return asyncio.ensure_future(answer())

    def shutdown(self) -> None:
        pass


def test_a_client_writing_calls_faster_than_they_are_answered_is_read_no_further_and_loses_none():
    sidecar = WaitingSidecar()
    proto, written = served(sidecar)
    read_fd, write_fd = os.pipe()
    sent = [0]

    def write() -> None:
        with os.fdopen(write_fd, "wb") as out:
            for rid in range(1, TOTAL + 1):
                out.write(frame({"jsonrpc": "2.0", "id": rid, "method": "dsh/postExecute", "params": PARAMS}))
                out.flush()
                sent[0] = rid

    writer = threading.Thread(target=write, daemon=True)

    async def run() -> tuple[int, int, int]:
        sidecar.release = asyncio.Event()
        stop = asyncio.Event()
        with os.fdopen(read_fd, "rb", buffering=0) as stdin:
            serving = asyncio.ensure_future(transport.serve(proto, stdin, stop))
            writer.start()
            for _ in range(6000):  # until the transport holds its bound (or has read everything)
                await asyncio.sleep(0.005)
                if sidecar.calls >= transport.MAX_IN_FLIGHT or sidecar.calls == TOTAL:
                    break
            for _ in range(100):  # the loop turns on: nothing more is read while the calls wait
                await asyncio.sleep(0.005)
            held, sent_then = sidecar.calls, sent[0]
            sidecar.release.set()
            for _ in range(12000):
                await asyncio.sleep(0.005)
                if len(written) == TOTAL:
                    break
            stop.set()
            serving.cancel()
            return held, sent_then, len(written)

    held, sent_then, answered = asyncio.run(run())
    writer.join(timeout=30)
    assert held == transport.MAX_IN_FLIGHT == 1024
    assert sent_then < TOTAL  # the pipe filled: the client's writes waited
    assert answered == TOTAL
    assert sorted(r["id"] for r in replies(written)) == list(range(1, TOTAL + 1))
    assert {json.dumps(r["result"]["additionalContexts"]) for r in replies(written)} == {"[]"}
