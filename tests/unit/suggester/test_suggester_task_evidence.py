"""Task-aware notes (``docs/SCHEME.md``, "The task lead"): the session's task evidence
(``suggester/session.py``), the support it gives a target (``suggester/ranking.py``) and the
confidence's task feature (``suggester/confidence.py``), with exact values; a session without
a task text is decided as before."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.confidence import MODEL, features
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.ranking import (
    WEIGHTS,
    Scorer,
    choose,
)
from dsh_sidecar.suggester.session import MAX_TASK_FILES, MAX_TASK_NAMES, SessionEvidence, TaskEvidence
from dsh_sidecar.suggester.shown import RANK_MIN_FILES


class Symbols:
    def __init__(self, defs: dict[str, set[str]], refs: dict[str, set[str]] | None = None) -> None:
        self.defs = defs
        self.refs = refs or {}

    def defined_in(self, path: str) -> frozenset[str]:
        return frozenset(self.defs.get(path, ()))

    def mentions(self, name: str) -> int:
        return len(self.refs.get(name, ()))

    def mentioned_in(self, name: str, path: str) -> bool:
        return path in self.refs.get(name, ())


class View:
    def __init__(self, defs: dict[str, set[str]], refs: dict[str, set[str]] | None = None) -> None:
        self.symbols = Symbols(defs, refs)


def targets(*paths: str) -> list[Target]:
    return [Target(p, "r", 1.0) for p in paths]


def paths(chosen) -> list[str] | str:
    return chosen if isinstance(chosen, str) else [t.path for t in chosen]


def with_task(ranked: list[str], names: list[str] = ()) -> SessionEvidence:
    ev = SessionEvidence()
    ev.task = TaskEvidence.of(ranked, names)
    return ev


def test_the_task_evidence_is_bounded_and_ranked_best_first():
    ranked = [f"pkg/m{i}.py" for i in range(MAX_TASK_FILES + 5)]
    task = TaskEvidence.of(ranked + ["pkg/m0.py"], [f"n{i}" for i in range(MAX_TASK_NAMES + 7)])
    assert (MAX_TASK_FILES, MAX_TASK_NAMES) == (20, 200)
    assert list(task.ranks) == ranked[:MAX_TASK_FILES]
    assert (task.rank("pkg/m0.py"), task.rank("pkg/m19.py"), task.rank("pkg/m20.py")) == (0, 19, None)
    assert len(task.names) == MAX_TASK_NAMES and "n199" in task.names and "n200" not in task.names
    assert SessionEvidence().task is None  # no task text: no task evidence


def test_support_adds_the_task_rank_and_the_names_it_defines():
    q = parse_call("grep", {"pattern": "shipping_cost"})
    view = View({"pkg/shipping.py": {"shipping_cost"}, "pkg/checkout.py": {"checkout_total"}})
    ev = with_task(["pkg/checkout.py", "pkg/shipping.py", "pkg/reports.py"], ["checkout_total"])
    s = Scorer(q, ev, view)
    assert (WEIGHTS.task, WEIGHTS.task_defines) == (2.0, 1.0)
    assert s.task_relevance("pkg/checkout.py") == 1.0
    assert s.task_relevance("pkg/shipping.py") == 0.95
    assert s.task_relevance("pkg/other.py") == 0.0
    # defines the searched name (3) + second of the task's files (2 × 0.95)
    assert s.support("pkg/shipping.py") == pytest.approx(4.9)
    assert s.calls_support("pkg/shipping.py") == 3.0
    # the task's best file (2) + it defines a name the task names (1)
    assert s.support("pkg/checkout.py") == 3.0 and s.calls_support("pkg/checkout.py") == 0.0
    assert s.support("pkg/reports.py") == pytest.approx(1.8)
    # the same session without its task: the calls' support alone
    plain = Scorer(q, SessionEvidence(), view)
    assert [plain.support(p) for p in ("pkg/shipping.py", "pkg/checkout.py", "pkg/reports.py")] == [3.0, 0.0, 0.0]


def test_the_task_orders_a_code_intents_targets_and_nothing_else():
    q = parse_call("grep", {"pattern": "shipping_cost"})
    view = View({"pkg/shipping.py": {"shipping_cost"}})
    found = targets("pkg/shipping.py", "pkg/reports.py", "pkg/checkout.py")
    ev = with_task(["pkg/checkout.py", "pkg/reports.py"])
    assert paths(choose(found, q, "Usage", SessionEvidence(), view)) == [
        "pkg/shipping.py",
        "pkg/reports.py",
        "pkg/checkout.py",
    ]
    assert paths(choose(found, q, "Usage", ev, view)) == ["pkg/shipping.py", "pkg/checkout.py", "pkg/reports.py"]
    # a project intent keeps the manifests' order, task or not
    ledger = targets("CHANGES", "pkg/checkout.py")
    assert paths(choose(ledger, q, "Ledger", ev, view)) == ["CHANGES", "pkg/checkout.py"]


def test_the_task_alone_does_not_rank_a_broad_listing():
    q = parse_call("grep", {"pattern": "merge_setting"})
    listed = [f"pkg/m{i}.py" for i in range(RANK_MIN_FILES)]
    ev = with_task(["pkg/m7.py"], ["m7"])
    ev.showed(listed)
    # the task's best file would lead (2 + …) but no call of the session singles it out
    assert paths(choose(targets(*listed), q, "Usage", ev, View({}))) == "unranked"
    # with the calls' evidence (it defines the searched name) the task orders what follows
    view = View({"pkg/m3.py": {"merge_setting"}})
    assert paths(choose(targets(*listed), q, "Usage", ev, view))[:3] == ["pkg/m3.py", "pkg/m7.py", "pkg/m0.py"]


def test_the_confidence_reads_the_task_feature_at_weight_zero():
    q = parse_call("grep", {"pattern": "shipping_cost"})
    view = View({"pkg/shipping.py": {"shipping_cost"}})
    ev = with_task(["pkg/reports.py", "pkg/shipping.py"])
    f = features("search", targets("pkg/shipping.py", "pkg/reports.py"), q, ev, view)
    plain = features("search", targets("pkg/shipping.py", "pkg/reports.py"), q, SessionEvidence(), view)
    assert f.task == 0.95 and plain.task == 0.0
    # support and margin are the calls' alone: the task is its own feature
    assert (f.support, f.margin) == (plain.support, plain.margin) == (3.0, 3.0)
    assert MODEL.weights.task == 0.0 and MODEL.confidence(f) == MODEL.confidence(plain)
