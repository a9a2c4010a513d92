"""Property-based fuzzing of every ``dsh/*`` method's params over real stdio.

One ``dsh-search serve`` process (loopback searxng mock, the pyproj workspace) answers every
example of the module. Each request must get exactly one reply carrying its own id: a result,
or an error whose code says the *request* was wrong (-32602, -32600) or the search failed
(-32001) — never an internal error (-32603), never silence, never a dead server. At the end
the server's RSS must not have grown past a bound.
"""

from __future__ import annotations

import collections
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.mockprovider import MockProvider, case_reply
from support.rawrpc import RawServer, frame
from support.trees import copy_fixture

#: Examples per method: enough to hit every field with every wrong type, small enough for CI.
EXAMPLES = 100
#: RSS growth allowed over the whole fuzz run, KiB. A leak of one 1 MB query per example would
#: be >100 MB; interpreter caches, pydantic schema and allocator slack stay well under 64 MiB.
RSS_GROWTH_BOUND_KIB = 64 * 1024
#: Error codes that mean "your request was wrong" or "the search failed" (JSON-RPC 2.0, DESIGN.md).
CLIENT_CODES = {-32600, -32602, -32001}

FUZZ = settings(
    max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)


@pytest.fixture(scope="module")
def fuzz_server(tmp_path_factory):
    mock = MockProvider()
    mock.route("GET", "/search", case_reply("searxng", "ok", check=False)[0])
    root = tmp_path_factory.mktemp("ws") / "pyproj"
    copy_fixture("pyproj", root)
    srv = RawServer(tmp_path_factory.mktemp("dsh-home"))
    srv.initialize(
        {
            "router": {"order": ["searxng"], "providers": {"searxng": {"baseUrl": mock.url}}, "timeoutMs": 3000},
            "suggester": {"enabled": True},
        },
        root=root,
    )
    srv.rss_start = srv.rss_kib()  # type: ignore[attr-defined]
    srv.outcomes = collections.Counter()  # type: ignore[attr-defined]  # (method, "result" | code)
    yield srv
    srv.close()
    mock.close()


# ---------------------------------------------------------------------------- strategies

#: Text including lone surrogates (they survive json.dumps as \ud800 escapes).
any_text = st.text(st.characters(codec=None, categories=None), max_size=40) | st.sampled_from(
    ["\ud800", "a\udfffb", "\x00", "\u202e", "x" * 1_000_000, "../../etc/passwd", "", " "]
)
big_ints = st.sampled_from([-1, 0, 1, 2**31, 2**63, -(2**63), 10**30, 5, 50, 51])
scalars = st.none() | st.booleans() | big_ints | st.integers() | st.floats(allow_nan=False) | any_text
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4), max_leaves=12
)
deep = st.integers(min_value=50, max_value=3000).map(lambda n: json.loads("[" * n + "]" * n) if n < 900 else "[" * n)


def mutate(valid: dict) -> st.SearchStrategy[dict]:
    """A valid params object with one field replaced, removed, or an extra field added."""
    keys = sorted(valid)
    extra = st.tuples(any_text, json_values).map(lambda kv: {**valid, kv[0]: kv[1]})
    if not keys:
        return st.one_of(extra, st.just(valid))
    replaced = st.tuples(st.sampled_from(keys), json_values | deep).map(lambda kv: {**valid, kv[0]: kv[1]})
    removed = st.sampled_from(keys).map(lambda k: {x: v for x, v in valid.items() if x != k})
    return st.one_of(replaced, removed, extra, st.just(valid))


def params_for(valid: dict) -> st.SearchStrategy:
    return st.one_of(mutate(valid), mutate(valid), json_values, st.just(None), st.lists(json_values, max_size=3))


SEARCH = {"query": "bike chain cleaning", "strategy": "quick", "maxResults": 3, "deadlineMs": 5000}
POST_EXECUTE = {
    "sessionId": "fuzz",
    "turn": 1,
    "callId": "c1",
    "tool": {"name": "Grep", "input": {"pattern": "__version__"}},
    "result": {"isError": False, "text": "src/demo_pkg/__init__.py:1:__version__ = '1.0'"},
}
TOOL_INPUTS = st.dictionaries(
    st.sampled_from(["pattern", "path", "glob", "command", "file_path", "query"]) | any_text,
    json_values | deep,
    max_size=4,
)
TOOL_NAMES = st.sampled_from(["Grep", "Glob", "Read", "Bash", "grep", "Write", "Edit"]) | any_text
post_execute_params = st.one_of(
    params_for(POST_EXECUTE),
    st.builds(
        lambda name, inp, turn: {**POST_EXECUTE, "turn": turn, "tool": {"name": name, "input": inp}},
        TOOL_NAMES,
        TOOL_INPUTS,
        big_ints,
    ),
)

METHODS = {
    "dsh/search": params_for(SEARCH)
    | st.builds(lambda q, n: {"query": q, "maxResults": n, "strategy": "quick"}, any_text, big_ints),
    "dsh/searchFeedback": None,  # built in the test around a real searchId
    "dsh/postExecute": post_execute_params,
    "dsh/dismiss": params_for({"family": "Version", "path": "src/demo_pkg/__init__.py"}),
    "dsh/assembleSection": params_for({"sessionId": "fuzz"}),
    "dsh/status": params_for({}),
    "dsh/toolsChanged": params_for({}),
}


def check_reply(srv: RawServer, method: str, params) -> None:
    msg_id = srv.request_id(method, params)
    reply = srv.response(msg_id, timeout=30)
    assert reply["id"] == msg_id
    srv.outcomes[(method, reply["error"]["code"] if "error" in reply else "result")] += 1  # type: ignore[attr-defined]
    if "error" in reply:
        assert reply["error"]["code"] in CLIENT_CODES, (method, str(params)[:300], reply)
        assert isinstance(reply["error"]["message"], str) and reply["error"]["message"]
    else:
        assert "result" in reply


@pytest.mark.parametrize("method", sorted(METHODS))
def test_fuzzed_params_always_get_a_reply_with_their_id(fuzz_server, method):
    strategy = METHODS[method]
    if strategy is None:
        # a query no other test of the module asked: a cached answer is not pending feedback
        query = {"query": "bike chain cleaning for feedback", "strategy": "quick"}
        found = fuzz_server.request("dsh/search", query)["result"]
        strategy = params_for({"searchId": found["searchId"], "usedUrls": [found["sources"][0]["url"]]}) | st.builds(
            lambda urls: {"searchId": found["searchId"], "usedUrls": urls}, st.lists(any_text, max_size=5)
        )

    @FUZZ
    @given(params=strategy)
    def run(params):
        check_reply(fuzz_server, method, params)

    run()
    assert fuzz_server.alive()
    # the fuzzer reached both sides of the method: accepted params and named refusals
    seen = {kind for (m, kind) in fuzz_server.outcomes if m == method}
    if method == "dsh/toolsChanged":  # a notification: sent with an id, refused whatever its params
        assert seen == {-32600}, seen
    else:
        assert "result" in seen, seen
        assert -32602 in seen, seen


@FUZZ
@given(
    method=st.text(string.ascii_letters + "/$._-", min_size=1, max_size=30)
    .map(lambda m: "dsh/" + m)
    .filter(lambda m: m not in METHODS)
)
def test_unknown_methods_get_method_not_found(fuzz_server, method):
    msg_id = fuzz_server.request_id(method, {})
    reply = fuzz_server.response(msg_id)
    assert reply["error"] == {"code": -32601, "message": f"Method Not Found: {method}"}, reply


def test_notifications_of_unknown_methods_and_dollar_methods_are_ignored(fuzz_server):
    fuzz_server.notify("dsh/nope", {"a": 1})
    fuzz_server.notify("$/unknownThing", {"a": 1})
    fuzz_server.notify("$/cancelRequest", {"id": 424242})
    fuzz_server.notify("dsh/toolsChanged", ["not", "an", "object"])
    reply = fuzz_server.request("dsh/status", {})
    assert reply["result"]["version"]
    assert fuzz_server.drain(0.2) == []  # no reply to any notification


def test_notification_method_sent_with_an_id_is_answered(fuzz_server):
    """``dsh/toolsChanged`` with an id is a request under JSON-RPC: it gets a reply, the invalid
    request every notification sent with an id gets (LSP's, MCP's, the sidecar's own)."""
    reply = fuzz_server.request("dsh/toolsChanged", {})
    assert reply["error"] == {
        "code": -32600,
        "message": "Invalid Request: dsh/toolsChanged is a notification: it is sent without an id",
    }
    assert "result" in fuzz_server.request("dsh/status")  # still serving


def test_a_1mb_query_is_refused_by_length_not_by_memory(fuzz_server):
    reply = fuzz_server.request("dsh/search", {"query": "q" * 1_000_000})
    assert reply["error"] == {"code": -32602, "message": "query: String should have at most 2000 characters"}


@pytest.mark.parametrize("n", [-1, 0, 51, 2**63, 10**30])
def test_out_of_range_max_results_is_named(fuzz_server, n):
    reply = fuzz_server.request("dsh/search", {"query": "x", "maxResults": n})
    assert reply["error"]["code"] == -32602
    assert reply["error"]["message"].startswith("maxResults: Input should be")


def test_pipelined_burst_of_mixed_garbage_all_answered_in_any_order(fuzz_server):
    ids = []
    data = b""
    for i in range(200):
        fuzz_server.next_id += 1
        ids.append(fuzz_server.next_id)
        params = [{"query": 5}, {"sessionId": "s", "turn": -1, "tool": {}}, {"family": ""}, None][i % 4]
        method = ["dsh/search", "dsh/postExecute", "dsh/dismiss", "dsh/status"][i % 4]
        data += frame({"jsonrpc": "2.0", "id": fuzz_server.next_id, "method": method, "params": params})
    fuzz_server.send_raw(data)
    got = {}
    while len(got) < len(ids):
        msg = fuzz_server.recv(30)
        if "id" in msg and "method" not in msg:
            got[msg["id"]] = msg
    assert sorted(got) == ids


def test_zz_memory_stayed_bounded_and_server_serves(fuzz_server):
    """Runs last in the module (file order): RSS growth over every example above."""
    growth = fuzz_server.rss_kib() - fuzz_server.rss_start
    assert growth < RSS_GROWTH_BOUND_KIB, f"RSS grew by {growth} KiB"
    assert fuzz_server.request("dsh/status", {})["result"]["version"]
    assert b"Traceback" not in fuzz_server.stderr_bytes, fuzz_server.stderr_bytes.decode()[-2000:]
