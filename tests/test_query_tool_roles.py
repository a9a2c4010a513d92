"""Tool calls read by role (``suggester/parse/roles.py``) and the paths of each family's result
format (``parse/results.py``), on the shapes harnesses send."""

from __future__ import annotations

import pytest
from dsh_sidecar.suggester.parse import parse_call
from dsh_sidecar.suggester.parse.results import result_paths
from dsh_sidecar.suggester.parse.roles import KEY_WORDS, SYMBOL_WORDS, VERB_WORDS, key_role, name_words, read_tool

# ------------------------------------------------------------------ tools by role


def shape(q):
    return (q.tool, q.patterns, q.name_patterns, q.scope, q.reads, q.partial)


@pytest.mark.parametrize(
    ("name", "inp", "expected"),
    [
        # Claude Code: exactly as before
        (
            "Grep",
            {"pattern": "def evolve", "path": "src", "glob": "*.py"},
            ("grep", ["def evolve"], ["*.py"], ["src"], [], False),
        ),
        ("Glob", {"pattern": "**/*.toml", "path": "src"}, ("glob", [], ["**/*.toml"], ["src"], [], False)),
        ("Read", {"file_path": "a.py", "offset": 0, "limit": 10}, ("read", [], [], [], ["a.py"], True)),
        # SWE-agent
        ("search_dir", {"search_term": "boxWrap(str", "dir": "lib"}, ("grep", ["boxWrap(str"], [], ["lib"], [], False)),
        ("find_file", {"file_name": "help.js", "dir": "./lib"}, ("glob", [], ["help.js"], ["lib"], [], False)),
        ("open", {"path": "lib/help.js", "line_number": 696}, ("read", [], [], [], ["lib/help.js"], True)),
        # a search tool that takes a file (not a folder) finds lines inside it: a read
        (
            "search_file",
            {"search_term": "argLine", "file": "gson/pom.xml"},
            ("read", [], [], [], ["gson/pom.xml"], True),
        ),
        # Rovo Dev
        (
            "grep",
            {"content_pattern": "convertPrimitive", "path_glob": "**/ClassHelper.java"},
            ("grep", ["convertPrimitive"], ["**/ClassHelper.java"], [], [], False),
        ),
        ("grep", {"path_glob": "**/*Filter*.java"}, ("glob", [], ["**/*Filter*.java"], [], [], False)),
        ("expand_folder", {"folder_path": "dubbo-rpc/src"}, ("glob", [], [], ["dubbo-rpc/src"], [], False)),
        ("open_files", {"file_paths": ["a/B.java", "a/C.java"]}, ("read", [], [], [], ["a/B.java", "a/C.java"], False)),
        ("inspect_code", {"file_path": "a/B.java", "patterns": ["m"]}, ("read", [], [], [], ["a/B.java"], True)),
        (
            "expand_code_chunks",
            {"file_path": "a/B.java", "line_ranges": [[0, 9]]},
            ("read", [], [], [], ["a/B.java"], True),
        ),
        # iSWE: a symbol lookup is the search for its definition, or for its name (callers)
        (
            "get_class_info",
            {"class_name": "org.apache.dubbo.rpc.RpcContext"},
            ("grep", ["class RpcContext"], [], [], [], False),
        ),
        # a method is looked up as its class (it is defined inside it), a module's function as itself
        (
            "get_method_info",
            {"method_name": "ClassHelper.convertPrimitive"},
            ("grep", ["class ClassHelper", "function convertPrimitive"], [], [], [], False),
        ),
        ("get_method_info", {"method_name": "utils.merge"}, ("grep", ["function merge"], [], [], [], False)),
        ("get_symbol_info", {"symbol_name": "NetUtils"}, ("grep", ["NetUtils"], [], [], [], False)),
        ("get_function_callers", {"function_name": "a.b.RpcUtils.isOneway"}, ("grep", ["isOneway"], [], [], [], False)),
        ("get_file_info", {"file_path": "a/B.java"}, ("read", [], [], [], ["a/B.java"], False)),
        # Codex's MCP tools (pando)
        (
            "mcp__pando-extension__find-nodes",
            {"symbolKinds": ["function"], "name": "createApp", "scopeNode": "src/node/app.ts"},
            ("grep", ["function createApp"], [], ["src/node/app.ts"], [], False),
        ),
        (
            "mcp__pando-extension__get-content",
            {"target": "src/node/cli.ts"},
            ("read", [], [], [], ["src/node/cli.ts"], False),
        ),
        # harnesses the corpus has no runs of: read by the same roles
        (
            "search_files",
            {"path": "src", "regex": "retry_after", "file_pattern": "*.ts"},
            ("grep", ["retry_after"], ["*.ts"], ["src"], [], False),
        ),
        (
            "grep_search",
            {"query": "MaxRetry", "include_pattern": "*.cs", "exclude_pattern": "*.g.cs"},
            ("grep", ["MaxRetry"], ["*.cs"], [], [], False),
        ),
        ("file_search", {"query": "retry_policy"}, ("glob", [], ["retry_policy"], [], [], False)),
        ("list_dir", {"relative_workspace_path": "docs"}, ("glob", [], [], ["docs"], [], False)),
        ("read_file", {"target_file": "a.py", "start_line_one_indexed": 3}, ("read", [], [], [], ["a.py"], True)),
        (
            "search_file_content",
            {"pattern": "setup\\(", "include": "*.py", "dir_path": "pkg"},
            ("grep", ["setup\\("], ["*.py"], ["pkg"], [], False),
        ),
        ("list_directory", {"dir_path": "pkg"}, ("glob", [], [], ["pkg"], [], False)),
        ("read_many_files", {"paths": ["a.md", "b.md"]}, ("read", [], [], [], ["a.md", "b.md"], False)),
        (
            "find_by_name",
            {"SearchDirectory": "src", "Pattern": "*retry*", "Extensions": ["py"]},
            ("glob", [], ["*retry*", "*.py"], ["src"], [], False),
        ),
        (
            "view_file",
            {"AbsolutePath": "/w/a.py", "StartLine": 1, "EndLine": 9},
            ("read", [], [], [], ["/w/a.py"], True),
        ),
        ("find_path", {"glob": "**/config.toml"}, ("glob", [], ["**/config.toml"], [], [], False)),
        (
            "list_code_usages",
            {"symbolName": "Retry", "filePaths": ["src/a.ts"]},
            ("grep", ["Retry"], [], ["src/a.ts"], [], False),
        ),
        # outside the workspace: nothing to search
        ("WebSearch", {"query": "retry policy"}, ("other", [], [], [], [], False)),
        ("web_fetch", {"url": "https://x.org/a.py"}, ("other", [], [], [], [], False)),
        ("TodoWrite", {"todos": []}, ("write", [], [], [], [], False)),
    ],
)
def test_a_tool_is_read_by_its_verb_and_its_fields_roles(name, inp, expected):
    assert shape(parse_call(name, inp)) == expected


def test_shell_tools_of_every_family_read_their_command():
    for name, inp in [
        ("execute_bash", {"command": "grep -rn 'class CircuitStateController' src"}),
        ("run_terminal_cmd", {"command": "grep -rn 'class CircuitStateController' src"}),
        ("execute_command", {"command": "grep -rn 'class CircuitStateController' src"}),
        ("run_command", {"CommandLine": "grep -rn 'class CircuitStateController' src", "Cwd": "/w"}),
        ("shell", {"command": ["bash", "-lc", "grep -rn 'class CircuitStateController' src"]}),
    ]:
        q = parse_call(name, inp)
        assert (q.tool, q.patterns, q.scope, q.commands) == (
            "bash",
            ["class CircuitStateController"],
            ["src"],
            ["grep"],
        ), name


def test_edit_tools_of_every_family_write_their_files():
    assert parse_call(
        "search_replace", {"edits": [{"file_path": "a/B.java", "search": "x", "replace": "y"}]}
    ).reads == ["a/B.java"]
    assert parse_call("apply_patch", {"changes": [{"path": "/testbed/src/x.js", "kind": "update"}]}).reads == [
        "/testbed/src/x.js"
    ]
    for name, inp in [
        ("find_and_replace_code", {"file_path": "a/B.java", "find": "x", "replace": "y"}),
        ("create_file", {"file_path": "a/B.java", "initial_content": "class B {}"}),
        ("delete_file", {"file_path": "a/B.java"}),
        ("write_to_file", {"path": "a/B.java", "content": "class B {}"}),
        ("replace_in_file", {"path": "a/B.java", "diff": "…"}),
    ]:
        q = parse_call(name, inp)
        assert (q.tool, q.reads) == ("write", ["a/B.java"]), name
    # a Python file written whole by a tool never seen is a script like Write's
    created = parse_call("create_file", {"file_path": "r.py", "initial_content": "import shop\nshop.checkout()\n"})
    assert created.script == [("shop", "checkout")]
    # and Python code run inline (OpenHands' IPython cell)
    assert parse_call("execute_ipython_cell", {"code": "from shop.cart import Cart\nCart()\n"}).script == [
        ("shop.cart", "Cart")
    ]


def test_an_editor_view_reads_a_file_or_lists_a_folder_as_its_result_says():
    folder = "Here's the files and directories up to 2 levels deep in include/fmt, excluding hidden items:\ninclude/fmt/args.h\n"
    q = parse_call("str_replace_editor", {"command": "view", "path": "include/fmt"}, folder)
    assert (q.tool, q.scope, q.reads, q.listing, q.result_paths) == (
        "glob",
        ["include/fmt"],
        [],
        True,
        ["include/fmt/args.h"],
    )
    file_view = "Here's the result of running `cat -n` on /w/a.py:\n     1\timport os\n"
    q = parse_call("str_replace_editor", {"command": "view", "path": "a.py", "view_range": [1, 9]}, file_view)
    assert (q.tool, q.reads, q.partial) == ("read", ["a.py"], True)
    assert parse_call("str_replace_editor", {"command": "str_replace", "path": "a.py"}).tool == "write"


def test_a_search_term_is_literal_and_a_regex_field_is_a_regex():
    assert parse_call("search_dir", {"search_term": "Safelist.relaxed()"}).literals == []
    assert parse_call("search_dir", {"search_term": "could not find (x)"}).literals == ["could not find (x)"]
    assert parse_call("search_files", {"regex": "could not find (x)", "path": "."}).literals == ["could not find"]


def test_name_words_split_mcp_prefixes_and_humps():
    assert name_words("mcp__pando-extension__find-nodes") == ["find", "nodes"]
    assert name_words("getClassInfo") == ["get", "class", "info"]
    assert name_words("run_terminal_cmd") == ["run", "terminal", "cmd"]


def test_every_table_entry_names_the_harnesses_that_use_it():
    for table in (VERB_WORDS, KEY_WORDS, SYMBOL_WORDS):
        for word, (_, harnesses) in table.items():
            assert harnesses and all(h.replace("-", "").isalnum() for h in harnesses.split()), word
    assert read_tool("search_dir", {"search_term": "x", "dir": "a"}).used == [
        "verb:search",
        "key:term",
        "key:search",
        "key:dir",
    ]


@pytest.mark.parametrize(
    ("key", "role"),
    [
        ("content_pattern", "content"),
        ("path_glob", "name"),
        ("file_pattern", "name"),
        ("include_pattern", "name"),
        ("exclude_pattern", "exclude"),
        ("search_term", "content"),
        ("substring_pattern", "content"),
        ("folder_path", "scope"),
        ("target_directories", "scope"),
        ("SearchPath", "scope"),
        ("file_paths", "file"),
        ("target_file", "file"),
        ("file_name", "ctx:filename"),
        ("class_name", "symbol"),
        ("symbolName", "symbol"),
        ("symbolKinds", "kind"),
        ("line_ranges", "slice"),
        ("start_line_one_indexed", "slice"),
        ("view_range", "slice"),
        ("initial_content", "body"),
        ("file_text", "body"),
        ("CommandLine", "command"),
        ("ignore_case", "case"),
        ("CaseInsensitive", "case"),
        ("case_sensitive", "casesensitive"),
        ("isRegexp", "regexflag"),
        ("qMode", ""),
        ("max_chain_size", ""),
        ("pattern", "ctx:pattern"),
        ("path", "ctx:path"),
    ],
)
def test_a_fields_role_is_composed_from_the_words_of_its_key(key, role):
    assert key_role(key)[0] == role


def test_role_reading_never_raises_on_odd_inputs():
    for inp in (
        {},
        {"pattern": None},
        {"file_paths": [1, None, "a"]},
        {"command": {"x": 1}},
        {"edits": [[[[["deep"]]]]]},
    ):
        for name in ("grep", "open_files", "find-nodes", "search_replace", "run", "x", ""):
            parse_call(name, inp)  # type: ignore[arg-type]
    assert parse_call("grep", "not a dict").tool == "other"  # type: ignore[arg-type]


# ------------------------------------------------------------------ result formats


@pytest.mark.parametrize(
    ("text", "paths"),
    [
        (  # SWE-agent search_dir
            'Found 19 matches for "boxWrap" in tests:\ntests/a.test.js (2 matches)\ntests/b.test.js (17 matches)\n'
            'End of matches for "boxWrap" in tests',
            ["tests/a.test.js", "tests/b.test.js"],
        ),
        ('Found 1 matches for "setup.py" in ./:\nsetup.py (1 matches)', ["setup.py"]),
        (  # Rovo Dev expand_folder: names under folder headers
            "pkg/:\n\npkg/src/:\n\npkg/src/rpc/:\nExporter.java\nFilter.java\n\npkg/src/rpc/cluster/:\nDirectory.java",
            ["pkg/src/rpc/Exporter.java", "pkg/src/rpc/Filter.java", "pkg/src/rpc/cluster/Directory.java"],
        ),
        (".:\nsetup.py\n\n./src:\na.py", ["setup.py", "src/a.py"]),  # ls -R
        ("Directory listing for /w/src:\n[DIR] sub\nfile1.txt", ["/w/src/sub", "/w/src/file1.txt"]),  # Gemini CLI
        (  # iSWE symbol tools
            "Information about `class` - `a.b.C`\n\nDefined in file: mod/src/main/java/a/b/C.java\n\nDefinition starts at line: 3",
            ["mod/src/main/java/a/b/C.java"],
        ),
        ("Name: `a.b.C.m`\nFile: mod/src/main/java/a/b/C.java\nLines: 266-285", ["mod/src/main/java/a/b/C.java"]),
        (  # an MCP tool's JSON, cut mid-way
            '{\n  "results": [\n    {\n      "file_path": "src/node/app.ts",\n      "path": "src/node/app.ts#436-1706:Fn@p6',
            ["src/node/app.ts"],
        ),
        (
            "src/a.py:12:    for x in y:\nsrc/b.py:3:x",
            ["src/a.py", "src/b.py"],
        ),  # a hit line ending in ':' is no header
    ],
)
def test_result_paths_of_each_familys_listing_format(text, paths):
    assert result_paths(text) == paths


def test_a_search_glob_naming_one_file_searches_in_that_file():
    """``grep {content_pattern, path_glob: "**/ClassHelper.java"}`` asks what ``grep x
    path/ClassHelper.java`` asks: the listed files the glob names (at most three) are the files
    it searches in; a glob of a kind of file, or naming none or many, stays a glob."""
    from pathlib import Path

    from dsh_sidecar.suggester.candidates import FileIndex
    from dsh_sidecar.suggester.paths import WorkspacePaths

    files = [
        "a/src/ClassHelper.java",
        "a/src/Other.java",
        "b/pom.xml",
        "pom.xml",
        *[f"m{i}/build.gradle" for i in range(4)],
    ]
    paths = WorkspacePaths(Path("/nonexistent"), FileIndex(Path("/nonexistent"), files))

    def rel(name, inp):
        q = paths.relative(parse_call(name, inp))
        return q.scope, q.name_patterns

    assert rel("grep", {"content_pattern": "convert", "path_glob": "**/ClassHelper.java"}) == (
        ["a/src/ClassHelper.java"],
        [],
    )
    assert rel("bash", {"command": "grep -rn '<version>' --include=pom.xml ."}) == (["b/pom.xml", "pom.xml"], [])
    assert rel("bash", {"command": "grep -rn okhttp --include=build.gradle ."}) == ([""], ["build.gradle"])  # four
    assert rel("grep", {"content_pattern": "x", "path_glob": "**/*.java"}) == ([], ["**/*.java"])
    assert rel("grep", {"content_pattern": "x", "path_glob": "**/Missing.java"}) == ([], ["**/Missing.java"])
    assert rel("Glob", {"pattern": "**/ClassHelper.java"}) == ([], ["**/ClassHelper.java"])  # a listing lists
