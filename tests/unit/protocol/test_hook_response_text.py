"""Claude Code's ``tool_response`` as the text the suggester reads (``mcp/hooks.py``): a
listing's paths one per line, as the tool printed them, so that what the call showed is read
(a note naming it back is an echo)."""

from __future__ import annotations

from dsh_sidecar.mcp.hooks import response_text


def test_tool_responses_are_read_as_the_tool_printed_them():
    bash = {"stdout": "./src/a.py:3:x = 1\n./src/b.py:4:y", "stderr": "", "interrupted": False}
    assert response_text(bash) == "./src/a.py:3:x = 1\n./src/b.py:4:y"
    assert response_text({"stdout": "out", "stderr": "err"}) == "out\nerr"
    grep = {"mode": "files_with_matches", "filenames": ["/w/src/a.py", "/w/src/b.py"], "numFiles": 2}
    assert response_text(grep) == "/w/src/a.py\n/w/src/b.py"
    assert response_text({"mode": "content", "content": "src/a.py:3:x", "numLines": 1}) == "src/a.py:3:x"
    assert response_text("plain") == "plain"
    assert response_text({"other": 1}) == '{"other": 1}'
    assert response_text(None) is None and response_text("") is None
    assert response_text({"filenames": ["a", 3, None]}) == "a"
