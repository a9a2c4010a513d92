"""The bounded document parsers the readers share: TOML (``tomllib``) and its walk, JSON, YAML
(PyYAML's safe loader, at most :data:`YAML_MAX` characters), and XML (lxml with entities, DTDs
and the network off).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from typing import Any, Final

from dsh_sidecar.workspace.manifests.model import MAX_BYTES, MAX_DEPTH, Builder


def walk(
    b: Builder,
    value: object,
    path: tuple[str, ...],
    intent_of: Callable[[tuple[str, ...]], str],
    depth: int = 0,
) -> dict[str, float]:
    """Add every key and string value below ``path`` with ``intent_of(key path)``; a table's
    own name stands for what its entries are (``[tool.setuptools.dynamic]`` holding
    ``version`` is Version). Returns the intents of the entries (shares adding up to 1)."""
    if depth > MAX_DEPTH or not b.tick():
        return {}
    if isinstance(value, dict):
        shares: dict[str, float] = {}
        items = [(k, v) for k, v in list(value.items())[:2000] if isinstance(k, str)]
        for k, v in items:
            sub = (*path, k)
            if isinstance(v, dict) and v:
                inner = walk(b, v, sub, intent_of, depth + 1)
                for intent, share in inner.items():
                    b.add(intent, k, share)
                    if depth < 4:
                        b.add_path(intent, sub, share)
            else:
                walk(b, v, sub, intent_of, depth + 1)
                inner = {intent_of(sub): 1.0}
                b.add(intent_of(sub), k)
                if depth < 4 and path:
                    b.add_path(intent_of(sub), sub)
            for intent, share in inner.items():
                shares[intent] = shares.get(intent, 0.0) + share / len(items)
        return shares
    if isinstance(value, list):
        for item in value[:2000]:
            walk(b, item, path, intent_of, depth + 1)
    elif isinstance(value, str):
        b.add(intent_of(path), value)
    return {intent_of(path): 1.0}


def table(data: dict[str, Any], key: str) -> dict[str, Any]:
    """``data[key]`` when it is a table (a dict), else an empty one: a manifest's section read
    without trusting its type."""
    value = data.get(key)
    return value if isinstance(value, dict) else {}


def parse_toml(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError, MemoryError):
        return None


def strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def parse_json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


_YAML_MAX: Final = 64 * 1024


def parse_yaml(text: str) -> Any:
    if len(text) > _YAML_MAX:
        return None
    import yaml

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def xml_root(text: str) -> Any:
    """The root element of a trusted-shape XML document, or ``None``: a document with an
    entity declaration is refused (billion laughs); entities, DTDs and the network are off."""
    if "<!ENTITY" in text or len(text) > MAX_BYTES:
        return None
    from lxml import etree

    parser = etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
        collect_ids=False,
        recover=False,
    )
    try:
        return etree.fromstring(text.encode("utf-8", "replace"), parser)
    except (etree.XMLSyntaxError, ValueError, RecursionError):
        return None


def local_name(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""
