"""DeepSeek Harness 0.1.0-rc.8 (pnpm on Node 22) with the harness-adapters/dsh bundle, installed
by ``dsh plugin --profile headless add file:…`` and run headless against a loopback fake
OpenAI-compatible API (DEEPSEEK_BASE_URL): the post-execute note reaches the next model
request as its own user message, the bandit seed's ``search`` tool returns a loopback
SearXNG's results, the section and ``suggestion_dismiss`` are present, the task lead enters the
first step after the prompt (``taskLead`` on), and without the sidecar the run still exits 0."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness import harnesses as h
from harness.fakemodel import texts

pytestmark = pytest.mark.skipif(h.dsh_missing() is not None, reason=h.dsh_missing() or "")

# What the sidecar answers for DSH's grep of the tests folder: the bundle forwards the call's result
# text, which shows no file, so the note names where the version is (a note naming a file the grep
# had listed would be an echo, and is held back: `suppressed echo Version`).
# The task lead for "Find where the package version is defined.": the code whose tokens match the
# task's words (the package's __init__ defines __version__), by the code's BM25 over the symbol index.
LEAD = (
    "search-suggester: in this repository, look here for the code this task is about:\n"
    "- src/demo_pkg/__init__.py — its code matches the task's words\n"
    "- src/demo_pkg/core.py — its code matches the task's words"
)
NOTE = "search-suggester: in this repository, look here for the package version:\n- src/demo_pkg/__init__.py — defines __version__"


def names(request: dict) -> list[str]:
    return [t["function"]["name"] for t in request["tools"]]


@pytest.fixture(scope="module")
def note_web_work(tmp_path_factory):
    return tmp_path_factory.mktemp("noteweb")


@pytest.fixture(scope="module")
def note_web(note_web_work):
    """One run: the note scenario's grep, then the ``search`` tool (each harness run costs
    about 3 s of CPU, so the checks that need the same setup share one). Its
    ``dsh plugin add`` is the module's one real install: the later runs copy what it
    installed (``--profile-from``), or install themselves when it did not."""
    return h.scenario("dsh", "noteweb", note_web_work, "--patient")


@pytest.fixture(scope="module")
def installed(note_web, note_web_work) -> tuple[str, str]:
    """The flags of a run that copies the note run's installed bundle."""
    return ("--profile-from", str(note_web_work))


@pytest.fixture(scope="module")
def seam(tmp_path_factory, installed):
    """The grep, then DSH's own ``web_search``: without the bundle, and with the bundle but
    no sidecar on ``PATH``."""
    base = tmp_path_factory.mktemp("webseam")
    without = h.scenario("dsh", "webseam", base / "without", "--no-adapter")
    missing = h.scenario("dsh", "webseam", base / "missing", "--no-sidecar", *installed)
    return without, missing


def test_note_reaches_the_next_model_request(note_web):
    report = note_web
    assert report["returncode"] == 0, report["stderr"]
    assert report["stdout"].strip() == "All done."
    first, second = report["requests"][:2]
    assert NOTE not in texts(first["messages"])
    tool_at = max(i for i, m in enumerate(second["messages"]) if m["role"] == "tool")
    assert second["messages"][tool_at]["content"] == "No matches found"  # the real grep's result, unchanged
    assert second["messages"][tool_at + 1] == {"role": "user", "content": NOTE}
    assert {"search", "suggestion_dismiss", "web_search"} <= set(names(first))


def test_search_tool_returns_the_loopback_searxng_results(note_web):
    report = note_web
    assert report["returncode"] == 0, report["stderr"]
    assert report["searxng_requests"] >= 1  # strategy auto: quick asks once, thorough once per variant
    third = report["requests"][2]
    result = next(m for m in reversed(third["messages"]) if m["role"] == "tool")["content"]
    assert (
        "1. How to Clean a Bike Chain in 10 Minutes\n   https://www.example.com/maintenance/clean-bike-chain" in result
    )
    assert "https://en.wikipedia.org/wiki/Bicycle_chain" in result


def test_sticky_section_in_the_system_prompt(tmp_path, installed):
    report = h.scenario("dsh", "note", tmp_path, "--sticky", *installed)
    assert report["returncode"] == 0, report["stderr"]
    system = report["requests"][0]["messages"][0]
    assert system["role"] == "system"
    assert "search-suggester: where things live in this repository:\n- Version: src/demo_pkg/__init__.py" in texts(
        system
    )
    assert "Prefer the search tool over web_search" in texts(system)


def test_task_lead_enters_the_first_step_after_the_prompt(tmp_path, installed):
    """taskLead on (the row's config): the bundle sends the first user message to
    ``dsh/taskLead`` and the note enters the first step right after it, once."""
    report = h.scenario("dsh", "note", tmp_path, "--task-lead", *installed)
    assert report["returncode"] == 0, report["stderr"]
    users = [texts(m) for m in report["requests"][0]["messages"] if m["role"] == "user"]
    assert users[0].endswith("Find where the package version is defined.")
    assert users[-1].endswith("\n" + LEAD)  # the last message entering the first step
    assert sum(texts(m).count(LEAD) for m in report["requests"][-1]["messages"]) == 1


def test_without_the_sidecar_the_run_still_exits_0(seam):
    """``dsh-search`` not on ``PATH``: the spawn fails (ENOENT), which no restart mends, so no
    listener call waits for one (they waited 1-4 s each for the backoff's restarts)."""
    _, report = seam
    assert report["returncode"] == 0, report["stderr"]
    assert report["stdout"].strip() == "All done."
    assert NOTE not in texts(report["requests"][-1])
    times = report["listener_ms"]
    assert len(times.get("post-execute", [])) == 2 and len(times.get("assemble", [])) >= 2, times
    assert [ms for label in times for ms in times[label] if ms >= 1000] == [], times


def test_a_crashed_sidecar_is_restarted_with_backoff(tmp_path, installed):
    report = h.scenario("dsh", "restart", tmp_path, *installed)
    assert report["returncode"] == 0, report["stderr"]
    assert report["crashed_once"]
    first, second, third = report["requests"][:3]
    assert NOTE not in texts(second["messages"])  # no sidecar yet: the call passed through
    tool_at = max(i for i, m in enumerate(third["messages"]) if m["role"] == "tool")
    assert third["messages"][tool_at + 1] == {"role": "user", "content": NOTE}  # the restarted one answered


def tool_result(report: dict) -> str:
    last = report["requests"][-1]
    return next(m for m in reversed(last["messages"]) if m["role"] == "tool")["content"]


def test_without_the_sidecar_web_search_goes_where_it_goes_without_the_bundle(seam):
    """The bundle's patch selects its provider in the web row; with the sidecar missing, DSH's
    own web_search tool must still reach the built-in provider (here a loopback 404), exactly
    as without the bundle, not fail on the selected-but-unavailable provider."""
    for report in seam:
        assert report["returncode"] == 0, report["stderr"]
        assert report["stdout"].strip() == "All done."
        assert report["provider_paths"] == ["POST /messages"]  # the built-in DeepSeek provider asked
    without, missing = seam
    assert tool_result(missing) == tool_result(without) == "Error: DeepSeek API error (HTTP 404)"


def test_a_hung_sidecar_costs_one_start_wait_not_one_per_call(tmp_path, installed):
    """A sidecar that never answers initialize: the first listener call waits startWaitMs
    (2000 here) for it; every later call in the 20 s start window passes through at once
    instead of adding another 2 s (the bundle's own timings file counts them)."""
    report = h.scenario("dsh", "calls", tmp_path, "--hang-sidecar", "--calls", "3", *installed)
    assert report["returncode"] == 0, report["stderr"]
    assert report["stdout"].strip() == "All done."
    times = report["listener_ms"]
    calls = times.get("post-execute", []) + times.get("assemble", [])
    assert len(times.get("post-execute", [])) == 3 and len(times.get("assemble", [])) >= 4
    assert len([ms for ms in calls if ms >= 2000]) == 1, times


def test_a_sidecar_that_stops_answering_is_restarted(tmp_path, installed):
    """The first sidecar answers initialize and then nothing (deadlocked): after HUNG_AFTER (3)
    unanswered listener requests in a row the bundle terminates it and restarts it, and a later
    call gets the restarted sidecar's note — instead of every call of the session waiting out
    its time bound for a child that will never answer."""
    report = h.scenario("dsh", "calls", tmp_path, "--hang-once", "--calls", "5", *installed)
    assert report["returncode"] == 0, report["stderr"]
    assert report["stdout"].strip() == "All done."
    assert report["hung_once"]
    times = report["listener_ms"]
    assert len(times.get("post-execute", [])) == 5, times
    assert NOTE in texts(report["requests"][-1]["messages"]), times  # the restarted one answered
    assert NOTE not in texts(report["requests"][1]["messages"])  # the hung one did not


def test_a_sidecar_that_hangs_in_its_start_is_ended_and_restarted(tmp_path, installed):
    """The first sidecar never answers initialize (hung in its own start): after startTimeoutMs
    (``scenario.HUNG_START_TIMEOUT_MS``, 8 s: the restarted sidecar must start within it too,
    however loaded the machine) the bundle ends it instead of leaving it running for the whole
    session, and restarts it; a later call gets the restarted sidecar's note."""
    report = h.scenario("dsh", "calls", tmp_path, "--hang-start-once", "--calls", "3", *installed)
    assert report["returncode"] == 0, report["stderr"]
    assert report["stdout"].strip() == "All done."
    assert report["hung_start_once"]
    assert NOTE in texts(report["requests"][-1]["messages"]), report["listener_ms"]


def test_the_first_note_of_a_fresh_session_arrives_with_the_machine_busy(tmp_path, installed):
    """A fresh DSH process (a fresh sidecar) with two CPU-bound processes beside it: the note of
    the session's first search-class call is in that call's tool result. The sidecar is spawned
    and initialized at plugin load and prepared in the background (the first system prompt waits
    at most startWaitMs for its start), so the first call meets a prepared sidecar; its bound is
    firstPostExecuteTimeoutMs (2 s). bench/dsh_first_note.py runs 20 such sessions per bound."""
    burners = [subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(2)]
    try:
        report = h.scenario("dsh", "note", tmp_path, *installed)
    finally:
        for p in burners:
            p.kill()
            p.wait()
    assert report["returncode"] == 0, report["stderr"]
    tool_at = max(i for i, m in enumerate(report["requests"][1]["messages"]) if m["role"] == "tool")
    assert report["requests"][1]["messages"][tool_at + 1] == {"role": "user", "content": NOTE}, report["listener_ms"]
    ledger = report["ledger"].splitlines()
    assert ledger[0].endswith("activated (packs generic,python intents 10 threshold 0.75)")  # written first
    assert ledger[1].endswith("suggest Version 0.99 1 targets src/demo_pkg/__init__.py")


def test_a_repository_without_a_pack_stays_silent_and_says_so_first(tmp_path, installed):
    """The seed's default: a repository without a pack of its own (no `.dsh/pack.yml`, no user
    layer) stays silent; our built-in packs are opt-in (`builtinPacks: true`, which the other
    scenarios set). The abstention is the ledger's first line, written at the sidecar's start
    when the plugin asks whether the suggester is prepared."""
    report = h.scenario("dsh", "note", tmp_path, "--no-builtin-packs", "--patient", *installed)
    assert report["returncode"] == 0, report["stderr"]
    assert NOTE not in texts(report["requests"][-1]["messages"])
    assert [line.split("] ", 1)[1] for line in report["ledger"].splitlines()] == ["abstained foreign-workspace"]
