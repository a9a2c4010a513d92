"""A final answer's text is untrusted (Claude Code's Stop hook sends the model's last message,
which quotes whatever it read, up to 200,000 characters read): finding the URLs it cites
(``bandit/usage.py``) is linear in its length. Trimming the punctuation after a URL counted its
parentheses again for each ``)`` taken off, and copied the URL each time: a URL followed by
40,000 ``)`` took 2.4 s, 200,000 a minute of CPU on the Stop hook's thread (holding the GIL the
event loop needs, the hook unanswered). Run in a forked child, so a regression fails instead of
hanging the run."""

from __future__ import annotations

import pytest
from dsh_sidecar.bandit.usage import MAX_ANSWER_CHARS, cited_urls
from support.secutil import finishes_in_child


@pytest.mark.parametrize(
    "text",
    [
        "https://a" + ")" * MAX_ANSWER_CHARS,
        "https://a" + ".)" * (MAX_ANSWER_CHARS // 2),
        "see https://a" + "(" * 1000 + ")" * MAX_ANSWER_CHARS,
        ("https://a" + ")" * 4000 + " ") * 50,
    ],
    ids=["closing", "dots-and-closing", "some-opened", "many-urls"],
)
def test_the_punctuation_after_a_url_is_read_once(text):
    finishes_in_child(lambda: cited_urls(text), timeout=20)


def test_the_punctuation_after_a_url_is_still_trimmed():
    assert cited_urls("https://a" + ")" * 50_000) == ["https://a"]
    assert cited_urls("(https://x.example/Chain_(unit)).") == ["https://x.example/Chain_(unit)"]
    assert cited_urls("https://x.example/a((b)))).;") == ["https://x.example/a((b))"]
    assert cited_urls("https://x.example/" + "(" * 3 + ")" * 9 + "~_*") == ["https://x.example/((()))"]
