"""The search path's preparation of a server's sidecar (the ``dsh-search-prepare`` thread):
it starts after the first answered call, ``dsh/status`` included, at once when no workspace
projection is built; it builds what a first search would build on the event loop (the HTTP
client, the bandit's writers, the search's wire models, the thorough arm's patterns); a failure
in it is logged and the first search prepares on its own; a search during it is answered as any
other."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from dsh_protocol import SearchParams
from dsh_sidecar import sidecar as sidecar_module
from dsh_sidecar.bandit import variants
from dsh_sidecar.config import parse_config
from dsh_sidecar.router.chain import Router
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.sidecar.search import SEARCH_MODELS
from support.mockprovider import case_reply
from support.routers import ROUTES, router_block
from support.sidecar import home_env

#: The quick arm keeps 5 of the case's 6 sources.
OK_URLS = case_reply("searxng", "ok", check=False)[1]["expect"]["urls"][:5]


@pytest.fixture
def config(mock_provider):
    mock_provider.route(*ROUTES["searxng"], case_reply("searxng", "ok", check=False)[0])
    return parse_config({"router": router_block(mock_provider, ["searxng"], cache=False)})


@pytest.fixture
def spied_warm(monkeypatch) -> threading.Event:
    """Set when the preparation warms the router; the waits before it made long enough that
    only an answered call (and no projection to wait for) can start it within a test."""
    warmed = threading.Event()
    original = Router.warm

    def warm(self):
        warmed.set()
        original(self)

    monkeypatch.setattr(Router, "warm", warm)
    monkeypatch.setattr(sidecar_module, "WARM_AFTER_FIRST_CALL_S", 60.0)
    monkeypatch.setattr(sidecar_module, "WARM_AFTER_READY_S", 60.0)
    return warmed


def test_a_status_answer_starts_the_preparation_and_it_builds_the_search_path(config, dsh_home, spied_warm):
    sidecar = Sidecar(config, None, home_env(dsh_home), warm_search=True)
    try:
        assert not spied_warm.wait(0.3)  # nothing answered yet
        sidecar.status()
        assert spied_warm.wait(30)  # no projection to build: no pause after it either
        assert sidecar._search_warm is not None
        sidecar._search_warm.join(30)
        assert sidecar.router.ready and sidecar.bandit.policy.ready
        assert [m.__name__ for m in SEARCH_MODELS if not m.__pydantic_complete__] == []
        assert all(shape._compiled is not None for shape, _ in variants._FACETS)
    finally:
        asyncio.run(sidecar.aclose())


def test_a_failing_preparation_is_logged_and_the_first_search_prepares_itself(config, dsh_home, monkeypatch, caplog):
    def broken(self):
        raise OSError("no TLS context here")

    monkeypatch.setattr(Router, "warm", broken)
    monkeypatch.setattr(sidecar_module, "WARM_AFTER_FIRST_CALL_S", 0.0)
    caplog.set_level(logging.DEBUG, logger="dsh_sidecar.sidecar")
    sidecar = Sidecar(config, None, home_env(dsh_home), warm_search=True)
    assert sidecar._search_warm is not None
    sidecar._search_warm.join(30)
    assert not sidecar._search_warm.is_alive()
    failed = [r for r in caplog.records if r.getMessage() == "preparing the search path failed"]
    assert len(failed) == 1 and failed[0].exc_info is not None
    assert not sidecar.router.ready
    monkeypatch.setattr(Router, "warm", Router.prepare)  # the search's own preparation (router.warm)

    async def run():
        try:
            return await sidecar.search(SearchParams(query="bike chain cleaning", strategy="quick"))
        finally:
            await sidecar.aclose()

    result = asyncio.run(run())
    assert [s.url for s in result.sources] == OK_URLS
    assert [(a.provider, a.outcome) for a in result.attempts] == [("searxng", "ok")]


def test_a_search_during_the_preparation_is_answered_as_any_other(config, dsh_home, monkeypatch):
    """The preparation held after the router's part (its models not built yet): a search then
    answers with the provider's sources, and the preparation ends after it."""
    entered, go = threading.Event(), threading.Event()
    original = sidecar_module.build_search_models

    def held():
        entered.set()
        go.wait(30)
        original()

    monkeypatch.setattr(sidecar_module, "build_search_models", held)
    monkeypatch.setattr(sidecar_module, "WARM_AFTER_FIRST_CALL_S", 0.0)
    sidecar = Sidecar(config, None, home_env(dsh_home), warm_search=True)

    async def run():
        try:
            assert await asyncio.to_thread(entered.wait, 30)
            first = await sidecar.search(SearchParams(query="bike chain cleaning", strategy="quick"))
            second = await sidecar.search(SearchParams(query="chain wax", strategy="quick"))
            return first, second
        finally:
            go.set()
            await asyncio.to_thread(sidecar._search_warm.join, 30)
            await sidecar.aclose()

    first, second = asyncio.run(run())
    assert [s.url for s in first.sources] == OK_URLS == [s.url for s in second.sources]
    assert first.search_id != second.search_id
    assert not sidecar._search_warm.is_alive()
