"""The built-in packs a start builds from their generated form (``dsh_packs/parsed.py``) are
the packs their YAML files parse and validate to: the same fields, defaults and fields set."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import resources
from pathlib import Path

from dsh_packs.parsed import PACKS
from dsh_sidecar.suggester.packs import Pack, builtin_packs, construct_pack, parse_builtin_yaml, parse_pack
from support.sidecar import DATA

REPO = Path(__file__).resolve().parents[3]


def test_generated_form_equals_the_yaml() -> None:
    names = sorted(e.name for e in resources.files("dsh_packs").iterdir() if e.name.endswith((".yml", ".yaml")))
    # stale: PYTHONPATH=server:protocol:packs python packs/generate_parsed.py && ruff format packs/dsh_packs/parsed.py
    assert sorted(PACKS) == names and len(names) >= 9
    assert parse_builtin_yaml() == PACKS


def test_built_packs_equal_the_validated_yaml() -> None:
    root = resources.files("dsh_packs")
    built = builtin_packs()
    assert [b.source for b in built] == sorted(PACKS) and {b.origin for b in built} == {"builtin"}
    for loaded in built:
        parsed = parse_pack(root.joinpath(loaded.source).read_text("utf-8"), loaded.source, trusted=True)
        assert type(loaded.pack) is Pack
        assert loaded.pack == parsed
        assert loaded.pack.model_dump(exclude_unset=True) == parsed.model_dump(exclude_unset=True)
        assert loaded.pack.model_dump() == parsed.model_dump()
        for name, row in parsed.intents.items():
            mine = loaded.pack.intents[name]
            assert mine.model_fields_set == row.model_fields_set
            assert [s.model_fields_set for s in mine.signals] == [s.model_fields_set for s in row.signals]
            assert [c.model_fields_set for c in mine.candidates] == [c.model_fields_set for c in row.candidates]
            assert [c.per_call for c in mine.candidates] == [c.per_call for c in row.candidates]


def test_construct_keeps_defaults_and_unset_fields() -> None:
    pack = construct_pack({"id": "x", "intents": {"Config": {"signals": [{"pattern": "a", "weight": 1.0}]}}})
    row = pack.intents["Config"]
    assert pack.activate is None and pack.replace is False and pack.model_fields_set == {"id", "intents"}
    assert row.candidates == [] and row.threshold is None and row.model_fields_set == {"signals"}
    assert row.signals[0].tools is None and row.signals[0].model_fields_set == {"pattern", "weight"}


def test_generated_globs_are_the_alternations_pathspec_makes_and_match_the_same_paths() -> None:
    """``GLOBS`` holds, for every glob candidate of the built-in packs, the alternation pathspec
    makes of it now (stale after a pack or pathspec change: regenerate as above), and the
    matcher a start builds from it answers as the one built through pathspec, path by path."""
    from dsh_packs.parsed import GLOBS
    from dsh_sidecar.suggester.fileindex import builtin_glob_alternations, glob_matcher
    from dsh_sidecar.workspace.wildmatch import glob_spec, ignore_matcher

    assert builtin_glob_alternations(PACKS) == GLOBS and len(GLOBS) >= 30
    listed = sorted(  # the fixtures' files, and this repository's source and tests as one tree
        p.relative_to(root).as_posix()
        for root, where in [(w, w) for w in (DATA / "workspaces").iterdir()]
        + [(REPO, REPO / d) for d in ("server", "tests", "packs", "docs", "bench")]
        for p in where.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and "node_modules" not in p.parts
    )
    assert len(listed) > 500
    for glob in GLOBS:
        made = [glob.replace("**/", "a/b/").replace("*", "x1").replace("?", "q"), glob.replace("**/", "")]
        paths = listed + [p for m in made for p in (m, "deep/" + m, m + "/inner", m.upper())]
        mine, through_pathspec = glob_matcher(glob), ignore_matcher(glob_spec(glob))
        assert [mine(p) for p in paths] == [through_pathspec(p) for p in paths], glob
        assert any(mine(p) for p in made), glob


def test_a_built_in_glob_is_matched_without_importing_pathspec() -> None:
    code = (
        "import sys\n"
        "from dsh_sidecar.suggester.fileindex import glob_matcher\n"
        "match = glob_matcher('src/*/__init__.py')\n"
        "assert match('src/pkg/__init__.py') and not match('src/a/b/__init__.py')\n"
        "assert 'pathspec' not in sys.modules, 'pathspec imported'\n"
        "glob_matcher('src/*/not_a_pack_glob.py')\n"
        "assert 'pathspec' in sys.modules\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(REPO / d) for d in ("server", "protocol", "packs"))}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
