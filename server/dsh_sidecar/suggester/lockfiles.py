"""A manifest's dependency section asked about: the lock file its tool writes beside it.

A Dependency question asked of a manifest's dependency *section* (``grep -A8 '^dependencies'
pyproject.toml``, ``jq '.devDependencies | keys' package.json``: the searched words name the
section, not one package) is answered by what the manifest leaves open — the versions the
ecosystem's tool resolved and pinned, in the lock file it writes beside the manifest or at the
root of its workspace (npm, pnpm, yarn and Cargo workspaces keep one lock at the root). A
question about one package (``grep requests pyproject.toml``) is not: the manifest answers it.

Pure functions over the query's words and the intent's targets (a lock file named is one of the
prepared Dependency targets, so it exists). The manifest names and their lock files are the
tools' own (uv, Poetry, PDM, Pipenv, npm, pnpm, yarn, Bun, Cargo, Bundler, Go modules,
Composer, Mix, pub, SwiftPM).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from pathlib import PurePosixPath
from typing import Final

#: manifest basename → the lock files its ecosystem's tools write beside it
LOCKS: Final = {
    "pyproject.toml": ("uv.lock", "poetry.lock", "pdm.lock"),
    "Pipfile": ("Pipfile.lock",),
    "package.json": (
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "yarn.lock",
        "bun.lock",
        "bun.lockb",
    ),
    "Cargo.toml": ("Cargo.lock",),
    "Gemfile": ("Gemfile.lock",),
    "go.mod": ("go.sum",),
    "composer.json": ("composer.lock",),
    "mix.exs": ("mix.lock",),
    "pubspec.yaml": ("pubspec.lock",),
    "Package.swift": ("Package.resolved",),
}

#: words that name a dependency section (PEP 621/735, Poetry, npm, Cargo, Composer, setuptools)
SECTION: Final = frozenset(
    {
        "dependencies",
        "dependency",
        "devdependencies",
        "peerdependencies",
        "optionaldependencies",
        "bundleddependencies",
        "require",
        "requires",
        "install_requires",
        "extras_require",
    }
)
#: words that qualify a section's name (``[project.optional-dependencies]``,
#: ``[tool.poetry.group.dev.dependencies]``, ``[dependency-groups]``, ``require-dev``,
#: ``[build-dependencies]``, ``[workspace.dependencies]``)
QUALIFIERS: Final = frozenset(
    {"project", "tool", "poetry", "pdm", "optional", "group", "groups", "dev", "build", "workspace"}
)


def asks_section(terms: Iterable[str]) -> bool:
    """Whether the searched words name a dependency section and nothing else (no package)."""
    words = [t.lower() for t in terms]
    return any(w in SECTION for w in words) and all(w in SECTION or w in QUALIFIERS for w in words)


def beside(manifests: AbstractSet[str], targets: Sequence[str]) -> list[str]:
    """Of ``targets``, in their order, the lock files written beside one of ``manifests`` or in
    a folder above it (a workspace's root lock), none of them shown (in ``manifests``)."""
    places: set[str] = set()
    for m in manifests:
        p = PurePosixPath(m)
        locks = LOCKS.get(p.name, ())
        for folder in (p.parent, *p.parent.parents):
            places.update(str(folder / lock) if str(folder) != "." else lock for lock in locks)
    return [t for t in targets if t in places and t not in manifests]
