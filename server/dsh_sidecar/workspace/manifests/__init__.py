"""Manifests read the way each ecosystem's own tools read them: what a project file declares,
section by section, and where it says a value lives instead. Pure functions over a file's text
(never anything the workspace configures is run), bounded in bytes, depth and nodes.

:func:`read` gives, for a manifest or tool configuration, a :class:`Manifest`:

* ``facts`` — what the file declares (``workspace/facts.py`` adds them to its facts):
  ``manifest-version``, ``manifest-authors``, ``dependency-manifest`` (declares dependencies or
  pins their versions), ``test-config`` (configures the test runner), ``lint-config``
  (configures a linter, formatter or type checker), ``layout-manifest`` (declares modules,
  packages, members or source roots), ``version-tool`` (the version comes from a tool: git
  tags through MinVer/setuptools-scm/hatch-vcs, a bump tool's configuration);
* ``keys`` — ``{word: {intent: weight}}``: every word of the file's keys and values, with the
  intent of the section it stands in (``<developers>`` of a POM is Owner, ``truth`` in its
  ``<dependencies>`` Dependency, ``argLine`` in Surefire's configuration Test,
  ``[tool.setuptools.dynamic] version`` Version). A search *inside* the file is classified
  by the section of the words it names (``suggester/evidence/``), not as "Config" for any
  manifest;
* ``points`` — ``(fact, path)``: the file declares that a value lives in another file
  (``[tool.setuptools.dynamic] version = {attr = "pkg._version.__version__"}`` →
  ``pkg/_version.py`` is ``version-declared``; a Gradle ``version = VERSION_NAME`` →
  ``gradle.properties``; CMake's ``file(READ include/x/base.h …)`` of a version macro;
  towncrier's ``filename``/``template``; a ``package.json`` test script's ``--config``).
  Paths are repo-relative, normalised; whether they exist is checked when the targets are
  prepared.

Readers (by file name): ``pyproject.toml`` (PEP 621, setuptools/hatch/poetry/flit/pdm dynamic
versions, tool tables), ``setup.cfg``/``tox.ini``/``pytest.ini``/``.coveragerc``/``.flake8``
(INI), ``setup.py`` (keyword lines, never run), ``package.json`` (and workspaces, scripts),
``pnpm-workspace.yaml``, ``Cargo.toml`` (workspace members, inherited versions), ``go.mod``/
``go.work``, ``*.gemspec``/``Gemfile``, ``pom.xml`` (modules, parent, properties followed to
where they are used, dependencyManagement, plugins), Gradle (``build.gradle(.kts)``,
``settings.gradle(.kts)``, ``gradle.properties``, ``libs.versions.toml``), MSBuild
(``*.csproj``/``*.fsproj``/``*.vbproj``/``*.props``/``*.targets``, ``Directory.Packages.props``),
``*.sln``/``*.slnx``, ``composer.json``, ``phpunit.xml(.dist)``, ``CMakeLists.txt``,
``CITATION.cff``.

Parsers: ``tomllib``, ``json``, ``configparser`` (no interpolation), PyYAML's safe loader,
lxml with entities, DTDs and the network off (a document declaring an entity is refused:
billion laughs), and bounded hand readers for Gradle, CMake, Ruby and ``setup.py``. Every
reader sees at most :data:`MAX_BYTES`; a parse error, a too-deep document or one past
:data:`MAX_NODES` gives what was read before it or nothing — never an exception.
"""

from __future__ import annotations

import importlib
import logging
import re
from collections.abc import Callable
from types import ModuleType
from typing import Final

from dsh_sidecar.workspace.manifests.model import (
    LABEL,
    LEDGER_TOOLS,
    LINT_TOOLS,
    MANIFEST_FACTS,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_KEYS,
    MAX_NODES,
    MAX_POINTS,
    NAME_WORDS,
    TEST_TOOLS,
    VERSION_TOOLS,
    Builder,
    KeyMap,
    Manifest,
    key_paths,
    keyed_vote,
    tool_fact,
    tools_in,
    words,
)

__all__ = [
    "KeyMap",
    "LABEL",
    "LEDGER_TOOLS",
    "LINT_TOOLS",
    "MANIFEST_FACTS",
    "MAX_BYTES",
    "MAX_DEPTH",
    "MAX_KEYS",
    "MAX_NODES",
    "MAX_POINTS",
    "NAME_WORDS",
    "TEST_TOOLS",
    "VERSION_TOOLS",
    "Manifest",
    "is_manifest_name",
    "key_paths",
    "keyed_vote",
    "own_file_tool",
    "read",
    "tool_fact",
    "tools_in",
    "words",
]


log = logging.getLogger(__name__)


LINT_NAMES: Final = re.compile(
    r"^(?:\.eslintrc(?:\.\w+)?|eslint\.config\.[cm]?[jt]s|\.prettierrc(?:\.\w+)?|prettier\.config\.[cm]?js"
    r"|\.stylelintrc(?:\.\w+)?|stylelint\.config\.[cm]?js|biome\.jsonc?|\.oxlintrc\.json|\.oxfmtrc\.jsonc?"
    r"|ruff\.toml|\.ruff\.toml|\.flake8|\.pylintrc|pylintrc|mypy\.ini|\.mypy\.ini|pyrightconfig\.json|\.isort\.cfg"
    r"|\.pydocstyle|\.pre-commit-config\.ya?ml|\.rubocop\.ya?ml|\.golangci\.(?:ya?ml|toml|json)|rustfmt\.toml"
    r"|\.rustfmt\.toml|clippy\.toml|\.clippy\.toml|\.clang-format|\.clang-tidy|\.php-cs-fixer(?:\.dist)?\.php"
    r"|phpstan\.neon(?:\.dist)?|psalm\.xml(?:\.dist)?|phpcs\.xml(?:\.dist)?|\.phpcs\.xml(?:\.dist)?|rector\.php"
    r"|checkstyle\.xml|\.swiftlint\.ya?ml|detekt\.ya?ml|\.scalafmt\.conf|stylecop\.json|\.globalconfig"
    r"|\.markdownlint(?:\.\w+)?|\.yamllint(?:\.ya?ml)?)$",
    re.IGNORECASE,
)
VERSION_TOOL_NAMES: Final = re.compile(
    r"^(?:\.bumpversion\.(?:cfg|toml)|\.releaserc(?:\.\w+)?|release\.config\.[cm]?js|release-please-config\.json"
    r"|\.release-please-manifest\.json|GitVersion\.ya?ml|version\.json|\.versionrc(?:\.\w+)?|\.tbump\.toml|tbump\.toml"
    r"|\.cz\.(?:toml|json|ya?ml)|cz\.(?:toml|json|ya?ml))$"
)
_MSBUILD_SUFFIXES: Final = (".csproj", ".fsproj", ".vbproj", ".props", ".targets", ".proj")


def is_manifest_name(path: str) -> bool:
    """Whether :func:`read` has a reader for ``path`` (by its name)."""
    name = path.rsplit("/", 1)[-1]
    return _reader(name) is not None


Reader = Callable[[Builder, str, str], None]


def _readers(module: str) -> ModuleType:
    """The readers' module ``module`` (``python``, ``jvm``…), imported at the first file it
    reads: a start whose workspace index comes from its cache reads no manifest."""
    return importlib.import_module(f"{__name__}.{module}")


def _reader(name: str) -> Reader | None:
    """The reader of the file called ``name``; ``None`` when no reader knows it. The two
    families' names never overlap, so the order they are asked in does not matter."""
    return _package_reader(name) or _build_reader(name, name.lower())


def _package_reader(name: str) -> Reader | None:
    """Python's, JavaScript's and Composer's package manifests and tool files, and ``CITATION.cff``."""
    if name == "pyproject.toml":
        return lambda b, t, p: _readers("python").read_pyproject(b, t)
    if name in ("setup.cfg", "tox.ini", "pytest.ini", ".coveragerc", ".flake8", ".pylintrc", "mypy.ini", ".isort.cfg"):
        return lambda b, t, p: _readers("python").read_ini(b, t, name)
    if name == "setup.py":
        return lambda b, t, p: _readers("python").read_setup_py(b, t)
    if re.match(r"^[\w.-]*requirements[\w.-]*\.(?:txt|in)$", name):
        return lambda b, t, p: _readers("python").read_requirements(b, t)
    if name == "package.json":
        return lambda b, t, p: _readers("javascript").read_package_json(b, t)
    if name == "composer.json":
        return lambda b, t, p: _readers("php").read_composer(b, t)
    if name in ("pnpm-workspace.yaml", "pnpm-workspace.yml"):
        return lambda b, t, p: _readers("javascript").read_pnpm_workspace(b, t)
    if name == "CITATION.cff":
        return lambda b, t, p: _readers("citation").read_citation(b, t)
    return None


def _build_reader(name: str, low: str) -> Reader | None:
    """The build files of Rust, the JVM, Go, Ruby, .NET, PHPUnit and CMake (``low``: ``name`` lower-cased)."""
    if name == "Cargo.toml":
        return lambda b, t, p: _readers("native").read_cargo(b, t, p)
    if low.endswith(".versions.toml"):
        return lambda b, t, p: _readers("jvm").read_catalog(b, t)
    if name in ("go.mod", "go.work"):
        return lambda b, t, p: _readers("native").read_go_mod(b, t, name == "go.work")
    if low.endswith(".gemspec") or name in ("Gemfile", "gems.rb"):
        return lambda b, t, p: _readers("ruby").read_ruby_manifest(b, t, not low.endswith(".gemspec"))
    if name == "pom.xml" or low.endswith(".pom.xml"):
        return lambda b, t, p: _readers("jvm").read_pom(b, t)
    if name in ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts") or low.endswith(
        (".gradle", ".gradle.kts")
    ):
        return lambda b, t, p: _readers("jvm").read_gradle(b, t, name)
    if name == "gradle.properties":
        return lambda b, t, p: _readers("jvm").read_gradle_properties(b, t)
    if low.endswith(_MSBUILD_SUFFIXES):
        return lambda b, t, p: _readers("dotnet").read_msbuild(b, t, name)
    if low.endswith(".slnx"):
        return lambda b, t, p: _readers("dotnet").read_slnx(b, t)
    if low.endswith(".sln"):
        return lambda b, t, p: _readers("dotnet").read_sln(b, t)
    if low in ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"):
        return lambda b, t, p: _readers("php").read_phpunit(b, t)
    if name == "CMakeLists.txt" or low.endswith(".cmake"):
        return lambda b, t, p: _readers("native").read_cmake(b, t, p)
    return None


#: A tool's own configuration file, by name: the whole file is that tool's (``ruff.toml``,
#: ``.eslintrc.json``, ``jest.config.ts``, ``pytest.ini``, ``tsconfig.base.json``,
#: ``checkstyle.xml``, ``phpstan.neon.dist``); group 1 names the tool (:func:`~.model.tools_in`).
OWN_FILE: Final = re.compile(
    r"^\.?((?:eslint|prettier|stylelint|babel|mocha|oxlint|oxfmt|markdownlint|yamllint|swiftlint|rubocop"
    r"|golangci|pylint|coverage|flake8|ruff|mypy|isort|pydocstyle|pre-commit|codecov|rustfmt|clippy|clang-format"
    r"|clang-tidy|php-cs-fixer|phpstan|psalm|phpcs|rector|detekt|scalafmt|stylecop|biome|pytest|jest|vitest"
    r"|karma|playwright|cypress|ava|wdio|webpack|rollup|vite|commitlint|phpunit|checkstyle|tsconfig|pyright"
    r"|rspec|lint-staged)(?:rc|-?config)?)"
    r"(?:(?:\.config|\.conf)?(?:\.[A-Za-z0-9_-]+)?\.(?:jsonc?|json5|ya?ml|toml|ini|cfg|xml|neon|[cm]?[jt]s|php))?"
    r"(?:\.dist)?$",
    re.IGNORECASE,
)


def own_file_tool(name: str) -> str | None:
    """The tool whose own configuration file is called ``name`` (:data:`OWN_FILE`), ``None``
    for any other name (a manifest several tools share is read by sections instead)."""
    m = OWN_FILE.match(name)
    found = tools_in(m.group(1)) if m else []
    if not found:
        return None
    if _CODE_NAME.search(name) and not _CONFIG_MODULE.search(name) and found[0] not in ("php-cs-fixer", "rector"):
        return None  # code named after a tool (`coverage.py`, `jest.js`), not its configuration
    return found[0]


_CODE_NAME: Final = re.compile(r"(?i)\.(?:py|pyi|[cm]?[jt]sx?|rb|php|go|java|kt|rs)$")
#: A configuration written as a module (``jest.config.ts``, ``karma.conf.js``, ``.eslintrc.cjs``).
_CONFIG_MODULE: Final = re.compile(r"(?i)(?:\.config|\.conf|rc)\.[cm]?[jt]s$")


def read(path: str, text: str | None) -> Manifest | None:
    """What the manifest or tool configuration at ``path`` declares (module docstring);
    ``None`` for a file no reader knows, or unread (``text`` ``None``). Never raises."""
    name = path.rsplit("/", 1)[-1]
    lint, tool = LINT_NAMES.match(name), VERSION_TOOL_NAMES.match(name)
    own = own_file_tool(name)
    reader = _reader(name)
    if not (lint or tool or own) and (reader is None or text is None):
        return None  # (nearly every file of a tree: no builder made)
    b = Builder(path)
    if own:
        b.configures(own)
    if lint:
        b.facts.add("lint-config")
    if tool:
        b.facts.add("version-tool")
        b.add("Version", name)
    if reader is None or text is None:
        return b.build() if b.facts else None
    try:
        reader(b, text[:MAX_BYTES], path)
    except (RecursionError, MemoryError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        # a reader's bug or a hostile file: what was read so far stands, nothing more
        log.debug("manifest reader failed on %s: %s", path, type(exc).__name__)
    return b.build()
