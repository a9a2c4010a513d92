"""Class 10: state files are never followed elsewhere (docs/SECURITY.md).

``ledger.log`` (and its rotation) replaced by a symlink, a dangling symlink, a hard link, a FIFO
or a file of another user: the sidecar appends nothing through it, keeps serving, and warns once.
Files written by rename (``knowledge.json``, ``posteriors.json``) replace a planted link itself,
never its target. (The bandit's ``decisions.jsonl`` is the router branch's; see docs/SECURITY.md.)
"""

from __future__ import annotations

import os

import pytest
from dsh_sidecar.state.files import StateFile, UnsafeAppendFile, open_append
from dsh_sidecar.suggester import ledger as ledger_mod
from dsh_sidecar.suggester.ledger import Ledger
from support.rawrpc import RawServer
from support.secutil import finishes

VICTIM = "precious content\n"


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "victim.txt"
    path.write_text(VICTIM)
    return path


def _ledger_lands_nowhere(tmp_path, log_path, victim) -> None:
    seen: list[str] = []
    ledger = Ledger(log_path, seen.append)
    ledger.write("suggest Doc 0.90 1 targets README.md")
    finishes(ledger.flush, timeout=10)
    assert victim.read_text() == VICTIM
    assert len(seen) == 1  # the sink (window/logMessage) still got the line
    assert ledger._warned


def test_symlink_to_another_file_is_not_followed(tmp_path, victim):
    os.symlink(victim, tmp_path / "ledger.log")
    _ledger_lands_nowhere(tmp_path, tmp_path / "ledger.log", victim)
    assert os.path.islink(tmp_path / "ledger.log")


def test_dangling_symlink_creates_nothing(tmp_path, victim):
    target = tmp_path / "would-be-created"
    os.symlink(target, tmp_path / "ledger.log")
    _ledger_lands_nowhere(tmp_path, tmp_path / "ledger.log", victim)
    assert not target.exists()


def test_hard_link_is_refused(tmp_path, victim):
    os.link(victim, tmp_path / "ledger.log")
    _ledger_lands_nowhere(tmp_path, tmp_path / "ledger.log", victim)


def test_fifo_is_refused_without_blocking(tmp_path, victim):
    os.mkfifo(tmp_path / "ledger.log")
    _ledger_lands_nowhere(tmp_path, tmp_path / "ledger.log", victim)


def test_a_folder_in_the_way_is_refused(tmp_path, victim):
    (tmp_path / "ledger.log").mkdir()
    _ledger_lands_nowhere(tmp_path, tmp_path / "ledger.log", victim)


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_a_file_of_another_user_is_refused(tmp_path, victim):
    path = tmp_path / "ledger.log"
    path.write_text("")
    os.chown(path, 65534, 65534)
    with pytest.raises(UnsafeAppendFile, match="owned by uid 65534"):
        open_append(path)
    _ledger_lands_nowhere(tmp_path, path, victim)
    assert path.read_text() == ""


def test_rotation_over_a_symlinked_backup_replaces_the_link_only(tmp_path, victim, monkeypatch):
    monkeypatch.setattr(ledger_mod, "ROTATE_BYTES", 10)
    log_path = tmp_path / "ledger.log"
    log_path.write_text("x" * 100)
    os.symlink(victim, tmp_path / "ledger.log.1")
    ledger = Ledger(log_path)
    ledger.write("after rotation")
    ledger.flush()
    assert victim.read_text() == VICTIM
    assert not os.path.islink(tmp_path / "ledger.log.1")
    assert log_path.read_text().endswith("after rotation\n")


def test_renamed_state_file_replaces_a_planted_link_not_its_target(tmp_path, victim):
    path = tmp_path / "knowledge.json"
    os.symlink(victim, path)
    StateFile(path).update(lambda cur: {"v": 1})
    assert victim.read_text() == VICTIM
    assert not os.path.islink(path)


def test_regular_ledger_is_written_0600(tmp_path):
    ledger = Ledger(tmp_path / "sub" / "ledger.log")
    ledger.write("x")
    ledger.flush()
    assert (os.stat(tmp_path / "sub" / "ledger.log").st_mode & 0o777) == 0o600


def test_sidecar_with_a_symlinked_ledger_writes_nothing_through_it(dsh_home, workspace, victim):
    folder = dsh_home / "search-suggester"
    folder.mkdir(parents=True)
    os.symlink(victim, folder / "ledger.log")
    server = RawServer(dsh_home, cwd=workspace, forked=True)
    try:
        # a first-call window longer than the build: at load 25-46 the default 500 ms ran out and
        # the note was owed to a next call; the window is not this test's subject
        server.initialize({"suggester": {"enabled": True, "firstCallWaitMs": 60000}}, root=workspace)
        reply = server.request(
            "dsh/postExecute",
            {"sessionId": "s", "turn": 1, "tool": {"name": "grep", "input": {"pattern": "__version__"}}},
            timeout=90,
        )
        assert reply["result"]["additionalContexts"]
        assert "result" in server.request("dsh/dismiss", {"family": "Doc"})
        assert server.shutdown() == 0
    finally:
        server.close()
    assert victim.read_text() == VICTIM
    assert b"cannot write the ledger file" in server.stderr_bytes
