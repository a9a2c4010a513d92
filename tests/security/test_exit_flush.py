"""Class 9: nothing is lost at exit (issue 13), and the ledger's buffered writes.

The harness may end the sidecar with ``shutdown``+``exit``, ``exit`` alone, EOF on stdin,
SIGTERM or SIGHUP: on every path each dismissal reaches ``knowledge.json`` and each ledger line
reaches ``ledger.log``, in order. Ledger lines are appended in batches (one write per batch),
within a second, never torn or reordered.
"""

from __future__ import annotations

import json
import signal
import threading

import pytest
from dsh_sidecar.suggester import ledger as ledger_mod
from dsh_sidecar.suggester.ledger import Ledger
from support.rawrpc import RawServer
from support.waiting import wait_until

FAMILIES = ["Doc", "Config", "Test", "Ledger", "Path"]
TARGET = "src/demo_pkg/__init__.py"


def test_lines_are_batched_in_order_and_none_lost(tmp_path, monkeypatch):
    writes: list[int] = []
    real = ledger_mod.open_append

    def counting(path):
        writes.append(1)
        return real(path)

    monkeypatch.setattr(ledger_mod, "open_append", counting)
    ledger = Ledger(tmp_path / "ledger.log", clock=lambda: 0.0)

    def worker(n: int) -> None:
        for i in range(200):
            ledger.write(f"t{n} {i}")

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ledger.flush()
    lines = (tmp_path / "ledger.log").read_text().splitlines()
    assert len(lines) == 800
    for n in range(4):
        assert [int(x.split()[-1]) for x in lines if f"] t{n} " in x] == list(range(200))
    assert len(writes) < 800 / 10  # batches, not one open+write per line


def test_a_buffered_line_lands_without_an_explicit_flush(tmp_path):
    ledger = Ledger(tmp_path / "ledger.log")
    ledger.write("suppressed cooldown Doc")
    wait_until((tmp_path / "ledger.log").exists, "the flush timer writing the ledger")  # within FLUSH_S
    assert (tmp_path / "ledger.log").read_text().endswith("suppressed cooldown Doc\n")


def test_flush_all_flushes_every_live_ledger(tmp_path):
    a, b = Ledger(tmp_path / "a.log"), Ledger(tmp_path / "b.log")
    a.write("x")
    b.write("y")
    ledger_mod.flush_all()
    assert (tmp_path / "a.log").read_text().endswith("x\n") and (tmp_path / "b.log").read_text().endswith("y\n")


def projection_ready(server: RawServer) -> bool:
    return bool(server.request("dsh/status", {}, timeout=60)["result"]["suggester"]["graph"]["ready"])


def _end(server: RawServer, how: str) -> None:
    if how == "shutdown":
        assert server.shutdown() == 0
    elif how == "exit-only":
        server.notify("exit")
    elif how == "eof":
        server.proc.stdin.close()
    else:
        server.proc.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGHUP)
    server.wait(20)


@pytest.mark.parametrize("how", ["shutdown", "exit-only", "eof", "sigterm", "sighup"])
def test_every_exit_path_keeps_every_dismissal_and_ledger_line(dsh_home, workspace, how):
    server = RawServer(dsh_home, cwd=workspace)
    try:
        server.initialize({"suggester": {"enabled": True}}, root=workspace)
        # a note needs the projection (graph, symbols, content index, targets), which is built
        # in the background after initialize: wait for it as a client does, by dsh/status
        wait_until(lambda: projection_ready(server), "the workspace projection ready (dsh/status)")
        for fam in FAMILIES:
            assert "result" in server.request("dsh/dismiss", {"family": fam})
        for n in range(5):  # five learning events: a note, then the agent reads its target
            session = f"s{n}"
            note = server.request(
                "dsh/postExecute",
                {"sessionId": session, "turn": 1, "tool": {"name": "grep", "input": {"pattern": "__version__"}}},
            )["result"]["additionalContexts"]
            assert note and note[0]["source"]["targets"] == [TARGET]
            server.request(
                "dsh/postExecute",
                {"sessionId": session, "turn": 2, "tool": {"name": "read", "input": {"path": TARGET}}},
            )
        _end(server, how)
    finally:
        server.close()
    assert server.proc.returncode is not None
    doc = json.loads((dsh_home / "search-suggester" / "knowledge.json").read_text())
    (ws,) = doc["workspaces"].values()
    assert sorted(ws["dismissals"]) == sorted(FAMILIES)
    assert ws["rows"]["Version"][TARGET]["followed"] == 5
    ledger = (dsh_home / "search-suggester" / "ledger.log").read_text().splitlines()
    assert [line.split("] ", 1)[1] for line in ledger if "dismissed" in line] == [f"dismissed {f} *" for f in FAMILIES]
    assert [line.split("] ", 1)[1] for line in ledger if "followed" in line] == [f"followed Version {TARGET}"] * 5
