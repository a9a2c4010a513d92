"""A failing command's output is untrusted text: the frames it prints only ever name existing
regular files inside the workspace, without raw control characters, and reading them is
linear in the output (no regex that crosses blank lines from every line start)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from dsh_protocol import PostExecuteParams
from dsh_sidecar.suggester import Suggester, parse_suggester_config
from dsh_sidecar.suggester.parse.runs import traceback_frames
from dsh_sidecar.workspace import WorkspaceGraph
from support.suggester import copy_workspace


def frame(path: str, func: str = "f") -> str:
    return f'  File "{path}", line 1, in {func}\n'


@pytest.fixture
def shopcart(tmp_path: Path) -> Path:
    dest = copy_workspace(tmp_path, "shopcart")
    pkg = dest / "src" / "shopcart"
    (pkg / "adir.py").mkdir()
    (pkg / "adir.py" / "inner.py").write_text("x = 1\n")
    os.symlink("adir.py", pkg / "dirlink.py")  # inside the workspace, but a folder
    os.symlink("/etc/passwd", pkg / "outside.py")
    (pkg / "esc\x1b[31m.py").write_text("x = 1\n")
    (pkg / "gone.py").write_text("x = 1\n")
    return dest


def make(root: Path, home: Path) -> Suggester:
    graph = WorkspaceGraph.build(root)
    s = Suggester(
        root, parse_suggester_config({"enabled": True}), home, sink=lambda _line: None, workspace=lambda: graph
    )
    s.warm()
    return s


def targets(s: Suggester, text: str, session: str) -> list[list[str]]:
    notes = s.post_execute(
        PostExecuteParams(
            session_id=session,
            turn=1,
            tool={"name": "bash", "input": {"command": "python repro.py"}},
            result={"isError": True, "text": text},
        )
    )
    return [n.source.targets for n in notes]


#: A project frame as a Windows run prints it: it maps to the workspace by suffix
#: (``paths.py``), and the result shows the agent no workspace path (``shown.py`` reads
#: ``/``-paths, as the evaluation does), so the note is no echo and names it.
WIN_PRICING = "C:\\ci\\shopcart\\src\\shopcart\\pricing.py"
WIN_API = "C:\\ci\\shopcart\\src\\shopcart\\api.py"


@pytest.mark.parametrize("name", ["dirlink.py", "outside.py", "esc\x1b[31m.py", "gone.py", "adir.py"])
@pytest.mark.parametrize("prefix", ["/testbed/src/shopcart/", "src/shopcart/"])
def test_a_frame_names_only_an_existing_regular_file_without_controls(shopcart, dsh_home, name, prefix):
    s = make(shopcart, dsh_home)
    (shopcart / "src" / "shopcart" / "gone.py").unlink()  # listed, then deleted
    assert targets(s, frame(prefix + name), "a") == []
    # the same output with a real project frame after it names that frame only
    text = frame(prefix + name) + frame(WIN_PRICING, "apply_discount")
    assert targets(s, text, "b") == [["src/shopcart/pricing.py"]]
    assert list(s.noise.session("b").evidence.frames) == ["src/shopcart/pricing.py"]


def test_hostile_frame_paths_name_nothing(shopcart, dsh_home):
    s = make(shopcart, dsh_home)
    hostile = [
        "/etc/passwd",
        "../../etc/passwd",
        "/testbed/../../etc/passwd",
        "src/shopcart/../../../../etc/passwd",
        "/testbed/src/shopcart/api.py\x00",
        "C:\\testbed\\src\\shopcart\\nothere.py",
    ]
    for i, path in enumerate(hostile):
        assert targets(s, frame(path), f"s{i}") == [], path


def test_a_deep_absolute_path_maps_by_its_suffix(shopcart, dsh_home):
    s = make(shopcart, dsh_home)
    deep = "/" + "/".join(["x"] * 150) + "/testbed//src/shopcart/pricing.py"
    # the output shows it (an echo: no note); the session keeps it as the failing code path
    assert targets(s, frame(deep) * 50, "a") == []
    assert list(s.noise.session("a").evidence.frames) == ["src/shopcart/pricing.py"]
    # a path of one part under the root is no suffix of anything
    assert targets(s, frame("/pricing.py"), "b") == []


def test_frame_lines_do_not_span_blank_lines():
    # Node indents its frames; an `at …` line at column 0 after a blank line is prose, and a
    # pattern whose leading whitespace crossed newlines re-scanned every blank line from each
    # line start (quadratic: 20 000 blank lines took seconds)
    assert traceback_frames("Error: x\n\nat parse (src/parse.js:3:9)\n") == []
    assert traceback_frames("Error: x\n\n    at parse (src/parse.js:3:9)\n") == [("src/parse.js", "parse")]
    assert traceback_frames('\n\nFile "src/a.py", line 1, in f\n') == [("src/a.py", "f")]
    assert traceback_frames("\n" * 20_000) == []


def test_a_frame_that_resolves_outside_the_workspace_is_reported_once(shopcart, dsh_home):
    """A name a call leads to that is a symlink out of the workspace is refused like a pack's
    candidate, and said so: a ``pack refused`` ledger line and ``packErrors``, once."""
    lines: list[str] = []
    graph = WorkspaceGraph.build(shopcart)
    s = Suggester(shopcart, parse_suggester_config({"enabled": True}), dsh_home, lines.append, workspace=lambda: graph)
    s.warm()
    for session in ("a", "b"):
        assert targets(s, frame("/testbed/src/shopcart/outside.py"), session) == []
    refused = [line.split("] ", 1)[1] for line in lines if "pack refused (" in line]
    assert refused == ["pack refused (candidate src/shopcart/outside.py: resolves outside the workspace)"]
    assert "candidate src/shopcart/outside.py: resolves outside the workspace" in s.status()["packErrors"]


def test_a_traceback_whose_files_are_all_dismissed_abstains(shopcart, dsh_home):
    """A note was due and a dismissal took every file it found: ``abstained no-companions``
    (a ledger line, as for a search), not a silence no ledger shows."""
    lines: list[str] = []
    graph = WorkspaceGraph.build(shopcart)
    s = Suggester(shopcart, parse_suggester_config({"enabled": True}), dsh_home, lines.append, workspace=lambda: graph)
    s.warm()
    s.dismiss("Symbol", "src/shopcart/pricing.py")
    assert targets(s, frame("/testbed/src/shopcart/pricing.py", "apply_discount"), "a") == []
    assert lines[-1].split("] ", 1)[1] == "abstained no-companions Symbol 0.92"


def test_noise_control_keys_on_the_first_shown_frame_not_a_dismissed_one(shopcart, dsh_home):
    lines: list[str] = []
    graph = WorkspaceGraph.build(shopcart)
    s = Suggester(
        shopcart,
        parse_suggester_config({"enabled": True, "cooldownCalls": 10}),
        dsh_home,
        lines.append,
        workspace=lambda: graph,
    )
    s.warm()
    s.dismiss("Symbol", "src/shopcart/pricing.py")
    # innermost last: apply_discount (its file dismissed) is the innermost frame; checkout's is shown
    api, pricing = WIN_API, WIN_PRICING
    both = frame(api, "checkout") + frame(pricing, "apply_discount")
    assert targets(s, both, "a") == [["src/shopcart/api.py"]]
    noted = s.noise.session("a").notes[-1]
    assert noted[1:] == ("Symbol", ("src/shopcart/api.py", "checkout"))  # the shown file's name
    # so the shown file alone again is the same note (a dedupe), not a new one about a name it hid
    assert targets(s, frame(WIN_API, "checkout"), "a") == []
    assert lines[-1].split("] ", 1)[1] == "suppressed dedupe Symbol"
