"""The ``dsh-search`` CLI: bad arguments are one clear line on stderr and exit code 2."""

from __future__ import annotations

import pytest
from dsh_sidecar.cli import main


@pytest.mark.parametrize(
    "argv, message",
    [
        (
            ["suggest", "--tool", "", "--input", '{"pattern": "x"}'],
            "dsh-search: bad --tool: String should have at least 1 character\n",
        ),
        (
            ["suggest", "--tool", "x" * 300, "--input", "{}"],
            "dsh-search: bad --tool: String should have at most 200 characters\n",
        ),
        (["suggest", "--tool", "grep", "--input", "[1, 2]"], "dsh-search: --input must be a JSON object\n"),
        (
            ["suggest", "--tool", "grep", "--input", '{"p": ' + "[" * 20000 + "]" * 20000 + "}"],
            "dsh-search: --input must be a JSON object\n",
        ),
        (["query", "--max-results", "0", "x"], "dsh-search: '--max-results' / '-n' must be at least 1, got '0'\n"),
        (["query", "--deadline-ms", "1", "x"], "dsh-search: '--deadline-ms' must be at least 100, got '1'\n"),
        (["query", "x", "-n", ""], "dsh-search: '-n' / '--max-results' must be a whole number, got ''\n"),
        (["status", "--workspace", "/nonexistent/dsh"], "dsh-search: --workspace /nonexistent/dsh is not a folder\n"),
    ],
)
def test_bad_arguments_are_one_line_and_exit_2(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    if argv[0] == "suggest":
        argv = [argv[0], "--workspace", str(tmp_path)] + argv[1:]
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.err == message
    assert captured.out == ""


def test_suggest_names_the_version_file(capsys, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    assert (
        main(["suggest", "--workspace", str(workspace), "--tool", "grep", "--input", '{"pattern": "__version__"}']) == 0
    )
    assert capsys.readouterr().out == (
        "search-suggester: in this repository, look here for the package version:\n"
        "- src/demo_pkg/__init__.py — defines __version__\n"
    )


def test_suggest_says_why_it_is_silent_when_the_index_was_not_ready(capsys, workspace, tmp_path, monkeypatch):
    """A first run whose index outlasts the wait (the README's first command at load 8-13 on this
    repository) printed a bare '(silence: no note for this call)'; its reason, ``suppressed
    not-ready``, was in the ledger alone. The index is never ready here (``readiness.missing``),
    and the wait is none."""
    from dsh_sidecar.cli.commands import ask
    from dsh_sidecar.suggester import readiness

    monkeypatch.setenv("DSH_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DSH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(readiness, "missing", lambda *_args: True)
    monkeypatch.setattr(ask, "GRAPH_WAIT_S", 0.0)
    argv = ["suggest", "--workspace", str(workspace), "--tool", "grep", "--input", '{"pattern": "__version__"}']
    assert main(argv) == 0
    assert capsys.readouterr().out == (
        "(silence: the workspace index was not ready within 0 s; "
        "run the command again: it goes on from what this run indexed)\n"
    )
    ledger = (tmp_path / "home" / "search-suggester" / "ledger.log").read_text()
    assert "suppressed not-ready Version" in ledger
