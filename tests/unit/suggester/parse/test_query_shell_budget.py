"""The shell parse's work budget (``suggester/parse/budget.py``) and bounds (``parse/shell.py``):
the line that sent bashlex into an endless loop, fuzzed lines, cut scripts, quotes and comments."""

from __future__ import annotations

import contextlib
import random

import pytest
from dsh_sidecar.suggester.parse import budget, parse_call, shell
from hypothesis import given, settings
from hypothesis import strategies as st

# ------------------------------------------------------------------ the shell parse is bounded

#: The line that sent bashlex into an endless loop (77-121 s, 17 GB before it was killed):
#: ``${`` without its ``}`` inside a quoted part of a word.
ENDLESS = "5&c']${[Y>$Y'9{&b`3"


def test_the_endless_line_is_refused_at_once_and_read_by_the_fallback():
    with pytest.raises(budget.ParseRefused, match="went back"):
        budget.parse_bounded(ENDLESS)
    assert budget.spent() < 50
    with pytest.raises(budget.ParseRefused):
        budget.parse_bounded("echo c'${'")
    shell.shell_words.cache_clear()
    assert shell.shell_words(ENDLESS) == tuple(tuple(w) for w in shell._shlex_commands(ENDLESS))
    assert parse_call("bash", {"command": ENDLESS}).tool == "other"


def test_a_parse_never_spends_more_than_its_budget():
    line = "echo " + "$(a " * 8 + "x" * 50 + ")" * 8  # ~9 units a character: re-read at each level
    with pytest.raises(budget.ParseRefused, match="over budget"):
        budget.parse_bounded(line, 100)
    assert budget.spent() == 100
    assert budget.parse_bounded(line)  # within the product's budget
    assert budget.spent() <= budget.budget_for(line)
    # whatever the length, at most MAX_UNITS: 8 nested $( around 3 KB (read 9 times) is refused
    assert budget.budget_for("x" * 4000) == budget.MAX_UNITS == 8192
    deep = "echo " + "$(a " * 8 + "x" * 3000 + ")" * 8
    with pytest.raises(budget.ParseRefused, match="over budget"):
        budget.parse_bounded(deep)
    assert shell.shell_words(deep) == tuple(tuple(w) for w in shell._shlex_commands(deep))  # the fallback's


SHELLISH = st.text(alphabet=list("${}()[]'\"`;&|<>#\\~=*?! \n-/.abcY59"), max_size=24)


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(SHELLISH)
def test_fuzzed_lines_end_within_the_budget(line):
    with contextlib.suppress(Exception):  # bashlex's own refusals and the budget's
        budget.parse_bounded(line)
    assert budget.spent() <= budget.budget_for(line)
    shell.shell_words(line)  # never raises


def test_fuzzed_lines_of_the_endless_kind_end():
    rng = random.Random(34)
    for _ in range(300):
        word = "".join(rng.choice("ab$'{}[<>`9") for _ in range(rng.randint(3, 12)))
        line = f"x{word}'${{{word}'"
        with contextlib.suppress(Exception):
            budget.parse_bounded(line)
        assert budget.spent() <= budget.budget_for(line)


def test_a_cut_inline_script_is_read_up_to_its_last_whole_statement():
    script = "import keras\nfrom keras import ops\nx = ops.nonzero(1)\n" + "print('case %d')\n" * 300
    line = f'cd /w && python3 -c "{script}"'[:4000]  # cut inside the quoted script, as MAX_INPUT_CHARS cuts it
    q = parse_call("bash", {"command": line})
    assert q.commands == ["python3"]
    assert q.script == [("keras", "ops")]


def test_quotes_and_comments_do_not_nest():
    assert shell._shell_head('node -e "' + "{" * 12 + "x" + "}" * 12 + '"') == (
        'node -e "' + "{" * 12 + "x" + "}" * 12 + '"',
        False,
    )
    assert shell._shell_head("awk '" + "(" * 12 + "'") == ("awk '" + "(" * 12 + "'", False)
    assert shell._shell_head('echo "' + "$(" * 9 + "x" + ")" * 9 + '"')[1] is True  # substitutions nest in "…"
    assert shell._shell_head("ls # it's fine") == ("ls # it's fine", False)  # a comment opens no quote
    assert shell._shell_head("echo 'cut") == ("echo 'cut'", False)
