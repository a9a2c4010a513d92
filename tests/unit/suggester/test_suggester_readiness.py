"""Never guess before the index covers the call (``suggester/readiness.py``): a call that needs a
part of the workspace index still being built (the symbol pass, the content index) is held back
as ``suppressed not-ready <intent>``, waits for it within its bound (``firstCallWaitMs`` for the
first such call of a start, else the call's ``waitMs``), and is decided again; a call that needs
neither is answered at once; a part whose build stopped no longer holds anything back."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.suggester.readiness import CONTENT, CONTENT_FACTS, NAME_FACTS, SYMBOLS, TARGETS
from dsh_sidecar.workspace import WorkspaceGraph
from dsh_sidecar.workspace.facts import FACTS
from support.suggester import ledger_messages
from support.trees import copy_fixture


def call(name: str, inp: dict, session: str = "s", wait_ms: int | None = None) -> PostExecuteParams:
    extra = {} if wait_ms is None else {"waitMs": wait_ms}
    return PostExecuteParams.model_validate(
        {"sessionId": session, "turn": 1, "tool": {"name": name, "input": inp}, **extra}
    )


class Content:
    """A content index whose first sync is still running (``pending``) until :meth:`sync`."""

    def __init__(self, facts: Mapping[str, Sequence[str]] | None = None) -> None:
        self._facts = dict(facts or {})
        self.synced = False

    @property
    def ready(self) -> bool:
        return self.synced

    @property
    def pending(self) -> bool:
        return not self.synced

    @property
    def facts(self) -> Mapping[str, Sequence[str]]:
        return self._facts if self.synced else {}

    def search(self, words: Iterable[str], limit: int = 20) -> list[tuple[str, float]]:
        return []

    def keys(self, path: str) -> Mapping[str, Mapping[str, float]] | None:
        return None  # no manifest's section words indexed

    def points_of(self, path: str) -> Sequence[tuple[str, str]]:
        return ()  # no manifest points anywhere

    def status(self) -> Mapping[str, object]:
        return {"state": "ready" if self.synced else "building"}

    def sync(self) -> None:
        self.synced = True


class Index:
    """The owner's workspace index: a file-level graph whose symbol pass runs until
    :meth:`symbols_done`, and a content index; ``building`` is the owner's ``indexing``."""

    def __init__(self, root: Path, content: Content | None = None) -> None:
        self.graph = WorkspaceGraph.build_files(root)
        self.content = content
        self.building = True

    def symbols_done(self) -> None:
        self.graph.index_symbols()


def make(root: Path, home: Path, index: Index, prepared: bool = True, **cfg) -> tuple[Suggester, list[str]]:
    """A server's suggester on ``index`` with the suggester config ``cfg``, started; ``prepared``,
    given the graph's listing (its targets), else as before the graph has listed the workspace."""
    lines: list[str] = []
    s = Suggester(
        root,
        parse_suggester_config({"enabled": True, **cfg}),
        home,
        sink=lines.append,
        workspace=lambda: index.graph,
        content=index.content,
        background=True,
        indexing=lambda: index.building,
    )
    s.start()
    if prepared:
        s.prepare(index.graph)
    return s, lines


def test_the_content_facts_are_every_fact_a_name_alone_does_not_give():
    assert set(FACTS) == CONTENT_FACTS | NAME_FACTS
    assert {"version-module", "manifest-version", "test-module", "changelog"} <= CONTENT_FACTS


def test_a_symbol_search_is_held_back_until_the_symbol_pass_and_never_guessed(shopcart, dsh_home):
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    assert s.pending() == {SYMBOLS}
    # without the symbol index the packs would guess src/shopcart/__init__.py ("the package's
    # public names"): the call is held back instead
    assert s.post_execute(call("grep", {"pattern": "class Cart"})) == []
    assert ledger_messages(lines)[-1] == "suppressed not-ready Symbol"
    index.symbols_done()
    assert s.pending() == frozenset()
    notes = s.post_execute(call("grep", {"pattern": "class Cart"}, session="later"))
    assert notes[0].source.targets[0] == "src/shopcart/cart.py"
    assert ledger_messages(lines)[-1].startswith("suggest Symbol ")


def test_a_classification_that_asked_the_symbol_index_is_held_back(shopcart, dsh_home):
    """``git grep apply_discount`` is Usage because the symbol index knows the name: asked
    while it is missing, the answer is held back whatever intent the call seemed to be."""
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    assert s.post_execute(call("bash", {"command": "git grep apply_discount"})) == []
    assert ledger_messages(lines)[-1] == "suppressed not-ready Usage"


def test_a_call_that_needs_no_pending_part_is_answered_at_once(shopcart, dsh_home):
    """Owner reads the symbol index nowhere: with the symbol pass running (and no content
    index, which then never comes) it is answered at once."""
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    assert s.pending() == {SYMBOLS}
    # (a search, not a read of CODEOWNERS: a note naming the file the call reads is an echo)
    notes = s.post_execute(call("bash", {"command": "grep -rni 'code owners' ."}))
    assert [n.source.intent for n in notes] == ["Owner"], ledger_messages(lines)


def test_owner_waits_for_the_content_index_since_a_manifests_authors_are_read_from_it(shopcart, dsh_home):
    index = Index(shopcart, Content())
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    assert s.pending() == {SYMBOLS, CONTENT}
    assert s.post_execute(call("bash", {"command": "cat .github/CODEOWNERS | grep -i owner"})) == []
    assert ledger_messages(lines)[-1] == "suppressed not-ready Owner"


def test_an_intent_with_content_facts_waits_for_the_content_index(shopcart, dsh_home):
    content = Content({"version-module": ["src/shopcart/__init__.py"]})
    index = Index(shopcart, content)
    index.symbols_done()
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    assert s.pending() == {CONTENT}
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert ledger_messages(lines)[-1] == "suppressed not-ready Version"
    content.sync()
    assert s.pending() == {CONTENT}  # the targets were prepared before it: prepared again first
    s.prepare()
    assert s.pending() == frozenset()
    notes = s.post_execute(call("grep", {"pattern": "__version__"}, session="later"))
    assert notes[0].source.intent == "Version"


def test_a_script_using_this_project_waits_for_the_symbol_index(shopcart, dsh_home):
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=0)
    script = "from shopcart.cart import Cart\nCart().merge_items([])\n"
    assert s.post_execute(call("Write", {"file_path": "repro.py", "content": script})) == []
    assert ledger_messages(lines)[-1] == "suppressed not-ready Symbol"
    # a script of the standard library only asks nothing of this workspace: silence
    other = "import json\nprint(json.dumps({}))\n"
    assert s.post_execute(call("Write", {"file_path": "other.py", "content": other}, session="x")) == []
    assert ledger_messages(lines)[-1] == "suppressed not-ready Symbol"  # no new line


def test_a_build_that_stopped_holds_nothing_back(shopcart, dsh_home):
    """A symbol pass that failed or was cancelled never comes: the packs' answer is all there is."""
    index = Index(shopcart)
    index.building = False
    s, lines = make(shopcart, dsh_home, index)
    assert s.pending() == frozenset()
    assert s.post_execute(call("grep", {"pattern": "class Cart"}))[0].source.targets == ["src/shopcart/__init__.py"]


def test_targets_not_prepared_are_pending(shopcart, dsh_home):
    index = Index(shopcart)
    s = Suggester(
        shopcart,
        parse_suggester_config({"enabled": True, "firstCallWaitMs": 0}),
        dsh_home,
        workspace=lambda: None,
        background=True,
        indexing=lambda: True,
    )
    assert TARGETS in s.pending()
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert s.counters["suppressed"] == 1
    s.prepare(index.graph)
    assert TARGETS not in s.pending()


def test_the_first_call_waits_within_its_bound_later_ones_only_with_wait_ms(shopcart, dsh_home):
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=30_000)
    assert s.may_wait(call("grep", {"pattern": "class Cart"}))
    timer = threading.Timer(0.3, index.symbols_done)
    timer.start()
    t0 = time.monotonic()
    notes = s.post_execute(call("grep", {"pattern": "class Cart"}))
    assert time.monotonic() - t0 >= 0.25  # it waited for the symbol pass, then was decided again
    assert notes[0].source.targets[0] == "src/shopcart/cart.py"
    assert ledger_messages(lines)[-1].startswith("suggest Symbol ")
    timer.join()

    index2 = Index(shopcart)
    s2, lines2 = make(shopcart, dsh_home / "2", index2, firstCallWaitMs=0)
    assert not s2.may_wait(call("grep", {"pattern": "class Cart"}))  # no bound: no wait
    assert s2.post_execute(call("grep", {"pattern": "class Cart"})) == []
    timer = threading.Timer(0.3, index2.symbols_done)
    timer.start()
    later = call("grep", {"pattern": "class Cart"}, session="t", wait_ms=30_000)
    assert s2.may_wait(later)
    notes = s2.post_execute(later)  # its own bound: it waits
    assert notes[0].source.targets[0] == "src/shopcart/cart.py"
    timer.join()
    assert ledger_messages(lines2) == [
        "activated (packs generic,python intents 10 threshold 0.75)",
        "suppressed not-ready Symbol",
        # every fixture file changed at one time (support.suggester.copy_workspace): the definition,
        # then the files of equal score in path order
        "suggest Symbol 0.97 5 targets src/shopcart/cart.py,src/shopcart/__init__.py,src/shopcart/api.py,"
        "src/shopcart/pricing.py,tests/conftest.py",
    ]


def test_a_wait_that_runs_out_is_held_back_once(shopcart, dsh_home):
    index = Index(shopcart)
    s, lines = make(shopcart, dsh_home, index, firstCallWaitMs=50)
    t0 = time.monotonic()
    assert s.post_execute(call("grep", {"pattern": "class Cart"})) == []
    assert time.monotonic() - t0 < 5
    assert ledger_messages(lines)[1:] == ["suppressed not-ready Symbol"]
    assert not s.may_wait(call("grep", {"pattern": "class Cart"}))  # the first call's wait is spent


def test_a_waiting_call_leaves_the_event_loop_free_and_later_calls_keep_their_order(tmp_path):
    from dsh_sidecar.config import parse_config
    from dsh_sidecar.sidecar import Sidecar

    workspace = tmp_path / "pyproj"
    copy_fixture("pyproj", workspace)
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), workspace, env)
    built = threading.Event()
    try:
        assert sidecar.wait_for_graph(60)
        real = sidecar.suggester.pending
        sidecar.suggester.pending = lambda: real() if built.is_set() else frozenset({SYMBOLS})  # type: ignore[method-assign]

        async def run() -> tuple[int, list[list[tuple[str, str]]]]:
            ticks = 0

            async def ticker() -> None:
                nonlocal ticks
                while not built.is_set():
                    ticks += 1
                    await asyncio.sleep(0.01)

            first = call("grep", {"pattern": "def merge_setting"}, wait_ms=30_000)
            later = call("grep", {"pattern": "__version__"}, session="other")
            tick = asyncio.ensure_future(ticker())
            waiting = asyncio.ensure_future(sidecar.post_execute_async(first))
            await asyncio.sleep(0.05)
            queued = asyncio.ensure_future(sidecar.post_execute_async(later))
            await asyncio.sleep(0.3)
            assert not waiting.done() and not queued.done()  # the later call waits its turn
            during = ticks  # the ticker's turns while the first call waited (a held loop gives none)
            threading.Timer(0.05, built.set).start()
            results = [await waiting, await queued]
            await tick
            return during, [[(n.source.intent, n.source.targets[0]) for n in r.additional_contexts] for r in results]

        ticks, intents = asyncio.run(run())
        assert ticks >= 2  # the loop kept running while the first call waited (a count, not a rate)
        assert intents == [[("Symbol", "src/demo_pkg/core.py")], [("Version", "src/demo_pkg/__init__.py")]]
    finally:
        built.set()
        sidecar.shutdown()
        asyncio.run(sidecar.aclose())


def test_the_first_call_waits_for_each_part_it_turns_out_to_need(shopcart, dsh_home):
    """A fresh server's first call comes before the targets are prepared: it waits for them, and
    when its classification then asks the symbol index (is ``settings`` a name defined here?),
    still being built, it waits for that too, all within its one bound (it used to wait for the
    targets only: ``suppressed not-ready Config``, no note)."""
    (shopcart / ".dsh").mkdir()
    (shopcart / ".dsh" / "pack.yml").write_text(
        "id: repo\nreplace: true\nintents:\n  Config:\n    signals:\n      - {pattern: 'settings', weight: 3}\n"
        "    candidates:\n      - {path: '*/settings.yml', prior: 1.0, reason: the settings}\n"
    )
    (shopcart / "conf").mkdir()
    (shopcart / "conf" / "settings.yml").write_text("debug: false\n")
    index = Index(shopcart)
    lines: list[str] = []
    s = Suggester(
        shopcart,
        parse_suggester_config({"enabled": True, "firstCallWaitMs": 30_000}),
        dsh_home,
        sink=lines.append,
        workspace=lambda: index.graph,
        background=True,
        indexing=lambda: index.building,
    )
    s.start()
    assert s.pending() == {TARGETS, SYMBOLS}

    def build() -> None:
        time.sleep(0.2)
        s.prepare(index.graph)  # the targets, the symbol pass still running
        time.sleep(0.2)
        index.symbols_done()

    builder = threading.Thread(target=build)
    builder.start()
    t0 = time.monotonic()
    notes = s.post_execute(call("grep", {"pattern": "settings"}))
    builder.join()
    assert [n.source.intent for n in notes] == ["Config"], ledger_messages(lines)
    assert notes[0].source.targets == ["conf/settings.yml"] and time.monotonic() - t0 >= 0.4
    assert not [m for m in ledger_messages(lines) if m.startswith("suppressed")]
