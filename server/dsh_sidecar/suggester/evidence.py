"""Structural evidence: what the *shape* of a call says about its intent, beside the pack's
regex signals (issue 12, "Classification that reads structure").

Each rule below reads the query model (``query.py``) — where the call searches, which file
names it asks for, which files it reads — and adds its weight to one intent's signal sum before
the gate (``k = sigmoid(Σw + b)``, plan "The gate"), exactly like a pack signal that matched.
Like a pack signal, evidence alone must be strong to cross a threshold: a weight below 1.7
(0.75 threshold) or 2.34 (0.85) never does on its own. Weights are ours, chosen on the tune
split of the evaluation corpus (``docs/SCHEME.md`` gives the figures).

=====================  ==========  =====================================================
rule                   intent      when
=====================  ==========  =====================================================
``test-scope``         Test        the search is scoped to a test folder / test file names
``docs-scope``         Doc         the search is scoped to a docs root / doc file names
``ci-scope``           Config      the search names CI pipeline files or their folder
``ledger-name``        Ledger      the call asks for a changelog by name (any case)
``owner-name``         Owner       the call asks for CODEOWNERS/OWNERS/MAINTAINERS/AUTHORS
``manifest-version``   Version     a manifest is searched or queried for ``version``
``manifest-deps``      Dependency  a manifest is searched or queried for its dependencies
``definition``         Symbol      the pattern is a definition (``class X``, ``def f``, ``fn f``…)
=====================  ==========  =====================================================
"""

from __future__ import annotations

import re
from typing import Final

from dsh_sidecar.suggester.query import Query
from dsh_sidecar.workspace.kinds import MANIFEST_NAMES, TEST_DIRS

#: Weights of the rules (ours; see the module docstring and docs/SCHEME.md).
WEIGHTS: Final = {
    "test-scope": 1.2,
    "docs-scope": 1.2,
    "ci-scope": 2.0,
    "ledger-name": 2.6,
    "owner-name": 2.2,
    "manifest-version": 2.6,
    "manifest-deps": 2.2,
    "definition": 2.2,
}
#: The intent each rule speaks for.
INTENT_OF: Final = {
    "test-scope": "Test",
    "docs-scope": "Doc",
    "ci-scope": "Config",
    "ledger-name": "Ledger",
    "owner-name": "Owner",
    "manifest-version": "Version",
    "manifest-deps": "Dependency",
    "definition": "Symbol",
}

_TEST_NAME = re.compile(r"(?:^|/)(?:test_\*|\*_test|\*\.(?:test|spec)|\*tests?\b|conftest)", re.IGNORECASE)
_DOC_NAME = re.compile(r"\*\.(?:md|rst|adoc|mdx|txt)$|(?:^|/)readme", re.IGNORECASE)
_DOC_DIRS: Final = frozenset({"docs", "doc", "documentation", "website", "guide", "guides", "manual", "book"})
_CI = re.compile(r"\.github/workflows|\.gitlab-ci|\.circleci|azure-pipelines|\.travis\.yml|jenkinsfile|\.buildkite")
_LEDGER = re.compile(r"(?:^|[/*])(?:change[-_]?log|changes|history|news|release[-_]?notes)", re.IGNORECASE)
_OWNER = re.compile(r"(?:^|[/*])(?:codeowners|owners|maintainers|authors)", re.IGNORECASE)
_VERSION_TERMS: Final = frozenset({"version", "__version__", "VERSION", "Version"})
_DEP_TERMS: Final = frozenset(
    {"dependencies", "devDependencies", "peerDependencies", "install_requires", "requires", "require"}
    | {"optional-dependencies", "extras_require", "deps", "requirements"}
)
_MANIFESTS: Final = frozenset(MANIFEST_NAMES) | {"requirements.txt", "gradle.properties"}


def _is_manifest(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return name in _MANIFESTS or name.startswith("requirements") or name.endswith((".gemspec", ".csproj"))


def _in_test_dir(path: str) -> bool:
    return any(p in TEST_DIRS for p in path.split("/"))


def _in_docs(path: str, docs_roots: frozenset[str]) -> bool:
    if any(p.lower() in _DOC_DIRS for p in path.split("/")):
        return True
    return any(path == r or path.startswith(r + "/") for r in docs_roots)


def rules(q: Query, docs_roots: frozenset[str] = frozenset()) -> list[str]:
    """The rules (module docstring) that ``q`` satisfies, in table order. Reads are never
    evidence (reading a file is where a search ends, not a new one)."""
    if q.tool not in ("grep", "glob", "bash") or (
        not q.patterns and not q.name_patterns and not q.keys and not q.scope
    ):
        return []
    out: list[str] = []
    where = [s for s in q.scope if s] + q.name_patterns
    searched = where + q.reads if q.keys or q.patterns else where
    if any(_in_test_dir(p) or _TEST_NAME.search(p) for p in where):
        out.append("test-scope")
    if any(_in_docs(p, docs_roots) or _DOC_NAME.search(p) for p in where):
        out.append("docs-scope")
    if any(_CI.search(p.lower()) for p in where):
        out.append("ci-scope")
    names = q.name_patterns + [s for s in q.scope if s]
    if any(_LEDGER.search(p) for p in names) or any(_LEDGER.search(p) for p in q.patterns if len(p) < 30):
        out.append("ledger-name")
    if any(_OWNER.search(p) for p in names):
        out.append("owner-name")
    manifest = any(_is_manifest(p) for p in searched) or any(
        re.fullmatch(r"\*?\.?(?:toml|cfg)|package\.json|setup\.py|Cargo\.toml|go\.mod", p) for p in q.name_patterns
    )
    words = set(q.terms) | set(q.keys)
    if manifest and words & _VERSION_TERMS:
        out.append("manifest-version")
    if manifest and words & _DEP_TERMS:
        out.append("manifest-deps")
    if q.definition_keyword is not None and q.tool in ("grep", "bash"):
        out.append("definition")
    return out


def weights(q: Query, docs_roots: frozenset[str] = frozenset()) -> dict[str, float]:
    """``{intent: summed evidence weight}`` of ``q`` (intents without evidence absent)."""
    out: dict[str, float] = {}
    for rule in rules(q, docs_roots):
        intent = INTENT_OF[rule]
        out[intent] = out.get(intent, 0.0) + WEIGHTS[rule]
    return out
