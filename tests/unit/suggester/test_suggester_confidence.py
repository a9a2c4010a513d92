"""The per-note confidence (``suggester/confidence.py``): its features at decision time, the
logistic model, the abstention as a ledger line, the ``minConfidence`` knob; and the bench's
choice of the bar under the declared objective (``bench/suggester_confidence.py``)."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.suggester import parse_suggester_config
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.confidence import (
    COMMON_NAME_FILES,
    MAX_SAID,
    MODEL,
    Features,
    Model,
    assess,
    features,
)
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.ranking import WEIGHTS
from dsh_sidecar.suggester.session import SessionEvidence
from dsh_sidecar.suggester.thresholds import MIN_CONFIDENCE
from dsh_sidecar.workspace import WorkspaceGraph
from support.suggester import ledger_messages, make_suggester, post

from bench.suggester_confidence import Labelled, Objective, choose_bar, fit


class Symbols:
    """The part of the symbol index the confidence reads: definitions per file, mentions."""

    def __init__(self, defs: dict[str, set[str]], mentioned: dict[str, int]) -> None:
        self.defs = defs
        self.mentioned = mentioned

    def defined_in(self, path: str) -> frozenset[str]:
        return frozenset(self.defs.get(path, ()))

    def mentions(self, name: str) -> int:
        return self.mentioned.get(name, 0)


class View:
    def __init__(self, defs: dict[str, set[str]], mentioned: dict[str, int] | None = None) -> None:
        self.symbols = Symbols(defs, mentioned or {})


def targets(*paths: str) -> list[Target]:
    return [Target(p, "r", 1.0) for p in paths]


def test_the_model_is_a_logistic_of_the_features():
    m = Model(
        bias=-1.0,
        weights=Features(source=1.0, support=0.5, margin=0.25, failing_run=2.0, one_shown=-1.0, common_name=-3.0),
    )
    f = Features(source=1.0, support=3.0, margin=2.0, failing_run=0.0, one_shown=1.0, common_name=0.0)
    z = -1.0 + 1.0 + 0.5 * 3.0 + 0.25 * 2.0 - 1.0
    assert m.confidence(f) == pytest.approx(1 / (1 + math.exp(-z)))
    # the task, edited and said features' weights and values default to 0
    assert m.weights.values() == (1.0, 0.5, 0.25, 2.0, -1.0, -3.0, 0.0, 0.0, 0.0)
    assert f.values() == (1.0, 3.0, 2.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0)
    # the shipped bar lies between the model's extremes (it abstains on some notes, not all)
    low = Features(0.0, 0.0, 0.0, 0.0, 1.0, 1.0)
    high = Features(1.0, 5.0, 5.0, 1.0, 0.0, 0.0)
    assert MODEL.confidence(low) < MIN_CONFIDENCE < MODEL.confidence(high)


def test_features_read_only_what_the_call_and_the_session_know():
    q = parse_call("grep", {"pattern": "def merge_setting"})
    ev = SessionEvidence()
    ev.showed(["pkg/sessions.py"])  # the call showed one file
    view = View({"pkg/api.py": {"merge_setting"}}, {"merge_setting": 3})
    f = features("search", targets("pkg/api.py", "tests/test_api.py"), q, ev, view)
    # pkg/api.py defines the searched name (3); the test file has no support
    assert f == Features(
        source=1.0, support=WEIGHTS.defines_searched, margin=3.0, failing_run=0.0, one_shown=1.0, common_name=0.0
    )
    # a test file first, second better supported: no negative margin; a failing run's trigger
    f = features("traceback", targets("tests/test_api.py", "pkg/api.py"), q, ev, view)
    assert (f.source, f.support, f.margin, f.failing_run) == (0.0, 0.0, 0.0, 1.0)
    # a name mentioned in more than COMMON_NAME_FILES files is a common one
    common = View({}, {"merge_setting": COMMON_NAME_FILES + 1})
    assert features("search", targets("pkg/x.py"), q, ev, common).common_name == 1.0
    edge = View({}, {"merge_setting": COMMON_NAME_FILES})
    assert features("search", targets("pkg/x.py"), q, ev, edge).common_name == 0.0
    # no symbol index yet: nothing is common, nothing is defined
    assert features("search", targets("pkg/api.py"), q, ev, None).support == 0.0
    # the session changed a file of the workspace; the notes it already had, counted up to MAX_SAID
    f = features("search", targets("pkg/api.py"), q, ev, view, edited=True, said=2)
    assert (f.edited, f.said) == (1.0, 2.0)
    assert features("search", targets("pkg/api.py"), q, ev, view, said=MAX_SAID + 5).said == float(MAX_SAID)
    assert (features("search", targets("pkg/api.py"), q, ev, view).edited, f.source) == (0.0, 1.0)


def test_the_same_note_is_less_confident_after_an_edit_and_after_notes_said():
    q = parse_call("grep", {"pattern": "merge_setting"})
    ev = SessionEvidence()
    view = View({"pkg/api.py": {"merge_setting"}})
    fresh = assess("search", "Usage", targets("pkg/api.py"), q, ev, view)
    edited = assess("search", "Usage", targets("pkg/api.py"), q, ev, view, edited=True)
    late = assess("search", "Usage", targets("pkg/api.py"), q, ev, view, edited=True, said=3)
    assert fresh is not None and edited is not None and late is not None
    assert MODEL.weights.edited < 0 and MODEL.weights.said < 0
    assert fresh.value > edited.value > late.value
    assert late.value == pytest.approx(MODEL.confidence(replace(fresh.features, edited=1.0, said=3.0)))


def test_project_intents_are_not_scored():
    q = parse_call("grep", {"pattern": "version"})
    ev = SessionEvidence()
    assert assess("search", "Version", targets("pyproject.toml"), q, ev, None) is None
    assert assess("search", "Symbol", [], q, ev, None) is None
    judged = assess("search", "Symbol", targets("pkg/a.py"), q, ev, None)
    assert judged is not None and judged.value == MODEL.confidence(judged.features)


def test_a_note_below_the_bar_is_a_ledger_line_and_no_note(tmp_path, dsh_home):
    from support.sidecar import DATA

    shop = DATA / "workspaces" / "shopcart"
    graph = WorkspaceGraph.build(shop)
    s, lines = make_suggester(shop, dsh_home, graph, warm=True)
    # the fixtures of a test folder (the result shows nothing): the Test note would name a test
    # module first, no source file, with no evidence for it — held back
    assert post(s, "Grep", {"pattern": "@pytest.fixture", "path": "tests"}, "") == []
    assert ledger_messages(lines)[-1] == "suppressed low-confidence Test"
    # the definition of the searched name, not shown by the call: confident
    notes = post(s, "Grep", {"pattern": "def merge_items"}, "", session="u")
    assert notes and notes[0].source.targets[0] == "src/shopcart/cart.py"
    assert ledger_messages(lines)[-1].startswith("suggest Symbol ")
    # with the bar at 0 every note goes out
    s0, lines0 = make_suggester(shop, dsh_home / "zero", graph, warm=True, minConfidence=0)
    notes = post(s0, "Grep", {"pattern": "@pytest.fixture", "path": "tests"}, "")
    assert [n.source.targets[0] for n in notes] == ["tests/conftest.py"]
    assert ledger_messages(lines0)[-1].startswith("suggest Test ")


def test_the_pipeline_scores_a_note_with_the_sessions_edit_and_its_notes_so_far(tmp_path, dsh_home, monkeypatch):
    from dsh_sidecar.suggester import confidence
    from support.sidecar import DATA

    seen: list[Features] = []
    original = confidence.assess

    def recording(*args, **kwargs):
        judged = original(*args, **kwargs)
        if judged is not None:
            seen.append(judged.features)
        return judged

    monkeypatch.setattr(confidence, "assess", recording)
    shop = DATA / "workspaces" / "shopcart"
    s, lines = make_suggester(shop, dsh_home, WorkspaceGraph.build(shop), warm=True, minConfidence=0)
    assert post(s, "Grep", {"pattern": "def merge_items"}, "")
    assert (seen[-1].edited, seen[-1].said) == (0.0, 0.0)
    # an edit of a workspace file, then the next search: one note said, the workspace changed
    post(s, "Edit", {"file_path": "src/shopcart/pricing.py", "old_string": "a", "new_string": "b"}, "ok")
    assert post(s, "Grep", {"pattern": "def checkout"}, "")
    assert (seen[-1].edited, seen[-1].said) == (1.0, 1.0)
    # another session starts afresh
    assert post(s, "Grep", {"pattern": "def merge_items"}, "", session="other")
    assert (seen[-1].edited, seen[-1].said) == (0.0, 0.0)


def test_the_knob_is_a_probability():
    assert parse_suggester_config({"minConfidence": 0.5}).min_confidence == 0.5
    assert parse_suggester_config(None).min_confidence == MIN_CONFIDENCE
    with pytest.raises(ConfigError, match="suggester.minConfidence"):
        parse_suggester_config({"minConfidence": 1.5})


# ---------------------------------------------------------------- the bench's choice


def note(trace: str, call: int, support: float, useful: bool, lead: bool = False) -> Labelled:
    return Labelled(trace, call, (1.0, support, 0.0, 0.0, 0.0, 0.0), useful, lead)


def test_the_bar_maximises_precision_under_the_lead_and_notes_floors():
    # two traces, ten search calls; support separates the useful notes, but b's lead is weak
    notes = [
        note("a", 0, 4.0, True),
        note("a", 1, 4.0, True),
        note("a", 2, 0.0, False),
        note("a", 3, 1.0, False),
        note("b", 0, 1.0, True, lead=True),
        note("b", 1, 0.0, False),
        note("b", 3, 1.0, False),
        Labelled("b", 2, None, False, False),  # a project intent: never held back
    ]
    scored = [n for n in notes if n.features is not None]
    model = fit([n.features for n in scored if n.features is not None], [float(n.useful) for n in scored], 1.0)
    assert model.weights.support > 0

    def conf(support: float) -> float:
        return model.confidence(Features(1.0, support, 0.0, 0.0, 0.0, 0.0))

    # precision alone keeps the support-4 notes only (2 useful of 3 with the project note)
    free = choose_bar(model, notes, traces=2, search=10, obj=Objective(min_lead=0.0, keep_leads=0.0, min_notes=0))
    assert conf(1.0) < free <= conf(4.0)
    # keeping b's lead is required: the bar drops below support 1 (3 useful of 6)
    bar = choose_bar(model, notes, traces=2, search=10, obj=Objective(min_lead=0.5, keep_leads=1.0, min_notes=0))
    assert conf(0.0) < bar <= conf(1.0)
    # a notes floor no bar meets (80 per 100 search calls): no abstention
    assert choose_bar(model, notes, traces=2, search=10, obj=Objective(min_notes=80)) == 0.0
