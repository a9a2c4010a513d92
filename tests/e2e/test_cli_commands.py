"""``dsh-search doctor``, ``bandit reset`` and ``serve --config/--log-file``, run as a user runs
them (the console script in a subprocess) against loopback endpoints."""

from __future__ import annotations

import base64
import json
import socket
from pathlib import Path

import pytest
from support import rawrpc
from support.cli import cli, env_for, run
from support.mockprovider import MockProvider, case_reply

SECRET = "sk-doctor-Zq8v3LmN0pX"
PASSWORD = "hunter2-Rb7w"


def _dead_port() -> int:
    """A loopback port nobody listens on (bound, then closed)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def forms_of(secret: str) -> list[str]:
    """A secret and the forms it could leak in: halves, base64, reversed."""
    n = len(secret) // 2
    return [secret, secret[:n], secret[n:], base64.b64encode(secret.encode()).decode(), secret[::-1]]


def test_doctor_without_providers_offline(tmp_path: Path):
    env = env_for(tmp_path / "home")
    rc, out, err = run(["doctor", "--offline", "--json"], env, tmp_path)
    assert (rc, err) == (0, "")
    report = json.loads(out)
    by = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is True
    assert by["python"]["status"] == "ok"
    assert by["sqlite"]["data"]["fts5"] is True
    assert by["provider duckduckgo"]["data"] == {
        "provider": "duckduckgo",
        "inChain": True,
        "position": 1,
        "endpoint": "https://html.duckduckgo.com",
        "keyVariable": None,
        "keySet": False,
    }
    for pid, var in (("exa", "EXA_API_KEY"), ("tavily", "TAVILY_API_KEY"), ("brave", "BRAVE_SEARCH_API_KEY")):
        assert by[f"provider {pid}"]["status"] == "skip"
        assert by[f"provider {pid}"]["data"]["keyVariable"] == var
        assert by[f"provider {pid}"]["data"]["keySet"] is False
    assert by["endpoint duckduckgo"] == {
        "name": "endpoint duckduckgo",
        "status": "skip",
        "detail": "not probed (--offline)",
        "data": {},
    }
    assert by["state"]["detail"] == f"{tmp_path / 'home'} (DSH_HOME): not created yet"
    rc, out, _ = run(["doctor", "--offline"], env, tmp_path)
    assert rc == 0
    assert "[skip] provider exa: not configured (no API key: set EXA_API_KEY or providers.exa.apiKey)\n" in out
    assert out.endswith("\nready\n")


def test_doctor_and_status_show_a_provider_skipped_for_a_malformed_setting(tmp_path: Path):
    """A malformed SEARXNG_BASE_URL (with a password in it) is SearXNG's warning, naming the
    variable and why, never the value; DuckDuckGo stays the chain, as the servers have it."""
    env = env_for(tmp_path / "home", {"SEARXNG_BASE_URL": "http://admin:hunter22@"})
    why = "skipped: invalid config ($SEARXNG_BASE_URL: must be an absolute http:// or https:// URL)"
    rc, out, err = run(["doctor", "--offline", "--json"], env, tmp_path)
    assert (rc, err) == (0, "")
    report = json.loads(out)
    by = {c["name"]: c for c in report["checks"]}
    assert report["ok"] is True and report["summary"] == "ready, with 1 warning: provider searxng"
    assert (by["provider searxng"]["status"], by["provider searxng"]["detail"]) == ("warn", why)
    assert by["provider duckduckgo"]["data"]["position"] == 1
    rc, out, err = run(["status"], env, tmp_path)
    assert rc == 0
    assert f"  -  searxng     {why}\n" in out
    assert f"router: provider searxng {why}" in err
    assert "hunter22" not in out + err


def test_doctor_searches_once_per_provider_and_tells_what_is_wrong(tmp_path: Path):
    """One real search per chain provider against loopback fakes in each provider's wire format
    (the fixtures' replies): exa's key refused (401) fails naming EXA_API_KEY, a SearXNG without
    its JSON format (403) fails with the settings.yml fix, tavily answers, brave is unreachable
    (a warning: others search); keys and passwords never appear in the report."""
    home = tmp_path / "home"
    (home / "bandit").mkdir(parents=True)
    (home / "bandit" / "posteriors.json").write_text("x" * 2048)
    up = MockProvider()
    exa_auth, _ = case_reply("exa", "auth-key-echo", check=False)
    up.route("POST", "/search", exa_auth)
    searx_403, _ = case_reply("searxng", "json-disabled", check=False)
    up.route("GET", "/searx/search", searx_403)
    tavily = MockProvider()
    tavily_ok, _ = case_reply("tavily", "ok", check=False)
    tavily.route("POST", "/search", tavily_ok)
    try:
        cfg = tmp_path / "cfg.yml"
        cfg.write_text(
            "router:\n  order: [exa, tavily, searxng, brave]\n  providers:\n"
            f"    exa:\n      baseURL: {up.url}\n"
            f"    tavily:\n      baseURL: {tavily.url}\n"
            f"    brave:\n      baseURL: http://127.0.0.1:{_dead_port()}\n"
        )
        env = env_for(
            home,
            {
                "EXA_API_KEY": SECRET,
                "TAVILY_API_KEY": SECRET + "t",
                "BRAVE_SEARCH_API_KEY": SECRET + "b",
                "SEARXNG_BASE_URL": f"http://admin:{PASSWORD}@127.0.0.1:{up.server.server_address[1]}/searx",
            },
        )
        rc, out, err = run(["doctor", "--config", str(cfg), "--timeout", "5", "--json"], env, tmp_path)
        rc_plain, plain, err_plain = run(["doctor", "--config", str(cfg), "--timeout", "5"], env, tmp_path)
    finally:
        up.close()
        tavily.close()
    for text in (out, err, plain, err_plain):
        for form in forms_of(SECRET) + forms_of(PASSWORD) + [f"admin:{PASSWORD}"]:
            assert form not in text
    assert rc == 1 and rc_plain == 1
    report = json.loads(out)
    by = {c["name"]: c for c in report["checks"]}
    assert by["config"]["status"] == "ok"
    assert by["provider exa"]["data"]["keyVariable"] == "EXA_API_KEY" and by["provider exa"]["data"]["keySet"] is True
    assert by["provider searxng"]["data"]["endpoint"] == f"{up.url}/searx"  # credentials stripped
    assert by["provider tavily"]["data"]["position"] == 2
    assert by["provider perplexity"]["detail"] == "not in the configured chain"
    assert by["endpoint exa"]["status"] == "fail" and by["endpoint exa"]["data"]["failure"] == "auth"
    assert by["endpoint exa"]["data"]["fix"] == (
        "the provider refused the key: check EXA_API_KEY (a revoked, mistyped or unpaid key)"
    )
    assert by["endpoint searxng"]["status"] == "fail"
    assert by["endpoint searxng"]["detail"] == (
        f"{up.url}/searx: HTTP 403 (is `json` enabled in search.formats of the instance's settings.yml?)"
        " — fix: enable the JSON format: add json to search.formats in the instance's settings.yml"
    )
    assert by["endpoint tavily"]["status"] == "ok" and by["endpoint tavily"]["data"]["searches"] is True
    assert by["endpoint tavily"]["detail"].startswith(f"{tavily.url} answers searches (HTTP 200, 1 result, ")
    assert by["endpoint brave"]["status"] == "warn"
    assert by["endpoint brave"]["detail"].endswith(
        "network error: connection failed — fix: check the base URL and that this machine reaches it"
    )
    assert by["state"]["data"]["parts"] == {"bandit": 2048}
    assert report["summary"] == "2 checks failed: endpoint exa, endpoint searxng"
    assert "[  ok] provider exa: chain #1, " + up.url + ", key EXA_API_KEY set\n" in plain
    assert "[FAIL] endpoint exa: " in plain and plain.endswith("\n2 checks failed: endpoint exa, endpoint searxng\n")


def test_doctor_fails_on_a_home_or_cache_it_cannot_write(tmp_path: Path):
    """Review, broken 6: an unwritable DSH_HOME looked like "no answer"; doctor now fails on it
    (and on a cache directory it cannot write), each with the fix."""
    env = env_for(tmp_path / "home", {"DSH_HOME": "/proc/nope", "DSH_CACHE_DIR": "/proc/nope-cache"})
    rc, out, err = run(["doctor", "--offline", "--json"], env, tmp_path)
    assert rc == 1 and err == ""
    by = {c["name"]: c for c in json.loads(out)["checks"]}
    assert by["state"]["status"] == "fail"
    assert by["state"]["detail"] == (
        "/proc/nope (DSH_HOME) cannot be created (/proc: No such file or directory) — fix: make it writable,"
        " or set DSH_HOME to a writable folder"
    )
    assert by["cache"]["status"] == "fail" and by["cache"]["data"]["fix"].startswith(
        "make it writable, or set DSH_CACHE_DIR"
    )


def test_doctor_checks_the_mcp_extra_and_names_the_install_that_fits(monkeypatch, tmp_path: Path):
    """Without the SDK: a warning (a failure with --mcp, or under the Claude Code plugin) whose
    fix is the command for this installation (here a virtual environment's pip)."""
    import dsh_sidecar.mcp as front
    from dsh_sidecar.cli.doctor import check_extras
    from dsh_sidecar.cli.installs import extra_hint
    from dsh_sidecar.config import parse_config

    cfg = parse_config(None)
    assert check_extras(cfg, need_mcp=True)[0]["status"] == "ok"  # this venv has it
    monkeypatch.setattr(front, "sdk_installed", lambda: False)
    (warn,) = check_extras(cfg, need_mcp=False)
    (fail,) = check_extras(cfg, need_mcp=True)
    assert (warn["status"], fail["status"]) == ("warn", "fail")
    assert fail["data"]["fix"] == extra_hint("mcp") and "-m pip install" in fail["data"]["fix"]
    assert fail["detail"].startswith(
        "not installed: dsh-search mcp (Claude Code, Codex, Cursor, Continue) will not start"
    )


def test_doctor_fails_when_no_endpoint_answers(tmp_path: Path):
    cfg = tmp_path / "cfg.yml"
    cfg.write_text(
        f"router:\n  provider: searxng\n  providers:\n    searxng:\n      baseUrl: http://127.0.0.1:{_dead_port()}\n"
    )
    rc, out, err = run(["doctor", "--config", str(cfg), "--timeout", "1"], env_for(tmp_path / "home"), tmp_path)
    assert rc == 1 and err == ""
    assert out.endswith("\n1 check failed: endpoint searxng\n")
    assert "[FAIL] endpoint searxng: http://127.0.0.1:" in out and ": network error: connection failed — fix: " in out


#: A ``sitecustomize`` (imported by ``site`` from ``PYTHONPATH``) that makes the import of anyio's
#: asyncio backend take 1.5 s, as a loaded machine's does: httpcore imports it on the first
#: exchange, and doctor's ``--timeout 1`` covered it, so a refused connection read as a timeout.
SLOW_BACKEND = """
import sys, time

class Slow:
    def find_spec(self, name, path=None, target=None):
        if name == "anyio._backends._asyncio":
            sys.meta_path.remove(self)
            time.sleep(1.5)
        return None

sys.meta_path.insert(0, Slow())
"""


def test_doctor_s_timeout_bounds_the_exchange_not_its_set_up(tmp_path: Path):
    """The same dead endpoint, with the first exchange's import as slow as under load: the probe
    still says what the endpoint did (the set-up is done before its timeout starts)."""
    gate = tmp_path / "gate"
    gate.mkdir()
    (gate / "sitecustomize.py").write_text(SLOW_BACKEND)
    cfg = tmp_path / "cfg.yml"
    cfg.write_text(
        f"router:\n  provider: searxng\n  providers:\n    searxng:\n      baseUrl: http://127.0.0.1:{_dead_port()}\n"
    )
    env = env_for(tmp_path / "home", {"PYTHONPATH": str(gate)})
    rc, out, err = run(["doctor", "--config", str(cfg), "--timeout", "1"], env, tmp_path, spawn=True)
    assert rc == 1 and err == ""
    assert ": network error: connection failed — fix: " in out
    assert out.endswith("\n1 check failed: endpoint searxng\n")


def _posteriors(home: Path) -> None:
    from dsh_sidecar.bandit.context import CLASSES
    from dsh_sidecar.bandit.policy import ContextualPolicy
    from dsh_sidecar.bandit.store import PosteriorStore

    p = ContextualPolicy(CLASSES, seed=0, discount=1.0)
    store = PosteriorStore(home)
    for _ in range(3):
        store.apply(p, p.update_op("fresh", "thorough", 1.0))


def test_bandit_reset_forgets_the_posteriors(tmp_path: Path):
    home = tmp_path / "home"
    env = env_for(home)
    _posteriors(home)
    (home / "bandit" / "decisions.jsonl").write_text("{}\n")
    before = json.loads(run(["status", "--json"], env, tmp_path)[1])
    assert before["bandit"]["classes"]["fresh"]["thorough"]["alpha"] == 4.0
    rc, out, err = run(["bandit", "reset", "--json"], env, tmp_path)
    assert (rc, err) == (0, "")
    assert json.loads(out) == {"removed": [str(home / "bandit" / "posteriors.json")], "dshHome": str(home)}
    after = json.loads(run(["status", "--json"], env, tmp_path)[1])
    assert after["bandit"]["classes"]["fresh"]["thorough"] == {"alpha": 1.0, "beta": 1.0, "mean": 0.5}
    assert (home / "bandit" / "decisions.jsonl").exists()  # kept without --decisions
    rc, out, _ = run(["bandit", "reset", "--decisions"], env, tmp_path)
    assert (rc, out) == (0, f"removed {home / 'bandit' / 'decisions.jsonl'}\n")
    assert run(["bandit", "reset"], env, tmp_path)[1] == f"nothing to reset under {home / 'bandit'}\n"


@pytest.fixture
def searxng():
    mock = MockProvider()
    reply, _ = case_reply("searxng", "ok", check=False)
    mock.route("GET", "/search", reply)
    yield mock
    mock.close()


@pytest.mark.parametrize("level", ["INFO", None])
def test_serve_takes_a_config_file_and_logs_to_a_file(tmp_path: Path, searxng: MockProvider, monkeypatch, level):
    cfg = tmp_path / "sidecar.yml"
    cfg.write_text(
        f"router:\n  order: [searxng]\n  providers:\n    searxng:\n      baseUrl: {searxng.url}\nbandit:\n  seed: 3\n"
    )
    log = tmp_path / "serve.log"
    levels = ["--log-level", level] if level else []
    monkeypatch.setattr(
        rawrpc, "server_command", lambda: cli() + ["serve", "--config", str(cfg), "--log-file", str(log), *levels]
    )
    server = rawrpc.RawServer(tmp_path / "home")
    try:
        init = server.initialize({"router": {"timeoutMs": 5000}})  # laid over the file's router block
        assert "result" in init, init
        status = server.request("dsh/status")["result"]
        assert status["router"]["chain"] == [{"provider": "searxng", "baseUrl": searxng.url}]
        assert status["router"]["timeoutMs"] == 5000
        found = server.request("dsh/search", {"query": "bike chain cleaning", "strategy": "quick"})
        assert found["result"]["attempts"][0]["outcome"] == "ok"
        assert server.shutdown() == 0
    finally:
        server.close()
    assert bytes(server.stderr_bytes) == b""  # everything went to the log file
    lines = log.read_text().splitlines()
    # the seed's line is logged at INFO (docs/bandit.md, "The log line"): at the default level
    # (WARNING) a search writes nothing to the log; the client still gets it (window/logMessage)
    seed = [line.partition(" INFO dsh_sidecar.bandit: ")[2] for line in lines if "[bandit-search]" in line]
    if level:
        assert len(seed) == 1 and seed[0].startswith("[bandit-search] arm=quick reward="), lines
    else:
        assert seed == [], lines
    assert server.log_lines()[0].startswith("[bandit-search] arm=quick reward=")
    assert (log.stat().st_mode & 0o777) == 0o600


def test_serve_refuses_a_bad_config_file_before_serving(tmp_path: Path):
    cfg = tmp_path / "bad.yml"
    cfg.write_text("router:\n  order: [nosuch]\n")
    rc, out, err = run(["serve", "--config", str(cfg)], env_for(tmp_path / "home"), tmp_path)
    assert (rc, out) == (2, "")
    assert err.startswith("dsh-search: invalid config: router.order[0]: unknown provider (known: exa, tavily")


def test_serve_accepts_the_stdio_flag_language_clients_add(tmp_path: Path, monkeypatch):
    """vscode-languageclient (TransportKind.stdio) starts ``<command> <args> --stdio``."""
    monkeypatch.setattr(rawrpc, "server_command", lambda: cli() + ["serve", "--stdio"])
    server = rawrpc.RawServer(tmp_path / "home")
    try:
        assert "result" in server.initialize()
        assert server.request("dsh/status")["result"]["version"]
        assert server.shutdown() == 0
    finally:
        server.close()


def test_bandit_reset_with_a_shared_state_deletes_the_fleets_statistics(tmp_path: Path):
    """In Redis mode the posteriors live in the store, not under $DSH_HOME: ``bandit reset
    --config`` deletes every ``dsh:v1:bandit:*`` key of every row and discount (SCAN + UNLINK)
    and nothing else; a store that does not answer is exit 1 naming it without its password, and
    nothing is reset."""
    from dsh_sidecar.bandit.policy import ARMS, GLOBAL
    from dsh_sidecar.state import keys
    from dsh_sidecar.state.config import parse_state_config
    from dsh_sidecar.state.redis_store import RedisState
    from support.bandit_ops import op
    from support.fleetkit import REDIS_SERVER, RedisServer

    if REDIS_SERVER is None:
        pytest.skip("redis-server not installed (Debian package redis-server; .ci/run installs it)")
    server = RedisServer(tmp_path / "redis")
    server.start()
    try:
        st = RedisState(parse_state_config({"backend": server.url, "timeoutMs": 5000}))
        for i in range(6):
            st.bandit_apply(op(i, "quick", 1.0))
        st.bandit_apply(op(6, "thorough", 0.0, discount=0.9))  # a second discount: its own keys
        st.start_cooldown("brave", "rate-limit", 600)
        assert st.wait_synced(10)
        bandit_keys = sorted(st.client.scan_iter(match=keys.BANDIT_PATTERN))
        # per row ('factoid', 'global'): the exact totals, and the sums under γ = 0.99 and γ = 0.9
        assert len(bandit_keys) == 6
        cfg = tmp_path / "fleet.yml"
        cfg.write_text(f"state:\n  backend: {server.url}\n")
        env = env_for(tmp_path / "home")
        rc, out, err = run(["bandit", "reset", "--config", str(cfg)], env, tmp_path)
        assert (rc, err) == (0, "")
        assert (
            out == f"nothing to reset under {tmp_path / 'home' / 'bandit'}\nremoved 6 bandit keys from {server.url}\n"
        )
        assert list(st.client.scan_iter(match=keys.BANDIT_PATTERN)) == []
        assert st.bandit_counts((GLOBAL,), ARMS)[GLOBAL]["quick"]["updates"] == 0.0
        assert st.cooldown("brave") is not None  # the rest of the store is not the bandit's
        rc, out, _ = run(["bandit", "reset", "--config", str(cfg), "--json"], env, tmp_path)
        assert rc == 0 and json.loads(out)["shared"] == {"backend": server.url, "removedKeys": 0}
        st.close()
    finally:
        server.stop()
    port = _dead_port()
    cfg.write_text(f"state:\n  backend: redis://admin:{PASSWORD}@127.0.0.1:{port}/0\n  timeoutMs: 300\n")
    rc, out, err = run(["bandit", "reset", "--config", str(cfg)], env, tmp_path)
    assert (rc, out) == (1, "")  # the store first: nothing was reset
    assert f"bandit reset failed: state store redis://127.0.0.1:{port}/0 unavailable (ConnectionError)" in err
    assert PASSWORD not in out + err


def test_bandit_reset_waits_for_a_slow_store_longer_than_a_search_does(tmp_path: Path):
    """``bandit reset`` is not on any call's path: it waits up to 5 s a command
    (``state.fleet.ADMIN_TIMEOUT_MS``), not the 50 ms a search may (``timeoutMs``, default). A
    store whose replies come 200 ms late (one that fsyncs every write on a loaded machine: the
    reset above failed once with the default bound) is reset; one that never answers is exit 1
    after that bound, naming the store without its password."""
    from dsh_sidecar.state import keys
    from dsh_sidecar.state.config import parse_state_config
    from dsh_sidecar.state.redis_store import RedisState
    from support.bandit_ops import op
    from support.fleetkit import REDIS_SERVER, RedisServer
    from support.storeproxy import FakeListener, StoreProxy

    if REDIS_SERVER is None:
        pytest.skip("redis-server not installed (Debian package redis-server; .ci/run installs it)")
    server = RedisServer(tmp_path / "redis", fsync="everysec")
    server.start()
    late = StoreProxy(server.port, delay_s=0.2)
    silent = FakeListener("silent")
    garbage = FakeListener("garbage")
    env = env_for(tmp_path / "home")
    cfg = tmp_path / "fleet.yml"
    try:
        st = RedisState(parse_state_config({"backend": server.url, "timeoutMs": 5000}))
        for i in range(3):
            st.bandit_apply(op(i, "quick", 1.0))
        assert len(list(st.client.scan_iter(match=keys.BANDIT_PATTERN))) == 4  # 2 rows: totals and sums
        cfg.write_text(f"state:\n  backend: {late.url(PASSWORD)}\n")
        rc, out, err = run(["bandit", "reset", "--config", str(cfg)], env, tmp_path)
        assert (rc, err) == (0, "")
        assert out.endswith(f"removed 4 bandit keys from redis://127.0.0.1:{late.port}/0\n")
        assert list(st.client.scan_iter(match=keys.BANDIT_PATTERN)) == []
        st.close()
        cfg.write_text(f"state:\n  backend: {silent.url(PASSWORD)}\n")
        rc, out, err = run(["bandit", "reset", "--config", str(cfg)], env, tmp_path)
        assert (rc, out) == (1, "")
        assert f"bandit reset failed: state store redis://127.0.0.1:{silent.port}/0 unavailable (TimeoutError)" in err
        assert PASSWORD not in out + err
        # a listener that is not Redis (its handshake reply made redis-py raise AttributeError,
        # which the reset let through as a traceback)
        cfg.write_text(f"state:\n  backend: {garbage.url(PASSWORD)}\n")
        rc, out, err = run(["bandit", "reset", "--config", str(cfg)], env, tmp_path)
        assert (rc, out, err) == (
            1,
            "",
            f"dsh-search: bandit reset failed: state store redis://127.0.0.1:{garbage.port}/0 unavailable"
            " (AttributeError)\n",
        )
    finally:
        late.close()
        silent.close()
        garbage.close()
        server.stop()
