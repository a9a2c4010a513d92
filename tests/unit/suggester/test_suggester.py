"""Suggester core: gate, probe, packs, candidates, noise control, ledger lines."""

from __future__ import annotations

import re

import pytest
from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.suggester.gate import gate, sigmoid
from dsh_sidecar.suggester.packs import PackError, parse_pack
from dsh_sidecar.suggester.parse import parse_call as make_probe
from dsh_sidecar.suggester.parse import search_shaped
from support.suggester import call, ledger_messages, make_suggester


def test_gate_values():
    assert gate(0.0) == pytest.approx(sigmoid(-0.6))
    assert gate(2.6) == pytest.approx(0.8808, abs=1e-4)
    assert gate(1.698) < 0.75 < gate(1.699)
    assert gate(2.334) < 0.85 < gate(2.335)
    # a single weak signal (weight < 1.7) never crosses even the lower threshold
    assert gate(1.6) < 0.75


def test_probe_classification():
    assert make_probe("Grep", {"pattern": "__version__", "path": "src"}).tool == "grep"
    assert make_probe("READ", {"file_path": "a.py"}).reads == ["a.py"]
    assert make_probe("Edit", {"path": "a.py"}).tool == "write"
    assert make_probe("bash", {"command": "rg -n 'def merge_setting' src"}).tool == "bash"
    assert make_probe("bash", {"command": "make test"}).tool == "other"
    assert search_shaped("cd src && git grep -n TruncateRunes")
    assert search_shaped("FOO=1 find . -name '*.toml'")
    assert not search_shaped("python -m pytest")


def test_version_note_and_ledger(workspace, dsh_home):
    s, lines = make_suggester(workspace, dsh_home)
    notes = s.post_execute(call("grep", {"pattern": "__version__"}))
    assert len(notes) == 1
    assert notes[0].source.targets == ["src/demo_pkg/__init__.py"]
    assert notes[0].text == (
        "search-suggester: in this repository, look here for the package version:\n"
        "- src/demo_pkg/__init__.py — defines __version__"
    )
    assert ledger_messages(lines) == [
        "activated (packs generic,python intents 10 threshold 0.75)",
        "suggest Version 0.99 1 targets src/demo_pkg/__init__.py",
    ]
    s.ledger.flush()  # lines are buffered (appended within 1 s, and at every exit)
    ledger = (dsh_home / "search-suggester" / "ledger.log").read_text().splitlines()
    assert ledger == lines
    assert re.fullmatch(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\] .+", lines[0])


def test_weak_signal_is_silent(workspace, dsh_home):
    s, lines = make_suggester(workspace, dsh_home)
    assert s.post_execute(call("grep", {"pattern": "version"})) == []  # 1.4 alone: k = 0.69 < 0.85
    assert ledger_messages(lines) == ["activated (packs generic,python intents 10 threshold 0.75)"]


def test_cooldown_dedupe_turn_cap(workspace, dsh_home):
    s, lines = make_suggester(workspace, dsh_home, cooldownCalls=3, maxNotesPerTurn=1)
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}, turn=1))) == 1
    assert s.post_execute(call("grep", {"pattern": "pytest fixture"}, turn=1)) == []  # turn cap
    assert s.post_execute(call("grep", {"pattern": "__version__"}, turn=2)) == []  # same targets: dedupe
    assert ledger_messages(lines)[1:] == [
        "suggest Version 0.99 1 targets src/demo_pkg/__init__.py",
        "suppressed turn-cap Test",
        "suppressed dedupe Version",
    ]


def test_cooldown_and_dedupe_are_keyed_by_intent_and_target_set():
    from dsh_sidecar.suggester.suppression import NoiseControl

    noise = NoiseControl()
    st = noise.session("s")
    st.calls = 1
    assert noise.check(st, "Symbol", 1, ("a.py",), 3, 10) is None
    noise.record(st, "Symbol", 1, ("a.py",))
    st.calls = 2
    assert noise.check(st, "Symbol", 1, ("b.py",), 3, 10) is None  # another name: no cooldown
    assert noise.check(st, "Symbol", 1, ("a.py", "c.py"), 3, 10) == "cooldown"  # led by a.py within 3 calls
    assert noise.check(st, "Symbol", 1, ("c.py", "a.py"), 3, 10) is None  # led by another target
    assert noise.check(st, "Usage", 1, ("a.py", "c.py"), 3, 10) is None  # another intent
    assert noise.check(st, "Symbol", 1, ("a.py",), 3, 10) == "dedupe"
    st.calls = 5
    assert noise.check(st, "Symbol", 1, ("a.py", "c.py"), 3, 10) is None  # past the cooldown
    assert noise.check(st, "Symbol", 1, ("a.py",), 3, 10) == "dedupe"  # a dedupe never expires
    assert noise.check(st, "Doc", 1, ("d.md",), 3, 1) == "turn-cap"


def test_recently_read_targets_are_not_suggested(workspace, dsh_home):
    s, lines = make_suggester(workspace, dsh_home)
    s.post_execute(call("read", {"path": "src/demo_pkg/__init__.py"}))
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert ledger_messages(lines)[-1] == "suppressed recent Version"


def test_foreign_workspace_abstains(tmp_path, dsh_home):
    (tmp_path / "notes.txt").write_text("hi")
    s, lines = make_suggester(tmp_path, dsh_home)
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert ledger_messages(lines) == ["abstained foreign-workspace"]


def test_no_companions(workspace, dsh_home):
    (workspace / "src" / "demo_pkg" / "__init__.py").write_text('"""no version here"""\n')
    s, lines = make_suggester(workspace, dsh_home)
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert ledger_messages(lines)[-1] == "abstained no-companions Version 0.99"


def test_a_search_in_a_folder_the_workspace_lacks_abstains_as_missing_folder(workspace, dsh_home):
    """SWE-agent's ``search_dir`` scoped to a folder that is not there: the evidence rules every
    intent out (nothing there to name), and the ledger says which intent its words crossed."""
    s, lines = make_suggester(workspace, dsh_home, warm=True)  # the listing knows what is not there
    missing = call("search_dir", {"search_term": "__version__", "dir": "cmake"}, text="Directory cmake not found")
    assert s.post_execute(missing) == []
    assert ledger_messages(lines)[1:] == ["abstained missing-folder Version 0.88"]
    assert s.counters["abstained"] == 1
    # where_is asked the same gets no answer either (a question is no abstention: no line)
    assert s.where_is("search_dir", {"search_term": "__version__", "dir": "cmake"}) is None
    assert len(lines) == 2


@pytest.mark.parametrize(
    "command",
    [
        "grep -r __version__ ..",  # the parent exists (it holds the workspace)
        "grep -r __version__ src/../..",
        "rg __version__ ~/proj",  # the shell expands these: not a folder named so
        "rg __version__ $HOME/x",
        "grep -r __version__ {src,lib}",
    ],
)
def test_a_scope_outside_the_workspace_or_left_to_the_shell_is_no_missing_folder(workspace, dsh_home, command):
    """``abstained missing-folder`` says the workspace lacks the folder searched: a scope that
    leaves the workspace (a ``..`` part) or that the shell expands is not known to be missing."""
    s, lines = make_suggester(workspace, dsh_home, warm=True)
    assert s.post_execute(call("bash", {"command": command}, text="")) == []
    assert not any("missing-folder" in m for m in ledger_messages(lines))


@pytest.mark.parametrize("command", ["grep -r __version__ ../pyproj", "cd .. && grep -r __version__ pyproj"])
def test_the_workspace_searched_through_its_parent_is_the_whole_tree(workspace, dsh_home, command):
    """``../pyproj`` from the root ``pyproj`` is the root itself: answered as ``grep -r x .``
    (no missing-folder line), not as a folder outside the workspace."""
    s, lines = make_suggester(workspace, dsh_home, warm=True)
    whole, _ = make_suggester(workspace, dsh_home, warm=True)
    assert workspace.name == "pyproj"
    got = s.post_execute(call("bash", {"command": command}, text=""))
    assert got == whole.post_execute(call("bash", {"command": "grep -r __version__ ."}, text=""))
    assert [c.source.summary for c in got] == ["Version: src/demo_pkg/__init__.py"]
    assert not any("missing-folder" in m for m in ledger_messages(lines))


@pytest.mark.parametrize("folder", ["missing/", "a\nb\x1b]0;t\x07\u2028c", "x" * 10000, "nope\tdir"])
def test_a_hostile_missing_folder_name_stays_out_of_the_ledger_line(workspace, dsh_home, folder):
    s, lines = make_suggester(workspace, dsh_home, warm=True)
    assert s.post_execute(call("search_dir", {"search_term": "__version__", "dir": folder}, text="not found")) == []
    assert ledger_messages(lines)[1:] == ["abstained missing-folder Version 0.88"]
    assert all("\n" not in line and len(line) < 200 for line in lines)


def test_a_search_no_intent_crosses_writes_no_line(workspace, dsh_home):
    """No intent recognised is nothing abstained from (docs/SCHEME.md, "Ledger lines"): the
    gate's silence, counted in ``calls`` only."""
    s, lines = make_suggester(workspace, dsh_home, warm=True)
    listed = 'Found 1 matches for "*.cc" in src:\nsrc/demo_pkg/ext.cc'
    assert s.post_execute(call("find_file", {"file_name": "*.cc", "dir": "src"}, text=listed)) == []
    assert s.post_execute(call("search_dir", {"search_term": "zebra", "dir": "cmake"})) == []  # nor its words
    assert ledger_messages(lines) == ["activated (packs generic,python intents 10 threshold 0.75)"]
    assert s.counters["calls"] == 2 and s.counters["abstained"] == 0


def test_dismissal_family_and_expiry(workspace, dsh_home):
    now = [1_000_000.0]
    s = Suggester(
        workspace, parse_suggester_config({"enabled": True, "dismissTtl": 60}), dsh_home, clock=lambda: now[0]
    )
    record, expires = s.dismiss("Version", None)
    assert record == "dismissed Version *"
    assert expires == "1970-01-12T13:47:40Z"
    assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    now[0] += 61
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}, session="other"))) == 1
    with pytest.raises(ValueError):
        s.dismiss("Nope", None)


def test_repo_pack_replaces_and_hostile_pack_is_refused(workspace, dsh_home):
    (workspace / ".dsh").mkdir()
    (workspace / ".dsh" / "pack.yml").write_text(
        "id: mine\nreplace: true\nintents:\n  Config:\n    signals:\n      - {pattern: 'settings', weight: 2.0}\n"
        "    candidates:\n      - {path: README.md, reason: our settings are documented here}\n"
    )
    s, lines = make_suggester(workspace, dsh_home)
    notes = s.post_execute(call("grep", {"pattern": "settings"}))
    assert notes[0].source.intent == "Config" and notes[0].source.targets == ["README.md"]
    assert ledger_messages(lines)[0] == "activated (packs mine intents 1 threshold 0.75)"


@pytest.mark.parametrize(
    "text, needle",
    [
        ("id: x\nintents:\n  Version:\n    signals:\n      - {pattern: '(a+)+$', weight: 3}\n", "catastrophic"),
        (
            "id: x\nintents:\n  Version:\n    candidates:\n      - {path: ../../etc/passwd, reason: r}\n",
            "inside the workspace",
        ),
        (
            "id: x\nintents:\n  Version:\n    candidates:\n      - {path: /etc/passwd, reason: r}\n",
            "inside the workspace",
        ),
        ("id: x\nintents:\n  Version:\n    candidates:\n      - {path: a.txt}\n", "reason"),
        ("id: x\nintents:\n  Nope: {}\n", "unknown intent"),
        ("id: [unclosed\n", "invalid YAML"),
        ("a: &a [1,2]\nb: &b [*a,*a]\n", "id"),
    ],
)
def test_untrusted_pack_refusals(text, needle):
    with pytest.raises(PackError) as info:
        parse_pack(text, "repo:.dsh/pack.yml")
    assert needle in str(info.value)


def test_refused_repo_pack_keeps_builtins_working(workspace, dsh_home):
    (workspace / ".dsh").mkdir()
    (workspace / ".dsh" / "pack.yml").write_text(
        "id: x\nintents:\n  Version:\n    signals:\n      - {pattern: '(a*)*b', weight: 3}\n"
    )
    s, lines = make_suggester(workspace, dsh_home)
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}))) == 1
    assert any("pack refused" in m and "catastrophic" in m for m in ledger_messages(lines))


def test_pack_changed_while_activating_is_read_again(workspace, dsh_home, monkeypatch):
    """A ``dsh/toolsChanged`` that lands while another thread is reading the packs (the
    start-up warm-up) must not leave the stale read installed: the pack written meanwhile is
    the one that counts."""
    import dsh_sidecar.suggester.service as core

    s, lines = make_suggester(workspace, dsh_home)
    real = core.activate
    reads: list[int] = []

    def racing(root, home, builtins_on):
        out = real(root, home, builtins_on)
        reads.append(len(out.refused))
        if len(reads) == 1:  # the warm-up read finished; the pack is written and toolsChanged lands
            (workspace / ".dsh").mkdir()
            (workspace / ".dsh" / "pack.yml").write_text(
                "id: x\nintents:\n  Version:\n    signals:\n      - {pattern: '(a+)+$', weight: 3}\n"
            )
            s.invalidate()
        return out

    monkeypatch.setattr(core, "activate", racing)
    s.activate()
    assert reads == [0, 1]
    assert len(s.pack_errors) == 1 and "catastrophic" in s.pack_errors[0]
    assert sum("pack refused" in m for m in ledger_messages(lines)) == 1
    assert sum(m.startswith("activated") for m in ledger_messages(lines)) == 1


def test_internal_error_fails_open(workspace, dsh_home, monkeypatch, caplog):
    """An error inside a trigger is silence for the call, counted once and logged with the
    trigger's name; the next call is answered as usual."""
    s, _ = make_suggester(workspace, dsh_home)
    monkeypatch.setattr("dsh_sidecar.suggester.triggers.search.resolve", lambda *a: 1 / 0)
    with caplog.at_level("WARNING", logger="dsh_sidecar.suggester.service"):
        assert s.post_execute(call("grep", {"pattern": "__version__"})) == []
    assert s.counters["errors"] == 1
    assert [r.getMessage() for r in caplog.records] == [
        "search-suggester: internal error; the call passes through silently (in the search trigger)"
    ]
    monkeypatch.undo()
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}, session="other"))) == 1


def test_glob_matches_in_fixture_folders_give_way_to_project_files(workspace, dsh_home):
    from dsh_sidecar.suggester.candidates import is_fixture

    assert is_fixture("tests/data/workspaces/x/__init__.py")
    assert is_fixture("pkg/testdata/a.go") and is_fixture("vendor/lib/__init__.py")
    assert not is_fixture("src/demo_pkg/__init__.py") and not is_fixture("tests/conftest.py")
    fixture = workspace / "tests" / "data" / "sample" / "pkg"
    fixture.mkdir(parents=True)
    (fixture / "__init__.py").write_text('__version__ = "9.9.9"\n')
    s, _ = make_suggester(workspace, dsh_home)
    notes = s.post_execute(call("grep", {"pattern": "__version__"}))
    assert notes[0].source.targets == ["src/demo_pkg/__init__.py"]
    # with the package's own definition gone, a fixture is still not the project's version:
    # silence — unless the call scopes into the fixture's folder, which then leads
    (workspace / "src" / "demo_pkg" / "__init__.py").write_text('"""no version"""\n')
    s2, lines2 = make_suggester(workspace, dsh_home)
    assert s2.post_execute(call("grep", {"pattern": "__version__"}, session="other")) == []
    assert ledger_messages(lines2)[-1] == "abstained no-companions Version 0.99"
    notes = s2.post_execute(call("grep", {"pattern": "__version__", "path": "tests/data/sample"}, session="third"))
    assert notes[0].source.targets == ["tests/data/sample/pkg/__init__.py"]


def test_test_tree_rule_values():
    from dsh_sidecar.suggester.candidates import in_test_tree, scoped_into

    for rel in (
        "tests/data/workspaces/shopcart/pyproject.toml",  # this repository's fixture workspace
        "tests/roots/test-setup/conf.py",  # a Sphinx test root
        "tests/crate/Cargo.toml",  # anyhow's test crate
        "astropy/wcs/tests/extension/setup.py",
        "testing/plugins_integration/requirements.txt",  # pytest's test folder
        "pkg/__fixtures__/package.json",
        "_examples/versions/go.mod",  # chi's examples
        "src/testdata/setup.cfg",
        "third_party/lib/CHANGELOG.md",
        "Tests/Fixtures/Package.swift",  # folder names in any case (Swift packages)
        "Vendor/lib/composer.json",
    ):
        assert in_test_tree(rel), rel
    for rel in (
        "pyproject.toml",
        "src/attr/__init__.py",
        "crates/cli/Cargo.toml",
        "docs/conf.py",
        "latest.py",
        "Sources/Testing.swift",
    ):
        assert not in_test_tree(rel), rel
    assert scoped_into("tests/roots/test-setup/conf.py", ["tests/roots"])
    assert scoped_into("tests/roots/test-setup/conf.py", ["tests/roots/test-setup/conf.py"])
    assert not scoped_into("tests/roots/test-setup/conf.py", ["", ".", "src", "tests/roots/test-basic"])


def test_fixture_manifest_is_no_project_version(workspace, dsh_home):
    sample = workspace / "tests" / "data" / "workspaces" / "sample"
    sample.mkdir(parents=True)
    (sample / "pyproject.toml").write_text('[project]\nname = "sample"\nversion = "0.0.1"\n')
    found = {
        "isError": False,
        "text": "Found 2 files\ntests/data/workspaces/sample/pyproject.toml\nsrc/demo_pkg/__init__.py",
    }
    s, lines = make_suggester(workspace, dsh_home)
    # the search's own result lists the fixture's manifest: not the project's version
    p = PostExecuteParams(
        session_id="a", turn=1, tool={"name": "grep", "input": {"pattern": "__version__|^version ="}}, result=found
    )
    assert s.post_execute(p)[0].source.targets == ["src/demo_pkg/__init__.py"]
    # scoped into the fixture: its manifest is what the call asks about and leads, but the call
    # has just listed it: the agent is where the intent lives, and a note would repeat it
    grep = {"pattern": "__version__|^version =", "path": "tests/data/workspaces/sample"}
    one = {"isError": False, "text": "Found 1 file\ntests/data/workspaces/sample/pyproject.toml"}
    p = PostExecuteParams(session_id="b", turn=1, tool={"name": "grep", "input": grep}, result=one)
    assert s.post_execute(p) == []
    assert ledger_messages(lines)[-1] == "suppressed echo Version"


def test_status_finishes_the_activation_before_answering(workspace, dsh_home):
    s, lines = make_suggester(workspace, dsh_home)  # no warm(): the background activation has not run
    st = s.status()
    assert st["activation"] == "done"
    assert st["intents"] == [
        "Version",
        "Path",
        "Ledger",
        "Config",
        "Dependency",
        "Test",
        "Symbol",
        "Doc",
        "Usage",
        "Owner",
    ]
    assert ledger_messages(lines) == ["activated (packs generic,python intents 10 threshold 0.75)"]
    off = Suggester(workspace, parse_suggester_config({"enabled": False}), dsh_home)
    assert (off.status()["activation"], off.status()["intents"]) == ("off", [])


def test_where_is_reads_free_text_as_a_question(workspace, dsh_home):
    from dsh_sidecar.suggester.parse import QUESTION_TOOL

    s, lines = make_suggester(workspace, dsh_home)
    hit = s.where_is(QUESTION_TOOL, {"query": "package version"})
    assert hit is not None
    assert (hit.intent, round(hit.k, 4), hit.about, [t.path for t in hit.targets]) == (
        "Version",
        0.9608,
        "the package version",
        ["src/demo_pkg/__init__.py"],
    )
    assert s.where_is(QUESTION_TOOL, {"query": "zebra giraffe"}) is None
    # a question is never an agent's tool call: post_execute passes it through
    assert s.post_execute(call(QUESTION_TOOL, {"query": "package version"})) == []


@pytest.mark.parametrize(
    ("command", "reason"),
    [
        ("ls mypy.ini .flake8", "missing-file"),  # the names themselves asked about
        ("ls lint/mypy.ini", "missing-file"),
        ("ls mypy.ini lint", "missing-file"),  # ls asks about a name, however it is spelt
        ("ls -la lint/mypy.ini", "missing-file"),
        ("ls mypy.ini lint/", "missing-folder"),  # a folder to list the inside of among them
        ("ls -R lint/mypy.ini", "missing-folder"),
        ("tree lint/mypy.ini", "missing-folder"),
        ("grep -n mypy mypy.ini", "missing-file"),  # a grep that does not recurse reads files
        ("grep -rn mypy mypy.ini", "missing-folder"),  # one that does searches within
        ("find lint.cfg -name mypy.ini", "missing-folder"),
    ],
)
def test_a_listing_of_files_the_workspace_lacks_abstains_as_missing_file(workspace, dsh_home, command, reason):
    """``abstained missing-file`` says the call asked about names the workspace does not have
    (docs/SCHEME.md, "Ledger lines"): decided by what the tool was asked, never by the names'
    spelling (``lint.cfg`` searched with ``find`` is a folder, ``lint`` listed with ``ls`` a
    name); a path it was asked to search within keeps ``missing-folder``."""
    s, lines = make_suggester(workspace, dsh_home, warm=True)
    assert not any((workspace / name).exists() for name in ("mypy.ini", ".flake8", "lint"))
    failed = call("bash", {"command": command}, text="ls: cannot access: No such file or directory", is_error=True)
    assert s.post_execute(failed) == []
    assert ledger_messages(lines)[1:] == [f"abstained {reason} Config 0.77"]


def test_a_listing_of_a_name_without_a_suffix_the_workspace_lacks_is_a_missing_file(workspace, dsh_home):
    """``ls CODEOWNERS`` asks about a file with no suffix: read by its spelling it was a
    folder (``missing-folder``); ``ls`` was asked about the name itself."""
    s, lines = make_suggester(workspace, dsh_home, warm=True)
    assert not (workspace / "CODEOWNERS").exists()
    failed = call(
        "bash", {"command": "ls CODEOWNERS"}, text="ls: cannot access: No such file or directory", is_error=True
    )
    assert s.post_execute(failed) == []
    assert [m.rsplit(" ", 2)[0] for m in ledger_messages(lines)[1:]] == ["abstained missing-file"]


def test_a_ledger_lines_time_is_utc_to_the_millisecond_truncated():
    """``ledger.iso_now``: ``YYYY-MM-DDTHH:MM:SS.mmmZ``, the milliseconds truncated (never
    rounded into the next second), the same within a second and across seconds, whatever order
    the lines come in."""
    from dsh_sidecar.suggester.ledger import iso_now

    t = 1_764_480_000.0  # 2025-11-30T05:20:00Z
    assert iso_now(lambda: t) == "2025-11-30T05:20:00.000Z"
    assert iso_now(lambda: t + 0.9995) == "2025-11-30T05:20:00.999Z"
    assert iso_now(lambda: t + 1.25) == "2025-11-30T05:20:01.250Z"
    assert iso_now(lambda: t + 0.5) == "2025-11-30T05:20:00.500Z"  # an earlier second again
    assert iso_now(lambda: t + 86_400 + 59.0071) == "2025-12-01T05:20:59.007Z"
    assert iso_now(lambda: 0.0) == "1970-01-01T00:00:00.000Z"


def test_a_note_checks_the_knowledge_file_once(workspace, dsh_home, monkeypatch):
    """A call's decision reads the knowledge three times for a note (the family dismissal, the
    target dismissals, the learned ranking): the file is checked (``stat``) at the first only;
    the next call checks again."""
    s, _ = make_suggester(workspace, dsh_home)
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}))) == 1
    stamps: list[int] = []
    real_stamp = s.knowledge._stamp
    monkeypatch.setattr(s.knowledge, "_stamp", lambda: stamps.append(1) or real_stamp())
    reads: list[int] = []
    real_ensure = s.knowledge.ensure
    monkeypatch.setattr(s.knowledge, "ensure", lambda: reads.append(1) or real_ensure())
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}, session="b"))) == 1
    assert len(reads) >= 3 and stamps == [1]
    assert len(s.post_execute(call("grep", {"pattern": "__version__"}, session="c"))) == 1
    assert stamps == [1, 1]
