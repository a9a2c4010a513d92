"""Task-aware notes end to end over stdio JSON-RPC (``docs/SCHEME.md``, "The task lead"): a
session given its task text (``dsh/taskLead``, ``taskLead`` on) gets a tool call's note ordered
by the task; without the text the same call's note is what it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.rawrpc import RawServer
from support.waiting import wait_until

from tests.unit.suggester.test_task_lead import shop

#: Two uses of ``shipping_cost``: the report calls it more often (the resolver's order puts it
#: first), the checkout is what the task is about.
EXTRA = {
    "src/shop/reports.py": (
        "from shop.shipping import shipping_cost\n\n\ndef weekly_report(orders):\n"
        "    a = [shipping_cost(o.weight) for o in orders]\n"
        "    b = [shipping_cost(o.weight) for o in orders]\n    return a + b + [shipping_cost(1)]\n"
    ),
    "src/shop/checkout.py": (
        "from shop.shipping import shipping_cost\n\n\ndef checkout_total(cart, weight):\n"
        "    return cart.total() + shipping_cost(weight) + shipping_cost(weight)\n"
    ),
}
TASK = "checkout_total charges shipping twice\n\n`checkout_total` adds `shipping_cost` two times for one order.\n"
CALL = {"sessionId": "s1", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "shipping_cost"}}}
PLAIN = ["src/shop/shipping.py", "src/shop/reports.py", "src/shop/checkout.py"]
ORDERED = ["src/shop/shipping.py", "src/shop/checkout.py", "src/shop/reports.py"]


def workspace(root: Path) -> Path:
    shop(root)
    for rel, text in EXTRA.items():
        (root / rel).write_text(text)
    return root


def _session(dsh_home: Path, root: Path, task: str | None) -> tuple[list[str], list[str]]:
    """(the Task note's targets, the tool call's note's targets) of one session."""
    dsh_home.mkdir(parents=True, exist_ok=True)
    srv = RawServer(dsh_home, forked=True)
    try:
        srv.initialize({"suggester": {"enabled": True, "taskLead": True}}, root=root)
        lead: list[str] = []
        if task is not None:  # once the index is whole: a lead asked before is owed (sidecar/owed.py)
            wait_until(
                lambda: srv.request("dsh/status", {}, timeout=60)["result"]["suggester"]["graph"]["ready"],
                "the workspace index",
                poll_s=0.1,
            )
            answer = srv.request("dsh/taskLead", {"sessionId": "s1", "task": task}, timeout=60)["result"]
            lead = [p for c in answer["additionalContexts"] for p in c["source"]["targets"]]
        result = srv.request("dsh/postExecute", {**CALL, "waitMs": 30000}, timeout=60)["result"]
        notes = [c["source"] for c in result["additionalContexts"]]
        assert srv.shutdown(30) == 0  # shutdown, exit, a clean end
    finally:
        srv.close()
    assert b"Traceback" not in srv.stderr_bytes
    assert [n["intent"] for n in notes] == ["Usage"]
    return lead, notes[0]["targets"]


@pytest.mark.slow  # spawns two sidecars
def test_a_session_with_its_task_text_gets_the_note_ordered_by_the_task(dsh_home, tmp_path):
    root = workspace(tmp_path / "shop")
    lead, ordered = _session(dsh_home / "with-task", root, TASK)
    assert lead[:3] == ["src/shop/checkout.py", "src/shop/shipping.py", "src/shop/reports.py"]
    assert ordered == ORDERED
    _, plain = _session(dsh_home / "without", root, None)  # a home of its own: nothing learned
    assert plain == PLAIN
