"""Searches in flight are capped (``router.maxConcurrentSearches``, ``router/admission.py``), over
real stdio to ``dsh-search mcp``: 4,000 ``web_search`` calls against a provider that hangs
opened 4,000 provider connections. Past the cap a search waits for a turn, its deadline running;
past the wait list (``maxQueuedSearches``) it is refused at once with the router's aggregated
error, every provider ``skipped: busy (…)``; the suggester's ``where_is`` is answered meanwhile."""

from __future__ import annotations

import pytest
from support.mockprovider import MockProvider
from support.routers import ROUTES
from support.waiting import wait_until

from tests.security.mcp_transport.test_mcp_request_ids import HANG, WHERE_IS, Client

pytest.importorskip("mcp", reason="the [mcp] extra is not installed")

BUSY = (
    "search-router: all configured search providers failed:\n- searxng: skipped: busy (2 searches running, 3 waiting)"
)


def asked(mock: MockProvider) -> list[int]:
    """The ids (each search's query ends with its id) of the searches that reached the provider."""
    return [int(seen.query["q"].rsplit(" ", 1)[1]) for seen in mock.requests]


def test_web_searches_past_the_cap_wait_and_past_the_wait_list_are_refused(tmp_path, workspace, mock_provider) -> None:
    mock_provider.route(*ROUTES["searxng"], HANG)
    client = Client(tmp_path, workspace, mock_provider, {"maxConcurrentSearches": 2, "maxQueuedSearches": 3})
    try:
        for rid in range(1, 9):
            client.call(rid, {"name": "web_search", "arguments": {"query": f"bike chain {rid}"}})
        refused = [client.reply() for _ in range(3)]  # 2 at the provider, 3 waiting, 3 refused at once
        assert [r["result"]["isError"] for r in refused] == [True] * 3
        assert [r["result"]["content"][0]["text"] for r in refused] == [BUSY] * 3
        wait_until(lambda: len(mock_provider.requests) == 2, what="two searches at the provider")
        client.call(20, WHERE_IS)  # the suggester is answered while searches wait
        got = client.reply()
        assert got["id"] == 20 and "intent" in got["result"]["structuredContent"]
        running = asked(mock_provider)
        assert len(running) == 2
        waiting = set(range(1, 9)) - set(running) - {r["id"] for r in refused}
        assert len(waiting) == 3
        client.send({"method": "notifications/cancelled", "params": {"requestId": running[0]}})
        wait_until(lambda: len(mock_provider.requests) == 3, what="a waiting search given the turn")
        assert asked(mock_provider)[2] in waiting
        assert len(mock_provider.closed_early) == 1
    finally:
        client.close()
