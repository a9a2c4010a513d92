"""``logMessages: all | decisions | none``: which log lines are also sent as
``window/logMessage``. Default ``all`` (DESIGN.md: the ledger and ``[bandit-search]`` lines)."""

from __future__ import annotations

import logging
from types import SimpleNamespace

import pytest
from dsh_sidecar.lsp.app import SidecarServer
from support.mockprovider import case_reply
from support.rawrpc import RawServer
from support.sidecar import home_env

BANDIT = '[bandit-search] arm=quick reward=1.000 durationMs=1 resultCount=5 stats={"quick":{"alpha":2,"beta":1}}'
LEDGER = "[search-suggester] shown family=Version path=src/app.py"


@pytest.mark.parametrize(
    ("setting", "sent"), [("all", [BANDIT, LEDGER]), ("decisions", [BANDIT]), ("none", []), (None, [BANDIT, LEDGER])]
)
def test_the_knob_filters_what_is_sent(setting, sent, monkeypatch):
    server = SidecarServer()
    got: list[str] = []
    monkeypatch.setattr(server, "_send_log_message", lambda type_, text: got.append(text))
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
    # at the default log level (WARNING) the line is on stderr for no setting: it is logged at INFO
    assert b"[bandit-search]" not in bytes(srv.stderr_bytes)


@pytest.mark.parametrize(
    ("setting", "sink", "level", "wanted"),
    [
        ("all", True, logging.WARNING, True),
        ("decisions", True, logging.WARNING, True),
        ("none", True, logging.WARNING, False),  # nobody takes it: not even formatted
        ("none", True, logging.INFO, True),  # --log-level INFO: the log takes it
        ("all", False, logging.WARNING, False),  # an MCP server: no client sink, only the log
        ("all", False, logging.INFO, True),
    ],
)
async def test_a_search_formats_its_line_only_when_someone_takes_it(
    dsh_home, mock_provider, setting, sink, level, wanted, caplog
):
    from dsh_protocol import SearchParams
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    mock_provider.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    config = parse_config(
        {
            "router": {"provider": "searxng", "providers": {"searxng": {"baseUrl": mock_provider.url}}},
            "logMessages": setting,
        }
    )
    sent: list[str] = []
    sidecar = Sidecar(config, None, home_env(dsh_home), log_sink=sent.append if sink else None)
    made: list[str] = []
    real = sidecar.bandit.log
    sidecar.bandit.log = lambda line: (made.append(line), real(line))  # type: ignore[method-assign]
    caplog.set_level(level, logger="dsh_sidecar.bandit")
    try:
        await sidecar.search(SearchParams(query="bike chain length", strategy="quick"))
    finally:
        await sidecar.aclose()
    assert sidecar.bandit.log_wanted() is wanted
    assert len(made) == int(wanted)
    logged = [r.getMessage() for r in caplog.records if r.name == "dsh_sidecar.bandit"]
    assert logged == (made if level == logging.INFO else [])
    assert sent == (made if sink else [])  # the front end's sink filters by logMessages (above)
    if wanted:
        assert made[0].startswith("[bandit-search] arm=quick reward=")
