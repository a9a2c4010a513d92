"""Suggester intents: the built-in packs (python, node, rust, go, generic), Symbol/Usage from
the workspace graph, the identifier extraction, untrusted repo packs, hot reload."""

from __future__ import annotations

import os

import pytest
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.suggester import Suggester
from dsh_sidecar.suggester.candidates import FileIndex, Target, resolve
from dsh_sidecar.suggester.notes import MAX_NOTE_CHARS, make_note
from dsh_sidecar.suggester.packs import Candidate, PackError, builtin_packs, check_regex, parse_pack, search
from dsh_sidecar.suggester.parse import parse_call as make_probe
from dsh_sidecar.suggester.parse.patterns import identifier
from dsh_sidecar.workspace import WorkspaceGraph
from support.sidecar import home_env
from support.suggester import call, ledger_messages, make_suggester
from support.trees import write_tree


def note_of(s: Suggester, name: str, inp: dict, **kw):
    notes = s.post_execute(call(name, inp, **kw))
    return (notes[0].source.intent, notes[0].source.targets) if notes else None


# ---------------------------------------------------------------- identifier extraction


@pytest.mark.parametrize(
    "tool, inp, expected",
    [
        ("grep", {"pattern": "class Session"}, "Session"),
        ("bash", {"command": 'rg -n "def merge_setting" src'}, "merge_setting"),
        ("bash", {"command": "git grep TruncateRunes"}, "TruncateRunes"),
        ("bash", {"command": "grep -rn -e 'func (s *Str) TruncateRunes' ."}, "TruncateRunes"),
        ("bash", {"command": "rg -t py -A 3 'def\\s+merge_setting\\(' src"}, "merge_setting"),
        ("grep", {"pattern": "session\\.merge_setting\\("}, "merge_setting"),
        ("grep", {"pattern": "import Cart"}, "Cart"),
        ("grep", {"pattern": "MAX_DISCOUNT_PERCENT"}, "MAX_DISCOUNT_PERCENT"),
        ("grep", {"pattern": "a|b"}, None),
    ],
)
def test_identifier_of_a_search(tool, inp, expected):
    assert identifier(make_probe(tool, inp).patterns[0]) == expected


# ---------------------------------------------------------------- Symbol / Usage from the graph


def test_symbol_and_usage_name_real_files(shopcart, dsh_home):
    graph = WorkspaceGraph.build(shopcart)
    s, lines = make_suggester(shopcart, dsh_home, graph, maxNotesPerTurn=5, cooldownCalls=0)
    notes = s.post_execute(call("grep", {"pattern": "class Cart"}))
    assert notes[0].source.intent == "Symbol"
    assert notes[0].source.targets[0] == "src/shopcart/cart.py"
    assert "- src/shopcart/cart.py — defines Cart" in notes[0].text
    assert note_of(s, "bash", {"command": 'rg -n "def merge_items" src'}, session="b") == (
        "Symbol",
        ["src/shopcart/cart.py", "src/shopcart/api.py", "tests/test_cart.py"],  # code before tests
    )
    assert note_of(s, "bash", {"command": 'rg -n "def merge_items" src tests'}, session="b2") == (
        "Symbol",
        ["src/shopcart/cart.py", "tests/test_cart.py", "src/shopcart/api.py"],  # scoped: tests first
    )
    intent, targets = note_of(s, "bash", {"command": "git grep apply_discount"}, session="c")
    assert intent == "Usage"
    # ranked by the session's evidence: the file defining the searched name leads, then the
    # uses in the resolver's order (every fixture file changed at one time: path order), the test last
    assert targets == [
        "src/shopcart/pricing.py",
        "src/shopcart/__init__.py",
        "src/shopcart/api.py",
        "tests/test_pricing.py",
    ]
    assert ledger_messages(lines)[-1] == (
        "suggest Usage 0.96 4 targets src/shopcart/pricing.py,src/shopcart/__init__.py,"
        "src/shopcart/api.py,tests/test_pricing.py"
    )


def test_symbol_without_graph_degrades_to_pack_globs(shopcart, dsh_home):
    s, lines = make_suggester(shopcart, dsh_home)  # no symbol index
    assert note_of(s, "grep", {"pattern": "class Cart"}) == ("Symbol", ["src/shopcart/__init__.py"])
    # Usage has no fallback path: an unknown identifier abstains
    assert s.post_execute(call("bash", {"command": "git grep apply_discount"}, session="x")) == []
    assert ledger_messages(lines)[-1] == "abstained no-companions Usage 0.96"


def test_unknown_identifier_abstains(shopcart, dsh_home):
    s, lines = make_suggester(shopcart, dsh_home, WorkspaceGraph.build(shopcart))
    assert s.post_execute(call("grep", {"pattern": "frobnicate_widget"})) == []
    assert ledger_messages(lines)[-1] == "abstained no-companions Usage 0.96"


# ---------------------------------------------------------------- built-in packs


#: Each built-in pack alone on a small workspace of its ecosystem: the files, then the calls in
#: order on one suggester with their (intent, targets), then the activation line (None: not checked).
PACK_CASES = {
    "node": (
        {
            "package.json": '{"name": "web", "version": "2.0.0", "main": "src/index.js", "dependencies": {"react": "18"}}\n',
            "tsconfig.json": '{"compilerOptions": {"baseUrl": ".", "paths": {"@/*": ["src/*"]}}}\n',
            "src/index.js": "export const x = 1;\n",
            "jest.config.js": "module.exports = {};\n",
            "eslint.config.js": "export default [];\n",
            "pnpm-lock.yaml": "lockfileVersion: 9\n",
        },
        [
            ("grep", {"pattern": '"version":'}, ("Version", ["package.json"])),
            ("grep", {"pattern": "baseUrl"}, ("Path", ["tsconfig.json", "package.json"])),
            ("grep", {"pattern": "devDependencies"}, ("Dependency", ["package.json", "pnpm-lock.yaml"])),
            ("grep", {"pattern": "describe("}, ("Test", ["jest.config.js"])),
            ("glob", {"pattern": "eslint*"}, ("Config", ["eslint.config.js"])),
        ],
        "activated (packs node intents 8 threshold 0.75)",
    ),
    "rust": (
        {
            "Cargo.toml": '[package]\nname = "c"\nversion = "0.3.0"\n\n[features]\nfast = []\n\n[dependencies]\nserde = "1"\n',
            "Cargo.lock": "# generated\n",
            "src/lib.rs": "pub fn truncate_runes(s: &str) -> &str { s }\n",
            "tests/it.rs": "#[test]\nfn t() {}\n",
        },
        [
            ("grep", {"pattern": "CARGO_PKG_VERSION"}, ("Version", ["Cargo.toml"])),
            ("grep", {"pattern": "[dependencies]"}, ("Dependency", ["Cargo.toml", "Cargo.lock"])),
            ("grep", {"pattern": "#[test]"}, ("Test", ["tests/it.rs"])),
            ("grep", {"pattern": "cfg(feature"}, ("Config", ["Cargo.toml"])),
        ],
        None,
    ),
    "generic-alone": (
        {
            "README.md": "# plain\n",
            "CHANGELOG.md": "# Changes\n",
            "MAINTAINERS": "ann\n",
            "LICENSE": "MIT\n",
            ".gitlab-ci.yml": "test: {script: [make]}\n",
        },
        [
            ("grep", {"pattern": "changelog"}, ("Ledger", ["CHANGELOG.md"])),
            ("grep", {"pattern": "maintainers"}, ("Owner", ["MAINTAINERS", "LICENSE"])),
            ("grep", {"pattern": "gitlab-ci"}, ("Config", [".gitlab-ci.yml"])),
            ("grep", {"pattern": "documentation"}, ("Doc", ["README.md"])),
        ],
        "activated (packs generic intents 10 threshold 0.75)",
    ),
}


@pytest.mark.parametrize("files, calls, activated", PACK_CASES.values(), ids=PACK_CASES.keys())
def test_builtin_pack(tmp_path, dsh_home, files, calls, activated):
    root = write_tree(tmp_path / "ws", files)
    # the pack's intents and targets, before the per-note confidence (test_suggester_confidence.py)
    s, lines = make_suggester(root, dsh_home, maxNotesPerTurn=10, cooldownCalls=0, minConfidence=0)
    assert [note_of(s, tool, inp) for tool, inp, _ in calls] == [expected for _, _, expected in calls]
    if activated is not None:
        assert ledger_messages(lines)[0] == activated


def test_go_pack_and_symbol(tmp_path, dsh_home):
    root = write_tree(
        tmp_path / "gomod",
        {
            "go.mod": "module example.com/strs\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n",
            "go.sum": "golang.org/x/text v0.14.0 h1:x\n",
            "version.go": 'package strs\n\nconst Version = "1.4.0"\n',
            "strs.go": "package strs\n\nfunc TruncateRunes(s string, n int) string { return s }\n",
            "cmd/cut/main.go": 'package main\n\nimport "example.com/strs"\n\nfunc main() { strs.TruncateRunes("a", 1) }\n',
            "strs_test.go": 'package strs\n\nimport "testing"\n\nfunc TestTruncate(t *testing.T) { TruncateRunes("a", 1) }\n',
        },
    )
    graph = WorkspaceGraph.build(root)
    s, _ = make_suggester(root, dsh_home, graph, maxNotesPerTurn=10, cooldownCalls=0)
    assert note_of(s, "grep", {"pattern": "const Version"}) == ("Version", ["version.go"])
    assert note_of(s, "grep", {"pattern": "go.sum"}) == ("Dependency", ["go.mod", "go.sum"])
    assert note_of(s, "bash", {"command": "go test ./..."}) is None  # not a search
    intent, targets = note_of(s, "bash", {"command": "git grep TruncateRunes"})
    # the definition leads (ranking by evidence), code before tests
    assert (intent, targets) == ("Usage", ["strs.go", "cmd/cut/main.go", "strs_test.go"])
    assert note_of(s, "grep", {"pattern": "func TruncateRunes"}, session="2")[1][0] == "strs.go"


def test_every_builtin_candidate_has_a_reason_and_every_intent_is_covered():
    intents = set()
    for loaded in builtin_packs():
        for name, row in loaded.pack.intents.items():
            intents.add(name)
            # a row speaks through its regex signals, or (the generic pack) through the
            # structural evidence alone, with graph/results candidates
            assert row.candidates, (loaded.pack.id, name)
            assert row.signals or all(c.results or c.frames or c.kind or c.symbol for c in row.candidates), (
                loaded.pack.id,
                name,
            )
            assert all(c.reason.strip() for c in row.candidates)
    assert intents == {"Version", "Path", "Ledger", "Config", "Dependency", "Test", "Symbol", "Doc", "Usage", "Owner"}


def test_destructive_thresholds_and_single_weak_signals():
    from dsh_sidecar.suggester.gate import gate

    for loaded in builtin_packs():
        for name, row in loaded.pack.intents.items():
            threshold = row.threshold or (0.85 if name in ("Version", "Path", "Ledger") else 0.75)
            for sig in row.signals:
                if sig.weight < 1.7:  # a weak signal alone never crosses any threshold
                    assert gate(sig.weight) < threshold, (loaded.pack.id, name, sig.pattern)


def test_write_calls_never_note(shopcart, dsh_home):
    s, lines = make_suggester(shopcart, dsh_home)
    assert s.post_execute(call("Edit", {"file_path": "CHANGELOG.md", "old_string": "changelog"})) == []
    assert s.post_execute(call("Write", {"path": "src/shopcart/__init__.py", "content": "__version__"})) == []
    assert not any(" suggest " in f" {m}" for m in ledger_messages(lines))


def test_reads_never_note_and_a_searched_file_read_whole_is_not_named_again(shopcart, dsh_home):
    s, lines = make_suggester(shopcart, dsh_home)
    assert s.post_execute(call("Read", {"file_path": "src/shopcart/settings.py"})) == []
    assert s.post_execute(call("bash", {"command": "cat pyproject.toml"})) == []
    assert ledger_messages(lines) == []  # a read is where a search ends: no classification, no line
    # the file just read whole is the only target of a search inside it: silence, one line
    assert s.post_execute(call("Grep", {"pattern": "dependencies", "path": "pyproject.toml"})) == []
    assert ledger_messages(lines)[-1] == "suppressed recent Dependency"
    # read in part (head), the same search names it: the rest of the file is what it asks for
    s2, lines2 = make_suggester(shopcart, dsh_home)
    s2.post_execute(call("bash", {"command": "head -5 pyproject.toml"}, session="b"))
    assert note_of(s2, "Grep", {"pattern": "dependencies", "path": "pyproject.toml"}, session="b") == (
        "Dependency",
        ["pyproject.toml"],
    )


# ---------------------------------------------------------------- note shape


def test_note_is_short_and_capped_at_five_targets():
    targets = [Target(f"src/{'deep/' * 20}file{i}.py", "r" * 120, 0.5) for i in range(9)]
    note = make_note("Usage", "the uses", targets)
    assert len(note.text) <= MAX_NOTE_CHARS
    assert 1 <= len(note.source.targets) <= 5
    assert all(t in note.text for t in note.source.targets)
    assert note.source.kind == "search-suggester" and note.source.form == "notice" and note.source.intent == "Usage"


USES, DEFINITION = "the uses of the searched name", "the definition of the searched name"


def heading(note) -> str:
    return note.text.split("\n", 1)[0]


@pytest.mark.parametrize(
    "about, relations, expected",
    [
        # the lines of the symbol index, mixed: both named, in the lines' order
        (USES, ["definitions", "usages"], "the definition and the uses of the searched name"),
        (USES, ["usages", "definitions", "usages"], "the uses and the definition of the searched name"),
        (DEFINITION, ["definitions", "usages"], "the definition and the uses of the searched name"),
        # one relation: the one the lines are, whichever intent's pack asked
        (USES, ["definitions"], DEFINITION),
        (DEFINITION, ["usages", "usages"], USES),
        (USES, ["usages"], USES),
        # a line from another candidate (a path, the search's results): the pack's about
        (USES, ["usages", None], USES),
        ("the package version", [None], "the package version"),
    ],
)
def test_the_heading_says_what_the_lines_are(about, relations, expected):
    targets = [Target(f"src/m{i}.py", "uses X", 0.5, relation) for i, relation in enumerate(relations)]
    note = make_note("Usage", about, targets)
    assert heading(note) == f"search-suggester: in this repository, look here for {expected}:"
    assert note.source.targets == [t.path for t in targets]


def test_the_heading_counts_only_the_lines_the_note_lists():
    """A line past the note's budget is not listed: the heading names only the listed lines."""
    definition = Target("src/" + "d" * 520 + ".py", "defines X", 0.9, "definitions")
    uses = Target("src/caller.py", "uses X", 1.0, "usages")
    note = make_note("Usage", USES, [uses, definition])
    assert note.source.targets == ["src/caller.py"]
    assert heading(note) == f"search-suggester: in this repository, look here for {USES}:"


def test_a_usage_note_naming_the_definition_says_so(tmp_path, dsh_home):
    """A grep for a constant: the Usage note lists where it is defined and where it is used,
    and its heading says both, in the order of its lines (it said only "the uses")."""
    root = write_tree(
        tmp_path / "pkg",
        {
            "pyproject.toml": '[project]\nname = "pkg"\nversion = "1.0"\n',
            "src/pkg/__init__.py": "",
            "src/pkg/policy.py": "from typing import Final\n\nDEFAULT_DISCOUNT: Final = 0.99\n",
            "src/pkg/config.py": "from pkg.policy import DEFAULT_DISCOUNT\n\nDISCOUNT = DEFAULT_DISCOUNT\n",
        },
    )
    s, _ = make_suggester(root, dsh_home, WorkspaceGraph.build(root))
    notes = s.post_execute(call("grep", {"pattern": "DEFAULT_DISCOUNT"}))
    assert notes[0].source.intent == "Usage"
    assert notes[0].text == (
        "search-suggester: in this repository, look here for the definition and the uses of the searched name:\n"
        "- src/pkg/policy.py — defines DEFAULT_DISCOUNT\n"
        "- src/pkg/config.py — uses DEFAULT_DISCOUNT"
    )


# ---------------------------------------------------------------- untrusted packs


def test_symlink_candidate_pointing_out_is_refused(shopcart, dsh_home, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("password")
    os.symlink(secret, shopcart / "settings.local.py")
    (shopcart / ".dsh").mkdir()
    (shopcart / ".dsh" / "pack.yml").write_text(
        "id: mine\nintents:\n  Config:\n    signals:\n      - {pattern: 'local settings', weight: 2.0}\n"
        "    candidates:\n      - {path: settings.local.py, reason: local overrides}\n"
        "      - {path: src/shopcart/settings.py, reason: the settings}\n"
    )
    s, lines = make_suggester(shopcart, dsh_home)
    assert note_of(s, "grep", {"pattern": "local settings"}) == ("Config", ["src/shopcart/settings.py"])
    assert "pack refused (candidate settings.local.py: resolves outside the workspace)" in ledger_messages(lines)


def test_huge_repo_pack_is_refused_and_builtins_keep_working(shopcart, dsh_home):
    (shopcart / ".dsh").mkdir()
    (shopcart / ".dsh" / "pack.yml").write_text("id: big\n# " + "x" * 300_000 + "\n")
    s, lines = make_suggester(shopcart, dsh_home)
    assert note_of(s, "grep", {"pattern": "__version__"})[0] == "Version"
    refused = [m for m in ledger_messages(lines) if m.startswith("pack refused")]
    assert len(refused) == 1 and refused[0].endswith("larger than 256 KiB)")


def test_user_layer_pack_overrides_repo_pack(shopcart, dsh_home):
    (shopcart / ".dsh").mkdir()
    (shopcart / ".dsh" / "pack.yml").write_text(
        "id: repo\nintents:\n  Doc:\n    signals: [{pattern: 'handbook', weight: 2.0}]\n"
        "    candidates: [{path: README.md, reason: repo says}]\n"
    )
    user = dsh_home / "search-suggester" / "workspaces"
    user.mkdir(parents=True)
    (user / "shopcart.yml").write_text(
        "id: user\nintents:\n  Doc:\n    signals: [{pattern: 'handbook', weight: 2.0}]\n"
        "    candidates: [{path: docs/index.md, reason: user says}]\n"
    )
    s, lines = make_suggester(shopcart, dsh_home)
    assert note_of(s, "grep", {"pattern": "handbook"}) == ("Doc", ["docs/index.md"])
    assert ledger_messages(lines)[0].startswith("activated (packs user,repo,generic,python intents 10 ")


def test_the_seeds_user_layer_path_is_read_too_and_ours_wins(shopcart, dsh_home):
    """The plan's user layer is ``~/.dsh/playform/workspaces/<slug>.yml`` (``$DSH_HOME/playform``);
    ours, ``$DSH_HOME/search-suggester/workspaces/<slug>.yml``, is read beside it and wins an
    intent both define."""
    seed = dsh_home / "playform" / "workspaces"
    seed.mkdir(parents=True)
    (seed / "shopcart.yml").write_text(
        "id: seed\nintents:\n  Doc:\n    signals: [{pattern: 'handbook', weight: 2.0}]\n"
        "    candidates: [{path: README.md, reason: the seed's layer says}]\n"
    )
    s, lines = make_suggester(shopcart, dsh_home)
    assert note_of(s, "grep", {"pattern": "handbook"}) == ("Doc", ["README.md"])
    assert ledger_messages(lines)[0].startswith("activated (packs seed,generic,python intents 10 ")
    ours = dsh_home / "search-suggester" / "workspaces"
    ours.mkdir(parents=True)
    (ours / "shopcart.yml").write_text(
        "id: ours\nintents:\n  Doc:\n    signals: [{pattern: 'handbook', weight: 2.0}]\n"
        "    candidates: [{path: docs/index.md, reason: ours says}]\n"
    )
    s, lines = make_suggester(shopcart, dsh_home)
    assert note_of(s, "grep", {"pattern": "handbook"}) == ("Doc", ["docs/index.md"])
    assert ledger_messages(lines)[0].startswith("activated (packs ours,seed,generic,python intents 10 ")


def test_regex_timeout_is_no_match():
    # nested quantifiers are refused statically; a pattern that slips through is bounded at run time
    with pytest.raises(ValueError, match="catastrophic"):
        check_regex("(x+x+)+y")
    slow = check_regex("(?:x|xx|xxx)*y")  # passes the static check (no quantifier inside the group)
    assert search(slow, "x" * 40 + "y")
    assert search(slow, "x" * 5000) is False  # exponential without the timeout; here: bounded


def test_candidate_needs_exactly_one_source():
    with pytest.raises(PackError, match="exactly one of path, symbol, kind, results or frames"):
        parse_pack("id: x\nintents:\n  Symbol:\n    candidates: [{reason: r}]\n", "repo")
    with pytest.raises(PackError, match="exactly one of path, symbol, kind, results or frames"):
        parse_pack("id: x\nintents:\n  Symbol:\n    candidates: [{frames: true, results: true, reason: r}]\n", "repo")
    assert Candidate(frames=True, reason="the traceback passes here ({name})").per_call
    with pytest.raises(PackError, match="contains applies to path candidates only"):
        parse_pack(
            "id: x\nintents:\n  Symbol:\n    candidates: [{symbol: definitions, contains: a, reason: r}]\n", "repo"
        )
    assert Candidate(symbol="usages", reason="uses {name}").path is None


def test_glob_index_matches_pathspec(tmp_path):
    files = [
        "a/b/_version.py",
        "_version.py",
        "tests/test_a.py",
        "tests/sub/test_b.py",
        "requirements-dev.txt",
        "x/requirements.txt",
        ".github/workflows/ci.yml",
        "docs/changelog.rst",
    ]
    index = FileIndex(tmp_path, sorted(files))  # the listing is sorted
    assert index.glob("**/_version.py") == ["_version.py", "a/b/_version.py"]
    assert index.glob("tests/test_*.py") == ["tests/test_a.py"]
    assert index.glob("requirements*.txt") == ["requirements-dev.txt", "x/requirements.txt"]
    assert index.glob(".github/workflows/*.yml") == [".github/workflows/ci.yml"]
    assert index.glob("docs/changelog.*") == ["docs/changelog.rst"]
    assert resolve([Candidate(path="tests/test_*.py", reason="r")], index)[0].path == "tests/test_a.py"


# ---------------------------------------------------------------- configuration


def test_volatile_knobs_hot_reload_and_structural_rebuild(shopcart, dsh_home):
    env = home_env(dsh_home)
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True, "indexPath": "/old/index.json"}}), shopcart, env)
    core = sidecar.suggester
    sidecar.reconfigure({"suggester": {"enabled": True, "cooldownCalls": 0, "maxNotesPerTurn": 3}})
    assert sidecar.suggester is core and core.config.cooldown_calls == 0 and core.config.max_notes_per_turn == 3
    sidecar.reconfigure({"suggester": {"enabled": True, "persistPath": str(dsh_home / "k2.json")}})
    assert sidecar.suggester is not core
    assert sidecar.suggester.config.persist_path == str(dsh_home / "k2.json")


def test_symlinked_dsh_folder_out_of_the_workspace_is_refused(shopcart, dsh_home, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "pack.yml").write_text("id: outside\nreplace: true\nintents: {}\n")
    os.symlink(elsewhere, shopcart / ".dsh")
    s, lines = make_suggester(shopcart, dsh_home)
    assert note_of(s, "grep", {"pattern": "__version__"})[0] == "Version"
    refused = [m for m in ledger_messages(lines) if m.startswith("pack refused")]
    assert refused == [
        f"pack refused ({shopcart.resolve() / '.dsh' / 'pack.yml'}: resolves outside the workspace "
        "(a symlinked folder); packs must live in it)"
    ]


def test_kind_members_follow_the_facts_lists_they_were_built_from(tmp_path):
    from dsh_sidecar.suggester.candidates import FileIndex

    index = FileIndex(tmp_path, ["a.py", "tests/test_a.py", "tests/test_b.py"])
    assert index.kind_members("test") == frozenset()
    index.facts = {"test": ["tests/test_a.py"]}
    first = index.kind_members("test")
    assert first == {"tests/test_a.py"} and index.kind_members("test") is first  # built once
    index.facts["test"].append("tests/test_b.py")  # the list grew
    assert index.kind_members("test") == {"tests/test_a.py", "tests/test_b.py"}
    index.facts = {"test": ["tests/test_b.py"]}  # a new list
    assert index.kind_members("test") == {"tests/test_b.py"}
