"""What a workspace file is, from its name and (when read) its text: the *facts* the suggester
and the content index use, and the words a path or a text is indexed by. Pure functions, no I/O.

Facts (:func:`facts_of`, from names *and* contents): ``version-module`` (a code file that
assigns ``__version__``/``VERSION``/``version`` to a literal at top level), ``manifest-version``
(a manifest with a version field), ``changelog`` (a name such as CHANGELOG/CHANGES/HISTORY/NEWS/
RELEASE-NOTES in any case and folder, or a doc whose headings are versions: ``## [1.2.0]``,
``v1.2 (2024-01-02)``, ``Version 3.1``), ``ci-workflow`` (GitHub/GitLab/Circle/Azure/Travis/
Jenkins/AppVeyor/Buildkite pipelines, ``tox.ini``/``noxfile.py``) and ``ci-tests`` (a workflow
that runs a test command), ``docs-page`` (a doc file under a docs root — a folder named like
docs or holding a Sphinx ``conf.py``/``mkdocs.yml``/``index`` page among several doc files) and
``docs-home`` (such a root's own ``index``/``README`` page),
``test-module`` (a test by path, or code with test functions/cases), ``owners`` (CODEOWNERS,
OWNERS, MAINTAINERS, AUTHORS, CONTRIBUTORS in any case), ``owners-section`` (a README/doc with a
Maintainers/Authors/Owners/Team heading), ``manifest-authors`` (a manifest naming authors or
maintainers), ``env-config`` (code reading environment variables), ``test-config`` (pytest/jest/
vitest/… configuration; also a package script, a Surefire/Failsafe plugin, a CTest set-up, a
``phpunit.xml``), and what the manifest readers (``workspace/manifests/``) give:
``dependency-manifest``, ``lint-config``, ``layout-manifest``, ``version-tool``, and on the files a
manifest *points to* (``version-declared``, ``ledger-declared``, ``changelog``, ``test-config``)
once the content index has read the manifest (:func:`describe`).

Words (:func:`path_words`, :func:`text_words`): ASCII letters/digits, 3–30 characters,
lower-cased, stop words dropped, each once per file.
"""

from __future__ import annotations

import bisect
import functools
import logging
import re
from collections.abc import Iterable
from itertools import accumulate, compress
from operator import methodcaller, or_
from typing import Any, Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.workspace import manifests
from dsh_sidecar.workspace.manifests import MANIFEST_FACTS, Manifest

log = logging.getLogger(__name__)

#: Version of the rules below and of the manifest readers: the content index keeps what it
#: read of an unchanged file, so a change of what is read from one must bump it (the index is
#: rebuilt).
RULES_VERSION: Final = 3
#: Most bytes read of one file.
MAX_READ_BYTES: Final = 256 * 1024
#: Most distinct words indexed per file.
MAX_WORDS: Final = 4000

WORD = LazyPattern(r"[A-Za-z][A-Za-z0-9]{2,29}")
_SPLIT_PATH = LazyPattern(r"[/._\-\s]+")
_CAMEL = LazyPattern(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: Words never indexed (English glue and code keywords: present everywhere, telling nothing).
STOP_WORDS: Final = frozenset(
    "the and for not with this that from are was were you your have has had but all any can will into out its "
    "than then them they there their what when where which who why how use used using also may might must should "
    "would could one two new get set self return import def class none true false null nil let var const func "
    "function public private static void int str string bool elif else while try except finally raise pass yield "
    "lambda async await package type struct impl pub mod use crate".split()
)

_STRING_LITERAL = LazyPattern(r"""(["'`])((?:(?!\1)[^\\\n]|\\.){8,300})\1""")
_VERSION_ASSIGN = LazyPattern(
    r"""^(?:export\s+)?(?:(?:pub\s+)?const|var|let|static|final|public\s+static\s+final\s+String)?\s*"""
    r"""(?:__version__|VERSION|Version|version|__VERSION__)\s*(?::\s*[\w&'\[\]<> ]+)?\s*(?::=|=)\s*["'][\w.+-]*\d""",
    re.MULTILINE,
)
#: A C/C++ version macro (``#define FMT_VERSION 120201``, ``#define X_VERSION_MAJOR 3``,
#: ``#define X_VERSION "1.2"``) or a .NET assembly attribute.
_C_VERSION = LazyPattern(
    r"""^\s*#\s*define\s+[A-Z][A-Z0-9_]*VERSION(?:_MAJOR|_STRING|_STR)?\s+(?:\d|"\d|\()"""
    r"""|^\s*\[assembly:\s*Assembly(?:Informational|File)?Version\(""",
    re.MULTILINE,
)
_MANIFEST_VERSION = {
    "pyproject.toml": LazyPattern(r"^version\s*=\s*[\"']", re.MULTILINE),
    "setup.cfg": LazyPattern(r"^version\s*=", re.MULTILINE),
    "setup.py": LazyPattern(r"\bversion\s*=", re.MULTILINE),
    "package.json": LazyPattern(r"^\s{0,4}\"version\"\s*:", re.MULTILINE),
    "Cargo.toml": LazyPattern(r"^version\s*=|^version\.workspace\s*=", re.MULTILINE),
    "pom.xml": LazyPattern(r"<version>"),
    "build.gradle": LazyPattern(r"^\s*version\s*=", re.MULTILINE),
    "build.gradle.kts": LazyPattern(r"^\s*version\s*=", re.MULTILINE),
    "gradle.properties": LazyPattern(r"^version\s*=", re.MULTILINE),
    "composer.json": LazyPattern(r"\"version\"\s*:"),
    "pubspec.yaml": LazyPattern(r"^version:", re.MULTILINE),
    "mix.exs": LazyPattern(r"\bversion:\s"),
    "meson.build": LazyPattern(r"\bversion\s*:"),
}
_MANIFEST_VERSION_SUFFIX = {
    ".gemspec": LazyPattern(r"\.version\s*="),
    ".csproj": LazyPattern(r"<(?:Version|VersionPrefix)>"),
    ".nimble": LazyPattern(r"^version\s*=", re.MULTILINE),
    ".cabal": LazyPattern(r"^version:", re.MULTILINE | re.IGNORECASE),
}
_MANIFEST_AUTHORS = LazyPattern(
    r"^\s*(?:authors|maintainers|author|maintainer|\"author\"|\"authors\"|\"contributors\"|\"maintainers\")\s*[:=]"
    r"|<developers>|\bauthors?\s*=|\bmaintainers?\s*=",
    re.MULTILINE | re.IGNORECASE,
)
_CHANGELOG_NAME = LazyPattern(
    r"^(?:change[-_ ]?log|changes|history|news|release[-_ ]?notes|releases|whats[-_]?new|release[-_]history)"
    r"(?:\.[\w.-]+)?$",
    re.IGNORECASE,
)
_VERSION_HEADING = LazyPattern(
    r"^(?:#{1,4}\s*\[?v?\d+\.\d+(?:\.\d+)?[^\n]*|\[?v?\d+\.\d+(?:\.\d+)?\]?\s*(?:\(|-|—|–)\s*\d{4}[^\n]*"
    r"|(?:version|release)\s+v?\d+\.\d+[^\n]*|v?\d+\.\d+(?:\.\d+)?\s*\n[-=~^*]{3,})\s*$",
    re.MULTILINE | re.IGNORECASE,
)
_OWNER_NAME = LazyPattern(
    r"^(?:codeowners|owners|maintainers|authors|contributors|credits)(?:\.[\w.-]+)?$", re.IGNORECASE
)
_OWNER_HEADING = LazyPattern(
    r"^(?:#{1,4}\s*|\*\*)(?:core\s+)?(?:maintainers?|authors?|owners?|team|core team|credits|people|contributors)"
    r"\b[^\n]*$|^(?:maintainers?|authors?|owners?|credits)\s*\n[-=~^*]{3,}\s*$",
    re.MULTILINE | re.IGNORECASE,
)
_TEST_CODE = LazyPattern(
    r"^\s*(?:def test_\w+|class Test\w*|import pytest|from pytest|import unittest|func Test\w+\(|#\[test\]|"
    r"#\[cfg\(test\)\]|@Test\b|(?:describe|it|test)\s*\(\s*['\"`])",
    re.MULTILINE,
)
_ENV_READ = LazyPattern(
    r"os\.environ|os\.getenv|getenv\(|process\.env\b|std::env::var|env::var\(|System\.getenv|ENV\[|"
    r"pydantic_settings|BaseSettings\b|dotenv"
)
_TEST_RUN = LazyPattern(
    r"\b(?:pytest|tox|nox|unittest|npm (?:run )?test|yarn test|pnpm test|jest|vitest|mocha|cargo test|"
    r"cargo nextest|go test|mvn (?:-\S+ )*(?:test|verify)|gradle\w* (?:test|check)|make (?:test|check)|"
    r"rake|rspec|dotnet test|ctest|phpunit)\b"
)
CI_FILES: Final = frozenset(
    {".gitlab-ci.yml", ".travis.yml", "azure-pipelines.yml", "appveyor.yml", ".appveyor.yml", "Jenkinsfile"}
    | {"bitbucket-pipelines.yml", ".drone.yml", "cloudbuild.yaml", "tox.ini", "noxfile.py", ".cirrus.yml"}
)
_CI_DIRS = (".github/workflows/", ".circleci/", ".buildkite/", ".gitlab/ci/", ".azure-pipelines/", ".ci/")
TEST_CONFIG_NAMES: Final = frozenset(
    {"pytest.ini", "conftest.py", "tox.ini", "noxfile.py", "jest.config.js", "jest.config.ts", "jest.config.mjs"}
    | {"jest.config.cjs", "vitest.config.ts", "vitest.config.js", "vitest.config.mts", "karma.conf.js"}
    | {
        ".mocharc.yml",
        ".mocharc.json",
        ".mocharc.js",
        "phpunit.xml",
        "phpunit.xml.dist",
        ".rspec",
        "playwright.config.ts",
    }
    | {"cypress.config.ts", "cypress.config.js", "nextest.toml", "codecov.yml", ".coveragerc"}
)
#: The names a rule gives a fact to by the name alone (CI files anywhere: :func:`is_ci` decides).
_NAMED: Final = CI_FILES | TEST_CONFIG_NAMES
DOCS_DIR_NAMES: Final = frozenset(
    {"docs", "doc", "documentation", "website", "site", "guide", "guides", "manual", "book", "handbook", "wiki"}
    | {"pages", "docsite", "userguide", "user_guide", "tutorials", "tutorial"}
)
DOC_EXTENSIONS: Final = (".md", ".markdown", ".rst", ".adoc", ".txt", ".mdx", ".ipynb", ".rdoc", ".org")
#: Every fact :func:`facts_of` / :func:`docs_pages` can give.
FACTS: Final = (
    "version-module",
    "manifest-version",
    "manifest-authors",
    "changelog",
    "ci-workflow",
    "ci-tests",
    "docs-page",
    "docs-home",
    "test-module",
    "test-config",
    "owners",
    "owners-section",
    "env-config",
    *MANIFEST_FACTS,
)


def path_words(path: str) -> str:
    """The words of a path: folders, stem and extension, snake_case and camelCase split, lower-cased."""
    folder, _, name = path.rpartition("/")
    # "/" separates words, so a path's words are its folder's (the same for all of its files,
    # kept for the folders met last) then its name's, each once
    out = list(_folder_words(folder)) if folder else []
    _split_words(name, out)
    return " ".join(dict.fromkeys(out))


def _split_words(text: str, out: list[str]) -> None:
    for part in _SPLIT_PATH.split(text):
        if not part:
            continue
        low = part.lower()
        out.append(low)
        if low == part:
            continue  # no capital letter: nothing for the camelCase split (most paths' parts)
        pieces = _CAMEL.split(part)
        if len(pieces) > 1:
            out.extend(p.lower() for p in pieces if p)


@functools.lru_cache(maxsize=1024)
def _folder_words(folder: str) -> tuple[str, ...]:
    out: list[str] = []
    _split_words(folder, out)
    return tuple(out)


def text_words(text: str, limit: int = MAX_WORDS) -> str:
    """The distinct indexable words of ``text`` (module docstring), space-separated."""
    seen: dict[str, None] = {}
    for w in WORD.findall(text):
        lw = w.lower()
        if lw in STOP_WORDS or lw in seen:
            continue
        seen[lw] = None
        if lw != w:  # a capital letter: the camelCase pieces too
            pieces = _CAMEL.split(w)
            if len(pieces) > 1:
                for p in pieces:
                    lp = p.lower()
                    if len(lp) >= 3 and lp not in STOP_WORDS:
                        seen.setdefault(lp, None)
        if len(seen) >= limit:
            break
    return " ".join(seen)


def messages_of(text: str) -> str:
    """The message-like string literals of code (at least two words), joined by newlines."""
    out = []
    for m in _STRING_LITERAL.finditer(text):
        s = m.group(2)
        if " " in s and sum(1 for _ in WORD.finditer(s)) >= 2:
            out.append(s)
    return "\n".join(out)


def _name(path: str) -> str:
    return path.rsplit("/", 1)[-1]


def is_ci(path: str) -> bool:
    """Whether ``path`` is a CI pipeline definition (by location and name)."""
    name = _name(path)
    if name in CI_FILES and "/" not in path:
        return True
    return path.startswith(_CI_DIRS) and name.endswith((".yml", ".yaml", ".json", ".sh")) or name == "Jenkinsfile"


def facts_of(path: str, kind: str, text: str | None) -> set[str]:
    """The facts of one file (module docstring) from its path, kind and text (``None``: unread)."""
    return describe(path, kind, text)[0]


#: The names a name-level rule may give a fact to (:func:`_name_facts`, the manifest readers'
#: lint and version-tool names), as one pattern: a superset (case ignored for all of them).
_NAME_RULES: Final = LazyPattern(
    "|".join(
        f"(?:{rx.pattern})"
        for rx in (_CHANGELOG_NAME, _OWNER_NAME, manifests.LINT_NAMES, manifests.VERSION_TOOL_NAMES, manifests.OWN_FILE)
    ),
    re.IGNORECASE,
)
_NO_FACTS: Final[frozenset[str]] = frozenset()
_TEST_MODULE: Final = frozenset({"test-module"})


def maybe_named(path: str, name: str) -> bool:
    """Whether a name-level rule may give ``path`` (called ``name``) a fact by its name or its
    place, besides a rule's pattern (:func:`rule_named`): a name a rule lists, a CI folder."""
    return name in _NAMED or path.startswith(_CI_DIRS)


def maybe_named_at(files: list[str], names: list[str]) -> list[int]:
    """The positions of the ``files`` (called ``names``) :func:`maybe_named` is true of, found in
    C loops (``map``, ``compress``) rather than one call a file."""
    listed = map(_NAMED.__contains__, names)
    ci = map(methodcaller("startswith", _CI_DIRS), files)
    return list(compress(range(len(files)), map(or_, listed, ci)))


@functools.cache
def _rules_scan() -> Any:
    """:data:`_NAME_RULES` as one RE2 pattern over a text of names, one a line: each rule's
    pattern without its end anchor (a prefix of the name: a superset of the names it matches,
    whatever RE2's ASCII word class leaves out of an optional suffix), case ignored; ``None``
    when RE2 cannot compile it (the names are then matched one by one)."""
    import re2

    parts = (_CHANGELOG_NAME, _OWNER_NAME, manifests.LINT_NAMES, manifests.VERSION_TOOL_NAMES, manifests.OWN_FILE)
    try:
        return re2.compile("(?im)" + "|".join(f"(?:{rx.pattern.removesuffix('$')})" for rx in parts))
    except re2.error:
        log.warning("the name rules do not compile with RE2; each name is matched alone")
        return None


def rule_named(names: list[str]) -> list[int]:
    """The positions in ``names`` (file names) of those a name-level rule's pattern may match
    (a superset: :func:`facts_of` decides), found by one automaton pass over all of them (RE2,
    linear in their length) instead of one backtracking match of every rule per name (names that
    hold a line break: one by one)."""
    scan, text = _rules_scan(), "\n".join(names)
    if scan is not None and text.count("\n") == max(0, len(names) - 1):
        starts = list(accumulate((len(n) + 1 for n in names), initial=0))
        try:
            return sorted({bisect.bisect_right(starts, m.start()) - 1 for m in scan.finditer(text)})
        except (UnicodeError, ValueError):  # a name RE2 cannot take (no UTF-8): one by one
            pass
    return [i for i, n in enumerate(names) if _NAME_RULES.match(n)]


def name_facts(path: str, kind: str) -> frozenset[str]:
    """:func:`facts_of` with no text (the facts of ``path``'s name, place and ``kind``), worked
    out in full only for a CI path or a name some rule names; the rest, nearly every file of a
    large tree, has none but ``test-module`` (a test's code): one match per file for a whole
    listing."""
    name = _name(path)
    if name in _NAMED or path.startswith(_CI_DIRS) or _NAME_RULES.match(name):
        return frozenset(facts_of(path, kind, None))
    return _TEST_MODULE if kind == "test" and kind_is_code(path) else _NO_FACTS


def describe(path: str, kind: str, text: str | None) -> tuple[set[str], Manifest | None]:
    """The facts of one file and, for a manifest or tool configuration, what it declares
    (``workspace/manifests/``: the words of its sections and the files it points to)."""
    manifest = manifests.read(path, text[:MAX_READ_BYTES] if text is not None else None)
    return _facts(path, kind, text, manifest), manifest


def _facts(path: str, kind: str, text: str | None, manifest: Manifest | None) -> set[str]:
    name = _name(path)
    lname = name.lower()
    facts = _name_facts(path, name, lname, kind)
    if manifest is not None:
        facts |= manifest.facts
    if text is None:
        return facts
    head = text[:MAX_READ_BYTES]
    _manifest_text_facts(facts, name, lname, kind, head)
    if kind in ("source", "test") and kind_is_code(path):
        _code_text_facts(facts, path, kind, head)
    if kind in ("doc", "other") or lname.endswith(DOC_EXTENSIONS):
        if "changelog" not in facts and len(_VERSION_HEADING.findall(head[:60_000])) >= 2:
            facts.add("changelog")
        if _OWNER_HEADING.search(head):
            facts.add("owners-section")
    if "ci-workflow" in facts and _TEST_RUN.search(head):
        facts.add("ci-tests")
    if name == "package.json" and re.search(r"\"(?:jest|vitest|mocha)\"\s*:", head):
        facts.add("test-config")
    if name in ("pyproject.toml", "setup.cfg") and re.search(r"^\[(?:tool[.:])?pytest", head, re.MULTILINE):
        facts.add("test-config")
    return facts


def _name_facts(path: str, name: str, lname: str, kind: str) -> set[str]:
    """The facts a file's path, name (``lname``: lower-cased) and kind give without its text."""
    facts: set[str] = set()
    stem_ok = kind in ("doc", "other", "config") or lname.endswith(DOC_EXTENSIONS)
    if _CHANGELOG_NAME.match(name) and stem_ok and "/node_modules/" not in path:
        facts.add("changelog")
    if _OWNER_NAME.match(name) and kind in ("doc", "other", "config"):
        facts.add("owners")
    if is_ci(path):
        facts.add("ci-workflow")
    if name in TEST_CONFIG_NAMES:
        facts.add("test-config")
    if kind == "test" and kind_is_code(path):
        facts.add("test-module")
    return facts


def _manifest_text_facts(facts: set[str], name: str, lname: str, kind: str, head: str) -> None:
    """A manifest's version and authors as its text declares them (and ``gradle.properties``')."""
    if kind == "manifest":
        rx = _MANIFEST_VERSION.get(name) or next(
            (r for suf, r in _MANIFEST_VERSION_SUFFIX.items() if lname.endswith(suf)), None
        )
        if rx is not None and rx.search(head):
            facts.add("manifest-version")
        if _MANIFEST_AUTHORS.search(head):
            facts.add("manifest-authors")
    elif name == "gradle.properties" and _MANIFEST_VERSION["gradle.properties"].search(head):
        facts.add("manifest-version")


def _code_text_facts(facts: set[str], path: str, kind: str, head: str) -> None:
    """A code file's facts from its text: a version module, a test module, environment reads."""
    if kind == "source" and (_VERSION_ASSIGN.search(head[:20_000]) or _C_VERSION.search(head[:60_000])):
        facts.add("version-module")
    if _TEST_CODE.search(head) and (
        kind == "test" or re.search(r"(?:^|/)(?:test|tests|spec|testing)[_/]|_test\.|test_", path)
    ):
        facts.add("test-module")
    if kind == "source" and _ENV_READ.search(head):
        facts.add("env-config")


def kind_is_code(path: str) -> bool:
    """Whether ``path`` has a code extension (the kinds' source extensions, markup excluded)."""
    dot = path.rfind(".")
    return dot > path.rfind("/") and path[dot:].lower() in (_CODE_EXTENSIONS or _code_extensions())


#: The extensions :func:`kind_is_code` takes (made on first use: ``kinds`` is not imported
#: with this module).
_CODE_EXTENSIONS: frozenset[str] = frozenset()


def _code_extensions() -> frozenset[str]:
    global _CODE_EXTENSIONS
    from dsh_sidecar.workspace.kinds import SOURCE_EXTENSIONS

    _CODE_EXTENSIONS = SOURCE_EXTENSIONS - {".css", ".scss", ".less", ".html", ".htm", ".sql", ".graphql"}
    return _CODE_EXTENSIONS


def docs_roots(files: Iterable[str]) -> set[str]:
    """Folders that are documentation roots: named like docs (:data:`DOCS_DIR_NAMES`), or
    holding a Sphinx ``conf.py``/``mkdocs.yml``/``index`` page beside at least three doc files."""
    doc_count: dict[str, int] = {}
    markers: set[str] = set()
    roots: set[str] = set()
    for f in files:
        folder, _, name = f.rpartition("/")
        lname = name.lower()
        if lname.endswith(DOC_EXTENSIONS):
            doc_count[folder] = doc_count.get(folder, 0) + 1
        if lname in ("conf.py", "mkdocs.yml", "index.rst", "index.md", "_config.yml", "docusaurus.config.js"):
            markers.add(folder)
        parts = folder.split("/") if folder else []
        for i, p in enumerate(parts):
            if p.lower() in DOCS_DIR_NAMES:
                roots.add("/".join(parts[: i + 1]))
                break
    for folder in markers:
        if doc_count.get(folder, 0) >= 3 and folder:
            roots.add(folder)
    return roots


def is_docs_home(path: str, roots: Iterable[str]) -> bool:
    """Whether the doc page ``path`` is a docs root's home page: an ``index`` or ``README``
    page directly in the root (what Sphinx, MkDocs and the static site generators serve first)."""
    folder, _, name = path.rpartition("/")
    return folder in roots and name.rsplit(".", 1)[0].lower() in ("index", "readme")


def docs_pages(files: Iterable[str], kind_of: dict[str, str] | None = None) -> list[str]:
    """Doc files (by extension) under a docs root (:func:`docs_roots`), sorted."""
    files = list(files)
    roots = docs_roots(files)
    if not roots:
        return []
    out = []
    for f in files:
        if not f.lower().endswith(DOC_EXTENSIONS[:6]):
            continue
        if kind_of is not None and kind_of.get(f) in ("test", "generated"):
            continue
        if any(f.startswith(r + "/") for r in roots):
            out.append(f)
    return sorted(out)
