"""A tool result some harnesses return wrapped in JSON (``{"output": "…", "exit_code": 0}``) is
read as the text it wraps: every line of its string values counts in what the call showed and
in its result paths, bounded and untrusted (``suggester/parse/results.py``, :func:`unwrapped`)."""

from __future__ import annotations

import json

from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.parse.results import MAX_WRAPPED_CHARS, unwrapped
from dsh_sidecar.workspace import WorkspaceGraph
from support.sidecar import DATA
from support.suggester import make_suggester, post

HITS = "src/shopcart/pricing.py:3:def price\nsrc/shopcart/cart.py:7:def price_of\ntests/test_cart.py:2:price"


def test_every_line_of_a_json_wrapped_result_is_in_the_sessions_evidence(dsh_home):
    shop = DATA / "workspaces" / "shopcart"
    s, _ = make_suggester(shop, dsh_home, WorkspaceGraph.build(shop), warm=True)
    wrapped = json.dumps({"output": HITS, "exit_code": 0})
    post(s, "Bash", {"command": "grep -rn price src tests"}, wrapped, session="wrapped")
    post(s, "Bash", {"command": "grep -rn price src tests"}, HITS, session="plain")
    seen = {k: s.noise.session(k).evidence.seen for k in ("wrapped", "plain")}
    assert seen["wrapped"] == seen["plain"] == {"src/shopcart/pricing.py", "src/shopcart/cart.py", "tests/test_cart.py"}


def test_the_result_paths_of_a_wrapped_result_are_those_of_the_text_it_wraps():
    call = {"command": "grep -rn price src tests"}
    plain = parse_call("Bash", call, HITS).result_paths
    assert plain == ["src/shopcart/pricing.py", "src/shopcart/cart.py", "tests/test_cart.py"]
    assert parse_call("Bash", call, unwrapped(json.dumps({"stdout": HITS, "stderr": ""}))).result_paths == plain
    assert parse_call("Bash", call, unwrapped(json.dumps(HITS))).result_paths == plain  # a JSON string


def test_what_is_not_a_wrapped_text_is_read_as_it_is():
    assert unwrapped(HITS) == HITS
    assert unwrapped(None) is None and unwrapped("") == ""
    for text in (
        '{"output": "a.py:1:x\\nb.py',  # cut
        "{" * 100_000,  # not JSON
        '{"a":' * 5_000 + "1" + "}" * 5_000,  # nested past the parser's depth
        '{"exit_code": 0, "files": ["a.py"]}',  # no string value at the top level
        "[1, 2]",
    ):
        assert unwrapped(text) == text
    long = json.dumps({"output": "a.py:1:x\n" * (MAX_WRAPPED_CHARS // 9)})
    assert len(long) > MAX_WRAPPED_CHARS and unwrapped(long) == long  # over the bound: not parsed
    # the JSON itself follows the text it wraps: its path fields stay readable
    tool = json.dumps({"summary": "1 match", "file_path": "src/a.ts#436-1706"})
    assert unwrapped(tool) == f"1 match\nsrc/a.ts#436-1706\n{tool}"
    assert parse_call("Grep", {"pattern": "x"}, unwrapped(tool)).result_paths == ["src/a.ts"]


def test_a_wrapped_result_is_parsed_once_per_call(dsh_home, monkeypatch):
    """The call's parse and the session's evidence read the same result object: one JSON parse."""
    from dsh_sidecar.suggester.parse import results

    parses: list[str] = []
    loads = json.loads

    def counting(text, *args, **kwargs):
        parses.append(text)
        return loads(text, *args, **kwargs)

    monkeypatch.setattr(results.json, "loads", counting)
    shop = DATA / "workspaces" / "shopcart"
    s, _ = make_suggester(shop, dsh_home, WorkspaceGraph.build(shop), warm=True)
    wrapped = json.dumps({"output": HITS, "exit_code": 0})
    post(s, "Bash", {"command": "grep -rn price src tests"}, wrapped, session="once")
    assert parses == [wrapped]
    assert s.noise.session("once").evidence.seen == {
        "src/shopcart/pricing.py",
        "src/shopcart/cart.py",
        "tests/test_cart.py",
    }
    again = json.dumps({"output": HITS, "exit_code": 1})  # another call's result: parsed anew
    post(s, "Bash", {"command": "grep -rn price src tests"}, again, session="once")
    assert parses == [wrapped, again]
