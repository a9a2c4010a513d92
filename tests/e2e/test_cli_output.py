"""``dsh-search`` as a user meets it: the real console script in a subprocess, its stdout a
pipe or a pseudo-terminal (Rich), ``--json`` on success and failure, exit codes, a closed
pipe, ``NO_COLOR``, ``--help``, and a search against a loopback SearXNG.

Snapshots live in ``tests/data/cli/``; set ``DSH_UPDATE_SNAPSHOTS=1`` to rewrite them after a
deliberate change of the output (then read the diff).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import struct
import subprocess
import termios
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.cli import RUN_TIMEOUT_S, cli, relhome, run
from support.mockprovider import MockProvider, case_reply
from support.sidecar import DATA

SNAPSHOTS = DATA / "cli"


def snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("DSH_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, "utf-8")
    assert path.exists(), f"no snapshot {path} (run once with DSH_UPDATE_SNAPSHOTS=1 and review it)"
    assert text == path.read_text("utf-8")


def steady(text: str) -> str:
    """Output with its timings, timing-derived reward and link ids replaced (they differ run to run)."""
    text = re.sub(r"\d+ ms", "N ms", text)
    text = re.sub(r"\x1b]8;id=[^;]*;", "\x1b]8;id=ID;", text)  # OSC 8 hyperlink ids are random
    return re.sub(r"reward (\x1b\[[0-9;]*m)?\d\.\d{3}", r"reward \g<1>R", text)


SGR = re.compile(r"\x1b\[([0-9;]*)m")


def colour_codes(text: str) -> set[str]:
    """The SGR parameters that set a colour (30–39, 40–49, 90–107, 38;…/48;…)."""
    out = set()
    for params in SGR.findall(text):
        for p in params.split(";"):
            if p and (30 <= int(p) <= 49 or 90 <= int(p) <= 107):
                out.add(p)
    return out


@contextmanager
def searxng_answering(body: dict | bytes) -> Iterator[MockProvider]:
    """A loopback SearXNG whose ``/search`` answers ``body`` (JSON; bytes as they are)."""
    from support.mockprovider import Reply

    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    mock = MockProvider()
    mock.route("GET", "/search", Reply(200, {"content-type": "application/json"}, raw))
    try:
        yield mock
    finally:
        mock.close()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    return tmp_path


# ---------------------------------------------------------------------------- status


def test_status_in_a_pipe_is_plain_text(home: Path):
    rc, out, err = run(["status"], relhome(home), home)
    assert (rc, err) == (0, "")
    assert "\x1b" not in out
    snapshot("status.pipe.txt", out)


def test_status_on_a_terminal_is_rich_tables_in_colour(home: Path):
    rc, out, err = run(["status"], relhome(home), home, tty=True)
    assert (rc, err) == (0, "")
    assert colour_codes(out), "a terminal gets colour"
    assert "│ 1 │ duckduckgo │" in out  # a Rich table, not the pipe's text
    snapshot("status.terminal.txt", out)


def test_status_shows_the_updates_each_arm_has_had_in_a_pipe_and_on_a_terminal(home: Path):
    """How many posterior updates each arm has had, read from the saved state."""
    (home / "home" / "bandit").mkdir()
    doc = {
        "version": 1,
        "rows": {"global": {"quick": [2.5, 0.5], "thorough": [0.5, 0.5]}},
        "updates": {"quick": 3, "thorough": 1},
    }
    (home / "home" / "bandit" / "posteriors.json").write_text(json.dumps(doc), "utf-8")
    rc, out, err = run(["status"], relhome(home), home)
    assert (rc, err) == (0, "")
    assert "  updates per arm (searches learnt from): quick 3, thorough 1\n" in out
    rc, out, err = run(["status"], relhome(home, {"NO_COLOR": "1"}), home, tty=True)
    assert (rc, err) == (0, "")
    assert "Bandit updates per arm: quick 3, thorough 1\n" in SGR.sub("", out)
    rc, out, _ = run(["status", "--json"], relhome(home), home)
    assert json.loads(out)["bandit"]["updates"] == {"quick": 3, "thorough": 1}


def test_no_color_keeps_the_tables_and_drops_the_colour(home: Path):
    rc, out, _ = run(["status"], relhome(home, {"NO_COLOR": "1"}), home, tty=True)
    assert rc == 0
    assert colour_codes(out) == set()
    assert "provider" in out and "duckduckgo" in out


def test_status_json_is_the_dsh_status_result(home: Path):
    rc, out, err = run(["status", "--json"], relhome(home), home)
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert set(doc) == {"version", "workspace", "router", "bandit", "suggester", "state", "servers"}
    assert doc["servers"] == []  # no server runs with this home
    assert doc["router"]["chain"] == [{"provider": "duckduckgo", "baseUrl": "https://html.duckduckgo.com"}]
    assert doc["state"]["dshHome"] == "home"


# ---------------------------------------------------------------------------- query


@pytest.fixture
def searxng():
    mock = MockProvider()
    reply, _ = case_reply("searxng", "ok", check=False)
    mock.route("GET", "/search", reply)
    yield mock
    mock.close()


def test_query_pipe_terminal_and_json(home: Path, searxng: MockProvider):
    env = relhome(home, {"SEARXNG_BASE_URL": searxng.url})
    args = ["query", "bike chain cleaning", "--strategy", "quick"]
    rc, out, err = run(args, env, home)
    assert (rc, err) == (0, "")  # no [bandit-search] line without --verbose
    snapshot("query.pipe.txt", steady(out))
    rc, out, err = run(args, env, home, tty=True)
    assert (rc, err) == (0, "")
    assert colour_codes(out)
    snapshot("query.terminal.txt", steady(out))
    rc, out, err = run([*args, "--json"], env, home)
    doc = json.loads(out)
    assert rc == 0 and doc["strategy"] == "quick" and doc["attempts"][0]["provider"] == "searxng"
    assert [s["url"] for s in doc["sources"]][:1] == [json.loads(out)["sources"][0]["url"]]
    rc, out, err = run([*args, "--verbose"], env, home)
    assert rc == 0
    assert re.fullmatch(r"\[bandit-search\] arm=quick reward=\d\.\d{3} durationMs=\d+ resultCount=\d+ stats=.*\n", err)


def test_query_failure_json_is_the_json_rpc_error_and_exit_1(home: Path):
    # a SearXNG on a port nobody listens on: the only provider of the chain fails
    env = relhome(home)
    cfg = home / "dead.yml"
    cfg.write_text("router:\n  provider: searxng\n  providers:\n    searxng:\n      baseUrl: http://127.0.0.1:9\n")
    rc, out, err = run(["query", "x", "-s", "quick", "--no-local", "--config", str(cfg), "--json"], env, home)
    assert rc == 1 and err == ""
    error = json.loads(out)["error"]
    assert error["code"] == -32001
    assert error["message"].startswith("search-router: all configured search providers failed:\n- searxng: ")
    assert [a["provider"] for a in error["data"]["attempts"]] == ["searxng"]
    rc, out, err = run(["query", "x", "-s", "quick", "--no-local", "--config", str(cfg)], env, home)
    assert (rc, out) == (1, "")
    assert err == error["message"] + "\n"  # the router's text, as the router words it


@pytest.mark.parametrize(
    "args, code, message, data",
    [
        (
            ["query", "x", "--max-results", "0"],
            -32602,
            "'--max-results' / '-n' must be at least 1, got '0'",
            {"flag": "--max-results"},
        ),
        (["query", "--json"], -32602, "missing argument 'QUERY'", {"flag": "QUERY"}),
        (["suggest", "--tool", "grep", "--json"], -32602, "missing option '--input' / '-i'", {"flag": "--input"}),
        (["frobnicate", "--json"], -32602, "unknown command 'frobnicate'", None),
        (
            ["status", "--workspace", "/nonexistent/dsh", "--json"],
            -32602,
            "--workspace /nonexistent/dsh is not a folder",
            {"flag": "--workspace"},
        ),
    ],
)
def test_usage_errors_as_json_exit_2(home: Path, args, code, message, data):
    if "--json" not in args:
        args = [*args, "--json"]
    rc, out, err = run(args, relhome(home), home)
    assert rc == 2 and err == ""
    expected = {"code": code, "message": message, **({"data": data} if data else {})}
    assert json.loads(out) == {"error": expected}


@pytest.mark.parametrize(
    "args, message, flag",
    [
        # a value the parser cannot read: the names as typed first, what it must be, what came
        (["query", "x", "-n", "abc"], "'-n' / '--max-results' must be a whole number, got 'abc'", "--max-results"),
        (["query", "x", "--max-results=99"], "'--max-results' / '-n' must be at most 50, got '99'", "--max-results"),
        (["query", "x", "--deadline-ms", "1.5"], "'--deadline-ms' must be a whole number, got '1.5'", "--deadline-ms"),
        (["doctor", "--timeout", "soon"], "'--timeout' must be a number, got 'soon'", "--timeout"),
        (["cache", "prune", "--max-age-days", "-1"], "'--max-age-days' must be at least 0, got '-1'", "--max-age-days"),
        # a bad choice
        (
            ["query", "x", "-s", "fast"],
            "'-s' / '--strategy' must be one of auto, quick, thorough, got 'fast'",
            "--strategy",
        ),
        # a flag without its value (the last word of the line)
        (["status", "-w"], "'-w' / '--workspace' needs a value", "--workspace"),
        # missing argument and option
        (["completion"], "missing argument 'SHELL'", "SHELL"),
        (["suggest", "-t", "grep"], "missing option '--input' / '-i'", "--input"),
        # unknown options, with the near names
        (["query", "x", "--max-result", "3"], "unknown option '--max-result' (did you mean '--max-results'?)", "--max-result"),
        (["--colr", "never", "status"], "unknown option '--colr' (did you mean '--color'?)", "--colr"),
        (["query", "x", "--frob"], "unknown option '--frob'", "--frob"),
        # a word whose bytes are not UTF-8 (never quoted back)
        (["query", "caf\udce9"], "'QUERY' must be UTF-8 text", "QUERY"),
        (["suggest", "-t", "grep", "-i", '{"pattern": "\udcff"}'], "'--input' must be UTF-8 text", "--input"),
        (["query", "x", "-n", "1\udcff"], "'-n' / '--max-results' must be UTF-8 text", "--max-results"),
        (["query", "x", "--deadline-ms", "9\udcff"], "'--deadline-ms' must be UTF-8 text", "--deadline-ms"),
        (["query", "x", "-s", "q\udcff"], "'-s' / '--strategy' must be one of auto, quick, thorough", "--strategy"),
        (["completion", "b\udcff"], "'SHELL' must be one of bash, zsh, fish", "SHELL"),
        # what carries no flag: an unknown command, an extra argument
        (["quer", "x"], "unknown command 'quer' (did you mean 'query'?)", None),
        (
            ["query", "httpx", "timeout"],
            "unexpected extra argument 'timeout' (a query of several words is one argument:"
            " dsh-search query 'httpx timeout')",
            None,
        ),
    ],
)  # fmt: skip
def test_parser_errors_name_the_flag_in_plain_words(home: Path, args, message, flag):
    """What the parser finds reads as the commands' own errors do: one plain line on stderr,
    and under --json the error object with data.flag; exit 2 either way."""
    rc, out, err = run(args, relhome(home), home)
    assert (rc, out, err) == (2, "", f"dsh-search: {message}\n")
    rc, out, err = run(["--json", *args], relhome(home), home)  # before the command: every command takes it
    assert (rc, err) == (2, "")
    expected = {"code": -32602, "message": message, **({"data": {"flag": flag}} if flag else {})}
    assert json.loads(out) == {"error": expected}


def test_config_error_names_the_key_never_the_value(home: Path):
    cfg = home / "bad.yml"
    cfg.write_text("router:\n  timeoutMs: 5\n  providers:\n    exa:\n      apiKey: sk-very-secret-1234\n")
    rc, out, err = run(["status", "--config", str(cfg), "--json"], relhome(home), home)
    assert rc == 2 and err == ""
    assert json.loads(out) == {
        "error": {
            "code": -32602,
            "message": "invalid config: router.timeoutMs: Input should be greater than or equal to 100",
            "data": {"key": "router.timeoutMs"},
        }
    }
    rc, out, err = run(["status", "--config", str(cfg)], relhome(home), home)
    assert (rc, out) == (2, "")
    assert err == "dsh-search: invalid config: router.timeoutMs: Input should be greater than or equal to 100\n"


# ---------------------------------------------------------------------------- pipes, help


def test_a_closed_stdout_ends_quietly_with_141(home: Path):
    """``dsh-search status | head -0``: the reader is gone before the first write."""
    proc = subprocess.Popen(
        cli() + ["status"], env=relhome(home), cwd=home, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # before the interpreter has even started: the write must hit EPIPE
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 141
    assert err == ""  # no BrokenPipeError traceback, no "Exception ignored" line


@pytest.mark.parametrize("args", [["status"], ["--version"], ["query", "x"]])
def test_a_command_started_with_stdout_closed_exits_141_without_a_traceback(home: Path, args: list[str]):
    """``dsh-search status >&-``: Python starts with no stdout object at all (``sys.stdout is
    None``); that is a reader gone before the first write."""
    p = subprocess.run(
        ["bash", "-c", " ".join(shlex.quote(a) for a in cli() + args) + " >&-"],
        env=relhome(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (p.returncode, p.stderr) == (141, "")


def test_the_mcp_server_started_with_stdout_closed_says_why_and_fails(home: Path):
    """Its channel is stdout: like ``serve``, one line on stderr and exit code 1, not a silent 141."""
    p = subprocess.run(
        ["bash", "-c", " ".join(shlex.quote(a) for a in [*cli(), "mcp"]) + " >&- </dev/null"],
        env=relhome(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (p.returncode, p.stderr) == (
        1,
        "dsh-search mcp: stopping: stdout (fd 1) is closed: there is no MCP channel to answer on\n",
    )


def test_head_of_a_pipeline_gets_the_first_line_and_no_traceback(home: Path):
    p = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {' '.join(cli())} status | head -1"],
        env=relhome(home),
        cwd=home,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.stdout.startswith("running servers: none (a server writes its live state under $DSH_HOME/run;")
    assert p.stderr == ""


#: The one-line description each command's --help starts with.
DESCRIPTIONS = {
    "serve": "Serve JSON-RPC (LSP framing) on stdin/stdout: what a harness spawns.",
    "query": "Run one web search through the router's chain and print the sources.",
    "suggest": "Say what the suggester would tell an agent after one tool call (runs even when disabled).",
    "status": "Show the resolved chain with each provider's health, the bandit's posteriors and where state lives.",
    "doctor": "Check Python, SQLite/FTS5, git, the providers (keys set or not, never their values), their endpoints and state.",
    "replay": "Replay a trace of dsh/postExecute calls through a spawned sidecar and score the notes.",
    "bandit": "Look after the bandit's learned posteriors.",
    "bandit reset": "Forget what the bandit learned: delete its posteriors under $DSH_HOME (the prior Beta(1, 1) again).",
    "mcp": "Serve the sidecar's tools over MCP on stdio (needs the [mcp] extra).",
    "config": "Show the config every command here would use: each file read, and where each value came from.",
    "cache": "Look after the rebuildable indexes (workspace indexes, the offline docs index) in the cache directory.",
    "cache clean": "Remove every index in the cache directory (rebuilt when next needed); state under $DSH_HOME stays.",
    "cache prune": "Remove indexes that will not be used again: of deleted workspaces, unused for a while, or left in $DSH_HOME by older versions.",
}


@pytest.mark.parametrize("command", list(DESCRIPTIONS))
def test_every_command_help_has_a_description_an_example_and_the_environment(home: Path, command):
    rc, out, err = run([*command.split(), "--help"], relhome(home), home)
    assert (rc, err) == (0, "")
    text = " ".join(out.replace("│", " ").split())
    assert f"Usage: dsh-search {command} [OPTIONS]" in text
    assert DESCRIPTIONS[command] in text
    assert f"Example: dsh-search {command}" in text
    assert "Environment: " in text and ("DSH_HOME" in text or command == "config")
    assert "Exit codes: 0 ok, 1 failed" in text


#: Every help page of the CLI: the app, each command and group, each group's commands.
HELP_PAGES = ["", *DESCRIPTIONS, "completion", "cache dir", "cache index"]
#: Rows of the help as a reader meets them, in each command's order (the table's borders and
#: padding collapsed): a flag shows no value, a valued option one word, an argument its name.
HELP_ROWS = {
    "": ["--json Print one JSON", "--color WHEN Colour:", "--version -V Print the version", "--help -h Show this"],
    "query": [
        "Usage: dsh-search query [OPTIONS] QUERY ",
        "* QUERY What to search for. [required]",
        "--strategy -s STRATEGY auto (the bandit chooses)",
        "--max-results -n N How many sources to return, 1–50",
        "--deadline-ms MS Bound on the whole search, in ms (100–600000).",
        "--workspace -w DIR The project",
        "--local --no-local Fall back to the offline docs index",
        "--config -c FILE YAML/JSON file",
        "--json Print one JSON document",
        "--quiet -q Only the result",
        "--color WHEN Colour:",
    ],
    "replay": ["Usage: dsh-search replay [OPTIONS] [TRACE] ", "TRACE JSONL trace", "--suggester JSON Suggester knobs"],
    "completion": ["Usage: dsh-search completion [OPTIONS] SHELL ", "* SHELL bash, zsh or fish. [required]"],
    "suggest": ["* --tool -t NAME Tool name:", "* --input -i JSON Tool input"],
    "serve": ["--log-file FILE Append stderr", "--log-level LEVEL DEBUG, INFO", "--stdio Accepted and ignored"],
    "mcp": ["--workspace -w DIR The repository", "--config -c FILE", "--log-level LEVEL DEBUG"],
    "doctor": ["--timeout SECONDS Seconds to wait for each endpoint (at least 0.1).", "(the [mcp] extra)"],
    "cache prune": ["--max-age-days DAYS Remove indexes", "--dry-run Say what would be removed"],
    "bandit": ["--help -h Show this message and exit."],
}


@pytest.mark.parametrize("page", HELP_PAGES)
def test_help_names_values_as_ruff_uv_and_gh_do(home: Path, page: str):
    """No Python type on any parameter (``--json <bool>``, ``QUERY <str>``, ``-n <int>``), no
    range in the type column, no braces around a required argument (``{QUERY}``)."""
    rc, out, err = run([*page.split(), "--help"], relhome(home), home)
    assert (rc, err) == (0, "")
    text = " ".join(out.replace("│", " ").split())
    assert re.findall(r"<(?:bool|str|int|float|path|[a-z ]+range)>", text) == []
    assert re.findall(r"\{[A-Z_]+\}|\[[0-9.]*<=?x", text) == []
    assert "--help -h Show this message and exit." in text
    rows = HELP_ROWS.get(page, [])
    positions = [text.find(row) for row in rows]
    assert -1 not in positions, [row for row, at in zip(rows, positions) if at == -1]
    assert positions == sorted(positions)


def test_mcp_takes_the_flags_every_command_takes(home: Path, workspace: Path):
    """One CLI: ``mcp`` is a Typer command with ``-w``/``-c``/``--log-level`` (argparse refused
    ``-w`` and ``-c``); a bad flag or folder is the usual one-line usage error, exit 2."""
    rc, out, _ = run(["mcp", "--help"], relhome(home), home)
    text = " ".join(out.replace("│", " ").split())
    assert rc == 0 and "Usage: dsh-search mcp [OPTIONS]" in text
    for flag in ("--workspace -w", "--config -c", "--log-level"):
        assert flag in text
    rc, out, err = run(["mcp", "-w", str(home / "nope")], relhome(home), home)
    assert (rc, out) == (2, "") and err == f"dsh-search: --workspace {home / 'nope'} is not a folder\n"
    rc, out, err = run(["mcp", "--bogus"], relhome(home), home)
    assert (rc, out, err) == (2, "", "dsh-search: unknown option '--bogus'\n")


def test_version_short_flag_and_completion_scripts(home: Path):
    from dsh_sidecar import __version__

    assert run(["-V"], relhome(home), home) == (0, f"dsh-search {__version__}\n", "")
    for shell, marker in (
        ("bash", "complete -o"),
        ("zsh", "#compdef dsh-search"),
        ("fish", "complete --command dsh-search"),
    ):
        rc, out, err = run(["completion", shell], relhome(home), home)
        assert (rc, err) == (0, "") and marker in out and "_DSH_SEARCH_COMPLETE" in out, shell
    rc, out, err = run(["completion", "tcsh"], relhome(home), home)
    assert (rc, out) == (2, "") and err == "dsh-search: 'SHELL' must be one of bash, zsh, fish, got 'tcsh'\n"


@pytest.mark.parametrize(
    ("words", "cword", "expected"),
    [("dsh-search qu", "1", ["query"]), ("dsh-search query --str", "2", ["--strategy"]),
     ("dsh-search cache ", "2", ["dir", "clean", "prune", "index"])],
)  # fmt: skip
def test_completion_answers_the_shell(home: Path, words: str, cword: str, expected: list[str]):
    """What the bash script asks: the program run with the completion variables answers with
    the candidates, one per line (it must not start serving on the empty command line)."""
    env = {**relhome(home), "_DSH_SEARCH_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": cword}
    rc, out, err = run([], env, home)
    assert (rc, out.split(), err) == (0, expected, "")


def test_bare_command_on_a_terminal_prints_the_help_and_on_a_pipe_serves(home: Path):
    env = relhome(home)
    master, slave = os.openpty()
    proc = subprocess.Popen(cli(), env=env, cwd=home, stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.close(slave)
    try:
        out, err = proc.communicate(timeout=RUN_TIMEOUT_S)
    finally:
        os.close(master)
    text = " ".join(out.decode().replace("│", " ").split())
    assert proc.returncode == 0 and "Usage: dsh-search [OPTIONS] COMMAND [ARGS]..." in text and err == b""
    # stdin a pipe: the JSON-RPC server (what a harness spawns), which ends at EOF
    p = subprocess.run(cli(), env=env, cwd=home, input=b"", capture_output=True, timeout=RUN_TIMEOUT_S)
    assert p.returncode == 0 and p.stdout == b""


def test_version(home: Path):
    from dsh_sidecar import __version__

    assert run(["--version"], relhome(home), home) == (0, f"dsh-search {__version__}\n", "")


def _run_stderr_tty(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str, str]:
    """Run the CLI with stderr on a pseudo-terminal (where the progress goes) and stdout a pipe."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    proc = subprocess.Popen(
        cli() + args, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    out = proc.stdout.read().decode() if proc.stdout else ""
    return proc.wait(timeout=120), out, b"".join(chunks).decode()


def test_a_slow_search_shows_a_spinner_on_a_terminal_stderr_and_clears_it(home: Path):
    from support.mockprovider import Reply

    mock = MockProvider()
    reply, _ = case_reply("searxng", "ok", check=False)
    # slow enough to be a search a user waits for (Rich draws the spinner when it starts)
    mock.route("GET", "/search", Reply(reply.status, reply.headers, reply.body, delay_s=0.5))
    try:
        env = relhome(home, {"SEARXNG_BASE_URL": mock.url})
        rc, out, err = _run_stderr_tty(["query", "slow", "-s", "quick"], env, home)
        assert rc == 0 and out.startswith("quick · 5 sources · ")
        assert "Searching (quick)…" in err  # the spinner's line
        assert "\x1b[?25h" in err  # the cursor is given back
        assert err.endswith("\x1b[1A\x1b[2K")  # transient: its line is erased, nothing is left
        rc, out, err = _run_stderr_tty(["query", "slow", "-s", "quick", "--quiet"], env, home)
        assert rc == 0 and out.startswith("quick · 5 sources · ")
        assert err == ""
    finally:
        mock.close()


def test_hostile_titles_reach_no_terminal_as_escapes_or_markup(home: Path):
    """A provider's title with an OSC window-title sequence, a cursor move and Rich markup."""

    hostile = "\x1b]0;pwned\x07Real\x1b[2J title [bold red]not markup[/] \u202egnp\u2069.\u2066exe\u202c"
    body = {
        "query": "x",
        "results": [
            {"url": "https://example.com/a", "title": hostile, "content": "snip\x1b[31mpet\rline", "engine": "e"}
        ],
    }
    with searxng_answering(body) as mock:
        env = relhome(home, {"SEARXNG_BASE_URL": mock.url})
        for tty in (False, True):
            rc, out, err = run(["query", "x", "-s", "quick"], env, home, tty=tty)
            assert rc == 0, err
            visible = SGR.sub("", out)
            assert "pwned" not in out and "[2J" not in out
            assert "\x1b]0;" not in out and "\x1b[2J" not in out and "\r" not in out.replace("\r\n", "\n")
            assert "Real title [bold red]not markup[/] gnp.exe" in visible  # bidi controls dropped
            assert not set(out) & {chr(c) for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A))}
            assert "snippet line" in visible  # the colour code dropped, the CR a space
        rc, out, _ = run(["query", "x", "-s", "quick", "--json"], env, home)
        assert json.loads(out)["sources"][0]["title"] == hostile  # --json keeps the data as it came


def test_a_failed_search_reports_provider_text_without_its_escapes(home: Path):
    """The router's aggregated error quotes the provider (SearXNG's unresponsive engines): its
    escape sequences and bidi controls never reach the terminal, in a pipe or on one."""

    evil = "\x1b]0;PWNED\x07\x1b[31mRED\u202eRLO\u2066ISO\x1b[2J"
    body = {"query": "x", "results": [], "unresponsive_engines": [[evil, evil]]}
    with searxng_answering(body) as mock:
        env = relhome(home, {"SEARXNG_BASE_URL": mock.url})
        for tty in (False, True):
            rc, out, err = run(["query", "x", "-s", "quick", "--no-local"], env, home, tty=tty)
            shown = err + out  # on a pseudo-terminal both streams arrive together
            assert rc == 1, (out, err)
            assert "REDRLOISO" in shown  # the text is reported, its controls are not
            assert "\x1b]0;" not in shown and "\x1b[31m" not in shown and "\x1b[2J" not in shown
            assert "\u202e" not in shown and "\u2066" not in shown


def test_lone_surrogates_from_a_provider_become_replacement_characters(home: Path):
    """JSON may escape a lone surrogate (``"\\ud800"``); no UTF-8 writer takes one: the search
    is answered (exit 0) in a pipe, on a terminal and with --json, each lone one as U+FFFD."""

    body = (
        b'{"query":"x","results":[{"url":"https://ex.com/a\\ud800b","title":"T\\ud800x\\udfff",'
        b'"content":"S\\udc00 lone","engine":"x"}],"unresponsive_engines":[]}'
    )
    with searxng_answering(body) as mock:
        env = relhome(home, {"SEARXNG_BASE_URL": mock.url})
        for tty in (False, True):
            rc, out, err = run(["query", "x", "-s", "quick"], env, home, tty=tty)
            assert rc == 0, err
            assert "T\ufffdx\ufffd" in SGR.sub("", out)
        rc, out, err = run(["query", "x", "-s", "quick", "--json"], env, home)
        assert rc == 0, err
        source = json.loads(out)["sources"][0]
        assert (source["title"], source["snippet"], source["url"]) == (
            "T\ufffdx\ufffd",
            "S\ufffd lone",
            "https://ex.com/a\ufffdb",
        )


def test_json_stays_valid_json_on_a_stream_that_is_not_utf8(home: Path):
    """PYTHONIOENCODING=ascii (or a C locale): --json escapes non-ASCII as \\uXXXX instead of
    writing Python escapes into the document."""

    body = {
        "query": "x",
        "results": [{"url": "https://ex.com/c", "title": "café \u00ad tag\U000e0041", "content": "ü"}],
    }
    with searxng_answering(body) as mock:
        env = relhome(home, {"SEARXNG_BASE_URL": mock.url, "PYTHONIOENCODING": "ascii"})
        rc, out, err = run(["query", "x", "-s", "quick", "--json"], env, home)
        assert rc == 0, err
        assert out.isascii()
        assert json.loads(out)["sources"][0]["title"] == "café \u00ad tag\U000e0041"


def _searxng_with(n: int) -> MockProvider:
    from support.providerbodies import answer

    mock = MockProvider()
    rows = [{"url": f"https://ex.example/{i}", "title": f"Result {i}", "snippet": "s"} for i in range(n)]
    mock.route("GET", "/search", answer("searxng", rows))
    return mock


def test_max_results_means_give_me_n_up_to_the_documented_maximum(home: Path):
    """``-n 8`` returns 8 where the quick arm's cap (5) used to win silently; asking for more
    than the providers have says how many came and who had no more; past 50 is a usage error."""
    mock = _searxng_with(8)
    env = relhome(home, {"SEARXNG_BASE_URL": mock.url})
    try:
        rc, out, err = run(["query", "bike", "-s", "quick", "-n", "8", "--json"], env, home)
        assert (rc, err) == (0, "") and len(json.loads(out)["sources"]) == 8
        rc, out, err = run(["query", "bike", "-s", "thorough", "-n", "12"], env, home)
        assert rc == 0 and out.startswith("thorough · 8 sources")
        assert err == "8 of the 12 sources asked for: searxng had no more\n"
        rc, out, err = run(["query", "bike", "-n", "51"], env, home)
        assert (rc, out, err) == (2, "", "dsh-search: '-n' / '--max-results' must be at most 50, got '51'\n")
    finally:
        mock.close()


def test_color_always_never_and_auto(home: Path):
    """``--color always`` renders for a terminal in a pipe (colour escapes included), ``never``
    keeps a terminal plain of colour, ``auto`` is the terminal/pipe rule; a bad value is exit 2."""
    env = relhome(home)
    rc, piped, _ = run(["status", "--color", "always"], env, home)
    assert rc == 0 and "\x1b[" in piped
    rc, plain, _ = run(["status"], env, home)
    assert rc == 0 and "\x1b[" not in plain
    rc, tty_never, _ = run(["--color", "never", "status"], env, home, tty=True)
    assert rc == 0 and "\x1b[3" not in tty_never and "\x1b[9" not in tty_never  # no foreground colour
    rc, tty_auto, _ = run(["status"], env, home, tty=True)
    assert "\x1b[3" in tty_auto or "\x1b[9" in tty_auto
    rc, out, err = run(["status", "--color", "sometimes"], env, home)
    assert (rc, out) == (2, "") and err == "dsh-search: '--color' must be one of auto, always, never, got 'sometimes'\n"
    rc, out, err = run(["--color", "sometimes", "status", "--json"], env, home)
    assert (rc, json.loads(out)["error"]["data"]) == (2, {"flag": "--color"})
