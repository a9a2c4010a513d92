"""A task text is untrusted (a harness's first user message, Claude Code's prompt, an MCP
``where_is`` question): the task lead's patterns over it (``suggester/lead/mentions.py``) are
linear. The fenced-code-block pattern tried a last line of backticks (or tildes) run length by
run length, each time reading the rest of the line for its end: 32,000 backticks (the most of a
task read) held the GIL 2.6 s per pass, two passes a text, on the worker thread the lead ranks
on, so the event loop's replies waited too. Run in a forked child, so a regression fails instead
of hanging the run."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.lead import mentions as lead_mentions
from dsh_sidecar.suggester.lead.mentions import MAX_TASK_CHARS, mentions
from support.secutil import finishes_in_child

FENCE = lead_mentions._FENCE


@pytest.mark.parametrize(
    "text",
    [
        "`" * 400_000,
        "~" * 400_000,
        "   " + "`" * 400_000,
        "intro\n" + "`" * 400_000,
        ("`" * 4000 + "\n") * 50 + "~" * 200_000,
    ],
    ids=["backticks", "tildes", "indented", "last-line", "closed-then-open"],
)
def test_a_run_of_fence_characters_without_a_line_end_is_read_once(text):
    finishes_in_child(lambda: (list(FENCE.finditer(text)), FENCE.sub("\n", text)), timeout=20)


def test_fences_are_still_read_as_fences():
    text = "Title\n```py\nCart.total()\n```\nprose `x`\n~~~~\nsecond\n~~~~\n```\nunclosed\n"
    assert [m.group(2) for m in FENCE.finditer(text)] == ["Cart.total()\n", "second\n", "unclosed\n"]
    assert FENCE.sub("\n", text) == "Title\n\n\nprose `x`\n\n\n\n"
    assert [m.group(2) for m in FENCE.finditer("```\n" + "`" * 50)] == ["`" * 50]  # the open fence runs to the end


def test_a_task_text_of_backticks_names_nothing():
    def read() -> None:
        assert mentions("`" * MAX_TASK_CHARS).empty and mentions("~" * MAX_TASK_CHARS).empty

    finishes_in_child(read, timeout=20)
