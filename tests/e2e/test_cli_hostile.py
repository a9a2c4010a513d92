"""``dsh-search`` against what a user's machine throws at it: ``--config`` that is a FIFO,
``/dev/zero``, not UTF-8 or nested too deeply; ``--log-file`` that is a symlink or a FIFO
without a reader; ``--help`` into a closed pipe; stdout on ``/dev/full``; a symlinked part
of ``$DSH_HOME`` in ``doctor``; and the suggester's note on a terminal.

Each case is one clear line (or JSON error) and a documented exit code, never a traceback
and never a hang (every run has a timeout).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from support.cli import cli, forked_cli, relhome, run

TIMEOUT_S = 60


def _run(args: list[str], home: Path, stdin: int | None = subprocess.DEVNULL) -> tuple[int, str, str]:
    env = relhome(home)
    p = subprocess.run(
        forked_cli(env) + args, env=env, cwd=home, stdin=stdin, capture_output=True, text=True, timeout=TIMEOUT_S
    )
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path


# ---------------------------------------------------------------------------- --config


def _bad_config(home: Path, kind: str) -> tuple[str, str]:
    """A bad ``--config`` of ``kind``: its path (relative to ``home``) and the expected reason."""
    if kind == "fifo":
        os.mkfifo(home / "cfg.yml")
        return "cfg.yml", "not a regular file"
    if kind == "dev-zero":
        return "/dev/zero", "not a regular file"
    if kind == "binary":
        (home / "cfg.yml").write_bytes(b"\xff\xfe router: {}")
        return "cfg.yml", "not UTF-8 text"
    if kind == "deep-block":  # nested by indentation, not brackets
        (home / "cfg.yml").write_text("".join(" " * i + "k:\n" for i in range(1200)))
        return "cfg.yml", "nested too deeply"
    if kind == "deep-json":
        (home / "cfg.json").write_text("[" * 100_000 + "\n")
        return "cfg.json", "nested too deeply"
    assert kind == "deep"
    (home / "cfg.yml").write_text("[" * 100_000 + "\n")
    return "cfg.yml", "nested too deeply"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "binary", "deep", "deep-block", "deep-json"])
@pytest.mark.parametrize("command", [["status"], ["doctor", "--offline"], ["serve"]])
def test_a_config_that_cannot_be_a_config_is_a_usage_error_not_a_hang(home: Path, kind: str, command: list[str]):
    path, why = _bad_config(home, kind)
    rc, out, err = _run(command + ["--config", path], home)
    assert (rc, out) == (2, "")
    assert err == f"dsh-search: invalid config: {path}: {why}\n"


def test_a_bad_config_with_json_is_the_json_rpc_error(home: Path):
    path, why = _bad_config(home, "fifo")
    rc, out, err = _run(["status", "--config", path, "--json"], home)
    assert (rc, err) == (2, "")
    assert json.loads(out) == {
        "error": {"code": -32602, "message": f"invalid config: {path}: {why}", "data": {"key": path}}
    }


# ---------------------------------------------------------------------------- --log-file


def test_log_file_that_is_a_symlink_is_refused_and_its_target_untouched(home: Path):
    target = home / "target.txt"
    target.write_text("keep\n")
    (home / "link.log").symlink_to(target)
    (home / "dangling.log").symlink_to(home / "created-by-the-link.txt")
    for name in ("link.log", "dangling.log"):
        rc, out, err = _run(["serve", "--log-file", name], home)
        assert (rc, out) == (2, "")
        assert err == f"dsh-search: --log-file {name}: cannot open (is a symbolic link)\n"
    assert target.read_text() == "keep\n"
    assert not (home / "created-by-the-link.txt").exists()


def test_log_file_that_is_a_fifo_without_a_reader_is_an_error_not_a_hang(home: Path):
    os.mkfifo(home / "log.fifo")
    rc, out, err = _run(["serve", "--log-file", "log.fifo"], home)
    assert (rc, out) == (2, "")
    assert err == "dsh-search: --log-file log.fifo: cannot open (a FIFO nobody reads)\n"


def test_log_file_that_is_a_folder_is_an_error(home: Path):
    (home / "logs").mkdir()
    rc, _, err = _run(["serve", "--log-file", "logs"], home)
    assert rc == 2
    assert err == "dsh-search: --log-file logs: cannot open (Is a directory)\n"


def test_log_file_still_gets_the_log_and_is_created_0600(home: Path):
    rc, out, _ = _run(["serve", "--log-file", "serve.log", "--log-level", "DEBUG"], home)
    assert (rc, out) == (0, "")  # stdin at EOF: the server ends at once
    log = home / "serve.log"
    assert log.stat().st_mode & 0o777 == 0o600
    assert "DEBUG" in log.read_text()


# ---------------------------------------------------------------------------- closed or full stdout


@pytest.mark.parametrize("args", [["--help"], ["status", "--help"], ["bandit", "reset", "--help"]])
def test_help_into_a_closed_pipe_ends_quietly_with_141(home: Path, args: list[str]):
    proc = subprocess.Popen(cli() + args, env=relhome(home), cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=TIMEOUT_S) == 141
    assert err == ""


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full on this system")
@pytest.mark.parametrize("args", [["--help"], ["--version"], ["status"], ["status", "--json"], ["bandit", "reset"]])
def test_stdout_on_a_full_device_is_one_line_and_exit_1(home: Path, args: list[str]):
    with open("/dev/full", "w") as full:
        p = subprocess.run(
            cli() + args, env=relhome(home), cwd=home, stdout=full, stderr=subprocess.PIPE, text=True, timeout=60
        )
    assert p.returncode == 1
    assert p.stderr == "dsh-search: cannot write the output (No space left on device)\n"


# ---------------------------------------------------------------------------- doctor


def test_doctor_does_not_walk_a_symlinked_part_of_dsh_home(home: Path, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "big.bin").write_bytes(b"x" * 50_000)
    (home / "home" / "bandit").symlink_to(elsewhere, target_is_directory=True)
    rc, out, err = _run(["doctor", "--offline", "--json"], home)
    assert (rc, err) == (0, "")
    state = next(c for c in json.loads(out)["checks"] if c["name"] == "state")
    assert state["data"]["bytes"] == 0
    assert state["data"]["parts"] == {}


# ---------------------------------------------------------------------------- suggest on a terminal


def test_suggest_on_a_terminal_keeps_the_first_target_on_its_own_line(home: Path):
    ws = home / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "__init__.py").write_text('__version__ = "1.0"\n')
    (ws / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "1.0"\n')
    args = ["suggest", "--workspace", "ws", "--tool", "grep", "--input", '{"pattern": "__version__"}', "--quiet"]
    rc, out, _ = run(args, relhome(home), home, tty=True)
    assert rc == 0
    lines = [line.rstrip() for line in out.replace("\x1b[1m", "").replace("\x1b[0m", "").splitlines()]
    assert lines == [
        "search-suggester: in this repository, look here for the package version:",
        "- src/pkg/__init__.py — defines __version__",
        "- pyproject.toml — the manifest's [project] version",
    ]
