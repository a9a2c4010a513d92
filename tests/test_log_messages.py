"""``logMessages: all | decisions | none`` (issue 16, item 5): which log lines are also sent as
``window/logMessage``. Default ``all`` (DESIGN.md: the ledger and ``[bandit-search]`` lines)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from dsh_sidecar.lsp.app import SidecarServer
from support.mockprovider import case_reply
from support.rawrpc import RawServer

BANDIT = '[bandit-search] arm=quick reward=1.000 durationMs=1 resultCount=5 stats={"quick":{"alpha":2,"beta":1}}'
LEDGER = "[search-suggester] shown family=Version path=src/app.py"


@pytest.mark.parametrize(
    ("setting", "sent"), [("all", [BANDIT, LEDGER]), ("decisions", [BANDIT]), ("none", []), (None, [BANDIT, LEDGER])]
)
def test_the_knob_filters_what_is_sent(setting, sent, monkeypatch):
    server = SidecarServer()
    got: list[str] = []
    monkeypatch.setattr(server, "window_log_message", lambda params: got.append(params.message))
    if setting is not None:
        server.sidecar = SimpleNamespace(config=SimpleNamespace(log_messages=setting))
    server.send_log_line(BANDIT)
    server.send_log_line(LEDGER)
    assert got == sent


@pytest.mark.parametrize(("setting", "count"), [("all", 1), ("decisions", 1), ("none", 0)])
def test_over_stdio_and_after_reconfiguration(dsh_home, mock_provider, setting, count):
    mock_provider.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    router = {"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}}
    srv = RawServer(dsh_home, forked=True)
    try:
        srv.initialize({"router": router, "logMessages": setting})
        assert "result" in srv.request("dsh/search", {"query": "bike chain length", "strategy": "quick"})
        # a reconfiguration that does not name logMessages keeps it
        srv.notify("workspace/didChangeConfiguration", {"settings": {"dsh": {"bandit": {"discount": 1}}}})
        assert "result" in srv.request("dsh/search", {"query": "road tyre pressure", "strategy": "quick"})
        srv.barrier()  # every line sent before the status reply is read: no quiet period guessed
        logs = srv.log_lines()
        assert len(logs) == 2 * count
        assert all(line.startswith("[bandit-search] arm=quick ") for line in logs)
        assert srv.shutdown() == 0
    finally:
        srv.close()
