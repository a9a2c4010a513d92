"""Every config path is untrusted, in every command: ``--config`` and ``$DSH_SEARCH_CONFIG``
naming a FIFO with no writer, ``/dev/zero``, a symlink to a device, a folder, a file far over
the 1 MiB bound (sparse) or one that is not UTF-8 are refused with exit code 2 and one line
naming the file, before anything is read past the bound; never a hang, never memory read
from a device. ``dsh/search mcp`` is the command that read them whole; ``query``, ``serve``,
``status``, ``suggest`` and ``doctor`` go through the same reader."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from dsh_sidecar.config import MAX_CONFIG_FILE_BYTES, read_config_file
from dsh_sidecar.errors import ConfigError
from support.cli import forked_cli, relhome

TIMEOUT_S = 60


def _hostile(home: Path, kind: str) -> tuple[str, str]:
    """A config path of ``kind`` (relative to ``home`` or absolute) and the refusal's reason."""
    if kind == "fifo":
        os.mkfifo(home / "cfg.yml")
        return "cfg.yml", "not a regular file"
    if kind == "dev-zero":
        return "/dev/zero", "not a regular file"
    if kind == "link-to-urandom":
        (home / "cfg.yml").symlink_to("/dev/urandom")
        return "cfg.yml", "not a regular file"
    if kind == "folder":
        (home / "cfg.yml").mkdir()
        return "cfg.yml", "cannot read (Is a directory)"
    if kind == "sparse-2gib":
        with open(home / "cfg.yml", "wb") as fh:
            fh.truncate(2 << 30)
        return "cfg.yml", "config file larger than 1 MiB"
    assert kind == "latin-1"
    (home / "cfg.yml").write_bytes("router: {order: [searxng]} # caf\xe9\n".encode("latin-1"))
    return "cfg.yml", "not UTF-8 text"


KINDS = ["fifo", "dev-zero", "link-to-urandom", "folder", "sparse-2gib", "latin-1"]


def _run(args: list[str], home: Path, extra: dict[str, str] | None = None) -> tuple[int, str, str]:
    env = {**relhome(home), **(extra or {})}
    p = subprocess.run(
        forked_cli(env) + args,
        env=env,
        cwd=home,
        input="",
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    return p.returncode, p.stdout, p.stderr


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path


@pytest.mark.parametrize("kind", KINDS)
def test_mcp_config_option_refuses_what_cannot_be_a_config(home: Path, kind: str) -> None:
    path, why = _hostile(home, kind)
    rc, out, err = _run(["mcp", "--config", path], home)
    assert (rc, out) == (2, "")
    assert err.endswith(f"dsh-search mcp: invalid config: {path}: {why}\n")


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "sparse-2gib"])
def test_mcp_config_from_the_environment_is_refused_the_same_way(home: Path, kind: str) -> None:
    path, why = _hostile(home, kind)
    rc, out, err = _run(["mcp"], home, {"DSH_SEARCH_CONFIG": path})
    assert (rc, out) == (2, "")
    assert err.endswith(f"dsh-search mcp: invalid config: {path}: {why}\n")


@pytest.mark.parametrize("kind", ["fifo", "link-to-urandom", "sparse-2gib"])
@pytest.mark.parametrize("command", [["query", "x"], ["suggest", "--tool", "grep", "--input", "{}"], ["status"]])
def test_every_cli_command_refuses_them(home: Path, kind: str, command: list[str]) -> None:
    path, why = _hostile(home, kind)
    rc, out, err = _run([*command, "--config", path], home)
    assert (rc, out) == (2, "")
    assert err == f"dsh-search: invalid config: {path}: {why}\n"


@pytest.mark.parametrize("kind", KINDS)
def test_the_reader_itself_refuses_them(home: Path, kind: str) -> None:
    """The guard is in the one reader every command uses, not only in the CLI's pre-check."""
    path, why = _hostile(home, kind)
    full = Path(path) if path.startswith("/") else home / path
    with pytest.raises(ConfigError) as info:
        read_config_file(full)
    assert (info.value.key, info.value.reason) == (str(full), why)


def test_a_file_that_grows_past_the_bound_after_the_check_is_not_read_past_it(home: Path, monkeypatch) -> None:
    """``fstat`` says small, the read finds more (a file appended to meanwhile): at most the
    bound plus one byte is read, then refused."""
    import dsh_sidecar.config as config

    cfg = home / "cfg.yml"
    cfg.write_text("# " + "x" * (MAX_CONFIG_FILE_BYTES + 10) + "\n")
    real_fstat = os.fstat
    monkeypatch.setattr(config.os, "fstat", lambda fd: os.stat_result((*real_fstat(fd)[:6], 10, *real_fstat(fd)[7:])))
    with pytest.raises(ConfigError, match="larger than 1 MiB"):
        read_config_file(cfg)


def test_a_symlink_to_a_regular_config_is_still_read(home: Path) -> None:
    real = home / "dotfiles.yml"
    real.write_text("router: {order: [searxng]}\n")
    (home / "cfg.yml").symlink_to(real)
    assert read_config_file(home / "cfg.yml") == {"router": {"order": ["searxng"]}}
