"""The typed ``dsh/status`` result: the sidecar builds a :class:`StatusResult`, whose JSON keeps
the nulls a status shows (no workspace, cache off) and omits ``workspaceRefused`` unless set."""

from __future__ import annotations

import asyncio

from dsh_protocol import StatusResult
from dsh_sidecar import __version__
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar
from support.sidecar import home_env


def _status(tmp_path, router, env=None):
    sidecar = Sidecar(parse_config({"router": router}), None, {**home_env(tmp_path), **(env or {})})
    try:
        return sidecar.status()
    finally:
        asyncio.run(sidecar.aclose())


def test_status_json_keeps_the_nulls_and_omits_an_unset_refusal(tmp_path):
    result = _status(tmp_path, {"order": ["searxng", "exa", "duckduckgo"], "cache": False})
    assert isinstance(result, StatusResult)
    wire = result.wire()
    assert list(wire) == ["version", "workspace", "router", "bandit", "suggester", "state"]
    assert wire["version"] == __version__ and wire["workspace"] is None
    router = wire["router"]
    assert router["chain"] == [{"provider": "duckduckgo", "baseUrl": "https://html.duckduckgo.com"}]
    assert router["cache"] is None and len(router["unavailable"]) == 2
    assert router["health"][0] == {
        "provider": "duckduckgo",
        "state": "unknown",
        "failureClass": None,
        "cooldownSecondsLeft": 0,
        "lastOutcome": None,
        "successes": 0,
        "failures": 0,
    }
    assert (router["timeoutMs"], router["deadlineMs"], router["emptyResultsFallback"]) == (10000, 60000, True)
    assert wire["state"] == {"dshHome": str(tmp_path)}
    assert StatusResult.model_validate(wire).wire() == wire


def test_a_refused_workspace_is_named(tmp_path):
    result = _status(tmp_path, {"provider": "duckduckgo"})
    refused = result.model_copy(update={"workspace_refused": "workspace refused: the home folder"})
    assert refused.wire()["workspaceRefused"] == "workspace refused: the home folder"
    assert result.wire()["router"]["cache"] == {"entries": 0, "hits": 0, "misses": 0}
