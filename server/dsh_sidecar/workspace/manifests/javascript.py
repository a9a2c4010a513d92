"""JavaScript's manifests: ``package.json`` (dependencies, workspaces, scripts and the test
runner's configuration they name) and ``pnpm-workspace.yaml``.
"""

from __future__ import annotations

import re
from typing import Final

from dsh_sidecar.workspace.manifests.formats import parse_json, parse_yaml, table, walk
from dsh_sidecar.workspace.manifests.model import LABEL, Builder, first_of, script_intent

_PKG_DEPS: Final = frozenset(
    {
        "dependencies",
        "devDependencies",
        "peerDependencies",
        "optionalDependencies",
        "bundleDependencies",
        "bundledDependencies",
        "peerDependenciesMeta",
        "overrides",
        "resolutions",
        "pnpm",
        "catalog",
        "catalogs",
    }
)
_PKG_PATH: Final = frozenset(
    {"main", "module", "exports", "types", "typings", "bin", "files", "workspaces", "directories", "imports"}
    | {"browser", "sideEffects", "type", "man", "unpkg", "jsdelivr", "source"}
)
_PKG_OWNER: Final = frozenset({"author", "contributors", "maintainers", "license", "funding"})
_PKG_TEST: Final = frozenset({"jest", "mocha", "ava", "c8", "nyc", "vitest", "tap", "jasmine", "tsd"})
_PKG_LINT: Final = frozenset(
    {"eslintConfig", "eslintIgnore", "prettier", "stylelint", "xo", "standard", "lint-staged", "nano-staged"}
    | {"commitlint", "husky", "simple-git-hooks", "browserslist", "markdownlint", "remarkConfig"}
)

#: The tool a ``package.json`` key configures, where the key is not the tool's name.
_PKG_TOOL: Final = {"eslintConfig": "eslint", "eslintIgnore": "eslint", "remarkConfig": "remark"}


def read_package_json(b: Builder, text: str) -> None:
    data = parse_json(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        return (
            first_of(
                (key == "version", "Version"),
                (key in _PKG_DEPS, "Dependency"),
                (key in _PKG_PATH, "Path"),
                (key in _PKG_OWNER, "Owner"),
                (key in _PKG_TEST, "Test"),
                (key in ("homepage", "repository", "bugs", "description", "readme"), "Doc"),
            )
            or "Config"
        )

    scripts = table(data, "scripts")
    rest = {k: v for k, v in data.items() if k != "scripts"}
    walk(b, rest, (), intent_of)
    b.add("Config", "scripts", LABEL)
    for name, command in list(scripts.items())[:500]:
        if not isinstance(name, str) or not isinstance(command, str):
            continue
        intent = script_intent(name, command)
        b.add(intent, name)
        b.add(intent, command)
        if intent == "Test":
            b.facts.add("test-config")  # the package script that runs the tests
            m = re.search(r"(?:--config|-c)[ =]([\w./@-]+\.(?:[cm]?[jt]s|json|ya?ml))", command)
            if m:
                b.point("test-config", m.group(1))
    if isinstance(data.get("version"), str):
        b.facts.add("manifest-version")
    if any(data.get(k) for k in ("author", "contributors", "maintainers")):
        b.facts.add("manifest-authors")
    if any(
        isinstance(data.get(k), dict) and data.get(k) for k in ("dependencies", "devDependencies", "peerDependencies")
    ):
        b.facts.add("dependency-manifest")
    if data.get("workspaces") or data.get("exports"):
        b.facts.add("layout-manifest")
    for key in _PKG_TEST | _PKG_LINT:
        if data.get(key) not in (None, "", [], {}):
            b.configures(_PKG_TOOL.get(key, key))  # the tool reads its settings from this key
    if any(k in data for k in _PKG_TEST):
        b.facts.add("test-config")
    if any(k in data for k in _PKG_LINT - {"husky", "lint-staged", "nano-staged", "browserslist"}):
        b.facts.add("lint-config")


def read_pnpm_workspace(b: Builder, text: str) -> None:
    data = parse_yaml(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        if key == "packages":
            return "Path"
        if key.startswith(("catalog", "overrides", "patchedDependencies", "onlyBuilt", "neverBuilt", "allowBuilds")):
            return "Dependency"
        return "Config"

    walk(b, data, (), intent_of)
    b.facts.add("layout-manifest")
