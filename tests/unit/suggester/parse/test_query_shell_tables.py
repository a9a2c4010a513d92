"""bashlex's parse tables read from the package (``suggester/parse/lalr.py``): the shipped file
is what the installed bashlex builds, a file of another grammar or layout, or with entries of
other types, is never read (bashlex then builds its own), and the parser is the same either way."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from dsh_sidecar.suggester.parse import lalr

#: Run in a fresh interpreter (bashlex builds or reads its tables once, when it is imported):
#: imports bashlex through ``lalr.import_bashlex`` with the tables file given (``-``: none),
#: then prints what was read, the tables file these tables make, the tables as bashlex's parser
#: holds them (after its own corrections of two states), when they were read whether a
#: construction on the same (still unprocessed) grammar builds the same, and the dump of a parse.
CHILD = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from dsh_sidecar.suggester.parse import lalr
    tables = None if sys.argv[1] == "-" else Path(sys.argv[1])
    bashlex = lalr.import_bashlex(tables, record=True)
    from bashlex import parser, yacc
    got = (lalr.LOADED["action"], lalr.LOADED["goto"])
    fresh = lalr.built_tables(lalr.LOADED["grammar"], yacc) if lalr.LOADED["read"] else None
    print(json.dumps({
        "read": lalr.LOADED["read"],
        "signature": lalr.LOADED["signature"],
        "document": lalr.tables_document(lalr.LOADED["signature"], *got).decode(),
        "fresh_equal": fresh == got if fresh is not None else None,
        "parser": repr((sorted((s, sorted(r.items(), key=repr)) for s, r in parser.yaccparser.action.items()),
                        sorted((s, sorted(r.items())) for s, r in parser.yaccparser.goto.items()))),
        "dump": "".join(t.dump() for t in bashlex.parse("cd src && grep -rn 'def f' $(ls) | head -3; echo ok")),
        "yacc": lalr.LOADED["grammar"].__class__.__module__,
    }))
    """
)


def child(tables: Path | str) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(tables)], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def built() -> dict:
    """bashlex's own construction, no file read."""
    return child("-")


def test_the_shipped_tables_are_what_the_installed_bashlex_builds(built):
    # (a bashlex whose grammar or generator differs fails here: regenerate with
    # python -m dsh_sidecar.suggester.parse.lalr; until then such a bashlex builds its own)
    assert built["read"] is False and built["yacc"] == "bashlex.yacc"
    assert built["document"].encode() == lalr.TABLES.read_bytes()  # byte for byte
    doc = json.loads(lalr.TABLES.read_bytes())
    assert doc["format"] == lalr.FORMAT == 1
    assert doc["signature"] == built["signature"]
    read = child(lalr.TABLES)
    assert read["read"] is True and read["fresh_equal"] is True
    assert read["signature"] == built["signature"]
    assert read["parser"] == built["parser"]  # bashlex's corrections applied to the same tables
    assert read["dump"] == built["dump"]
    assert "PipelineNode" in read["dump"] and "CommandsubstitutionNode" in read["dump"]


def _document(tmp_path: Path, **change: object) -> Path:
    doc = json.loads(lalr.TABLES.read_bytes())
    doc.update(change)
    path = tmp_path / "tables.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_file_of_another_grammar_is_not_read_and_bashlex_builds_its_tables(tmp_path, built):
    other = child(_document(tmp_path, signature="0" * 64))
    assert other["read"] is False
    assert other["parser"] == built["parser"] and other["dump"] == built["dump"]


def test_read_tables_takes_only_the_expected_signature_layout_and_types(tmp_path):
    sig = json.loads(lalr.TABLES.read_bytes())["signature"]
    action, goto = lalr.read_tables(lalr.TABLES, sig) or ({}, {})
    assert len(action) == len(goto) > 300 and all(type(s) is int for s in action)
    assert action[0] and all(v is None or type(v) is int for row in action.values() for v in row.values())
    assert lalr.read_tables(lalr.TABLES, "f" * 64) is None
    assert lalr.read_tables(tmp_path / "missing.json", sig) is None
    assert lalr.read_tables(_document(tmp_path, format=2), sig) is None
    first = next(iter(json.loads(lalr.TABLES.read_bytes())["action"]))
    for bad in (
        {"action": {first: {"WORD": "3"}}},  # an action that is not an integer
        {"goto": {first: {"list": None}}},  # a goto is never empty
        {"action": {"x": {}}},  # a state that is not a number
        {"action": [1, 2]},
        {"goto": {first: 5}},
    ):
        assert lalr.read_tables(_document(tmp_path, **bad), sig) is None, bad
    (tmp_path / "broken.json").write_bytes(b'{"format": 1, "signat')
    assert lalr.read_tables(tmp_path / "broken.json", sig) is None
    (tmp_path / "list.json").write_bytes(b"[1]")
    assert lalr.read_tables(tmp_path / "list.json", sig) is None


def test_the_tables_document_round_trips(tmp_path):
    action = {0: {"WORD": 3, "$end": None}, 5: {"PIPE": -2}}
    goto = {0: {"list": 7}}
    path = tmp_path / "t.json"
    path.write_bytes(lalr.tables_document("ab" * 32, action, goto))
    assert lalr.read_tables(path, "ab" * 32) == (action, goto)
    assert list(lalr.read_tables(path, "ab" * 32)[0]) == [0, 5]  # the states' order kept


def _tampered(tmp_path: Path, edit) -> Path:
    """The shipped file with its signature kept and ``edit(doc)`` applied to its tables."""
    doc = json.loads(lalr.TABLES.read_bytes())
    edit(doc)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc))
    return path


def test_tables_of_the_right_signature_missing_a_state_bashlex_reads_are_not_read(tmp_path, built):
    # bashlex's parser reads goto[0]['simple_list'] right after yacc() (its corrections of two
    # states): a file without it raised KeyError out of the import, every parse's fallback after
    path = _tampered(tmp_path, lambda doc: doc["goto"]["0"].pop("simple_list"))
    got = child(path)
    assert got["read"] is False
    assert got["parser"] == built["parser"] and got["dump"] == built["dump"]


def test_tables_that_shift_to_a_state_that_is_not_there_are_not_read(tmp_path, built):
    def edit(doc: dict) -> None:
        doc["action"]["0"]["WORD"] = 9999

    got = child(_tampered(tmp_path, edit))
    assert got["read"] is False
    assert got["dump"] == built["dump"]
    sig = json.loads(lalr.TABLES.read_bytes())["signature"]
    for bad in (
        lambda doc: doc["goto"]["0"].update(list=9999),  # a goto to no state
        lambda doc: doc["action"]["1"].update(WORD=-5000),  # a reduction by no production
        lambda doc: doc["goto"].pop("7"),  # a state with an action row and no goto row
    ):
        assert lalr.read_tables(_tampered(tmp_path, bad), sig, productions=168) is None


def test_a_tables_file_over_the_size_bound_is_not_read(tmp_path):
    sig = json.loads(lalr.TABLES.read_bytes())["signature"]
    path = tmp_path / "huge.json"
    path.write_bytes(lalr.TABLES.read_bytes().rstrip() + b" " * (lalr.MAX_BYTES + 1))
    assert json.loads(path.read_bytes())["signature"] == sig  # still the right document
    assert lalr.read_tables(path, sig) is None
