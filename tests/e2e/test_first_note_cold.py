"""The first note of a cold server over stdio (``docs/SCHEME.md``, "Never guess before the index
covers the call"): a fresh ``dsh-search serve`` with a cache of its own, on a tree large enough
that its symbol pass is still running when the call comes, is asked ``grep shipping_cost`` with
``waitMs`` right after the handshake. The call waits for the targets and the symbol pass the
note needs and answers with the note a ready server gives — never without one (a call judged on
the index of another moment than its view's answered ``abstained no-companions Usage``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.rawrpc import RawServer

from tests.e2e.test_suggester_lifecycle import ledger_of
from tests.e2e.test_task_aware_notes import CALL, PLAIN, workspace

#: Modules beside the shop's that name nothing it searches: a symbol pass of seconds on a busy
#: machine (no assertion on time: what the call waited for is not asserted, only its answer).
FILLER = 3000


def slow_shop(root: Path) -> Path:
    workspace(root)
    filler = root / "src" / "filler"
    filler.mkdir(parents=True)
    for i in range(FILLER):
        (filler / f"mod_{i:04d}.py").write_text(f"def helper_{i}(value):\n    return value + {i}\n")
    return root


@pytest.mark.slow  # a cold build of a few thousand files
def test_a_cold_servers_first_call_with_wait_ms_gets_the_ready_servers_note(dsh_home, tmp_path):
    root = slow_shop(tmp_path / "shop")
    srv = RawServer(dsh_home, forked=True)
    try:
        srv.initialize({"suggester": {"enabled": True}}, root=root)
        srv.notify("initialized", {})
        result = srv.request("dsh/postExecute", {**CALL, "waitMs": 60000}, timeout=120)["result"]
        notes = [c["source"] for c in result["additionalContexts"]]
        assert srv.shutdown(30) == 0
    finally:
        srv.close()
    assert b"Traceback" not in srv.stderr_bytes
    assert [(n["intent"], n["targets"]) for n in notes] == [("Usage", PLAIN)]
    decisions = [m for m in ledger_of(dsh_home) if m.startswith(("suggest", "suppressed", "abstained"))]
    assert decisions == ["suggest Usage 0.80 3 targets " + ",".join(PLAIN)]
