"""What a prompt-path call could not wait for (``sidecar/owed.py``): the first-call window a
start's sections and task leads share, and the task leads owed to sessions (owed, ranked once,
taken once, bounded)."""

from __future__ import annotations

import time

from dsh_protocol import AdditionalContext, NoteSource
from dsh_sidecar.sidecar.owed import FirstCallWindow, OwedLeads


def note(text: str) -> AdditionalContext:
    source = NoteSource(kind="search-suggester", form="notice", summary=text, intent="Task", targets=[text])
    return AdditionalContext(source=source, text=text)


def test_the_first_call_opens_the_window_and_later_calls_get_what_is_left_of_it():
    window = FirstCallWindow()
    first = window.left(0.5)
    assert first == 0.5
    assert window.left(0.5) <= first  # the same window, not a new one
    time.sleep(0.06)
    assert window.left(0.5) <= first - 0.05
    closed = FirstCallWindow()
    assert closed.left(0.0) == 0.0
    assert closed.left(5.0) == 0.0  # opened (empty) by the first call: no later call waits


def test_an_owed_task_is_handed_out_once_and_its_note_taken_once():
    owed = OwedLeads()
    owed.owe("a", "fix the parser")
    owed.owe("b", "bump the version")
    owed.owe("a", "fix the lexer")  # the session's later task replaces the earlier one
    assert owed.waiting()
    assert owed.tasks() == [("b", "bump the version"), ("a", "fix the lexer")]
    assert owed.tasks() == [] and not owed.waiting()
    owed.settle("a", note("src/lexer.py"))
    owed.settle("b", None)  # silence: nothing to give
    assert owed.take("b") is None
    taken = owed.take("a")
    assert taken is not None and taken.text == "src/lexer.py"
    assert owed.take("a") is None


def test_a_call_takes_an_owed_lead_only_when_one_is_ready():
    """``PromptIndex.lead_for``: no lead ready for any session answers ``[]`` without the
    fail-open step (``take`` is not reached); a ready lead is taken by its session's call, once,
    and its ledger line drained; another session's call gets nothing."""
    from dsh_sidecar.sidecar.owed import PromptIndex

    class Suggester:
        counters = {"errors": 0}
        active = None

    index = PromptIndex(owner=None)  # type: ignore[arg-type]  (the owner is not read here)
    taken: list[str] = []
    real_take = index.owed.take
    index.owed.take = lambda s: taken.append(s) or real_take(s)  # type: ignore[method-assign]
    drained: list[int] = []
    assert not index.owed.any_ready()
    assert index.lead_for("a", Suggester(), lambda: drained.append(1)) == []
    assert taken == []  # nothing ready: the step is skipped
    index.owed.settle("a", note("src/lexer.py"))
    assert index.owed.any_ready()
    assert index.lead_for("b", Suggester(), lambda: drained.append(1)) == []
    assert taken == ["b"] and drained == []
    got = index.lead_for("a", Suggester(), lambda: drained.append(1))
    assert [c.text for c in got] == ["src/lexer.py"] and drained == [1]
    assert not index.owed.any_ready()
    assert index.lead_for("a", Suggester(), lambda: drained.append(1)) == []


def test_owed_sessions_are_bounded_the_oldest_dropped_first():
    owed = OwedLeads(limit=2)
    for s in ("a", "b", "c"):
        owed.owe(s, f"task {s}")
        owed.settle(s, note(s))
    assert owed.tasks() == [("b", "task b"), ("c", "task c")]
    assert [owed.take(s) is not None for s in ("a", "b", "c")] == [False, True, True]


def test_an_owed_task_keeps_only_the_head_the_lead_reads():
    """The wire takes 200,000 characters a task; the lead reads the first 32,000. 256 sessions
    owed a task of 199,000 emoji held 205 MB until the index was built (a spawned sidecar: 438 MB
    resident after them, 120 MB with the head alone)."""
    from dsh_sidecar.suggester.lead.mentions import MAX_TASK_CHARS

    owed = OwedLeads()
    task = "\U0001f600" * 199_000 + " fix Cart.total"
    owed.owe("a", task)
    owed.owe("b", "bump the version")
    assert owed.tasks() == [("a", task[:MAX_TASK_CHARS]), ("b", "bump the version")]
    assert MAX_TASK_CHARS == 32_000


def test_a_tool_call_joining_a_shorter_shared_wait_waits_again_up_to_its_own_bound():
    """``PromptIndex.ready(at_least_s)``: a prompt-path call opens the 0.2 s window and its wait
    ends unfinished; a tool call that joined it (bound 0.6 s) waits again for what is left of
    its own bound, and sees the index whole once the build ends within it."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from dsh_sidecar.sidecar.owed import PromptIndex

    done = threading.Event()
    asked: list[float] = []

    class Owner:
        config = SimpleNamespace(suggester=SimpleNamespace(first_call_wait_ms=200))

        def projection_pending(self) -> bool:
            return not done.is_set()

        def wait_for_graph(self, timeout_s: float) -> bool:
            asked.append(round(timeout_s, 1))
            return done.wait(timeout_s)

    index = PromptIndex(Owner())

    async def run() -> tuple[bool, bool]:
        prompt = asyncio.ensure_future(index.ready())
        await asyncio.sleep(0.01)
        tool = asyncio.ensure_future(index.ready(0.6))
        prompt_whole = await prompt  # the window ended before the build
        threading.Timer(0.2, done.set).start()  # the build ends inside the tool call's bound
        return prompt_whole, await tool

    assert asyncio.run(run()) == (False, True)
    assert asked[0] == 0.2 and len(asked) == 2 and 0.3 <= asked[1] <= 0.5  # one wait, then its rest


def test_a_call_joining_a_shared_wait_a_moment_late_is_answered_with_it():
    """Calls that join a shared wait a moment after it began (a loaded machine spreads
    concurrent calls over tens of ms) end with it: a rest shorter than ``MIN_REWAIT_S`` starts
    no second wait on another thread."""
    import asyncio
    import threading
    from types import SimpleNamespace

    from dsh_sidecar.sidecar.owed import MIN_REWAIT_S, PromptIndex

    done = threading.Event()
    asked: list[float] = []

    class Owner:
        config = SimpleNamespace(suggester=SimpleNamespace(first_call_wait_ms=0))

        def projection_pending(self) -> bool:
            return not done.is_set()

        def wait_for_graph(self, timeout_s: float) -> bool:
            asked.append(timeout_s)
            return done.wait(timeout_s)

    index = PromptIndex(Owner())

    async def run() -> list[bool]:
        first = asyncio.ensure_future(index.ready(0.3))
        await asyncio.sleep(0.05)  # well under MIN_REWAIT_S after the shared wait began
        late = asyncio.ensure_future(index.ready(0.3))
        return list(await asyncio.gather(first, late))

    assert MIN_REWAIT_S > 0.05
    assert asyncio.run(run()) == [False, False]
    assert len(asked) == 1 and abs(asked[0] - 0.3) < 0.05


def test_an_owed_lead_taken_is_given_even_when_passing_its_ledger_line_on_raises():
    """``PromptIndex.lead_for``: the lead is taken once, so an error after the take (passing its
    ledger line on) fails open on its own (``errors`` +1) and the lead still goes with the
    answer: neither lost nor given twice."""
    from dsh_sidecar.sidecar.owed import PromptIndex

    class Suggester:
        counters = {"errors": 0}
        active = None

    def broken_drain() -> None:
        raise RuntimeError("ledger sink broke")

    index = PromptIndex(owner=None)  # type: ignore[arg-type]  # lead_for reads nothing of it
    index.owed.settle("a", note("src/lexer.py"))
    suggester = Suggester()
    given = index.lead_for("a", suggester, broken_drain)
    assert [n.text for n in given] == ["src/lexer.py"]
    assert suggester.counters["errors"] == 1
    assert index.lead_for("a", suggester, broken_drain) == []
    assert suggester.counters["errors"] == 1
