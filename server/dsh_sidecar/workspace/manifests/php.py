"""PHP's manifests: ``composer.json`` and PHPUnit's ``phpunit.xml(.dist)``."""

from __future__ import annotations

from dsh_sidecar.workspace.manifests.formats import local_name, parse_json, strings, table, walk, xml_root
from dsh_sidecar.workspace.manifests.model import Builder, first_of, script_intent


def read_composer(b: Builder, text: str) -> None:
    data = parse_json(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        if key == "extra" and len(p) > 1 and p[1] == "branch-alias":
            return "Version"
        return (
            first_of(
                (key == "version", "Version"),
                (key in ("require", "require-dev", "conflict", "replace", "provide", "suggest"), "Dependency"),
                (key in ("autoload", "autoload-dev", "bin", "include-path", "target-dir"), "Path"),
                (key in ("authors", "license", "funding"), "Owner"),
                (key in ("homepage", "support", "description", "readme"), "Doc"),
            )
            or "Config"
        )

    scripts = table(data, "scripts")
    walk(b, {k: v for k, v in data.items() if k != "scripts"}, (), intent_of)
    for name, command in list(scripts.items())[:500]:
        if not isinstance(name, str):
            continue
        cmd = " ".join(strings(command))
        intent = script_intent(name, cmd)
        b.add(intent, name)
        b.add(intent, cmd)
        if intent == "Test":
            b.facts.add("test-config")
    if isinstance(data.get("version"), str):
        b.facts.add("manifest-version")
    if data.get("authors"):
        b.facts.add("manifest-authors")
    if data.get("require") or data.get("require-dev"):
        b.facts.add("dependency-manifest")
    if data.get("autoload"):
        b.facts.add("layout-manifest")


def read_phpunit(b: Builder, text: str) -> None:
    root = xml_root(text)
    if root is None:
        return
    for el in root.iter():
        if not b.tick():
            return
        b.add("Test", local_name(el.tag))
        b.add("Test", el.text or "")
        for v in list(el.attrib.values())[:20]:
            b.add("Test", v)
    b.facts.add("test-config")
