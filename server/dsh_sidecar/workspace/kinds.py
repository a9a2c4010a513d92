"""What kind of file a workspace path is, from its path alone (no file is read).

Kinds, in the order the rules are tried (the first match wins):

``generated``
    build output and generated code: a folder segment in :data:`GENERATED_DIRS` (``dist/``,
    ``build/``, ``out/``, ``target/``, ``node_modules/``, ``__generated__/``, ``.next/``, …), or a
    name such as ``*.min.js``, ``*.min.css``, ``*.map``, ``*_pb2.py``, ``*.pb.go``,
    ``*.generated.*``, ``*_generated.*``, ``*.g.dart``. The symbol index also re-labels a source
    file whose first KiB has a generated-code marker comment (see ``symbols.py``).
``lock``
    dependency lock files: ``*.lock``, ``package-lock.json``, ``npm-shrinkwrap.json``,
    ``pnpm-lock.yaml``, ``go.sum``, ``*.lockb``, ``Pipfile.lock``, ``gradle.lockfile``.
``manifest``
    dependency manifests: ``pyproject.toml``, ``setup.py``, ``setup.cfg``, ``requirements*.txt``,
    ``Pipfile``, ``package.json``, ``Cargo.toml``, ``go.mod``, ``pom.xml``, ``build.gradle(.kts)``,
    ``Gemfile``, ``*.gemspec``, ``composer.json``, ``mix.exs``, ``pubspec.yaml``, ``*.csproj``,
    ``deno.json``, ``environment.yml``; what declares dependencies for a build elsewhere too:
    ``settings.gradle.kts``, Gradle version catalogs (``*.versions.toml``), MSBuild's central
    ``Directory.Packages.props``, NuGet's ``packages.config``, ``paket.dependencies``, pip's
    ``*requirements*.txt``/``.in`` files, ``vcpkg.json``, ``conanfile.txt``.
``test``
    a folder segment in :data:`TEST_DIRS` (``tests/``, ``test/``, ``__tests__/``, ``spec/``,
    ``testdata/``), or ``test_*.py``, ``*_test.py``, ``conftest.py``, ``*_test.go``,
    ``*.test.{js,jsx,ts,tsx,mjs,cjs}``, ``*.spec.{…}``, ``*Test.java``, ``*Tests.java``,
    ``*_spec.rb``, ``*_test.rs``.
``doc``
    a folder segment ``docs/`` or ``doc/``; ``*.md``, ``*.rst``, ``*.adoc``, ``*.txt``; and
    ``README``, ``CHANGELOG``, ``HISTORY``, ``LICENSE``/``LICENCE``, ``COPYING``, ``NOTICE``,
    ``AUTHORS``, ``CONTRIBUTING``, ``CODEOWNERS``, ``MAINTAINERS`` with any or no extension.
``config``
    anything under ``.github/``, ``.gitlab/``, ``.circleci/``, ``.ci/``, ``.devcontainer/``,
    ``.vscode/``; ``*.toml``, ``*.yaml``, ``*.yml``, ``*.ini``, ``*.cfg``, ``*.conf``,
    ``*.properties``, ``*.env``, ``*.json`` (non-manifest, non-lock), MSBuild's ``*.props`` and
    ``*.targets``, solutions (``*.sln``, ``*.slnx``); dotfiles (``.gitignore``,
    ``.editorconfig``, ``.eslintrc``…); ``Dockerfile``, ``Makefile``, ``Justfile``,
    ``Containerfile``, ``docker-compose*``, ``tox.ini``, ``noxfile.py``.
``source``
    an extension in :data:`SOURCE_EXTENSIONS`.
``other``
    everything else (images, data, fixtures without a recognised extension…).

A test folder beats doc/config/source (``tests/data/x.yaml`` is ``test``), but a lock or a
manifest keeps its kind wherever it lives.

The module also holds the one table of languages by extension (:data:`LANGUAGE_OF_EXTENSION`):
:func:`language_of` (any language, for what a search names) and :func:`code_language_of` (code
only, for the files it finds).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final, Literal

Kind = Literal["manifest", "lock", "test", "doc", "config", "source", "generated", "other"]
#: Every kind, in rule order.
KINDS: Final[tuple[Kind, ...]] = ("generated", "lock", "manifest", "test", "doc", "config", "source", "other")

GENERATED_DIRS: Final = frozenset(
    {
        "dist",
        "build",
        "out",
        "target",
        "node_modules",
        "__generated__",
        "generated",
        ".next",
        ".nuxt",
        "__pycache__",
        ".venv",
        "venv",
        "site-packages",
        "coverage",
        "htmlcov",
        ".tox",
    }
)
_GENERATED_NAME: Final = re.compile(
    r"(\.min\.(js|css)|\.map|_pb2(_grpc)?\.pyi?|\.pb\.go|\.pb\.(cc|h)|\.g\.dart|\.designer\.cs)$"
    r"|[._]generated\.[^/]+$"
)
LOCK_NAMES: Final = frozenset(
    {
        "package-lock.json",
        "npm-shrinkwrap.json",
        "pnpm-lock.yaml",
        "go.sum",
        "Pipfile.lock",
        "gradle.lockfile",
        "flake.lock",
    }
)
MANIFEST_NAMES: Final = frozenset(
    {
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "Pipfile",
        "package.json",
        "Cargo.toml",
        "go.mod",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "Gemfile",
        "composer.json",
        "mix.exs",
        "pubspec.yaml",
        "deno.json",
        "environment.yml",
        "environment.yaml",
        "build.sbt",
        "Package.swift",
        "CMakeLists.txt",
        "meson.build",
        "BUILD.bazel",
        "WORKSPACE",
        "settings.gradle.kts",
        "Directory.Packages.props",
        "packages.config",
        "paket.dependencies",
        "vcpkg.json",
        "conanfile.txt",
    }
)
_MANIFEST_NAME: Final = re.compile(
    r"^([\w.-]*requirements[\w.-]*\.(txt|in)|[\w.-]+\.(gemspec|csproj|fsproj|vbproj|cabal|nimble)|[\w.-]+\.versions\.toml)$"
)
TEST_DIRS: Final = frozenset({"tests", "test", "__tests__", "spec", "specs", "testdata", "testing", "e2e"})
_TEST_NAME: Final = re.compile(
    r"^(test_[^/]*\.py|[^/]*_test\.(py|go|rs|exs?|cc|cpp|c)|conftest\.py"
    r"|[^/]*\.(test|spec)\.(js|jsx|ts|tsx|mjs|cjs|mts|cts)|[^/]*Tests?\.(java|kt|cs|swift)|[^/]*_spec\.rb)$"
)
DOC_DIRS: Final = frozenset({"docs", "doc", "documentation"})
DOC_EXTENSIONS: Final = frozenset({".md", ".markdown", ".rst", ".adoc", ".txt", ".rdoc", ".org"})
_DOC_STEM: Final = re.compile(
    r"^(readme|changelog|changes|history|news|license|licence|copying|notice|authors|contributors"
    r"|contributing|codeowners|maintainers|security|code_of_conduct)(\.[\w.-]+)?$",
    re.IGNORECASE,
)
CONFIG_DIRS: Final = frozenset(
    {".github", ".gitlab", ".circleci", ".ci", ".devcontainer", ".vscode", ".idea", ".husky"}
)
CONFIG_EXTENSIONS: Final = frozenset(
    {
        ".toml",
        ".yaml",
        ".yml",
        ".ini",
        ".cfg",
        ".conf",
        ".properties",
        ".env",
        ".json",
        ".jsonc",
        ".json5",
        ".editorconfig",
        ".props",
        ".targets",
        ".sln",
        ".slnx",
    }
)
CONFIG_NAMES: Final = frozenset(
    {
        "Dockerfile",
        "Containerfile",
        "Makefile",
        "GNUmakefile",
        "Justfile",
        "justfile",
        "Procfile",
        "Vagrantfile",
        "Jenkinsfile",
        "noxfile.py",
        "tox.ini",
        "Taskfile.yml",
    }
)
SOURCE_EXTENSIONS: Final = frozenset(
    {
        ".py",
        ".pyi",
        ".js",
        ".jsx",
        ".mjs",
        ".cjs",
        ".ts",
        ".tsx",
        ".mts",
        ".cts",
        ".go",
        ".rs",
        ".java",
        ".kt",
        ".kts",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".cxx",
        ".hpp",
        ".hh",
        ".cs",
        ".fs",
        ".rb",
        ".php",
        ".swift",
        ".m",
        ".mm",
        ".lua",
        ".sh",
        ".bash",
        ".zsh",
        ".fish",
        ".ps1",
        ".pl",
        ".pm",
        ".r",
        ".jl",
        ".ex",
        ".exs",
        ".erl",
        ".hs",
        ".ml",
        ".mli",
        ".clj",
        ".dart",
        ".zig",
        ".nim",
        ".vue",
        ".svelte",
        ".sql",
        ".proto",
        ".graphql",
        ".css",
        ".scss",
        ".less",
        ".html",
        ".htm",
    }
)


_PRIORITY: Final = {k: i for i, k in enumerate(KINDS)}
_OTHER: Final = _PRIORITY["other"]


def _ext(name: str) -> str:
    dot = name.rfind(".")
    return name[dot:].lower() if dot > 0 else ""


@lru_cache(maxsize=65_536)
def _dir_priority(folder: str) -> int:
    """The best (lowest) rule priority a folder path alone earns (``_OTHER`` when none)."""
    best = _OTHER
    for d in folder.split("/"):
        if d in GENERATED_DIRS:
            return _PRIORITY["generated"]
        if d in TEST_DIRS:
            best = min(best, _PRIORITY["test"])
        elif d in DOC_DIRS:
            best = min(best, _PRIORITY["doc"])
        elif d in CONFIG_DIRS:
            best = min(best, _PRIORITY["config"])
    return best


@lru_cache(maxsize=65_536)
def _name_priority(name: str) -> int:
    """The rule priority a file name alone earns."""
    if _GENERATED_NAME.search(name):
        return _PRIORITY["generated"]
    if name in LOCK_NAMES or name.endswith((".lock", ".lockb")):
        return _PRIORITY["lock"]
    if name in MANIFEST_NAMES or _MANIFEST_NAME.match(name):
        return _PRIORITY["manifest"]
    if _TEST_NAME.match(name):
        return _PRIORITY["test"]
    ext = _ext(name)
    if ext in DOC_EXTENSIONS or _DOC_STEM.match(name):
        return _PRIORITY["doc"]
    if (
        ext in CONFIG_EXTENSIONS
        or name in CONFIG_NAMES
        or name.startswith("docker-compose")
        or (name.startswith(".") and "." not in name[1:])
    ):
        return _PRIORITY["config"]
    if ext in SOURCE_EXTENSIONS:
        return _PRIORITY["source"]
    return _OTHER


def classify(path: str) -> Kind:
    """The kind of the repo-relative POSIX ``path`` (rules in the module docstring).

    Every rule is "a folder condition or a name condition", tried in :data:`KINDS` order, so
    the kind is the better of what the folder earns and what the name earns (both memoised:
    a workspace has far fewer folders and distinct names than files)."""
    folder, _, name = path.rpartition("/")
    prio = _name_priority(name)
    if folder:
        dprio = _dir_priority(folder)
        if dprio < prio:
            prio = dprio
    return KINDS[prio]


def depth(path: str) -> int:
    """How many folders deep ``path`` is: 0 for a file at the root."""
    return path.count("/")


# ---------------------------------------------------------------------------- languages

#: File extension → language: of code, and of the doc and config formats a search can be
#: restricted to (``--type md``, ``*.yaml``). The sidecar's one language table.
LANGUAGE_OF_EXTENSION: Final = {
    ".py": "python",
    ".pyi": "python",
    ".pyx": "python",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rb": "ruby",
    ".cs": "csharp",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".hpp": "cpp",
    ".php": "php",
    ".swift": "swift",
    ".scala": "scala",
    ".md": "markdown",
    ".rst": "rst",
    ".toml": "toml",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".json": "json",
    ".sh": "shell",
}
#: Languages of no code: a doc, config or shell file is never "in the query's language".
_NOT_CODE: Final = frozenset({"markdown", "rst", "json", "yaml", "toml", "shell"})
_CODE_LANGUAGE_OF_EXTENSION: Final = {e: lang for e, lang in LANGUAGE_OF_EXTENSION.items() if lang not in _NOT_CODE}
_LAST_EXTENSION = re.compile(r"(\.[A-Za-z0-9]+)\}?$")


def language_of(path: str) -> str | None:
    """The language a path or a name pattern implies by its extension (``*.py`` → python,
    ``docs/*.md`` → markdown; a closing ``}`` after it is allowed, and so is a name that is
    only an extension: ``.py``): what a search restricts itself to."""
    m = _LAST_EXTENSION.search(path.rsplit("/", 1)[-1])
    return LANGUAGE_OF_EXTENSION.get(m.group(1).lower()) if m is not None else None


def code_language_of(path: str) -> str | None:
    """The language of a code file by its extension (``a/b.tsx`` → typescript); ``None`` for
    the doc, config and shell formats and for a name that starts with its only dot."""
    return _CODE_LANGUAGE_OF_EXTENSION.get(_ext(path.rsplit("/", 1)[-1]))
