"""Durable state under faults: kill -9 during writes, several sidecars on one ``$DSH_HOME``
(no lost updates, counted), and a read-only or full state folder (the sidecar keeps serving
with a warning)."""

from __future__ import annotations

import json
import os
import random
import select
import signal
import subprocess
import time
import traceback
from pathlib import Path

import pytest
from dsh_sidecar.state import StateFile
from dsh_sidecar.state import files as files_mod
from support.mockprovider import MockProvider, case_reply
from support.rawrpc import RawServer
from support.routers import router_block
from support.waiting import HANG_S

#: kill -9 repetitions.
KILL_ROUNDS = 100


def _child_writes(path: Path, start: int, landed: int) -> None:
    """Forked child: update the file forever with a ~200 KB document (killed by the parent),
    one byte to the pipe ``landed`` once its first update has landed."""
    state = StateFile(path)
    i = start
    while True:
        i += 1
        state.update(lambda cur, i=i: {"n": i, "pad": ["x" * 64] * 3000})
        if i == start + 1:
            os.write(landed, b".")


def _first_write_landed(landed: int) -> bool:
    """Whether the child's first update landed (its byte on the pipe) within the wait bound."""
    ready, _, _ = select.select([landed], [], [], HANG_S)
    return bool(ready) and os.read(landed, 1) == b"."


def test_kill9_during_state_writes_always_leaves_a_loadable_file(tmp_path):
    """Each round kills a writer at a random moment 5-50 ms into its writes: the first round
    from its start (a kill before or during the very first write), every later one from its
    first landed update (on a loaded machine no write of a round had landed 50 ms after its
    fork, in 100 rounds: nothing was killed during a write)."""
    path = tmp_path / "state" / "doc.json"
    rng = random.Random(8)
    last = 0
    for round_ in range(KILL_ROUNDS):
        landed, signal_landed = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            try:
                os.close(landed)
                _child_writes(path, round_ * 1_000_000, signal_landed)
            finally:
                os._exit(0)
        os.close(signal_landed)
        try:
            writing = round_ == 0 or _first_write_landed(landed)
            if writing:
                time.sleep(rng.uniform(0.005, 0.05))
        finally:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(landed)
        assert writing, f"round {round_}: no update landed within {HANG_S:g} s"
        state = StateFile(path)
        doc = state.read()
        if doc is None:  # only before the very first write ever landed
            assert last == 0 and not path.exists(), f"round {round_}: {state.warnings}"
        else:
            assert isinstance(doc, dict) and len(doc["pad"]) == 3000, f"round {round_}: {state.warnings}"
            last = doc["n"]
        assert state.warnings == [], state.warnings
    assert last > 0
    assert not list(path.parent.glob("*.corrupt-*"))
    # leftover temp files of killed writers are never mistaken for the state
    assert json.loads(path.read_bytes())["n"] == last


def _child_increments(path: Path, times: int) -> None:
    state = StateFile(path)
    for _ in range(times):
        state.update(lambda cur: {"count": (cur or {}).get("count", 0) + 1})


def _exit_codes(pids: list[int], timeout_s: float = HANG_S) -> list[int | None]:
    """Each child's exit code, in order; ``None`` for one still running at the deadline (killed)."""
    deadline, codes = time.monotonic() + timeout_s, dict.fromkeys(pids)
    while any(codes[pid] is None for pid in pids) and time.monotonic() < deadline:
        for pid in pids:
            if codes[pid] is None:
                done, status = os.waitpid(pid, os.WNOHANG)
                if done:
                    codes[pid] = os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    for pid in pids:
        if codes[pid] is None:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    return [codes[pid] for pid in pids]


@pytest.mark.parametrize("processes", [2, 4])
def test_processes_hammering_one_state_file_lose_no_update(tmp_path, processes, monkeypatch):
    path = tmp_path / "shared.json"
    per_process = 60
    # how long one update waits for another's lock is not the subject (each update holds it for
    # two fsyncs, and filelock polls): a child starved at load 25-46 may wait out the 10 s bound
    # and exit on the timeout (the cause inferred: the failure showed only the exit code)
    monkeypatch.setattr(files_mod, "LOCK_TIMEOUT_S", HANG_S)
    pids = []
    for _ in range(processes):
        pid = os.fork()
        if pid == 0:  # pragma: no cover - child
            code = 1
            try:
                _child_increments(path, per_process)
                code = 0
            except BaseException:
                traceback.print_exc()  # on the test's captured stderr
            finally:
                os._exit(code)
        pids.append(pid)
    assert _exit_codes(pids) == [0] * processes
    assert StateFile(path).read() == {"count": processes * per_process}


# ----------------------------------------------------------------------- real sidecars


@pytest.fixture
def provider():
    mock = MockProvider()
    mock.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    yield mock
    mock.close()


def sidecar_config(mock: MockProvider) -> dict:
    # discount 1 (the seed's stationary rule) makes every update add exactly 1 to α+β of the
    # arm's global row, so updates can be counted; cache off so every search is an update.
    return {
        "router": router_block(mock, ["searxng"], cache=False),
        "bandit": {"discount": 1.0},
        "suggester": {"enabled": True},
    }


def global_quick_updates(home: Path) -> float:
    doc = json.loads((home / "bandit" / "posteriors.json").read_text())
    a, b = doc["rows"]["global"]["quick"]
    return a + b


def knowledge_dismissals(home: Path, root: Path) -> int:
    doc = json.loads((home / "search-suggester" / "knowledge.json").read_text())
    ws = doc["workspaces"]["path:" + root.resolve().as_posix()]
    return sum(len(paths) for paths in ws["dismissals"].values())


@pytest.mark.parametrize("sidecars", [2, 4])
def test_sidecars_sharing_one_dsh_home_lose_no_update(dsh_home, workspace, provider, sidecars):
    per_sidecar = 8
    servers = [RawServer(dsh_home, forked=True) for _ in range(sidecars)]
    try:
        for srv in servers:
            srv.initialize(sidecar_config(provider), root=workspace)
        pending = []
        for i in range(per_sidecar):  # interleaved: every sidecar writes between the others' writes
            for n, srv in enumerate(servers):
                pending.append((srv, srv.request_id("dsh/search", {"query": f"shared {n} {i}", "strategy": "quick"})))
                pending.append((srv, srv.request_id("dsh/dismiss", {"family": "Version", "path": f"src/s{n}_{i}.py"})))
        for srv, msg_id in pending:
            assert "result" in srv.response(msg_id, timeout=60), msg_id
        codes = [srv.shutdown() for srv in servers]
        assert codes == [0] * sidecars
    finally:
        for srv in servers:
            srv.close()
    assert global_quick_updates(dsh_home) == pytest.approx(sidecars * per_sidecar, abs=1e-6)
    assert knowledge_dismissals(dsh_home, workspace) == sidecars * per_sidecar


def test_kill9_of_a_sidecar_mid_traffic_leaves_loadable_state(dsh_home, workspace, provider):
    from dsh_sidecar.bandit.store import validate_document as bandit_doc
    from dsh_sidecar.suggester.knowledge import validate_document as knowledge_doc

    for round_ in range(2):
        srv = RawServer(dsh_home)
        srv.initialize(sidecar_config(provider), root=workspace)
        for i in range(30):
            srv.request_id("dsh/search", {"query": f"kill {round_} {i}", "strategy": "quick"})
            srv.request_id("dsh/dismiss", {"family": "Version", "path": f"src/k{round_}_{i}.py"})
        time.sleep(0.2 + 0.1 * round_)
        srv.proc.kill()
        srv.wait()
        for name, validate in (
            ("bandit/posteriors.json", bandit_doc),
            ("search-suggester/knowledge.json", knowledge_doc),
        ):
            state = StateFile(dsh_home / name, validate)
            state.read()
            assert state.warnings == [], state.warnings
    assert not list(dsh_home.rglob("*.corrupt-*"))


# ----------------------------------------------------------------------- unwritable state


def _mount(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    return (
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True).returncode
        == 0
    )


@pytest.fixture(params=["read-only", "full"])
def broken_home(request, tmp_path):
    home = tmp_path / "mnt"
    if os.geteuid() != 0 or not _mount(home, "size=1m,mode=0700"):
        pytest.skip("needs root and tmpfs mounts to make an unwritable state folder")
    if request.param == "read-only":
        subprocess.run(["mount", "-o", "remount,ro", str(home)], check=True)
    else:
        with open(home / "filler", "wb") as fh:
            try:
                while True:
                    fh.write(b"\0" * 65536)
            except OSError:
                pass
    yield home
    subprocess.run(["umount", "-l", str(home)], check=False)


def test_unwritable_state_folder_keeps_serving_with_a_warning(broken_home, workspace, provider):
    srv = RawServer(broken_home, forked=True)
    try:
        srv.initialize(sidecar_config(provider), root=workspace)
        for i in range(3):
            assert "result" in srv.request("dsh/search", {"query": f"ro {i}", "strategy": "quick"}, timeout=30)
            assert "result" in srv.request("dsh/dismiss", {"family": "Version", "path": f"src/ro{i}.py"})
            reply = srv.request(
                "dsh/postExecute",
                {"sessionId": "s", "turn": i, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}},
            )
            assert "result" in reply
        status = srv.request("dsh/status", {})["result"]
        assert status["bandit"]["state"]["persisting"] is False, status["bandit"]
        assert srv.shutdown() == 0
    finally:
        srv.close()
    err = srv.stderr_bytes.decode()
    assert "cannot be written" in err, err[-2000:]
    assert "Traceback" not in err, err[-3000:]
