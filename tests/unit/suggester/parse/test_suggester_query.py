"""The query model (suggester/parse/) on commands written the way agents write them."""

from __future__ import annotations

import dataclasses

import pytest
from dsh_sidecar.suggester.parse import parse_call, search_shaped
from dsh_sidecar.suggester.parse.patterns import fixed_parts, identifier, names, words_of
from dsh_sidecar.suggester.parse.results import result_paths
from dsh_sidecar.suggester.parse.shell import split_commands


def bash(command, result=None):
    return parse_call("Bash", {"command": command}, result)


# ------------------------------------------------------------------ regex fixed parts


@pytest.mark.parametrize(
    ("pattern", "dialect", "expected"),
    [
        (r"class\s+Session\b", "ere", ["class", "Session"]),
        (r"def merge_setting\(", "ere", ["def merge_setting("]),
        (r"colou?r", "ere", ["colo", "r"]),
        (r"foo|bar_baz", "ere", ["foo", "bar_baz"]),
        (r"__version__\s*=", "ere", ["__version__", "="]),
        (r"(get|set)_value", "ere", ["get", "set", "_value"]),
        (r"\.version", "ere", [".version"]),
        (r"x{2,3}y", "ere", ["y"]),
        (r"[Cc]onfig[A-Z]\w+", "ere", ["onfig"]),
        (r"def \(foo\|bar_x\)", "bre", ["def", "foo", "bar_x"]),
        (r"a+b?(c)", "bre", ["a+b?(c)"]),
        (r"^import .*Session$", "ere", ["import", "Session"]),
        ("a.b(c", "fixed", ["a.b(c"]),
        ("   ", "fixed", []),
    ],
)
def test_fixed_parts(pattern, dialect, expected):
    assert fixed_parts(pattern, dialect) == expected


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("class Session", "Session"),
        (r"def\s+merge_setting", "merge_setting"),
        (r"^func \(c \*Client\) DoRequest", "DoRequest"),
        ("pub fn parse_args", "parse_args"),
        ("export function useStore", "useStore"),
        ("WSIReader", "WSIReader"),
        ("connection refused", "connection"),
        ("import requests_mock", "requests_mock"),
        ("id", None),
        ("", None),
        (r"\s+", None),
    ],
)
def test_identifier(pattern, expected):
    assert identifier(pattern) == expected


# ------------------------------------------------------------------ shell splitting


def test_split_commands_pipelines_lists_substitutions_and_cd():
    cmds = split_commands("cd sphinx && grep -rn 'x' . | head -5; echo $(rg -l TODO)")
    assert [(c.name, c.cwd) for c in cmds] == [
        ("grep", "sphinx"),
        ("head", "sphinx"),
        ("rg", "sphinx"),
        ("echo", "sphinx"),
    ]
    assert [c.name for c in split_commands("FOO=1 timeout 10 xargs -0 grep -l x")] == ["grep"]
    assert [c.name for c in split_commands("find . -name '*.py' -exec grep -l Foo {} \\;")] == ["find", "grep"]
    assert [c.name for c in split_commands(["bash", "-lc", "rg -n foo | head"])] == ["rg", "head"]
    assert [c.name for c in split_commands("for f in *.py; do cat $f; done")] == ["cat"]
    # bashlex refuses this ([[ … ]]); the shlex fallback still finds the grep
    assert "grep" in [c.name for c in split_commands("[[ -d src ]] && grep -r Foo src")]
    assert [c.name for c in split_commands("grep 'unbalanced")] == ["grep"]


# ------------------------------------------------------------------ grep family


def test_grep_recursive_bare_identifier():
    q = bash("grep -r WSIReader")
    assert (q.tool, q.patterns, q.terms, q.flags, q.scope) == ("bash", ["WSIReader"], ["WSIReader"], {"r"}, [])
    assert q.identifier == "WSIReader"


def test_grep_combined_flags_include_and_literal():
    q = bash("grep -rli 'connection refused' --include=*.py src/")
    assert q.patterns == ["connection refused"]
    assert q.literals == ["connection refused"]
    assert q.flags == {"r", "l", "i"}
    assert q.name_patterns == ["*.py"]
    assert q.scope == ["src"]
    assert q.languages == {"python"}


def test_grep_include_as_separate_word_and_E_alternation():
    q = bash("grep -E 'foo|bar_baz' -r lib --include '*.js'")
    assert q.terms == ["foo", "bar_baz"]
    assert q.identifier == "bar_baz"
    assert (q.name_patterns, q.scope, q.languages) == (["*.js"], ["lib"], {"javascript"})


def test_grep_e_option_and_context_values():
    q = bash("grep -n -A 3 -e 'def load_config' -e LoadConfig src tests")
    assert q.patterns == ["def load_config", "LoadConfig"]
    assert q.scope == ["src", "tests"]
    assert q.identifier == "load_config"


def test_bre_alternation_in_plain_grep():
    q = bash(r"grep -rn 'def \(foo\|bar_x\)' .")
    assert q.terms == ["foo", "bar_x"]
    assert q.scope == [""]  # '' = the workspace root


def test_error_message_literal():
    q = bash('grep -rn "could not find a version that satisfies" --include="*.py" .')
    assert q.literals == ["could not find a version that satisfies"]
    assert "satisfies" in q.terms


def test_rg_glob_type_and_list_form():
    q = parse_call("shell", {"command": ["rg", "-n", "-t", "py", "-g", "!tests/*", "def foo_bar", "lib"]})
    assert q.tool == "bash"
    assert q.patterns == ["def foo_bar"]
    assert q.languages == {"python"}
    assert q.name_patterns == ["!tests/*"]
    assert q.scope == ["lib"]
    assert q.flags == {"n"}


def test_rg_files_with_matches_and_fixed_strings():
    q = bash("rg -lF 'a.b(c' --type=rust")
    assert q.flags == {"l", "F"}
    assert q.terms == []  # 'a', 'b', 'c' are too short
    assert q.languages == {"rust"}


def test_git_grep_pathspec_and_cd():
    q = bash("cd sphinx && git grep -n 'class Builder' -- '*.py' 'doc/'")
    assert q.commands == ["git grep"]
    assert q.name_patterns == ["sphinx/*.py"]  # relative to the folder cd went to
    assert q.scope == ["sphinx/doc"]
    assert q.identifier == "Builder"
    assert q.definition_keyword == "class"


# ------------------------------------------------------------------ find / fd / ls / glob


def test_find_name_iname_path_and_exclusions():
    q = bash("find . -name '*.toml' -not -path './node_modules/*'")
    assert q.name_patterns == ["*.toml"]
    assert q.scope == [""]
    q = bash("find src docs -type f -iname 'changelog*'")
    assert (q.name_patterns, q.scope, q.flags) == (["changelog*"], ["src", "docs"], {"i"})
    q = bash("find . -path '*/tests/*' -name 'test_*.py' | xargs grep -l fixture")
    assert q.name_patterns == ["*/tests/*", "test_*.py"]
    assert q.patterns == ["fixture"]


def test_fd_extension_pattern_and_path():
    q = bash("fd -e rs config crates")
    assert (q.patterns, q.name_patterns, q.scope, q.languages) == (["config"], ["*.rs"], ["crates"], {"rust"})
    q = bash("fd -g 'HISTORY*'")
    assert q.name_patterns == ["HISTORY*"]


def test_ls_and_glob_tool():
    q = bash("ls -la docs/ *.md")
    assert (q.scope, q.name_patterns) == (["docs"], ["*.md"])
    q = parse_call("Glob", {"pattern": "**/HISTORY*", "path": "./pkg"})
    assert (q.tool, q.name_patterns, q.scope) == ("glob", ["**/HISTORY*"], ["pkg"])


# ------------------------------------------------------------------ readers


def test_cat_head_sed_nl_reads():
    assert bash("cat setup.py | head -50").reads == ["setup.py"]
    assert bash("sed -n '1,80p' astropy/units/core.py").reads == ["astropy/units/core.py"]
    assert bash("nl -ba src/x.py | sed -n '10,20p'").reads == ["src/x.py"]
    assert bash("head -n 40 ./tox.ini").reads == ["tox.ini"]
    assert bash("cd pkg && cat ../README.md").reads == ["README.md"]


def test_jq_keys_and_awk_regex():
    q = bash("jq -r .version package.json")
    # jq/awk query a file (its scope), they do not read it to the agent
    assert (q.tool, q.keys, q.terms, q.scope, q.reads) == ("bash", ["version"], ["version"], ["package.json"], [])
    q = bash("jq '.dependencies | keys' package.json")
    assert q.keys == ["dependencies"]
    q = bash("awk '/^version/ {print}' pyproject.toml")
    assert (q.patterns, q.scope) == (["^version"], ["pyproject.toml"])


def test_non_search_commands_are_other():
    for cmd in ("python -m pytest -q tests/", "make lint", "pip install -e .", "git status", "echo hi"):
        assert bash(cmd).tool == "other", cmd
    assert search_shaped("cd src && git grep -n TruncateRunes")
    assert search_shaped(["rg", "x"])
    assert not search_shaped("npm test")


def test_tool_inputs():
    q = parse_call("Grep", {"pattern": r"class\s+Session\b", "path": "src", "glob": "*.py", "-i": True})
    assert (q.tool, q.terms, q.scope, q.name_patterns, q.languages) == (
        "grep",
        ["Session"],
        ["src"],
        ["*.py"],
        {"python"},
    )
    assert "i" in q.flags and q.identifier == "Session"
    assert q.text == r"class\s+Session\b *.py src"
    q = parse_call("Read", {"file_path": "./src/app/settings.py"})
    assert (q.tool, q.reads, q.languages) == ("read", ["src/app/settings.py"], {"python"})
    q = parse_call("Edit", {"file_path": "CHANGELOG.md", "old_string": "a", "new_string": "b"})
    assert (q.tool, q.reads, q.search) == ("write", ["CHANGELOG.md"], False)
    assert parse_call("WebFetch", {"url": "https://x"}).tool == "other"


# ------------------------------------------------------------------ result paths


def test_result_paths_found_n_files_absolute_and_relative():
    text = "Found 3 files\n/repo/src/a.py\nsrc/b/c.py\ndocs/x.md"
    assert result_paths(text) == ["/repo/src/a.py", "src/b/c.py", "docs/x.md"]


def test_result_paths_hit_lines_context_and_heading():
    text = (
        "src/a.py:12:    def foo():\nsrc/a.py-13-    return 1\n--\n./lib/b.js:3:bar()\n"
        "Binary file dist/x.bin matches\nREADME.md:1:# x\n"
    )
    assert result_paths(text) == ["src/a.py", "lib/b.js", "README.md"]
    heading = "sympy/core/basic.py\n12:class Basic:\n40:    def args(self):\n\nsympy/core/expr.py\n5:from .basic import Basic\n"
    assert result_paths(heading) == ["sympy/core/basic.py", "sympy/core/expr.py"]
    # a file name with a dash is read whole: counts (`-c`), hits and context lines of it
    dashed = "test/compile-test.cc:3\nsrc/use-form.ts:12:  x()\nsrc/use-form.ts-13-  y()\nsrc/get-head.go-7-  z\n"
    assert result_paths(dashed) == ["test/compile-test.cc", "src/use-form.ts", "src/get-head.go"]


def test_result_paths_skip_code_and_prose():
    text = "No files found\nTraceback (most recent call last):\n  x = 1\nhttps://example.com/a.py\n42\n"
    assert result_paths(text) == []


def test_result_paths_skip_a_path_the_tool_cut():
    # Rovo Dev cuts a long result where it stops printing: the last line's path is a fragment
    text = (
        'common/src/main/java/org/x/UtilAll.java:119:        String[] w = when.split(";");\n'
        "common/src/main/java/org/ap...\n"
        "src/a.py:3:x = 1 \u2026\n"
        "src/long_na\u2026\n"
    )
    assert result_paths(text) == ["common/src/main/java/org/x/UtilAll.java", "src/a.py"]


def test_result_paths_in_query_exclude_the_read_file():
    q = bash("grep -rn Foo src", "src/a.py:1:Foo\nsrc/b.py:2:Foo()")
    assert q.result_paths == ["src/a.py", "src/b.py"]
    assert parse_call("Read", {"file_path": "a.py"}, "a.py:1: x").result_paths == []
    assert parse_call("Grep", {"pattern": "x"}, "a.py", is_error=True).result_paths == []


def test_free_text_question_is_read_by_the_query_model():
    from dsh_sidecar.suggester import evidence
    from dsh_sidecar.suggester.parse import QUESTION_TOOL

    q = parse_call(QUESTION_TOOL, {"query": "package version"})
    assert (q.tool, q.question, q.search, q.patterns, q.terms, q.identifier) == (
        QUESTION_TOOL,
        True,
        True,
        ["package version"],
        ["package", "version"],
        None,
    )
    assert parse_call(QUESTION_TOOL, {"query": "where is LatexPrinter defined"}).identifier == "LatexPrinter"
    assert parse_call(QUESTION_TOOL, {"query": "apply_discount"}).identifier == "apply_discount"
    assert parse_call(QUESTION_TOOL, {"query": 3}).search is False

    def intent(text):
        w = evidence.weights(parse_call(QUESTION_TOOL, {"query": text}))
        return next((i for i, v in w.items() if v > 0), None)

    assert [intent(t) for t in ("package version", "changelog", "code owners", "test config", "ci workflow")] == [
        "Version",
        "Ledger",
        "Owner",
        "Test",
        "Config",
    ]
    assert [intent(t) for t in ("dependencies", "docs for retry", "zebra giraffe")] == ["Dependency", "Doc", None]
    assert evidence.weights(parse_call(QUESTION_TOOL, {"query": "package version"}))["Version"] == evidence.SCOPE


def test_a_querys_identifier_is_its_own_after_a_replace():
    q = parse_call("Grep", {"pattern": "def main"})
    assert q.identifier == "main"
    assert q.identifier == "main"  # read again: the same
    other = dataclasses.replace(q, patterns=["class Cart"])
    assert other.identifier == "Cart"
    assert q.identifier == "main"
    assert dataclasses.replace(q) == q  # the kept reading is no field: equality is the fields'


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        ("class Session", ("Session", "class")),
        (r"void\s+setStrictness", ("setStrictness", "void")),
        ("let self", (None, "let")),  # a stop word is no identifier, its keyword still a definition's
        ("def f", (None, None)),  # a name shorter than MIN_CHARS: no definition
        ("WSIReader", ("WSIReader", None)),
        ("", (None, None)),
    ],
)
def test_one_reading_of_a_pattern_gives_its_identifier_and_its_definition_keyword(pattern, expected):
    assert names(pattern) == expected
    assert names(pattern)[0] == identifier(pattern)


def test_a_querys_identifier_and_keyword_are_each_the_first_patterns_that_has_one():
    q = dataclasses.replace(parse_call("Grep", {"pattern": "x"}), patterns=["let self", "class Cart"])
    assert (q.identifier, q.definition_keyword) == ("Cart", "let")


def test_a_patterns_terms_and_literals_are_kept_per_dialect():
    from dsh_sidecar.suggester.parse import patterns

    patterns._kept_words_of.cache_clear()
    assert words_of("could not find (config|settings)", "ere") == (
        ("could", "find", "config", "settings"),
        ("could not find",),
    )
    assert words_of("could not find (config|settings)", "fixed") == (
        ("could", "find", "config", "settings"),
        ("could not find (config|settings)",),
    )
    assert patterns._kept_words_of.cache_info().currsize == 2
    long = "x" * patterns.MEMO_PATTERN_CHARS + " yy zzz"
    assert words_of(long, "ere") == (("zzz",), (long,))  # a name past MAX_CHARS is no term
    assert patterns._kept_words_of.cache_info().currsize == 2  # a longer pattern is read each time


def test_fixed_parts_are_kept_bounded_and_never_shared():
    from dsh_sidecar.suggester.parse import patterns

    patterns._kept_fixed_parts.cache_clear()
    first = fixed_parts(r"def\s+merge_setting", "ere")
    first.append("changed by the caller")
    assert fixed_parts(r"def\s+merge_setting", "ere") == ["def", "merge_setting"]
    assert patterns._kept_fixed_parts.cache_info().hits == 1
    assert fixed_parts(r"def\s+merge_setting", "bre") == ["def", "+merge_setting"]  # its own entry: BRE + is literal
    long = "x" * patterns.MEMO_PATTERN_CHARS + "|y"
    assert fixed_parts(long, "ere") == ["x" * patterns.MEMO_PATTERN_CHARS, "y"]
    assert patterns._kept_fixed_parts.cache_info().currsize == 2  # a longer pattern is read each time
    for i in range(patterns.MEMO_PATTERNS + 10):
        fixed_parts(f"name{i}", "ere")
    assert patterns._kept_fixed_parts.cache_info().currsize == patterns.MEMO_PATTERNS


def test_a_querys_identifier_and_definition_keyword_are_read_once_and_kept():
    import dataclasses

    q = parse_call("Grep", {"pattern": r"class\s+Session_store"})
    assert "identifier" not in q.__dict__
    assert (q.identifier, q.definition_keyword) == ("Session_store", "class")
    assert (q.__dict__["identifier"], q.__dict__["definition_keyword"]) == ("Session_store", "class")
    other = dataclasses.replace(q, patterns=["def merge_setting"])
    assert (other.identifier, other.definition_keyword) == ("merge_setting", "def")  # a new query reads its own
    assert q == dataclasses.replace(q)  # the kept values are no fields


@pytest.mark.parametrize(
    ("tool", "inp", "keyword", "name"),
    [
        ("Bash", {"command": "grep -rn 'void setStrictness' gson/src/main/java"}, "void", "setStrictness"),
        ("Grep", {"pattern": r"auto join\(", "path": "include/fmt"}, "auto", "join"),
        ("Grep", {"pattern": r"public static void main\("}, "void", "main"),
        ("Bash", {"command": "grep -rn 'setStrictness' gson/src"}, None, "setStrictness"),
        ("Grep", {"pattern": "void"}, None, None),
    ],
    ids=["java return type", "c++ deduced return", "modifiers first", "no keyword", "the keyword alone"],
)
def test_a_c_family_return_type_that_is_only_ever_one_reads_as_a_definition_keyword(tool, inp, keyword, name):
    q = parse_call(tool, inp)
    assert (q.definition_keyword, q.identifier) == (keyword, name)
