"""The ``dsh/postExecute`` handler's queued path: the task pygls runs for the yielded wait is
dropped from pygls' table of requests in flight once it ends (pygls itself never drops it), so
calls that wait never grow that table."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from dsh_sidecar.lsp.handlers import _awaited


def test_the_yielded_waits_task_leaves_the_table_of_requests_in_flight():
    async def run() -> tuple[Any, dict[str, Any]]:
        table: dict[str, Any] = {}
        other = asyncio.get_running_loop().create_future()
        table["7"] = other  # a request still in flight stays
        server = SimpleNamespace(protocol=SimpleNamespace(_request_futures=table))
        answer = asyncio.get_running_loop().create_future()
        task = asyncio.ensure_future(_awaited(server, answer))  # type: ignore[arg-type]
        table["generated-id"] = task  # as pygls keeps a yielded coroutine's task
        await asyncio.sleep(0)
        assert "generated-id" in table  # still waiting
        answer.set_result({"additionalContexts": []})
        result = await task
        other.cancel()
        return result, table

    result, table = asyncio.run(run())
    assert result == {"additionalContexts": []}
    assert list(table) == ["7"]
