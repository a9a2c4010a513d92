"""The harness scenarios' workspace is copied as every other test's fixture
(``support.trees.copy_fixture``): the same files, each at the fixtures' time, so its recency (and
the notes ranked by it) ties wherever the repository was checked out. Before, ``scenario.py`` and
``webcard.py`` copied it with ``copytree``, keeping the checkout's times. No harness is run."""

from __future__ import annotations

from support.trees import FIXTURE_MTIME, WORKSPACES

from harness import scenario


def test_the_scenarios_workspace_is_the_fixture_at_the_fixtures_time(tmp_path):
    ws = scenario.copy_workspace(tmp_path / "work")
    fixture = WORKSPACES / "pyproj"
    files = sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(fixture).as_posix() for p in fixture.rglob("*") if p.is_file())
    assert {int((ws / f).stat().st_mtime) for f in files} == {FIXTURE_MTIME}
    (ws / "added.py").write_text("")
    assert scenario.copy_workspace(tmp_path / "work") == ws and (ws / "added.py").exists()  # a run again keeps it
