"""``initialize`` without options (absent, ``null`` or ``{}``) is checked without pydantic
(:mod:`dsh_sidecar.options`, cold start): the check must give what the config models'
path gives for the same environment (the chain, its secrets, the same providers skipped), the sidecar built
after the reply must hold ``parse_config(None)``, and a spawned ``dsh-search serve`` must not
have imported pydantic when it writes that reply (any options: it has)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dsh_sidecar.config import parse_config
from dsh_sidecar.errors import ConfigError
from dsh_sidecar.lsp.handlers import build_server
from dsh_sidecar.options import Preflight, is_empty, merge_options, preflight_defaults, preflight_of
from dsh_sidecar.router.resolve import PROVIDER_DEFAULTS
from lsprotocol import types as lsp
from support.rawrpc import frame
from support.sidecar import clean_env

#: Every variable the zero-config chain reads (each provider's key and base-URL variables).
KEY_VARS = sorted({d.key_env for d in PROVIDER_DEFAULTS.values() if d.key_env})
URL_VARS = sorted({d.base_url_env for d in PROVIDER_DEFAULTS.values() if d.base_url_env})

ENVIRONMENTS = {
    "nothing set": {},
    "every key and URL": {
        **{var: f"key-{i}-0123456789abcdef" for i, var in enumerate(KEY_VARS)},
        **{var: f"http://127.0.0.1:{8000 + i}/base/" for i, var in enumerate(URL_VARS)},
    },
    "credentials in a URL": {var: "https://user:p%40ss-word-123@search.example/" for var in URL_VARS},
    "blank values": {var: "   " for var in KEY_VARS + URL_VARS},
    "keys with stray spaces": {var: "  padded-key-0123456789  " for var in KEY_VARS},
    "a key with a space inside": {KEY_VARS[0]: "abc def-0123456789"},
    "a non-ASCII key": {KEY_VARS[-1]: "clé-0123456789"},
    "a URL that is not http": {URL_VARS[0]: "ftp://searx.example"},
    "a URL with a query": {URL_VARS[0]: "http://searx.example/?q=1"},
    "a URL with a control character": {URL_VARS[0]: "http://searx.exa\x01mple"},
    "a URL too long": {URL_VARS[0]: "http://searx.example/" + "a" * 3000},
    "a URL with a bad port": {URL_VARS[0]: "http://searx.example:99999"},
}


def _outcome(check) -> Preflight | tuple[str, str]:
    """The Preflight, or the ConfigError's key and text."""
    try:
        return check()
    except ConfigError as exc:
        return (exc.key, str(exc))


@pytest.mark.parametrize("name", ENVIRONMENTS)
def test_the_check_without_pydantic_is_the_config_models_check(name):
    env = ENVIRONMENTS[name]
    fast = _outcome(lambda: preflight_defaults(env))
    slow = _outcome(lambda: preflight_of(parse_config(None), env))
    if isinstance(slow, tuple):
        assert fast == slow
        return
    assert isinstance(fast, Preflight)
    # value by value (ProviderSpec equality covers the key and the Basic-auth pair, kept out of repr)
    assert [(s.id, s.base_url, s.api_key, s.model, s.basic_auth) for s in fast.chain] == [
        (s.id, s.base_url, s.api_key, s.model, s.basic_auth) for s in slow.chain
    ]
    assert fast.secrets == slow.secrets
    assert fast.shared_state is slow.shared_state is False
    assert fast == slow


def test_the_environments_reach_every_branch():
    """The table above is not vacuous: it yields the whole chain, Basic auth, and errors."""
    full = preflight_defaults(ENVIRONMENTS["every key and URL"])
    assert [s.id for s in full.chain] == [p for p in PROVIDER_DEFAULTS if p != "local"]  # never auto-detected
    assert all(s.api_key for s in full.chain if PROVIDER_DEFAULTS[s.id].key_env)
    creds = preflight_defaults(ENVIRONMENTS["credentials in a URL"])
    assert any(s.basic_auth == ("user", "p@ss-word-123") for s in creds.chain)
    assert "p@ss-word-123" in creds.secrets
    assert preflight_defaults({}).chain and [s.id for s in preflight_defaults({}).chain] == ["duckduckgo"]
    # a malformed variable skips its provider (the router reports why), as without the check
    assert [s.id for s in preflight_defaults(ENVIRONMENTS["a URL that is not http"]).chain] == ["duckduckgo"]
    assert [s.id for s in preflight_defaults(ENVIRONMENTS["a key with a space inside"]).chain] == ["duckduckgo"]


@pytest.mark.parametrize(
    ("base", "override", "empty"),
    [
        (None, None, True),
        (None, {}, True),
        ({}, None, True),
        ({}, {}, True),
        (None, {"router": {}}, False),
        (None, {"logMessages": "all"}, False),
        ({"router": {"timeoutMs": 500}}, None, False),
        (None, [], False),
        (None, "", False),
        (None, 0, False),
    ],
)
def test_only_an_absent_null_or_empty_document_skips_the_models(base, override, empty):
    assert is_empty(merge_options(base, override)) is empty


def test_the_sidecar_built_after_the_reply_holds_the_default_config(tmp_path):
    server = build_server()
    server.env = clean_env(tmp_path / "home")
    init = server.protocol.fm.features[lsp.INITIALIZE]
    try:
        init(lsp.InitializeParams(capabilities=lsp.ClientCapabilities(), initialization_options={}))
        sidecar = server.sidecar  # built at once here (no running loop)
        assert sidecar is not None
        assert sidecar.config == parse_config(None)
    finally:
        if server.sidecar is not None:
            server.sidecar.shutdown()


#: Runs ``python -m dsh_sidecar serve`` and, when the first frame is written on stdout (the
#: ``initialize`` reply), writes that frame and the pydantic modules imported so far to
#: ``$REPORT`` and ends the process: what was imported before the reply.
UNTIL_REPLY = textwrap.dedent(
    """
    import json, os, runpy, sys
    _write = os.write

    def write(fd, data):
        if fd != 2 and bytes(data[:15]) == b"Content-Length:":
            mods = sorted(m for m in sys.modules if m.split(".")[0] in ("pydantic", "pydantic_core"))
            with open(os.environ["REPORT"], "w") as f:
                json.dump({"frame": bytes(data).decode(), "modules": mods}, f)
            os._exit(0)
        return _write(fd, data)

    os.write = write
    sys.argv = ["dsh-search", "serve"]
    runpy.run_module("dsh_sidecar", run_name="__main__", alter_sys=True)
    """
)

ABSENT = object()


def _until_reply(tmp_path: Path, options, env_extra: dict[str, str]) -> tuple[dict, list[str]]:
    """The ``initialize`` reply of a spawned server and the pydantic modules it had imported then."""
    wrapper = tmp_path / "until_reply.py"
    wrapper.write_text(UNTIL_REPLY)
    report = tmp_path / "report.json"
    params = {"processId": None, "capabilities": {}, "rootUri": None}
    if options is not ABSENT:
        params["initializationOptions"] = options
    subprocess.run(
        [sys.executable, str(wrapper)],
        input=frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
        capture_output=True,
        env=clean_env(tmp_path / "home", {"REPORT": str(report), **env_extra}),
        timeout=120,
        check=True,
    )
    got = json.loads(report.read_text())
    return json.loads(got["frame"].partition("\r\n\r\n")[2]), got["modules"]


SEARX = {URL_VARS[0]: "http://127.0.0.1:9/", KEY_VARS[0]: "k-0123456789abcdef"}


@pytest.mark.parametrize(
    ("options", "env_extra"), [(ABSENT, {}), (None, {}), ({}, {}), ({}, SEARX)], ids=["absent", "null", "{}", "env"]
)
def test_the_reply_to_initialize_without_options_imports_no_pydantic(tmp_path, options, env_extra):
    reply, modules = _until_reply(tmp_path, options, env_extra)
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "dsh-search-sidecar", reply
    assert modules == []


def test_initialize_with_options_still_validates_them_with_the_models_before_the_reply(tmp_path):
    """The same probe sees pydantic when options are given (so the test above can fail)."""
    reply, modules = _until_reply(tmp_path, {"router": {}}, {})
    assert reply["id"] == 1 and "result" in reply
    assert "pydantic" in modules and "pydantic.main" in modules


def test_a_bad_provider_url_is_checked_before_the_reply_without_pydantic_and_skips_its_provider(tmp_path):
    """A malformed variable skips its provider (the router logs why once built, as the MCP
    server does), so the reply is a success, still without pydantic."""
    reply, modules = _until_reply(tmp_path, None, {URL_VARS[0]: "ftp://x.example"})
    assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "dsh-search-sidecar", reply
    assert modules == []
