"""The VS Code extension's manifest: the ``dsh.initializationOptions`` schema matches the
sidecar's config models, the command settings are machine-scoped, untrusted workspaces cannot
set what runs, and the package has what the Marketplace and Open VSX need."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

from dsh_sidecar.bandit import BanditConfig
from dsh_sidecar.config import SidecarConfig
from dsh_sidecar.router.config import CANONICAL_ORDER, CacheSettings, RouterConfig
from dsh_sidecar.state.config import StateConfig
from dsh_sidecar.suggester import SuggesterConfig

VSCODE = Path(__file__).resolve().parents[2] / "editor-clients" / "vscode"
PKG = json.loads((VSCODE / "package.json").read_text("utf-8"))
PROPS = PKG["contributes"]["configuration"]["properties"]
SCHEMA = PROPS["dsh.initializationOptions"]


def test_schema_is_generated_from_the_current_config_models():
    script = VSCODE / "scripts" / "initialization_options_schema.py"
    proc = subprocess.run([sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


def numbers_as_written(text: str) -> object:
    """JSON with each number kept as written, tagged by its kind: ``6000`` and ``6000.0`` differ,
    as do ``340282366920938463463374607431768211456`` and ``3.402823669209385e+38``."""
    return json.loads(text, parse_int=lambda s: ("int", s), parse_float=lambda s: ("float", s))


def test_numbers_are_written_as_the_config_models_hold_them():
    """Every numeric default in the schema is its model's value as Python's ``json`` writes it: a
    float as a float, an int exactly (a JavaScript rewrite of the manifest made ``speedMs``'s
    6000.0 an int and ``seed``'s bound 2**128 an exponent form, and the value-only check passed)."""
    text = (VSCODE / "package.json").read_text("utf-8")
    props = numbers_as_written(text)["contributes"]["configuration"]["properties"]  # type: ignore[index]
    blocks = props["dsh.initializationOptions"]["properties"]
    models = {
        "router": (RouterConfig, blocks["router"]["properties"]),
        "cache": (CacheSettings, blocks["router"]["properties"]["cache"]["anyOf"][1]["properties"]),
        "bandit": (BanditConfig, blocks["bandit"]["properties"]),
        "suggester": (SuggesterConfig, blocks["suggester"]["properties"]),
        "state": (StateConfig, blocks["state"]["properties"]),
    }
    checked = 0
    for block, (model, schema) in models.items():
        for name, field in model.model_fields.items():
            default = field.default
            if isinstance(default, bool) or not isinstance(default, int | float):
                continue
            kind = "float" if isinstance(default, float) else "int"
            assert schema[field.alias or name]["default"] == (kind, json.dumps(default)), (block, name)
            checked += 1
    assert checked >= 25
    bandit, suggester = blocks["bandit"]["properties"], blocks["suggester"]["properties"]
    assert bandit["speedMs"]["default"] == ("float", "6000.0")
    assert bandit["seed"]["maximum"] == ("int", "340282366920938463463374607431768211456")  # 2**128
    assert suggester["minConfidence"]["default"] == ("float", "0.4644")
    assert suggester["firstCallWaitMs"]["default"] == ("int", "500")
    assert blocks["bandit"]["properties"]["minClassEvidence"]["maximum"] == ("float", "1000000.0")  # le=1e6


def test_the_schema_check_is_exact(tmp_path):
    """``--check`` compares the manifest's text with what the script writes: a number written in
    another form (an int for a float, an exponent form) is stale, though equal as a value."""
    script = VSCODE / "scripts" / "initialization_options_schema.py"
    copy = tmp_path / "vscode"
    (copy / "scripts").mkdir(parents=True)
    (copy / "scripts" / script.name).write_text(script.read_text("utf-8"))
    text = (VSCODE / "package.json").read_text("utf-8")
    for written in (text, text.replace('"default": 6000.0,', '"default": 6000,', 1)):
        (copy / "package.json").write_text(written, "utf-8")
        check = subprocess.run(
            [sys.executable, str(copy / "scripts" / script.name), "--check"], capture_output=True, text=True, timeout=60
        )
        assert check.returncode == (0 if written == text else 1), check.stderr
    assert '"default": 6000.0,' in text


def test_schema_names_every_config_key_and_refuses_others():
    assert SCHEMA["additionalProperties"] is False
    assert set(SCHEMA["properties"]) == {"router", "bandit", "suggester", "state", "logMessages"}
    state = SCHEMA["properties"]["state"]
    assert set(state["properties"]) == {"backend", "timeoutMs", "retryMs"} and state["additionalProperties"] is False
    assert SCHEMA["properties"]["logMessages"]["enum"] == ["all", "decisions", "none"]
    bandit = SCHEMA["properties"]["bandit"]
    assert set(bandit["properties"]) == {f.alias or n for n, f in BanditConfig.model_fields.items()}
    suggester = SCHEMA["properties"]["suggester"]
    assert set(suggester["properties"]) == {f.alias or n for n, f in SuggesterConfig.model_fields.items()}
    assert suggester["properties"]["sectionMode"]["enum"] == ["off", "sticky"]
    router = SCHEMA["properties"]["router"]["properties"]
    assert router["timeoutMs"] == {
        "type": "integer",
        "default": 10000,
        "minimum": 100,
        "maximum": 600000,
        "description": "Per-provider timeout, milliseconds (seed: default 10000, at least 100).",
    }
    assert router["order"]["items"]["enum"] == [*CANONICAL_ORDER, "local"]
    assert set(router["providers"]["properties"]) == set(CANONICAL_ORDER)
    assert {"apiKey", "apiKeyEnv", "baseURL", "baseUrl", "baseUrlEnv", "model"} <= set(
        router["providers"]["properties"]["exa"]["properties"]
    )


def test_command_settings_are_machine_scoped_and_restricted_in_untrusted_workspaces():
    assert PROPS["dsh.sidecar.command"]["scope"] == "machine"
    assert PROPS["dsh.sidecar.args"]["scope"] == "machine"
    untrusted = PKG["capabilities"]["untrustedWorkspaces"]
    assert untrusted["supported"] == "limited"
    assert set(untrusted["restrictedConfigurations"]) == {
        "dsh.sidecar.command",
        "dsh.sidecar.args",
        "dsh.initializationOptions",
    }


def test_package_is_ready_for_the_marketplace_and_open_vsx():
    for name in ("README.md", "LICENSE"):
        assert (VSCODE / name).stat().st_size > 500, name
    icon = (VSCODE / PKG["icon"]).read_bytes()
    assert icon[:8] == b"\x89PNG\r\n\x1a\n"
    assert struct.unpack(">II", icon[16:24]) == (128, 128)  # the Marketplace's minimum
    assert PKG["repository"]["url"].startswith("https://")
    assert PKG["license"] == "MIT" and PKG["publisher"] and PKG["version"]
    lock = json.loads((VSCODE / "package-lock.json").read_text("utf-8"))
    assert "node_modules/@vscode/vsce" in lock["packages"] and "node_modules/ovsx" in lock["packages"]
    assert "npx" not in PKG["scripts"]["package"]  # vsce from the lockfile, not fetched


def test_every_config_field_is_documented_from_its_attribute_docstring():
    """Every key of every block carries the description the model's attribute docstring gives."""
    blocks = {"bandit": BanditConfig, "router": RouterConfig, "suggester": SuggesterConfig, "state": StateConfig}
    for name, model in blocks.items():
        props = SCHEMA["properties"][name]["properties"]
        for field_name, field in model.model_fields.items():
            assert field.description, f"{name}.{field_name} has no attribute docstring"
            assert props[field.alias or field_name]["description"] == field.description
    assert SCHEMA["properties"]["logMessages"]["description"] == SidecarConfig.model_fields["log_messages"].description
