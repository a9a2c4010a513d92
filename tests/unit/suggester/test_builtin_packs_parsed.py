"""The built-in packs a start builds from their generated form (``dsh_packs/parsed.py``) are
the packs their YAML files parse and validate to: the same fields, defaults and fields set."""

from __future__ import annotations

from importlib import resources

from dsh_packs.parsed import PACKS
from dsh_sidecar.suggester.packs import Pack, builtin_packs, construct_pack, parse_builtin_yaml, parse_pack


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
