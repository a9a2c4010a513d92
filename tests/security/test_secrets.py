"""No secret ever leaves the sidecar: every byte it writes (stdout frames, stderr, ledger, log
and state files) is scanned for every configured API key and URL password — in plain text,
URL-encoded and base64 (the Basic-auth form) — after a session in which hostile providers echo
the keys back in errors, redirects and bodies. And every state file is 0600, every folder 0700."""

from __future__ import annotations

import base64
import json
import stat
from pathlib import Path
from urllib.parse import quote

import pytest
from support.mockprovider import MockProvider, Reply, case_reply
from support.rawrpc import RawServer

EXA_KEY = "exa-SECRET-1b2c3d4e5f"
TAVILY_KEY = "tvly-SECRET-9a8b7c6d5e"
BRAVE_KEY = "BSA-SECRET-5f4e3d2c1b"
PPLX_KEY = "pplx-SECRET-0a1b2c3d4e"
NEW_BRAVE_KEY = "BSA-SECRET-ROTATED-77aa"
BAD_CONFIG_SECRET = "sk-SECRET-in-a-bad-field-31337"
SEARX_USER, SEARX_PASSWORD = "alice", "pw-SECRET-hunter2x"
SECRETS = [EXA_KEY, TAVILY_KEY, BRAVE_KEY, PPLX_KEY, NEW_BRAVE_KEY, BAD_CONFIG_SECRET, SEARX_PASSWORD]


def forms(secret: str) -> set[bytes]:
    """The encodings a secret could leak in."""
    out = {secret.encode(), quote(secret, safe="").encode()}
    if secret == SEARX_PASSWORD:
        out.add(base64.b64encode(f"{SEARX_USER}:{SEARX_PASSWORD}".encode()))
    return out


def echo(status: int, *secrets: str, content_type: str = "application/json") -> Reply:
    """A hostile reply that echoes the secrets back in its body."""
    body = json.dumps({"error": "invalid key " + " ".join(secrets), "detail": f"Authorization: Bearer {secrets[0]}"})
    return Reply(status, {"content-type": content_type}, body.encode())


@pytest.fixture(params=[False])
def hostile(request):
    mocks = {name: MockProvider() for name in ("exa", "tavily", "brave", "perplexity", "searxng")}
    mocks["exa"].route("POST", "/search", echo(401, EXA_KEY))
    mocks["tavily"].route("POST", "/search", echo(500, TAVILY_KEY))
    # a paid plan's X-RateLimit-Limit (20/s), which the pacer adopts: the free plan's 1 request/s
    # would make each of the session's searches wait a second for Brave's slot
    mocks["brave"].route(
        "GET",
        "/res/v1/web/search",
        Reply(302, {"location": f"http://127.0.0.1:9/steal?key={BRAVE_KEY}", "x-ratelimit-limit": "20, 20000000"}),
    )
    mocks["perplexity"].route("POST", "/chat/completions", echo(429, PPLX_KEY, "Retry-After: 1"))
    ok, _ = case_reply("searxng", "ok", check=False)
    body = json.loads(ok.body)
    if request.param:  # the provider plants the keys in a result
        body["results"][0]["content"] = f"leaked {EXA_KEY} and {SEARX_PASSWORD} and {TAVILY_KEY}"
    mocks["searxng"].route("GET", "/search", Reply(200, ok.headers, json.dumps(body).encode()))
    yield mocks
    for mock in mocks.values():
        mock.close()


def searx_url(mock: MockProvider) -> str:
    return mock.url.replace("http://", f"http://{SEARX_USER}:{SEARX_PASSWORD}@")


def scan(srv: RawServer, *folders: Path) -> list[str]:
    """Every place a secret was found: ``<where>: <secret>``."""
    blobs: dict[str, bytes] = {"stdout": bytes(srv.stdout_bytes), "stderr": bytes(srv.stderr_bytes)}
    for folder in folders:
        for path in folder.rglob("*"):
            if path.is_file() and not path.is_symlink():
                blobs[str(path)] = path.read_bytes()
    hits = []
    for where, blob in blobs.items():
        for secret in SECRETS:
            if any(f in blob for f in forms(secret)):
                hits.append(f"{where}: {secret}")
    return hits


def test_no_secret_in_any_byte_the_sidecar_writes(dsh_home, workspace, hostile):
    run_session_and_scan(dsh_home, workspace, hostile)


@pytest.mark.parametrize("hostile", [True], indirect=True, ids=["keys-in-results"])
def test_no_secret_even_when_a_provider_plants_keys_in_results(dsh_home, workspace, hostile):
    run_session_and_scan(dsh_home, workspace, hostile)


def run_session_and_scan(dsh_home, workspace, hostile):
    env = {"EXA_API_KEY": EXA_KEY, "MY_PPLX_KEY": PPLX_KEY, "TAVILY_API_KEY": TAVILY_KEY}
    config = {
        "router": {
            "order": ["exa", "tavily", "brave", "perplexity", "searxng"],
            "timeoutMs": 3000,
            "cache": False,
            "providers": {
                "exa": {"baseUrl": hostile["exa"].url},
                "tavily": {"baseUrl": hostile["tavily"].url},
                "brave": {"apiKey": BRAVE_KEY, "baseUrl": hostile["brave"].url},
                "perplexity": {"apiKeyEnv": "MY_PPLX_KEY", "baseUrl": hostile["perplexity"].url},
                "searxng": {"baseUrl": searx_url(hostile["searxng"])},
            },
        },
        "bandit": {"seed": 8},
        "suggester": {"enabled": True},
    }
    srv = RawServer(dsh_home, env=env, forked=True)
    try:
        srv.initialize(config, root=workspace)
        for i, strategy in enumerate(["quick", "thorough", "auto", "quick"]):
            reply = srv.request("dsh/search", {"query": f"leak probe {i}", "strategy": strategy}, timeout=60)
            assert "result" in reply or reply["error"]["code"] == -32001, reply
        # every provider really was asked (the keys were sent, and echoed back)
        assert all(m.requests for m in hostile.values()), {k: len(m.requests) for k, m in hostile.items()}
        srv.request("dsh/status", {})
        srv.request(
            "dsh/postExecute",
            {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}},
        )
        srv.request("dsh/dismiss", {"family": "Version"})
        # a rotated key, then a refused reconfiguration with a secret in a bad field
        srv.notify(
            "workspace/didChangeConfiguration",
            {
                "settings": {
                    "router": {
                        **config["router"],
                        "providers": {
                            **config["router"]["providers"],
                            "brave": {"apiKey": NEW_BRAVE_KEY, "baseUrl": hostile["brave"].url},
                        },
                    }
                }
            },
        )
        srv.notify(
            "workspace/didChangeConfiguration",
            {
                "settings": {
                    "router": {
                        "timeoutMs": BAD_CONFIG_SECRET,
                        "providers": {"exa": {"apiKey": BAD_CONFIG_SECRET, "nope": BAD_CONFIG_SECRET}},
                    }
                }
            },
        )
        reply = srv.request("dsh/search", {"query": "leak probe after rotation", "strategy": "quick"}, timeout=60)
        assert "result" in reply or reply["error"]["code"] == -32001
        assert any(r.headers.get("x-subscription-token") == NEW_BRAVE_KEY for r in hostile["brave"].requests)
        assert srv.shutdown() == 0
    finally:
        srv.close()
    hits = scan(srv, dsh_home, workspace)
    assert hits == [], "\n".join(hits)


@pytest.mark.parametrize(
    "options",
    [
        {"router": {"timeoutMs": BAD_CONFIG_SECRET}},
        {"router": {"providers": {"exa": {"apiKey": BAD_CONFIG_SECRET, "bogus": BAD_CONFIG_SECRET}}}},
        {"router": {"providers": {"searxng": {"baseUrl": f"ftp://u:{BAD_CONFIG_SECRET}@host"}}}},
        {"router": {"order": [BAD_CONFIG_SECRET]}},
    ],
)
def test_refused_initialize_never_echoes_the_bad_value(dsh_home, options):
    srv = RawServer(dsh_home, forked=True)
    try:
        reply = srv.request(
            "initialize", {"processId": None, "capabilities": {}, "initializationOptions": options}, timeout=60
        )
        assert reply["error"]["code"] == -32602 and reply["error"]["message"].startswith(
            "invalid initializationOptions: "
        ), reply
    finally:
        srv.close()
    assert scan(srv, dsh_home) == []


def test_state_files_are_0600_and_folders_0700(dsh_home, workspace, hostile):
    srv = RawServer(dsh_home, forked=True)
    try:
        srv.initialize(
            {
                "router": {"order": ["searxng"], "providers": {"searxng": {"baseUrl": hostile["searxng"].url}}},
                "suggester": {"enabled": True},
            },
            root=workspace,
        )
        assert "result" in srv.request("dsh/search", {"query": "perm probe", "strategy": "quick"}, timeout=60)
        srv.request("dsh/dismiss", {"family": "Version", "path": "src/demo_pkg/__init__.py"})
        srv.request(
            "dsh/postExecute",
            {"sessionId": "s", "turn": 1, "tool": {"name": "Grep", "input": {"pattern": "__version__"}}},
        )
        assert srv.shutdown() == 0
    finally:
        srv.close()
    files = [p for p in dsh_home.rglob("*") if p.is_file()]
    assert any(p.name == "posteriors.json" for p in files) and any(p.name == "knowledge.json" for p in files), files
    wrong = [
        f"{p.relative_to(dsh_home)} {oct(stat.S_IMODE(p.stat().st_mode))}"
        for p in files
        if stat.S_IMODE(p.stat().st_mode) != 0o600
    ]
    wrong += [
        f"{p.relative_to(dsh_home)}/ {oct(stat.S_IMODE(p.stat().st_mode))}"
        for p in dsh_home.rglob("*")
        if p.is_dir() and stat.S_IMODE(p.stat().st_mode) != 0o700
    ]
    assert wrong == [], "\n".join(wrong)
