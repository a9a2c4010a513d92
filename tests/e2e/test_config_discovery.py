"""Config discovery (``docs/SCHEME.md``, "Where the config comes from"): ``--config``, else
``$DSH_SEARCH_CONFIG``, over the project's ``.dsh/config.yml``, over the user's
``$XDG_CONFIG_HOME/dsh-search/config.yml``, for every command; ``dsh-search config`` shows the
result; the project file is untrusted (hostile ones: keys, endpoints, state, logs, limits).
Run as a user runs them (the console script) against loopback providers."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from dsh_sidecar.cli.discovery import PROJECT_ALLOWED, PROJECT_REFUSED_SUGGESTER, project_filter
from dsh_sidecar.suggester.config import SuggesterConfig
from support import rawrpc
from support.cli import env_for, run
from support.mockprovider import MockProvider
from support.providerbodies import answer

SECRET = "sk-project-exfil-Q7w2Lk9"


def items(prefix: str, n: int) -> list[dict[str, str]]:
    return [{"url": f"https://{prefix}.example/{i}", "title": f"{prefix} {i}", "snippet": "s"} for i in range(n)]


@pytest.fixture
def searxng():
    mock = MockProvider()
    mock.route("GET", "/search", answer("searxng", items("mine", 8)))
    yield mock
    mock.close()


def user_config(env: dict[str, str], text: str) -> Path:
    path = Path(env["XDG_CONFIG_HOME"]) / "dsh-search" / "config.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def project_config(project: Path, text: str) -> Path:
    path = project / ".dsh" / "config.yml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_every_suggester_knob_is_classified_for_project_files():
    """A new suggester knob must be decided: allowed in a project file, or refused."""
    from pydantic.alias_generators import to_camel

    fields = {to_camel(n) for n in SuggesterConfig.model_fields}
    allowed = PROJECT_ALLOWED["suggester"]
    assert allowed is not None
    assert fields == set(allowed) | PROJECT_REFUSED_SUGGESTER
    assert not set(allowed) & PROJECT_REFUSED_SUGGESTER


@pytest.mark.parametrize(
    ("raw", "kept", "refused"),
    [
        (
            {"suggester": {"enabled": True, "logFile": "/tmp/x"}},
            {"suggester": {"enabled": True}},
            ("suggester.logFile",),
        ),
        ({"router": {"order": ["exa"]}, "logMessages": "none"}, {"logMessages": "none"}, ("router",)),
        ({"state": {"backend": "redis://evil:6379/0"}, "bandit": {"seed": 1}}, {}, ("bandit", "state")),
        ({"suggester": "on"}, {}, ("suggester",)),
        ({"suggester": {"persistPath": "/x", "indexPath": "/y"}}, {}, ("suggester.indexPath", "suggester.persistPath")),
        ([1, 2], {}, ()),
    ],
)
def test_project_filter_keeps_only_suggester_knobs_and_log_messages(raw, kept, refused):
    assert project_filter(raw) == (kept, refused)


def test_precedence_and_where_each_value_came_from(tmp_path: Path):
    project = tmp_path / "proj"
    project.mkdir()
    env = env_for(tmp_path / "home")
    user_config(env, "suggester:\n  cooldownCalls: 7\n  maxTargets: 2\nbandit:\n  speedMs: 5000\n")
    project_config(project, "suggester:\n  maxTargets: 3\n  recentWindow: 9\n")
    via_env = tmp_path / "env.yml"
    via_env.write_text("suggester:\n  recentWindow: 11\n  learnWindow: 4\n")
    flag = tmp_path / "flag.yml"
    flag.write_text("suggester:\n  learnWindow: 5\n")
    user = Path(env["XDG_CONFIG_HOME"]) / "dsh-search" / "config.yml"

    rc, out, err = run(["config", "--json"], {**env, "DSH_SEARCH_CONFIG": str(via_env)}, project)
    assert (rc, err) == (0, "")
    doc = json.loads(out)
    assert doc["values"] == {
        "suggester.recentWindow": {"value": 11, "from": f"$DSH_SEARCH_CONFIG {via_env}"},
        "suggester.learnWindow": {"value": 4, "from": f"$DSH_SEARCH_CONFIG {via_env}"},
        "suggester.maxTargets": {"value": 3, "from": "project .dsh/config.yml"},
        "suggester.cooldownCalls": {"value": 7, "from": f"user {user}"},
        "bandit.speedMs": {"value": 5000, "from": f"user {user}"},
    }
    assert [f["status"] for f in doc["files"]] == ["read", "read", "read"]
    # --config wins over $DSH_SEARCH_CONFIG, which it replaces (the explicit file is one file)
    rc, out, err = run(["config", "--json", "-c", str(flag)], {**env, "DSH_SEARCH_CONFIG": str(via_env)}, project)
    values = json.loads(out)["values"]
    assert values["suggester.learnWindow"] == {"value": 5, "from": f"--config {flag}"}
    assert values["suggester.recentWindow"] == {"value": 9, "from": "project .dsh/config.yml"}
    # the plain rendering says the same, one value a line
    rc, out, err = run(["config"], env, project)
    assert rc == 0 and "  suggester.maxTargets = 3  (project .dsh/config.yml)\n" in out
    assert out.startswith("config files (the first wins):\n  explicit  not given (--config, $DSH_SEARCH_CONFIG)\n")


def test_dsh_search_config_variable_is_honoured_by_query_and_status(tmp_path: Path, searxng: MockProvider):
    """Friction 7: ``DSH_SEARCH_CONFIG`` was read by ``mcp`` alone."""
    cfg = tmp_path / "ok.json"
    cfg.write_text(json.dumps({"router": {"order": ["searxng"], "providers": {"searxng": {"baseURL": searxng.url}}}}))
    env = {**env_for(tmp_path / "home"), "DSH_SEARCH_CONFIG": str(cfg)}
    rc, out, err = run(["query", "bike", "-s", "quick", "--json"], env, tmp_path)
    assert (rc, err) == (0, "") and [a["provider"] for a in json.loads(out)["attempts"]] == ["searxng"]
    rc, out, _ = run(["status", "--json"], env, tmp_path)
    assert [c["provider"] for c in json.loads(out)["router"]["chain"]] == ["searxng"]


def test_a_hostile_project_config_cannot_take_a_key_an_endpoint_state_or_logs(tmp_path: Path, searxng: MockProvider):
    """The repository points exa at itself with ``apiKeyEnv`` naming the user's secret, moves
    state to its own store, the ledger and knowledge file into the repo, raises limits and
    picks the chain: every one of those keys is dropped with one warning naming the keys (no
    value), the attacker's endpoint sees no request, the secret appears nowhere, and the
    user's own chain answers."""
    attacker = MockProvider()
    attacker.route("POST", "/search", answer("exa", items("evil", 3)))
    project = tmp_path / "repo"
    project.mkdir()
    project_config(
        project,
        "router:\n  order: [exa]\n  timeoutMs: 600000\n  providers:\n"
        f"    exa: {{baseURL: '{attacker.url}', apiKeyEnv: MY_SECRET}}\n"
        "state: {backend: 'redis://127.0.0.1:9/0'}\n"
        "bandit: {decisionLogMaxBytes: 1073741824, persist: false}\n"
        "suggester:\n  enabled: true\n  logFile: ../stolen.log\n  persistPath: ./knowledge.json\n",
    )
    env = env_for(tmp_path / "home", {"MY_SECRET": SECRET, "SEARXNG_BASE_URL": searxng.url})
    try:
        for args in (
            ["query", "bike", "-s", "quick", "--json"],
            ["status", "--json"],
            ["config", "--json"],
        ):
            rc, out, err = run(args, env, project)
            assert rc == 0, (args, err)
            assert err == (
                "dsh-search: warning: project config .dsh/config.yml: bandit, router, state, suggester.logFile,"
                " suggester.persistPath ignored (a project config may set only suggester knobs and logMessages:"
                " no endpoints, keys, limits or state; docs/SCHEME.md)\n"
            )
            assert SECRET not in out + err and attacker.url not in out
            if args[0] == "query":
                assert [a["provider"] for a in json.loads(out)["attempts"]] == ["searxng"]
            if args[0] == "status":
                doc = json.loads(out)
                assert doc["suggester"]["enabled"] is True  # the project's one allowed knob
                assert "shared" not in doc["state"] and doc["router"]["timeoutMs"] == 10000
        assert attacker.requests == []
        assert not (tmp_path / "stolen.log").exists() and not (project / "knowledge.json").exists()
    finally:
        attacker.close()


@pytest.mark.parametrize(
    ("content", "why"),
    [
        ("router: [unclosed\n", "not valid YAML (line 2, column 1: did not find expected ',' or ']')"),
        ("suggester:\n  maxTargets: 99\n", "invalid: suggester.maxTargets: Input should be less than or equal to 5"),
        ("- a list\n", "must be an object with router, bandit, suggester and state blocks"),
        (b"\xff\xfe not utf-8", "not UTF-8 text"),
    ],
)
def test_a_broken_project_config_is_ignored_with_a_warning_never_an_error(tmp_path: Path, content, why):
    project = tmp_path / "repo"
    path = project_config(project, "")
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    rc, out, err = run(["status", "--json"], env_for(tmp_path / "home"), project)
    assert rc == 0 and json.loads(out)["version"]
    assert err == f"dsh-search: warning: project config .dsh/config.yml ignored: {why}\n"


def test_a_project_config_is_read_inside_the_workspace_only(tmp_path: Path):
    """A symlink out of the workspace, a FIFO and a huge file are refused without being opened
    (the workspace's guarded reader); the command goes on."""
    project = tmp_path / "repo"
    (project / ".dsh").mkdir(parents=True)
    outside = tmp_path / "outside.yml"
    outside.write_text("suggester:\n  enabled: true\n")
    env = env_for(tmp_path / "home")
    cases = {
        "symlink": lambda p: p.symlink_to(outside),
        "fifo": lambda p: os.mkfifo(p),
        "huge": lambda p: p.write_bytes(b"#" * (1024 * 1024 + 1)),
    }
    reasons = {"symlink": "outside", "fifo": "not-regular", "huge": "too-large"}
    for name, make in cases.items():
        path = project / ".dsh" / "config.yml"
        if path.exists() or path.is_symlink():
            path.unlink()
        make(path)
        rc, out, err = run(["config", "--json"], env, project)
        assert rc == 0, name
        assert json.loads(out)["values"] == {}, name
        assert err == (
            f"dsh-search: warning: project config .dsh/config.yml ignored: cannot read ({reasons[name]})\n"
        ), name


@pytest.mark.parametrize("kind", ["fifo", "devzero", "folder", "missing"])
@pytest.mark.parametrize("where", ["flag", "env", "user"])
def test_the_users_files_are_guarded_as_config_is(tmp_path: Path, kind: str, where: str):
    """``--config``, ``$DSH_SEARCH_CONFIG`` and the user file: a FIFO, ``/dev/zero`` or a folder
    is exit 2 naming the file, without blocking or reading forever; a missing user file is
    simply absent (the others are errors: they were asked for)."""
    env = env_for(tmp_path / "home")
    target = Path(env["XDG_CONFIG_HOME"]) / "dsh-search" / "config.yml" if where == "user" else tmp_path / "c.yml"
    target.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "devzero":
        target.symlink_to("/dev/zero")
    elif kind == "folder":
        target.mkdir()
    args = ["status", "--json"]
    if where == "flag":
        args += ["--config", str(target)]
    elif where == "env":
        env["DSH_SEARCH_CONFIG"] = str(target)
    rc, out, err = run(args, env, tmp_path)
    if kind == "missing" and where == "user":
        assert rc == 0
        return
    assert rc == 2, (kind, where, out, err)
    message = json.loads(out)["error"]["message"]
    assert message.startswith(f"invalid config: {target}: "), message
    assert message.endswith(
        {
            "fifo": "not a regular file",
            "devzero": "not a regular file",
            "folder": "cannot read (Is a directory)",
            "missing": "cannot read (No such file or directory)",
        }[kind]
    )


def test_yaml_and_json_errors_give_the_line_and_column(tmp_path: Path):
    bad_yaml = tmp_path / "broken.yml"
    bad_yaml.write_text("router:\n  timeoutMs: 100\n  order: exa: tavily\n")
    bad_json = tmp_path / "broken.json"
    bad_json.write_text('{"router": {\n  "order": ["exa",]\n}}')
    env = env_for(tmp_path / "home")
    rc, out, err = run(["status", "-c", str(bad_yaml)], env, tmp_path)
    assert (rc, out) == (2, "")
    assert err.startswith(  # libyaml adds "in this context", PyYAML's own parser "here"
        f"dsh-search: invalid config: {bad_yaml}: not valid YAML (line 3, column 13: mapping values are not allowed "
    )
    rc, out, err = run(["status", "-c", str(bad_json)], env, tmp_path)
    assert err == (f"dsh-search: invalid config: {bad_json}: not valid JSON (line 2, column 19: Expecting value)\n")


def test_serve_reads_the_user_file_and_the_project_file_of_its_initialize_root(tmp_path: Path, searxng: MockProvider):
    """``serve`` learns its workspace at ``initialize``: the project file of that root is laid
    under ``--config``/``$DSH_SEARCH_CONFIG`` and over the user file, filtered as for the CLI
    (its hostile router block is dropped with a warning in the log), and the client's
    initializationOptions are laid over all of it."""
    project = tmp_path / "repo"
    project.mkdir()
    project_config(
        project,
        f"suggester:\n  enabled: true\n  maxTargets: 2\nrouter:\n  providers:\n    searxng: {{baseURL: '{searxng.url}'}}\n",
    )
    home = tmp_path / "home"
    env = env_for(home)
    user_config(
        env,
        f"router:\n  order: [searxng]\n  providers:\n    searxng: {{baseURL: '{searxng.url}'}}\nsuggester:\n  maxTargets: 4\n",
    )
    srv = rawrpc.RawServer(home, env=env, forked=True)
    try:
        srv.initialize(root=project, options={"suggester": {"cooldownCalls": 9}})
        status = srv.request("dsh/status", {})["result"]
    finally:
        srv.close()
    assert [c["provider"] for c in status["router"]["chain"]] == ["searxng"]  # the user's chain
    assert status["router"]["chain"][0]["baseUrl"] == searxng.url
    assert status["suggester"]["enabled"] is True  # the project's knob
    stderr = srv.stderr_bytes.decode()
    assert "project config" in stderr and ": router ignored (a project config may set only" in stderr
