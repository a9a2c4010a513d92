"""The tests' fork server (:mod:`support.forkserver`) gives a forked sidecar the ends a spawned
one has: the same answers over the caller's pipes, its exit code, a forwarded SIGTERM, and the
sidecar's end when the launcher is killed; it reads none of the worker's environment; and a
forked CLI command renders as a spawned one."""

from __future__ import annotations

import signal

import pytest
from support.rawrpc import RawServer


def status_without_timings(srv: RawServer) -> dict:
    status = srv.request("dsh/status", {})["result"]
    status.pop("uptimeS", None)
    return status


def test_a_forked_sidecar_answers_as_a_spawned_one(tmp_path):
    answers = []
    for forked in (False, True):
        srv = RawServer(tmp_path / f"home-{forked}", forked=forked)
        try:
            init = srv.initialize({})["result"]
            answers.append((init, sorted(status_without_timings(srv))))
            assert srv.shutdown() == 0
        finally:
            srv.close()
        assert b"Traceback" not in srv.stderr_bytes
    assert answers[0] == answers[1]


def test_the_exit_code_and_sigterm_reach_the_caller(tmp_path):
    srv = RawServer(tmp_path / "home", forked=True)
    srv.initialize({})
    srv.notify("exit")  # exit without shutdown: 1 (LSP)
    assert srv.wait(30) == 1
    srv = RawServer(tmp_path / "home", forked=True)
    srv.initialize({})
    srv.proc.send_signal(signal.SIGTERM)  # the sidecar's SIGTERM is its exit: 0
    assert srv.wait(30) == 0


def test_killing_the_launcher_ends_the_sidecar(tmp_path):
    srv = RawServer(tmp_path / "home", forked=True)
    srv.initialize({})
    srv.proc.kill()
    assert srv.wait(30) == -signal.SIGKILL
    # stdout closes only when the forked sidecar itself is gone (the launcher holds no copy)
    srv._out.join(30)
    assert not srv._out.is_alive()


def test_the_sidecar_reads_the_callers_environment_not_the_zygotes(tmp_path, monkeypatch):
    """The zygote started with the worker's environment; each sidecar runs with its launcher's
    (``DSH_LOG_LEVEL``, read when ``serve`` starts, is only in the second one's)."""
    monkeypatch.delenv("DSH_LOG_LEVEL", raising=False)
    logs = []
    for env in (None, {"DSH_LOG_LEVEL": "DEBUG"}):
        srv = RawServer(tmp_path / "home", env=env, forked=True)
        try:
            srv.initialize({})
            assert srv.shutdown() == 0
        finally:
            srv.close()
        logs.append(bytes(srv.stderr_bytes))
    assert b" DEBUG " not in logs[0]
    assert b" DEBUG asyncio: Using selector: EpollSelector" in logs[1], logs[1][:500]


@pytest.mark.parametrize(
    ("extra", "tty"), [({"FORCE_COLOR": "1", "TERMINAL_WIDTH": "60"}, False), ({}, True), ({"NO_COLOR": "1"}, True)]
)
def test_a_forked_cli_command_renders_as_a_spawned_one(tmp_path, extra, tty):
    """The ``cli`` zygote has not imported Typer or Rich (they read the environment when
    imported): the same bytes, on a pipe and on a terminal, under each rendering environment."""
    from support.cli import relhome, run

    env = relhome(tmp_path, extra)
    for args in (["status"], ["--help"]):
        assert run(args, env, tmp_path, tty=tty) == run(args, env, tmp_path, tty=tty, spawn=True), args
