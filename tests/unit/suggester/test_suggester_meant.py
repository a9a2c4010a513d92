"""A wrong guess of a path the workspace does not have, answered with where it most likely is
(``meant.py``, ``evidence.meant``): the ranking of the names alone, then the real sidecar's
notes and ledger lines on small trees of several ecosystems."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest
from dsh_sidecar.config import parse_config
from dsh_sidecar.sidecar import Sidecar
from dsh_sidecar.suggester.fileindex import FileIndex
from dsh_sidecar.suggester.meant import MAX_UNDER, _names_near, files_meant, files_under, folders_meant
from dsh_sidecar.suggester.meanttables import HEAVY, MeantTables, ancestors
from support.suggester import answer_in_own_session
from support.trees import write_tree

from bench.meant_lookups import (
    old_files_meant,
    old_folders_meant,
    scan_files_meant,
    scan_files_under,
    scan_folders_meant,
    synthetic,
)

LISTED = [
    "moshi/src/main/java/com/squareup/moshi/-JsonUtf8Writer.kt",
    "moshi/src/main/java/com/squareup/moshi/JsonWriter.kt",
    "moshi-kotlin/src/main/java/com/squareup/moshi/kotlin/JsonUtf8Writer.java",
    "test/Serilog.Tests/LoggerTests.cs",
    "src/Serilog/Logger.cs",
    "tests/test_client.py",
    "src/pkg/client.py",
    "support/cmake/fmt-config.cmake.in",
    "lib/router/index.js",
    "examples/basic.js",
    "examples/index.js",
]


def index(files: list[str] = LISTED) -> FileIndex:
    """The index of ``files`` with its missing-path tables built (after ready, in the server)."""
    ix = FileIndex(Path("/ws"), files)
    ix.build_meant()
    return ix


@pytest.mark.parametrize(
    ("guess", "meant"),
    [
        # a leading `-` (Kotlin's file-private names): the same stem, the folder words shared first
        (
            "moshi/src/main/java/com/squareup/moshi/JsonUtf8Writer.kt",
            [
                "moshi/src/main/java/com/squareup/moshi/-JsonUtf8Writer.kt",
                "moshi-kotlin/src/main/java/com/squareup/moshi/kotlin/JsonUtf8Writer.java",
            ],
        ),
        # the same name under another folder
        ("src/router/index.js", ["lib/router/index.js"]),
        # a test affix apart: the test of the same unit
        ("tests/LoggerTest.cs", ["test/Serilog.Tests/LoggerTests.cs"]),
        ("tests/client_test.py", ["tests/test_client.py"]),
        # a source name is not its test's: a test affix counts only between two test names
        ("src/Serilog/LoggerImpl.cs", []),
        # another case and extension
        ("SRC/PKG/Client.ts", ["src/pkg/client.py"]),
        # the guessed file is there: no wrong guess
        ("tests/test_client.py", []),
        # a common name in several folders, none sharing a folder word with the guess
        ("app/views/index.js", []),
        # nothing close, or a stem too short to stand for a name
        ("src/server.py", []),
        ("a.js", []),
    ],
)
def test_files_meant_by_name_then_path_terms(guess, meant):
    assert files_meant(guess, index()) == meant


@pytest.mark.parametrize(
    ("guess", "meant"),
    [
        ("tests", []),  # the folder is there
        ("spec", []),  # nothing close
        ("example", ["examples"]),
        ("cmake", ["support/cmake"]),  # the same name at another depth
        ("Lib", ["lib"]),  # another case
        ("test", []),  # the folder is there
        ("docsx", []),
        ("..", []),
    ],
)
def test_folders_meant(guess, meant):
    assert folders_meant(guess, index()) == meant


def test_a_folder_one_s_apart_is_meant():
    assert folders_meant("tests", index(["test/Serilog.Tests/LoggerTests.cs", "src/a.cs"])) == ["test"]
    assert folders_meant("spec/models", index(["specs/models/a_spec.rb", "models/a.rb"])) == ["specs/models", "models"]


def test_a_name_in_many_folders_is_meant_only_by_the_few_closest():
    snaps = [f"tests/t{i}/__snapshots__/jsfmt.spec.js.snap" for i in range(20)]
    # every one shares `tests` and `snapshots` with the guess: none is meant
    assert files_meant("tests/gone/__snapshots__/jsfmt.spec.js.snap", index(snaps)) == []
    # one shares a folder word more: it is
    assert files_meant("tests/t3x/t3/__snapshots__/jsfmt.spec.js.snap", index(snaps)) == [snaps[3]]


def test_a_stem_too_short_to_stand_for_a_name_looks_up_nothing_else():
    # a tree named in another script: every name's stem is empty (letters and digits of a-z, 0-9
    # only), and none can be meant by another; a miss read them all (60,000 names: ~240 ms of
    # CPU a call on the event loop, for no answer)
    names = [f"docs/p{i // 100}/{chr(0x4E00 + i)}.md" for i in range(2000)]
    tests = [f"t/test_ab{i}x.py" for i in range(3)] + ["t/ab_test.py", "t/test_ab.js"]
    ix = index([*names, *tests, "wiki/缺失.md"])
    tables = ix.meant
    assert tables is not None
    assert _names_near("缺失.md", tables) == ["缺失.md"]
    assert _names_near("ab_spec.py", tables) == ["ab_spec.py"]  # test core `ab`: too short
    # the same name under another folder is still meant; another name of an empty stem is not
    assert files_meant("docs/缺失.md", ix) == ["wiki/缺失.md"]
    assert files_meant("docs/p0/龙.md", ix) == []
    assert files_meant("t/test_ab.py", ix) == ["t/test_ab.js"]  # the same stem; not ab_test.py


def test_files_under_a_folder_are_bounded():
    many = [f"test/t{i:04d}_test.go" for i in range(MAX_UNDER + 50)] + ["test/a/x_test.go"]
    got = files_under("test", index(many))
    assert len(got) == MAX_UNDER
    assert got[0] == "test/t0000_test.go"


def _tables(t: MeantTables | None) -> dict[str, object]:
    """The tables with each list sorted (their order is the changes', never read as a rank)."""
    assert t is not None  # built
    return {
        "by_stem": t.by_stem.rows(),
        "by_core": t.by_core.rows(),
        "by_folder": t.by_folder.rows(),
        "dirs": t.dirs,
    }


def test_a_change_of_files_updates_each_table():
    before = index()
    after = before.with_changes(
        ["tests/LoggerTest.cs", "moshi/src/test/java/JsonWriterTest.kt", "Docs/Example/x.md"],
        ["examples/basic.js", "examples/index.js", "support/cmake/fmt-config.cmake.in"],
        {},
    )
    # each table as a build from the new listing makes it
    assert _tables(after.meant) == _tables(MeantTables.of(after.by_name, after.by_dir))
    # the stem and test-core tables: the new test names in, the last `basic.js` out
    assert after.meant.by_stem.get("loggertest") == ["LoggerTest.cs"]
    assert sorted(after.meant.by_core.get("logger")) == ["LoggerTest.cs", "LoggerTests.cs"]
    assert after.meant.by_core.get("jsonwriter") == ["JsonWriterTest.kt"]
    assert after.meant.by_stem.get("basic") == [] and after.meant.by_stem.get("index") == ["index.js"]
    # the folder table: folders with no file left go, new ones at every depth come
    assert after.meant.by_folder.get("examples") == [] and after.meant.by_folder.get("cmake") == []
    assert after.meant.by_folder.get("example") == ["Docs/Example"]
    assert after.meant.by_folder.get("docs") == ["Docs"]
    assert sorted(after.meant.by_folder.get("test")) == ["moshi/src/test", "test"]
    # the sorted folders
    assert after.meant.dirs == sorted(after.by_dir)
    assert "Docs/Example" in after.meant.dirs and "examples" not in after.meant.dirs
    # the answers read them
    assert folders_meant("examples", after) == ["Docs/Example"]
    assert files_under("Docs", after) == ["Docs/Example/x.md"]
    assert files_meant("tests/unit/LoggerTest.cs", after) == [
        "tests/LoggerTest.cs",
        "test/Serilog.Tests/LoggerTests.cs",
    ]
    # the index before is left as it was (copy on write)
    assert _tables(before.meant) == _tables(MeantTables.of(before.by_name, before.by_dir))
    assert folders_meant("examples", before) == []
    assert files_meant("tests/unit/LoggerTest.cs", before) == ["test/Serilog.Tests/LoggerTests.cs"]


def test_a_file_removed_then_listed_again_is_in_the_tables_again():
    # a name or folder whose last file `remove` forgot is no longer listed: listing it again
    # brings it back to the tables
    listed = index()
    listed.remove("examples/basic.js")
    listed.remove("examples/index.js")
    assert listed.meant.by_stem.get("basic") == [] and listed.meant.by_folder.get("examples") == []
    listed.add("examples/basic.js")
    assert listed.meant.by_stem.get("basic") == ["basic.js"]
    assert listed.meant.by_folder.get("examples") == ["examples"]
    assert "examples" in listed.meant.dirs
    assert files_meant("src/basic.js", listed) == ["examples/basic.js"]
    assert _tables(listed.meant) == _tables(MeantTables.of(listed.by_name, listed.by_dir))


def test_a_file_added_in_place_to_a_changed_index_is_listed_once():
    # with_changes gives the new index one list for its listing and its sorted listing: an add
    # in place appended the path to it and inserted it again (listed twice; the tables, built
    # again from it, then differed from a fresh build's)
    changed = index().with_changes(["docs/new.md"], ["examples/basic.js"], {})
    changed.add("lib/extra/thing.py")
    assert changed.files.count("lib/extra/thing.py") == 1
    assert sorted(changed.files) == sorted({*LISTED, "docs/new.md", "lib/extra/thing.py"} - {"examples/basic.js"})
    fresh = index(sorted(changed.files))
    assert _tables(changed.meant) == _tables(fresh.meant)
    assert _tables(changed.build_meant()) == _tables(fresh.meant)


def test_the_answer_abstains_until_the_tables_are_built():
    unbuilt = FileIndex(Path("/ws"), LISTED)
    assert unbuilt.meant is None
    assert files_meant("tests/LoggerTest.cs", unbuilt) == []
    assert folders_meant("Example", unbuilt) == []
    assert files_under("examples", unbuilt) == []
    # a change of files carries "not built": the new index is built on its own, never on the loop
    changed = unbuilt.with_changes(["tests/LoggerTest.cs"], [], {})
    edited = unbuilt.with_changes([], [], {}, modified=["src/Serilog/Logger.cs"])
    assert changed.meant is None and edited.meant is None
    unbuilt.build_meant()
    assert changed.meant is None and edited.meant is None  # a build of the older index stays on it
    assert files_meant("tests/LoggerTest.cs", unbuilt) == ["test/Serilog.Tests/LoggerTests.cs"]
    assert folders_meant("Example", unbuilt) == ["examples"]
    assert files_under("examples", unbuilt) == ["examples/basic.js", "examples/index.js"]
    changed.build_meant()
    assert files_meant("tests/unit/LoggerTest.cs", changed) == [
        "tests/LoggerTest.cs",
        "test/Serilog.Tests/LoggerTests.cs",
    ]


def test_the_build_on_its_thread_publishes_the_tables():
    ix = FileIndex(Path("/ws"), LISTED)
    assert ix.meant_soon() is None
    for _ in range(2000):
        if ix.meant is not None:
            break
        threading.Event().wait(0.01)
    assert ix.meant is not None
    assert _tables(ix.meant) == _tables(MeantTables.of(ix.by_name, ix.by_dir))
    assert folders_meant("Example", ix) == ["examples"]


def test_a_file_added_or_removed_during_the_build_ends_in_the_new_listing(monkeypatch):
    ix = FileIndex(Path("/ws"), LISTED)
    real, builds = MeantTables.of, []

    def of_while_changing(names, folders, paths_of=None):  # the event loop changes the listing mid-build
        builds.append(len(names))
        if len(builds) == 1:
            ix.add("Docs/Example/LoggerTest.cs")
            ix.remove("examples/basic.js")
        return real(names, folders, paths_of)

    monkeypatch.setattr(MeantTables, "of", of_while_changing)
    tables = ix.build_meant()
    assert len(builds) == 2  # the first build's tables were stale: built again
    assert ix.meant is tables
    monkeypatch.setattr(MeantTables, "of", real)
    assert _tables(tables) == _tables(MeantTables.of(ix.by_name, ix.by_dir))
    assert folders_meant("example", ix) == ["Docs/Example", "examples"]  # another case, then one `s` apart
    assert tables.by_stem.get("loggertest") == ["LoggerTest.cs"]
    assert files_under("examples", ix) == ["examples/index.js"]
    # once built, an in-place change updates the tables at once
    ix.add("lib/new/basic.js")
    assert ix.meant is not None and ix.meant.by_stem.get("basic") == ["basic.js"]
    assert _tables(ix.meant) == _tables(MeantTables.of(ix.by_name, ix.by_dir))


def _guesses(files: list[str], seed: int) -> list[str]:
    """Missing paths of every kind the answer has, made from listed ones."""
    rng = random.Random(seed)
    out = []
    for path in rng.sample(files, 25):
        folder, _, name = path.rpartition("/")
        stem, _, ext = name.rpartition(".")
        out += [
            f"gone/{name}",
            f"{folder}/x/{name.upper()}",
            f"{folder}/{stem}.other",
            f"src/{stem.replace('Test', 'Tests')}.{ext}",
            f"{folder}/{stem}Spec.{ext}",
            f"-{name}",
        ]
    return out


def test_the_tables_answer_as_the_pass_over_every_name_and_folder():
    files = synthetic(1200, seed=3)
    idx = index(files)
    changed = idx.with_changes(["tests/a/NewOneTest.java", "Tests/x.py"], files[::7], {})
    for ix in (idx, changed):
        folders = sorted({f for path in ix.files for f in ancestors(path.rpartition("/")[0])})
        picks = [*random.Random(5).sample(folders, 30), "tests", "test", "Examples", "spec", "specs", "zzz"]
        common = ["app/views/index.js", "gone/__init__.py", "core/mod.rs", "docs/README.md", "index.js"]
        for guess in [*_guesses(ix.files, seed=4), *common]:
            assert files_meant(guess, ix) == scan_files_meant(guess, ix), guess
        for folder in picks:
            for guess in (folder, folder.upper(), folder + "s", folder.rstrip("s"), "gone/" + folder):
                assert folders_meant(guess, ix) == scan_folders_meant(guess, ix), guess
            assert files_under(folder, ix) == scan_files_under(folder, ix), folder


KOTLIN = {
    "settings.gradle.kts": 'include(":moshi")\n',
    "moshi/build.gradle.kts": 'plugins { kotlin("jvm") }\n',
    "moshi/src/main/java/com/squareup/moshi/-JsonUtf8Writer.kt": "internal class JsonUtf8Writer : JsonWriter()\n",
    "moshi/src/main/java/com/squareup/moshi/JsonWriter.kt": "abstract class JsonWriter\n",
    "README.md": "# moshi\n",
}
DOTNET = {
    "Serilog.sln": "\n",
    "src/Serilog/Serilog.csproj": "<Project/>\n",
    "src/Serilog/Logger.cs": "namespace Serilog { class Logger {} }\n",
    "test/Serilog.Tests/Serilog.Tests.csproj": "<Project/>\n",
    "test/Serilog.Tests/LoggerTests.cs": "namespace Serilog.Tests { class LoggerTests {} }\n",
    "README.md": "# serilog\n",
}
CMAKE = {
    "CMakeLists.txt": "project(lib)\nadd_subdirectory(test)\n",
    "support/cmake/lib-config.cmake.in": "@PACKAGE_INIT@\n",
    "test/CMakeLists.txt": "add_subdirectory(gtest)\nadd_executable(a-test a-test.cc)\n",
    "test/gtest/CMakeLists.txt": "add_library(gtest gmock-gtest-all.cc)\n",
    "test/a-test.cc": "#include <gtest/gtest.h>\nTEST(A, B) {}\n",
    "src/a.cc": "int a() { return 1; }\n",
    "README.md": "# lib\n",
}
PYTHON = {
    "pyproject.toml": '[project]\nname = "pkg"\nversion = "1.0"\n',
    "src/pkg/__init__.py": "",
    "src/pkg/client.py": "class Client:\n    pass\n",
    "test/test_client.py": "def test_client():\n    pass\n",
    "README.md": "# pkg\n",
}


@pytest.mark.parametrize(
    ("files", "tool_call", "note", "ledger"),
    [
        (
            KOTLIN,
            (
                "bash",
                {"command": "cat moshi/src/main/java/com/squareup/moshi/JsonUtf8Writer.kt"},
                "cat: x: No such file",
            ),
            ("Symbol", ["moshi/src/main/java/com/squareup/moshi/-JsonUtf8Writer.kt"]),
            "suggest Symbol",
        ),
        (
            DOTNET,
            ("bash", {"command": "ls tests"}, "ls: cannot access 'tests': No such file or directory"),
            ("Test", ["test/Serilog.Tests/LoggerTests.cs", "test/Serilog.Tests/Serilog.Tests.csproj"]),
            "suggest Test",
        ),
        (
            DOTNET,
            ("find_file", {"file_name": "LoggerTest.cs"}, 'No matches found for "LoggerTest.cs" in /ws'),
            ("Test", ["test/Serilog.Tests/LoggerTests.cs"]),
            "suggest Test",
        ),
        (
            CMAKE,
            ("search_dir", {"search_term": "gtest", "dir": "cmake"}, "Directory cmake not found"),
            ("Test", ["test/gtest/CMakeLists.txt", "test/CMakeLists.txt"]),
            "suggest Test",
        ),
        (
            PYTHON,
            ("open", {"path": "tests/test_client.py"}, "File tests/test_client.py not found"),
            ("Test", ["test/test_client.py"]),
            "suggest Test",
        ),
        # the guessed path is there: no wrong guess (the read is answered by itself)
        (PYTHON, ("bash", {"command": "cat src/pkg/client.py"}, "class Client:"), None, None),
        # nothing close to the missing path: silence, as before
        (PYTHON, ("bash", {"command": "cat src/pkg/server.py"}, "cat: x: No such file"), None, None),
        # a name the workspace has where the listing looked: its other filters left it out
        (PYTHON, ("bash", {"command": "find . -name client.py -path '*lib*'"}, ""), None, None),
        (CMAKE, ("bash", {"command": "find . -name gtest -type d -path '*src*'"}, ""), None, None),
    ],
    ids=[
        "kotlin file-private name",
        "dotnet ls tests",
        "dotnet find_file test affix",
        "cmake search in a missing folder",
        "python open in tests/",
        "existing path",
        "nothing close",
        "find with another filter",
        "find of a folder with another filter",
    ],
)
def test_a_missing_path_is_answered_with_where_it_most_likely_is(tmp_path, files, tool_call, note, ledger):
    root = write_tree(tmp_path / "ws", files)
    lines: list[str] = []
    env = {"DSH_HOME": str(tmp_path / "home"), "HOME": str(tmp_path)}
    sidecar = Sidecar(parse_config({"suggester": {"enabled": True}}), root, env, log_sink=lines.append)
    try:
        assert sidecar.wait_for_graph(60)
        sidecar.suggester.prepared.index.build_meant()  # (built after ready on its thread: now)
        name, inp, text = tool_call
        error = "No such file" in text or "not found" in text or "cannot access" in text
        notes, decided = answer_in_own_session(sidecar, lines, name, inp, text, error)
        got = [(n.source.intent, n.source.targets) for n in notes]
    finally:
        sidecar.shutdown()
    assert got == ([note] if note else [])
    if ledger is not None:
        assert decided[-1].startswith(ledger)
    else:
        assert not any(m.startswith("suggest") for m in decided)


def _many(seed: int) -> list[str]:
    """A listing whose common names have more candidates than :data:`HEAVY` (read through their
    digests): ``index.js``, ``__init__.py`` and ``tests``/``Tests``/``test`` folders at many
    depths, beside the synthetic listing's own names."""
    rng = random.Random(seed)
    files = synthetic(1200, seed=seed)
    folders = sorted({path.rpartition("/")[0] for path in files})
    for i in range(3 * HEAVY):
        folder = rng.choice(folders)
        files += [f"{folder}/index.js", f"{folder}/lib{i % 7}/__init__.py"]
        files += [f"{folder}/{rng.choice(('tests', 'Tests', 'test', 'test'))}/t{i}.py", f"{folder}/views/index.ts"]
    return sorted(set(files))


def test_common_names_answer_as_every_candidate_read_one_by_one():
    ix = index(_many(seed=11))
    assert ix.meant.name_digests.keys() >= {"index.js", "__init__.py"}
    assert ix.meant.folder_digests.keys() >= {"tests", "test"}
    changed = ix.with_changes(["lib/views/index.js", "tests/app/tests/x.py"], ix.files[::9], {})
    for listing in (ix, changed):
        words = sorted({w for path in listing.files[::40] for w in path.split("/")[:-1]})[:40]
        for word in [*words, "", "app/views", "lib/core", "tests", "lib3", "views/tests"]:
            for name in ("index.js", "__init__.py", "Index.JS", "index.ts"):
                guess = f"{word}/{name}".lstrip("/")
                assert files_meant(guess, listing) == old_files_meant(guess, listing), guess
            for name in ("tests", "Tests", "test", "TEST", "spec"):
                guess = f"{word}/{name}".lstrip("/")
                assert folders_meant(guess, listing) == old_folders_meant(guess, listing), guess


def test_digests_carried_through_changes_equal_a_build_of_the_new_listing():
    ix = index(_many(seed=12))
    gone = [p for p in ix.files if p.endswith("index.js")][:5] + [p for p in ix.files if "/tests/" in p][:4]
    after = ix.with_changes(["new/views/index.js", "new/deep/tests/a.py", "x/Tests/b.py"], gone, {})
    fresh = MeantTables.of(after.by_name, after.by_dir, after.by_name)
    assert _digests(after.meant) == _digests(fresh)
    assert _digests(ix.meant) == _digests(MeantTables.of(ix.by_name, ix.by_dir, ix.by_name))  # the old one kept
    # an in-place change of a common name's files: its digest made again at once
    after.add("lib/other/index.js")
    assert after.meant.name_digest("index.js", after.by_name["index.js"]) is not None
    after.remove("new/views/index.js")
    assert _digests(after.meant) == _digests(MeantTables.of(after.by_name, after.by_dir, after.by_name))
    # a digest of other files than the name's is never read
    stale = after.meant.name_digests["index.js"]
    assert after.meant.name_digest("index.js", [*after.by_name["index.js"], "y/index.js"]) is None
    assert stale.source == after.by_name["index.js"]


def _digests(tables: MeantTables) -> tuple[dict[str, tuple[object, ...]], ...]:
    return tuple(
        {k: (sorted(d.source), d.ranked, d.orders, d.folders, list(d.starts)) for k, d in digests.items()}
        for digests in (tables.name_digests, tables.folder_digests)
    )
