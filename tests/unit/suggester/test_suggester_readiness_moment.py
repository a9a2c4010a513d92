"""A call is decided on the index of one moment (``suggester/readiness.py``, ``context.py``): the
parts it may wait for are those pending when it took its view of the index, so a part that
finishes while the call decides is never mistaken for one its view has.

Each test holds the index at one moment of a fresh server's build, deterministically: a hook
(``pipeline.decide``: after the call took its view, before it is classified; ``readiness.missing``:
right after the call was judged) finishes a part of the build there. Before the fix, each such
call was decided on a view without the part while the part no longer counted as being built —
``abstained no-companions Usage`` for ``grep shipping_cost`` (its uses are read from the symbol
index), a script's note silently dropped, a call given up with time left to wait."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, pipeline, readiness
from dsh_sidecar.suggester.readiness import CONTENT, SYMBOLS, TARGETS
from support.suggester import ledger_messages

from tests.e2e.test_task_aware_notes import PLAIN, workspace
from tests.unit.suggester.test_suggester_readiness import Content, Index, call, make

GREP = {"pattern": "shipping_cost"}
USAGE = "suggest Usage 0.80 3 targets " + ",".join(PLAIN)
SCRIPT = "from shopcart.cart import Cart\nCart().merge_items([])\n"


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """The shop of the task-aware notes: ``shipping_cost`` defined once, used in two modules."""
    return workspace(tmp_path / "shop")


def unprepared(root: Path, home: Path, index: Index, first_call_wait_ms: int = 0) -> tuple[Suggester, list[str]]:
    """A server's suggester before its graph has listed the workspace (no targets yet)."""
    return make(root, home, index, prepared=False, firstCallWaitMs=first_call_wait_ms)


def at_decide(monkeypatch: pytest.MonkeyPatch, *steps: Callable[[], object]) -> None:
    """Run ``steps[i]`` when the call's ``i``-th decision begins: after its view was taken."""
    real, left = pipeline.decide, list(steps)

    def decide(q, ctx):  # type: ignore[no-untyped-def]
        if left:
            left.pop(0)()
        return real(q, ctx)

    monkeypatch.setattr(pipeline, "decide", decide)


def after_judged(monkeypatch: pytest.MonkeyPatch, *steps: Callable[[], object]) -> None:
    """Run ``steps[i]`` right after the ``i``-th readiness judgement of a call."""
    real, left = readiness.missing, list(steps)

    def missing(intent, q, ctx):  # type: ignore[no-untyped-def]
        out = real(intent, q, ctx)
        if left:
            left.pop(0)()
        return out

    monkeypatch.setattr(readiness, "missing", missing)


def finish_symbols(index: Index) -> Callable[[], None]:
    def done() -> None:
        index.symbols_done()
        index.building = False

    return done


@pytest.mark.parametrize(("wait_ms", "expected"), [(30_000, [USAGE]), (0, ["suppressed not-ready Usage"])])
def test_a_symbol_pass_that_ends_while_the_call_decides_is_not_taken_for_one_its_view_has(
    shop, dsh_home, monkeypatch, wait_ms, expected
):
    """The call took its view while the symbol pass ran; the pass ends before the call is judged.
    A call that may wait decides again on the whole index; one that may not is held back."""
    index = Index(shop)
    s, lines = make(shop, dsh_home, index, firstCallWaitMs=0)
    assert s.pending() == {SYMBOLS}
    at_decide(monkeypatch, finish_symbols(index))
    notes = s.post_execute(call("grep", GREP, wait_ms=wait_ms))
    assert [n.source.targets for n in notes] == ([PLAIN] if wait_ms else [])
    assert ledger_messages(lines)[1:] == expected


def test_targets_and_symbols_made_while_the_first_call_decides_are_waited_for(shop, dsh_home, monkeypatch):
    """The first call comes before the targets; while it is classified, the graph lists the
    workspace, the targets are prepared and the symbol pass ends: its view has none of them."""
    index = Index(shop)
    s, lines = unprepared(shop, dsh_home, index)
    assert s.pending() == {TARGETS, SYMBOLS}

    def build() -> None:
        s.prepare(index.graph)
        finish_symbols(index)()

    at_decide(monkeypatch, build)
    notes = s.post_execute(call("grep", GREP, wait_ms=30_000))
    assert [n.source.targets for n in notes] == [PLAIN]
    assert ledger_messages(lines)[1:] == [USAGE]


def test_a_part_that_ends_right_after_the_call_was_held_back_for_it_is_not_given_up(shopcart, dsh_home, monkeypatch):
    """Held back for the targets, then (decided again: is ``settings`` a name defined here?) for
    the symbol pass, which ends right after that judgement: the call has time left and decides
    again (it used to give up: nothing it asked for was still being built, so ``suppressed
    not-ready Config`` stood)."""
    (shopcart / ".dsh").mkdir()
    (shopcart / ".dsh" / "pack.yml").write_text(
        "id: repo\nreplace: true\nintents:\n  Config:\n    signals:\n      - {pattern: 'settings', weight: 3}\n"
        "    candidates:\n      - {path: '*/settings.yml', prior: 1.0, reason: the settings}\n"
    )
    (shopcart / "conf").mkdir()
    (shopcart / "conf" / "settings.yml").write_text("debug: false\n")
    index = Index(shopcart)
    s, lines = unprepared(shopcart, dsh_home, index)
    after_judged(monkeypatch, lambda: s.prepare(index.graph), finish_symbols(index))
    notes = s.post_execute(call("grep", {"pattern": "settings"}, wait_ms=30_000))
    assert [(n.source.intent, n.source.targets) for n in notes] == [("Config", ["conf/settings.yml"])]
    assert [m for m in ledger_messages(lines) if m.startswith(("suppressed", "abstained"))] == []


def test_a_content_sync_that_ends_while_the_call_decides_is_not_taken_for_one_its_view_has(
    shopcart, dsh_home, monkeypatch
):
    """The targets were prepared before the content index's first sync; the sync ends and the
    targets are prepared again while the call is classified: its view lacks the version facts,
    so it is decided again on the new targets (the version module is named: a content fact)."""
    content = Content({"version-module": ["src/shopcart/_version.py"]})
    (shopcart / "src" / "shopcart" / "_version.py").write_text('__version__ = "1.0"\n')
    index = Index(shopcart, content)
    index.symbols_done()
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    assert s.pending() == {CONTENT}

    def synced() -> None:
        content.sync()
        s.prepare()
        index.building = False

    at_decide(monkeypatch, synced)
    notes = s.post_execute(call("grep", {"pattern": "__version__"}, wait_ms=30_000))
    assert [(n.source.intent, n.source.targets[0]) for n in notes] == [("Version", "src/shopcart/_version.py")]
    assert not [m for m in ledger_messages(lines) if m.startswith("suppressed")]


@pytest.mark.parametrize("wait_ms", [30_000, 0])
def test_a_script_decided_while_the_symbol_pass_ends_is_never_silent(shopcart, dsh_home, monkeypatch, wait_ms):
    """A script using this project, taken while the symbol pass ran: it is noted once the pass is
    there, or held back with a ledger line — never dropped without one."""
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    at_decide(monkeypatch, finish_symbols(index))
    notes = s.post_execute(call("Write", {"file_path": "repro.py", "content": SCRIPT}, wait_ms=wait_ms))
    if wait_ms:
        assert [(n.source.intent, n.source.targets) for n in notes] == [("Symbol", ["src/shopcart/cart.py"])]
        assert ledger_messages(lines)[-1] == "suggest Symbol 0.92 1 targets src/shopcart/cart.py"
    else:
        assert notes == []
        assert ledger_messages(lines)[1:] == ["suppressed not-ready Symbol"]


def test_a_call_left_unclassified_by_a_view_without_targets_is_decided_again(shopcart, dsh_home, monkeypatch):
    """A script seen before the targets exist is no call any trigger can read (the script trigger
    reads the listing): a call with its own ``waitMs`` decides again once the targets and the
    symbol pass are there (it used to be answered with silence at once)."""
    index = Index(shopcart)
    s, lines = unprepared(shopcart, dsh_home, index)

    def build() -> None:
        s.prepare(index.graph)
        finish_symbols(index)()

    at_decide(monkeypatch, build)
    notes = s.post_execute(call("Write", {"file_path": "repro.py", "content": SCRIPT}, wait_ms=30_000))
    assert [(n.source.intent, n.source.targets) for n in notes] == [("Symbol", ["src/shopcart/cart.py"])]


def test_a_call_without_its_own_bound_or_naming_nothing_does_not_wait_for_the_targets(shopcart, dsh_home, monkeypatch):
    """Before the targets, a call no trigger took that is no search with patterns waits for them
    only within its own ``waitMs`` and when it names something (a path, a script): a script
    written without one, or ``make build``, is answered at once, and the first call's wait is
    left to the first call held back."""
    index = Index(shopcart)
    s, lines = unprepared(shopcart, dsh_home, index, first_call_wait_ms=500)
    waited: list[set[str]] = []
    monkeypatch.setattr(s, "_wait_for", lambda parts, budget: waited.append(parts) or True)
    assert s.post_execute(call("Write", {"file_path": "repro.py", "content": SCRIPT})) == []
    assert s.post_execute(call("Bash", {"command": "make build"}, wait_ms=30_000)) == []
    assert waited == [] and s.wait_budget(call("grep", GREP)) == 0.5  # firstCallWaitMs still unspent
    assert ledger_messages(lines)[1:] == []


def test_nothing_is_waited_for_where_no_target_will_ever_be_prepared(tmp_path, dsh_home, monkeypatch):
    """A workspace no pack applies to has no targets to prepare, and a build that stopped never
    prepares them: neither is pending, so a call seen without targets does not wait for them."""
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "todo.txt").write_text("buy milk\n")
    foreign = Index(notes)
    s, _ = unprepared(notes, dsh_home, foreign)
    assert s.pending() == {SYMBOLS}  # the pass still runs; no targets will come
    stopped = Index(notes)
    stopped.building = False
    t, _ = unprepared(notes, dsh_home / "t", stopped)
    assert t.pending() == frozenset()
    waited: list[set[str]] = []
    for sug in (s, t):
        monkeypatch.setattr(sug, "_wait_for", lambda parts, budget: waited.append(parts) or True)
        assert sug.post_execute(call("Read", {"file_path": "todo.txt"}, wait_ms=30_000)) == []
    assert waited == []


def test_a_search_no_trigger_reads_without_the_targets_waits_within_the_first_calls_bound(shop, dsh_home, monkeypatch):
    """``grep -r "_legend" src/shop``: on a view without the listing no intent is read from it
    (a private name, a folder the view does not have), so on a cold server it was answered
    with silence and no ledger line (no ``waitMs`` of its own: a recorded agent's third call,
    seaborn). It now waits for the targets within ``firstCallWaitMs`` and is decided again."""
    (shop / "src" / "shop" / "rates.py").write_text("def _legend(x):\n    return x\n")
    (shop / "src" / "shop" / "plot.py").write_text(
        "from shop.rates import _legend\n\n\ndef draw():\n    return _legend(1)\n"
    )
    index = Index(shop)
    s, lines = unprepared(shop, dsh_home, index, first_call_wait_ms=500)

    def build() -> None:
        s.prepare(index.graph)
        finish_symbols(index)()

    at_decide(monkeypatch, build)
    notes = s.post_execute(call("Bash", {"command": 'grep -r "_legend" src/shop'}))
    assert [n.source.intent for n in notes] == ["Usage"]
    assert notes[0].source.targets[0] == "src/shop/rates.py"
    assert ledger_messages(lines)[-1].startswith("suggest Usage ")


def listing(command: str, error: str) -> PostExecuteParams:
    """A shell ``ls`` that printed ``error``."""
    return PostExecuteParams.model_validate(
        {
            "sessionId": "s",
            "turn": 1,
            "tool": {"name": "Bash", "input": {"command": command}},
            "result": {"text": error, "isError": True},
        }
    )


GONE = "ls: cannot access 'reproduce_issue/src/gen': No such file or directory"


def test_a_search_no_intent_crosses_before_the_listing_is_held_back_as_its_words_intent(shopcart, dsh_home):
    """``ls reproduce_issue/src/gen`` (a recorded agent's call, pylint): its words cross Usage,
    and on the listing it is ``abstained missing-file Usage 0.77``. Seen before the listing, with
    no time to wait for it (no ``waitMs``, no first call's wait), no intent was read from it and it
    was silent with no ledger line. Its structural evidence needs the listing; its words do not:
    it is held back as the intent they cross (``suppressed not-ready Usage``). A search whose
    words cross nothing stays silent (nothing was recognised), as does one of a path the listing
    cannot tell (``~``: the shell's)."""
    index = Index(shopcart)
    s, lines = unprepared(shopcart, dsh_home, index)
    assert TARGETS in s.pending()
    assert s.post_execute(listing("ls reproduce_issue/src/gen", GONE)) == []
    assert s.post_execute(listing("ls src/gen", "ls: cannot access 'src/gen': No such file or directory")) == []
    assert s.post_execute(listing("ls ~/sphinx", "ls: cannot access '/root/sphinx': No such file or directory")) == []
    assert ledger_messages(lines)[1:] == ["suppressed not-ready Usage"]
    assert s.counters["suppressed"] == 1
    s.prepare(index.graph)
    assert s.post_execute(listing("ls reproduce_issue/src/gen", GONE)) == []
    assert ledger_messages(lines)[2:] == ["abstained missing-file Usage 0.77"]


def test_a_search_held_back_before_the_listing_waits_for_it_within_its_bound(shopcart, dsh_home, monkeypatch):
    """Held back, it waits for the listing as every held-back call does (the first call's bound
    here) and is decided again on it."""
    index = Index(shopcart)
    s, lines = unprepared(shopcart, dsh_home, index, first_call_wait_ms=500)
    waited: list[set[str]] = []

    def wait_for(parts: set[str], budget_s: float) -> bool:
        waited.append(set(parts))
        s.prepare(index.graph)
        return True

    monkeypatch.setattr(s, "_wait_for", wait_for)
    assert s.post_execute(listing("ls reproduce_issue/src/gen", GONE)) == []
    assert waited == [{TARGETS}]
    assert ledger_messages(lines)[1:] == ["abstained missing-file Usage 0.77"]
