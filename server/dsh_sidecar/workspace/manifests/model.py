"""What a manifest reader produces and shares: the bounds, :class:`Manifest` and the :class:`Builder`
that fills one within them, the tables of tools every ecosystem names, and the reading of a
search against a manifest's keys (:func:`key_paths`, :func:`keyed_vote`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

#: Most characters of one file a reader looks at.
MAX_BYTES: Final = 256 * 1024
#: Most distinct words kept per file.
MAX_KEYS: Final = 1500
#: Most nodes (table entries, elements, list items) one reader walks.
MAX_NODES: Final = 20_000
#: Deepest nesting one reader walks.
MAX_DEPTH: Final = 48
#: Most pointers kept per file.
MAX_POINTS: Final = 16
#: Most tools one file is recorded as configuring.
MAX_TOOLS: Final = 40
#: Prefix of the fact that a file holds a named tool's configuration (``configures:ruff``).
CONFIGURES: Final = "configures:"
_TOOL_NAME = re.compile(r"^[a-z][a-z0-9_-]{1,30}$")
#: Weight of a word that only labels something (an execution id, a profile id) or is
#: mentioned in a longer text.
LABEL: Final = 0.5
#: Most blank-separated parts of a key or value that names something (more: a text that
#: mentions things; a path or a dotted name is one part).
NAME_WORDS: Final = 3

#: The facts a manifest reader gives (``workspace/facts.py`` lists them with the others).
MANIFEST_FACTS: Final = (
    "dependency-manifest",
    "test-config",
    "lint-config",
    "layout-manifest",
    "version-tool",
    "version-declared",
    "ledger-declared",
)

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_]*")

KeyMap = Mapping[str, Mapping[str, float]]


def words(text: str) -> list[str]:
    """The words a key map is keyed by: runs of letters, digits and ``_``, lower-cased, at
    least two characters, not only digits (``maven-failsafe-plugin`` → maven, failsafe,
    plugin; ``tool.setuptools.dynamic`` → tool, setuptools, dynamic)."""
    out = []
    for w in _WORD.findall(text):
        w = w.strip("_").lower()
        if len(w) >= 2 and not w.isdigit():
            out.append(w)
    return out


@dataclass(frozen=True)
class Manifest:
    """What one manifest declares (module docstring)."""

    facts: frozenset[str] = frozenset()
    keys: KeyMap = field(default_factory=dict)
    points: tuple[tuple[str, str], ...] = ()


class Builder:
    """Collects one file's facts, words and pointers, within the bounds."""

    def __init__(self, path: str) -> None:
        self.folder = posixpath.dirname(path)
        self.facts: set[str] = set()
        self.keys: dict[str, dict[str, float]] = {}
        self.points: list[tuple[str, str]] = []
        self.nodes = 0

    def add(self, intent: str, text: object, weight: float = 1.0) -> None:
        """The words of ``text`` stand in a section of ``intent``: each once; the words of a
        longer text (more than :data:`NAME_WORDS`) only mention things, so they weigh
        :data:`LABEL` (a dependency's name declares it; a sentence of settings only names it)."""
        if not isinstance(text, str) or not text:
            return
        found = list(dict.fromkeys(words(text[:2000])))
        if len(text[:2000].split(None, NAME_WORDS)) > NAME_WORDS:
            weight = min(weight, LABEL)
        for w in found:
            dist = self.keys.get(w)
            if dist is None:
                if len(self.keys) >= MAX_KEYS:
                    continue
                dist = self.keys[w] = {}
            dist[intent] = min(dist.get(intent, 0.0) + weight, 50.0)

    def add_path(self, intent: str, keys: tuple[str, ...], weight: float = 1.0) -> None:
        """The dotted key path ``keys`` (``tool.setuptools.dynamic``) names a section of ``intent``."""
        dotted = ".".join(keys).lower()
        if not dotted or len(dotted) > 120:
            return
        dist = self.keys.get(dotted)
        if dist is None:
            if len(self.keys) >= MAX_KEYS:
                return
            dist = self.keys[dotted] = {}
        dist[intent] = min(dist.get(intent, 0.0) + weight, 50.0)

    def point(self, fact: str, rel: object, base: str | None = None) -> None:
        """``rel`` (relative to ``base``, by default the file's folder) holds ``fact``."""
        if not isinstance(rel, str) or not rel.strip() or len(self.points) >= MAX_POINTS:
            return
        rel = rel.strip().replace("\\", "/")
        if rel.startswith("/") or re.match(r"^[A-Za-z]:", rel) or "\0" in rel or "${" in rel or "$(" in rel:
            return
        joined = posixpath.normpath(posixpath.join(self.folder if base is None else base, rel))
        if joined.startswith("../") or joined in ("..", ".") or "," in joined or "\n" in joined:
            return
        if (fact, joined) not in self.points:
            self.points.append((fact, joined))

    def configures(self, tool: object) -> None:
        """The file holds ``tool``'s configuration, read where that tool reads it (a
        ``[tool.ruff]`` table, a ``[flake8]`` section, a ``jest`` key, the tool's own file):
        the fact :func:`tool_fact` of its normalised name, at most :data:`MAX_TOOLS` per file."""
        fact = tool_fact(tool)
        if fact is not None and (fact in self.facts or sum(f.startswith(CONFIGURES) for f in self.facts) < MAX_TOOLS):
            self.facts.add(fact)

    def tick(self) -> bool:
        """Count one node; ``False`` past :data:`MAX_NODES`."""
        self.nodes += 1
        return self.nodes <= MAX_NODES

    def build(self) -> Manifest:
        return Manifest(frozenset(self.facts), self.keys, tuple(self.points))


#: Tools whose configuration is lint/format/type-check configuration.
LINT_TOOLS: Final = frozenset(
    "ruff flake8 pylint mypy black isort pyright pycodestyle pydocstyle autopep8 yapf bandit codespell "
    "pyflakes pylama interrogate vulture darglint docformatter pyupgrade eslint prettier stylelint xo "
    "standard tslint biome oxlint oxfmt dprint rubocop standardrb golangci clippy rustfmt checkstyle "
    "spotless pmd spotbugs errorprone ktlint detekt phpcs phpstan psalm rector stylecop editorconfig "
    "clang".split()
)
#: Tools that run or measure tests.
TEST_TOOLS: Final = frozenset(
    "pytest unittest nose nose2 coverage hypothesis jest vitest mocha ava jasmine karma tap c8 nyc "
    "playwright cypress rspec minitest phpunit pest codeception infection junit testng surefire failsafe "
    "jacoco xunit nunit mstest coverlet ctest gtest googletest catch2 doctest".split()
)
#: Tools that derive or bump the version.
VERSION_TOOLS: Final = frozenset(
    "setuptools_scm setuptools-scm hatch-vcs hatch_vcs versioneer versioningit bumpversion bump2version "
    "bump-my-version semantic_release semantic-release python-semantic-release commitizen tbump "
    "poetry-dynamic-versioning dunamai minver nerdbank gitversion release-please changesets "
    "standard-version".split()
)
#: Tools that build the change ledger.
LEDGER_TOOLS: Final = frozenset("towncrier scriv git-cliff git_cliff changelog".split())

#: Tools whose configuration sections are looked for by name: the tables above, task
#: runners, and the names a tool's own configuration file goes by.
CONFIGURED_TOOLS: Final = (
    LINT_TOOLS
    | TEST_TOOLS
    | frozenset(
        "tox nox pre-commit tsconfig pep8 doc8 pyright pylint-django mypy-extensions webpack babel rollup vite "
        "esbuild swc commitlint husky lint-staged markdownlint yamllint remark codecov jacoco spotless "
        "scalafmt swiftlint php-cs-fixer clang-format clang-tidy golangci-lint wdio mocharc".split()
    )
) - {"unittest", "doctest", "standard", "tap", "clang", "editorconfig"}
#: Other spellings of a tool's name (an rc file's stem, a section's or a command's name).
TOOL_ALIASES: Final = {
    "eslintrc": "eslint",
    "prettierrc": "prettier",
    "stylelintrc": "stylelint",
    "pylintrc": "pylint",
    "coveragerc": "coverage",
    "mocharc": "mocha",
    "babelrc": "babel",
    "testenv": "tox",
    "tsc": "tsconfig",
    "typescript": "tsconfig",
    "golangci-lint": "golangci",
    "oxlintrc": "oxlint",
    "oxfmtrc": "oxfmt",
    "markdownlintrc": "markdownlint",
    "pep8": "pycodestyle",
    "py.test": "pytest",
    "precommit": "pre-commit",
}
_TOOL_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")


def tools_in(name: str) -> list[str]:
    """The tools a file name or a section's name names, in order (``.eslintrc*`` → eslint,
    ``{jest,vitest}.config.*`` → jest, vitest, ``tool.ruff`` → ruff, ``testenv:lint`` → tox);
    words that name no tool of :data:`CONFIGURED_TOOLS` are skipped."""
    out: list[str] = []
    for m in _TOOL_WORD.finditer(name[:300]):
        parts = m.group(0).lower().replace("_", "-").strip("-").split("-")[:8]
        # the whole word, its longest leading parts, then each part (`pre-commit-config`,
        # `maven-surefire-plugin`, `jacoco-maven-plugin`)
        tries = ["-".join(parts[:i]) for i in range(len(parts), 0, -1)] + parts[1:]
        tool = next((t for t in (TOOL_ALIASES.get(x, x) for x in tries) if t in CONFIGURED_TOOLS), None)
        if tool is not None and tool not in out:
            out.append(tool)
    return out


_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|jasmine|karma|tap|c8|nyc|playwright test"
    r"|cypress run|node --test|tsx --test|bun test|deno test|phpunit|pest|rspec|ctest|go test|cargo test"
    r"|mvn (?:\S+ )*(?:test|verify)|gradlew? (?:\S+ )*(?:test|check)|dotnet test|uvu|tape|qunit|web-test-runner"
    r"|wtr|tsd)\b"
)


def name_tool(name: str) -> str | None:
    """The intent of a package or plugin named ``name`` when its name says what it is for:
    a test framework or runner → Test, a linter/analyzer → Config, a version tool →
    Version; ``None`` otherwise (an ordinary dependency)."""
    low = name.lower()
    parts = set(re.split(r"[^a-z0-9_]+", low.replace("_", "-"))) | {low}
    if parts & VERSION_TOOLS or low.startswith(("nerdbank.gitversioning", "gitversion")):
        return "Version"
    if (
        parts & {"xunit", "nunit", "mstest", "coverlet", "junit", "testng", "jacoco", "surefire", "failsafe"}
        or low.startswith(("microsoft.net.test.sdk", "xunit", "nunit", "mstest", "coverlet"))
        or low.endswith((".testadapter", ".testlogger", "testlogger"))
    ):
        return "Test"
    if "analyzers" in parts or low.endswith(("analyzers", ".analyzer", "analyzer")) or parts & {"stylecop"}:
        return "Config"
    return None


def tool_name(name: object) -> str | None:
    """A tool's name as the configuration facts spell it: lower case, ``_`` as ``-``
    (``setuptools_scm`` is ``setuptools-scm``), 2 to 31 characters; ``None`` for anything else."""
    if not isinstance(name, str):
        return None
    low = name.strip().lower().replace("_", "-")
    return low if _TOOL_NAME.match(low) else None


def tool_fact(tool: object) -> str | None:
    """The fact of a file configuring ``tool`` (``configures:<name>``), ``None`` for no tool name."""
    name = tool_name(tool)
    return None if name is None else CONFIGURES + name


def first_of(*items: tuple[bool, str]) -> str | None:
    return next((intent for cond, intent in items if cond), None)


def script_intent(name: str, command: str) -> str:
    if name.split(":")[0] in ("test", "pretest", "posttest", "coverage", "e2e") or _TEST_COMMAND.search(command):
        return "Test"
    if name.split(":")[0] in ("version", "release", "changeset", "bump"):
        return "Version"
    return "Config"


_KEY_PATH = re.compile(r"[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)+")


def key_paths(text: str) -> list[str]:
    """The dotted key paths a search names (``tool.setuptools.dynamic``, ``[tool.ruff``),
    lower-cased, longest first; regex escapes of the dots are undone."""
    plain = text.replace("\\.", ".")
    return sorted({m.group(0).lower() for m in _KEY_PATH.finditer(plain)}, key=len, reverse=True)


def keyed_vote(keys: KeyMap, searched: Iterable[str], decisive: float = 2 / 3) -> dict[str, float] | None:
    """What the words ``searched`` name in a file with ``keys``: a dotted key path the file has
    (``tool.hatch.version``) decides; else, of the words whose sections are mostly (≥
    ``decisive`` of their weight) of one intent, the rarest in the file (``failsafe`` before
    ``maven`` and ``plugin``) decides. Its sections' intents, normalised to 1; ``None`` when no
    word decides (a word that stands everywhere — ``version`` in a Cargo.toml — tells nothing)."""
    best: tuple[float, Mapping[str, float]] | None = None
    for w in dict.fromkeys(searched):
        dist = keys.get(w)
        if not dist:
            continue
        s = sum(dist.values())
        if s <= 0 or max(dist.values()) / s < decisive:
            continue
        rank = -1.0 if "." in w else s  # a key path is the most specific there is
        if best is None or rank < best[0]:
            best = (rank, dist)
        if rank < 0:
            break
    if best is None:
        return None
    dist = best[1]
    norm = sum(dist.values())
    return {i: v / norm for i, v in dist.items()}
