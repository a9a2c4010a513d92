"""Write the JSON schema of the ``dsh.initializationOptions`` setting into package.json.

The schema is derived from the sidecar's own config models (``RouterConfig``,
``BanditConfig``, ``SuggesterConfig``: types, defaults, bounds, enums, and each field's
description where the model has one), so VS Code's settings editor completes and checks what
the sidecar accepts. Run it after a config field changes (``tests/editors/test_editor_clients_schema.py``
fails until then)::

    python editor-clients/vscode/scripts/initialization_options_schema.py          # rewrite
    python editor-clients/vscode/scripts/initialization_options_schema.py --check  # exit 1 if stale

The check is exact: the manifest's text must be what the script writes (each number as the
config model holds it, ``6000.0`` for a float default and ``2**128`` written out for an int bound),
not merely equal as JSON values.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

PACKAGE = Path(__file__).resolve().parent.parent / "package.json"
KEEP = (
    "type",
    "default",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "enum",
    "minLength",
    "maxLength",
)


def _field(schema: dict[str, Any]) -> dict[str, Any]:
    """One property of a pydantic JSON schema, reduced to what VS Code's settings UI uses."""
    out: dict[str, Any] = {}
    options = schema.get("anyOf")
    if options:  # Optional[X]: X or null
        types = [o.get("type") for o in options if o.get("type")]
        out["type"] = types if len(types) > 1 else types[0]
        for o in options:
            for key in KEEP[2:]:
                if key in o:
                    out[key] = o[key]
    for key in KEEP:
        if key in schema:
            out[key] = schema[key]
    if "description" in schema:
        out["description"] = schema["description"]
    return out


def _block(model: Any, description: str) -> dict[str, Any]:
    schema = model.model_json_schema(by_alias=True)
    props = {name: _field(p) for name, p in schema["properties"].items()}
    return {"type": "object", "description": description, "additionalProperties": False, "properties": props}


def build() -> dict[str, Any]:
    """The whole ``dsh.initializationOptions`` schema."""
    from dsh_sidecar.bandit import BanditConfig
    from dsh_sidecar.config import LOG_MESSAGES, SidecarConfig
    from dsh_sidecar.router.config import CANONICAL_ORDER, KNOWN, CacheSettings, ProviderSettings, RouterConfig
    from dsh_sidecar.state.config import StateConfig
    from dsh_sidecar.suggester import SuggesterConfig

    top = SidecarConfig.model_fields  # each field's description is its attribute docstring
    doc = {name: RouterConfig.model_fields[name].description for name in ("provider", "order", "providers", "cache")}
    router = _block(RouterConfig, top["router"].description)
    ids = list(CANONICAL_ORDER)  # the providers with settings (the offline docs index has none)
    named = list(KNOWN)  # what provider and order may name
    router["properties"]["provider"] = {"type": "string", "enum": named, "description": doc["provider"]}
    router["properties"]["order"] = {
        "type": "array",
        "items": {"type": "string", "enum": named},
        "uniqueItems": True,
        "minItems": 1,
        "description": doc["order"],
    }
    provider = _block(ProviderSettings, "Per-provider overrides.")
    for a, b in (("baseURL", "baseUrl"), ("baseUrl", "baseURL")):  # the two spellings the router accepts
        if a in provider["properties"]:
            provider["properties"][b] = dict(provider["properties"][a])
    router["properties"]["providers"] = {
        "type": "object",
        "description": doc["providers"],
        "additionalProperties": False,
        "properties": {pid: provider for pid in ids},
    }
    cache = _block(CacheSettings, "Result cache.")
    cache["properties"].pop("enabled", None)
    router["properties"]["cache"] = {"description": doc["cache"], "anyOf": [{"type": "boolean"}, cache]}
    return {
        "type": "object",
        "default": {},
        "additionalProperties": False,
        "markdownDescription": "Sidecar configuration sent as `initializationOptions` and, when it changes, as "
        '`workspace/didChangeConfiguration`: `{router, bandit, suggester, state, logMessages}` (see the sidecar README, "Configuration").',
        "properties": {
            "router": router,
            "bandit": _block(BanditConfig, top["bandit"].description),
            "suggester": _block(SuggesterConfig, top["suggester"].description),
            "state": _block(StateConfig, top["state"].description),
            "logMessages": {
                "type": "string",
                "enum": list(LOG_MESSAGES),
                "default": top["log_messages"].default,
                "description": top["log_messages"].description,
            },
        },
    }


def main(argv: list[str]) -> int:
    text = PACKAGE.read_text("utf-8")
    pkg = json.loads(text)
    props = pkg["contributes"]["configuration"]["properties"]
    props["dsh.initializationOptions"] = {
        **build(),
        **{k: v for k, v in props["dsh.initializationOptions"].items() if k == "scope"},
    }
    # Python's json writes each number as the model holds it: a float as a float (6000.0), an
    # int exactly (2**128), the shortest repr that reads back (0.4644). The check compares the
    # text, since a value comparison holds 6000 == 6000.0 and 2**128 == 3.402823669209385e+38
    # (a JavaScript rewrite of the manifest writes both so)
    want = json.dumps(pkg, indent=2, ensure_ascii=False) + "\n"
    if "--check" in argv:
        if text != want:
            sys.stderr.write(
                "package.json: dsh.initializationOptions schema is stale, or written otherwise than this "
                "script writes it (its numbers: a float as a float, an int exactly); run this script\n"
            )
            return 1
        return 0
    PACKAGE.write_text(want, "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
