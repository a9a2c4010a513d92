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
  by the section of the words it names (``suggester/evidence.py``), not as "Config" for any
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

import configparser
import json
import logging
import posixpath
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

log = logging.getLogger(__name__)

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


class _Builder:
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

    def tick(self) -> bool:
        """Count one node; ``False`` past :data:`MAX_NODES`."""
        self.nodes += 1
        return self.nodes <= MAX_NODES

    def build(self) -> Manifest:
        return Manifest(frozenset(self.facts), self.keys, tuple(self.points))


# ---------------------------------------------------------------------------- shared tables

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

_TEST_COMMAND = re.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|jest|vitest|mocha|ava|jasmine|karma|tap|c8|nyc|playwright test"
    r"|cypress run|node --test|tsx --test|bun test|deno test|phpunit|pest|rspec|ctest|go test|cargo test"
    r"|mvn (?:\S+ )*(?:test|verify)|gradlew? (?:\S+ )*(?:test|check)|dotnet test|uvu|tape|qunit|web-test-runner"
    r"|wtr|tsd)\b"
)


def _name_tool(name: str) -> str | None:
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


def _first(*items: tuple[bool, str]) -> str | None:
    return next((intent for cond, intent in items if cond), None)


# ---------------------------------------------------------------------------- TOML


def _walk(
    b: _Builder,
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
                inner = _walk(b, v, sub, intent_of, depth + 1)
                for intent, share in inner.items():
                    b.add(intent, k, share)
                    if depth < 4:
                        b.add_path(intent, sub, share)
            else:
                _walk(b, v, sub, intent_of, depth + 1)
                inner = {intent_of(sub): 1.0}
                b.add(intent_of(sub), k)
                if depth < 4 and path:
                    b.add_path(intent_of(sub), sub)
            for intent, share in inner.items():
                shares[intent] = shares.get(intent, 0.0) + share / len(items)
        return shares
    if isinstance(value, list):
        for item in value[:2000]:
            _walk(b, item, path, intent_of, depth + 1)
    elif isinstance(value, str):
        b.add(intent_of(path), value)
    return {intent_of(path): 1.0}


def _toml(text: str) -> dict[str, Any] | None:
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError, ValueError, MemoryError):
        return None


def _pyproject_intent(p: tuple[str, ...]) -> str:
    """The intent of a key of ``pyproject.toml`` (PEP 621, PEP 735, build backends, tools)."""
    top = p[0] if p else ""
    key = p[1] if len(p) > 1 else ""
    if top == "project":
        return (
            _first(
                (key == "version", "Version"),
                (key in ("dependencies", "optional-dependencies"), "Dependency"),
                (key in ("authors", "maintainers", "license", "license-files"), "Owner"),
                (key in ("scripts", "gui-scripts", "entry-points"), "Path"),
                (key == "dynamic" and len(p) == 2, "Config"),
                (key in ("readme", "urls"), "Doc"),
            )
            or "Config"
        )
    if top == "build-system":
        return "Dependency" if key == "requires" else "Config"
    if top == "dependency-groups":
        return "Dependency"
    if top != "tool":
        return "Config"
    tool = key.lower()
    sub = p[2] if len(p) > 2 else ""
    if tool in ("setuptools", "setuptools-scm", "setuptools_scm"):
        if tool != "setuptools":
            return "Version"
        if sub == "dynamic":
            leaf = p[3] if len(p) > 3 else ""
            return "Version" if leaf == "version" else "Dependency" if "dependencies" in leaf else "Config"
        if sub in ("packages", "package-dir", "py-modules", "package-data", "exclude-package-data", "data-files"):
            return "Path"
        return "Config"
    if tool == "hatch":
        return _first((sub == "version", "Version"), (sub == "build", "Path"), (sub == "envs", "Test")) or "Config"
    if tool == "poetry":
        return (
            _first(
                (sub == "version", "Version"),
                (sub in ("dependencies", "dev-dependencies", "group", "extras", "source"), "Dependency"),
                (sub in ("packages", "include", "exclude", "scripts", "plugins"), "Path"),
                (sub in ("authors", "maintainers", "license"), "Owner"),
            )
            or "Config"
        )
    if tool == "pdm":
        return (
            _first((sub == "version", "Version"), (sub == "build", "Path"), ("dependencies" in sub, "Dependency"))
            or "Config"
        )
    if tool == "flit":
        return "Path" if sub in ("module", "sdist") else "Dependency" if "requires" in str(p) else "Config"
    if tool == "uv":
        return "Path" if sub == "workspace" else "Dependency" if sub in ("dev-dependencies", "sources") else "Config"
    if tool in ("semantic_release", "semantic-release"):
        return "Ledger" if sub == "changelog" else "Version"
    if tool in VERSION_TOOLS or tool in ("bumpversion", "versioningit", "tbump"):
        return "Version"
    if tool in LEDGER_TOOLS:
        return "Ledger"
    if tool in ("pytest", "coverage", "tox", "nox", "hypothesis", "pytest-benchmark"):
        return "Test"
    return "Config"


def _module_files(dotted: str, package_dir: Mapping[str, str]) -> list[str]:
    """Where setuptools finds module ``dotted`` (``pkg.sub``): ``pkg/sub.py`` or
    ``pkg/sub/__init__.py``, under the ``package-dir`` root mapped for its top package."""
    parts = [x for x in dotted.split(".") if x]
    if not parts or not all(re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", x) for x in parts):
        return []
    root = package_dir.get(parts[0])
    if root is not None:
        base = posixpath.join(root, *parts[1:]) if parts[1:] else root
    else:
        base = posixpath.join(package_dir.get("", ""), *parts)
    return [base + ".py", posixpath.join(base, "__init__.py")]


def _read_pyproject(b: _Builder, text: str) -> None:
    data = _toml(text)
    if data is None:
        return
    project = data.get("project") if isinstance(data.get("project"), dict) else {}
    assert isinstance(project, dict)
    # `dynamic = ["version"]` is about the values it names: its words follow them (below)
    _walk(b, {**data, "project": {k: v for k, v in project.items() if k != "dynamic"}}, (), _pyproject_intent)
    tool = data.get("tool") if isinstance(data.get("tool"), dict) else {}
    assert isinstance(tool, dict)
    dynamic = project.get("dynamic") if isinstance(project.get("dynamic"), list) else []
    assert isinstance(dynamic, list)
    for item in dynamic:  # `dynamic = ["version"]`: the word says which value is dynamic
        if isinstance(item, str):
            b.add(_pyproject_intent(("project", item)), item)
            b.add(_pyproject_intent(("project", item)), "dynamic")
    if isinstance(project.get("version"), str):
        b.facts.add("manifest-version")
    if project.get("authors") or project.get("maintainers"):
        b.facts.add("manifest-authors")
    if project.get("dependencies") or project.get("optional-dependencies") or data.get("dependency-groups"):
        b.facts.add("dependency-manifest")
    setuptools = tool.get("setuptools") if isinstance(tool.get("setuptools"), dict) else {}
    assert isinstance(setuptools, dict)
    pkg_dir = setuptools.get("package-dir") if isinstance(setuptools.get("package-dir"), dict) else {}
    assert isinstance(pkg_dir, dict)
    package_dir = {k: v for k, v in pkg_dir.items() if isinstance(k, str) and isinstance(v, str)}
    if setuptools.get("packages") or package_dir or setuptools.get("py-modules"):
        b.facts.add("layout-manifest")
    dyn = setuptools.get("dynamic") if isinstance(setuptools.get("dynamic"), dict) else {}
    assert isinstance(dyn, dict)
    version = dyn.get("version")
    if isinstance(version, dict):  # {attr = "pkg.__version__"} or {file = "VERSION"}
        attr = version.get("attr")
        if isinstance(attr, str) and "." in attr:
            for f in _module_files(attr.rsplit(".", 1)[0], package_dir):
                b.point("version-declared", f)
        files = version.get("file")
        for f in [files] if isinstance(files, str) else files if isinstance(files, list) else []:
            b.point("version-declared", f)
    for name in ("dependencies", "optional-dependencies"):
        dep = dyn.get(name)
        for f in _declared_files(dep):
            b.point("dependency-manifest", f)
    hatch = tool.get("hatch") if isinstance(tool.get("hatch"), dict) else {}
    assert isinstance(hatch, dict)
    hv = hatch.get("version") if isinstance(hatch.get("version"), dict) else {}
    assert isinstance(hv, dict)
    if hv.get("path"):
        b.point("version-declared", hv.get("path"))
    if hv.get("source") in ("vcs", "regex_commit") or "setuptools_scm" in tool or "setuptools-scm" in tool:
        b.facts.add("version-tool")
    pdm = tool.get("pdm") if isinstance(tool.get("pdm"), dict) else {}
    assert isinstance(pdm, dict)
    pv = pdm.get("version") if isinstance(pdm.get("version"), dict) else {}
    assert isinstance(pv, dict)
    if pv.get("path"):
        b.point("version-declared", pv.get("path"))
    if pv.get("source") == "scm":
        b.facts.add("version-tool")
    for key in ("setuptools_scm", "setuptools-scm"):
        scm = tool.get(key)
        if isinstance(scm, dict):
            b.point("version-declared", scm.get("version_file") or scm.get("write_to"))
    sr = tool.get("semantic_release") or tool.get("semantic-release")
    if isinstance(sr, dict):
        b.facts.add("version-tool")
        for entry in _strings(sr.get("version_variables")) + _strings(sr.get("version_toml")):
            b.point("version-declared", entry.split(":", 1)[0])
        changelog = sr.get("changelog")
        if isinstance(changelog, dict):
            b.point("changelog", changelog.get("changelog_file"))
            default = changelog.get("default_templates")
            if isinstance(default, dict):
                b.point("changelog", default.get("changelog_file"))
    for key in ("bumpversion", "tbump", "commitizen"):
        bump = tool.get(key)
        if isinstance(bump, dict):
            b.facts.add("version-tool")
            files = bump.get("files") or bump.get("file") or bump.get("version_files")
            for item in files if isinstance(files, list) else []:
                found = (item.get("filename") or item.get("src")) if isinstance(item, dict) else item
                if isinstance(found, str):
                    b.point("version-declared", found.split(":", 1)[0])
    build = data.get("build-system") if isinstance(data.get("build-system"), dict) else {}
    assert isinstance(build, dict)
    requires = " ".join(_strings(build.get("requires"))).lower()
    if "version" in dynamic and re.search(r"setuptools[-_]scm|hatch-vcs|versioningit|dunamai|poetry-dynamic", requires):
        b.facts.add("version-tool")
    backend = build.get("build-backend")
    dist_name = project.get("name")
    flit = isinstance(backend, str) and backend.startswith("flit")
    if "version" in dynamic and flit and isinstance(dist_name, str):  # flit reads the module's __version__
        flit_conf = tool.get("flit")
        module = flit_conf.get("module") if isinstance(flit_conf, dict) else None
        named = module.get("name") if isinstance(module, dict) else None
        mod = re.sub(r"[-.]+", "_", named if isinstance(named, str) else dist_name)
        for base in (mod, f"src/{mod}"):
            b.point("version-declared", f"{base}/__init__.py")
        b.point("version-declared", f"{mod}.py")
    towncrier = tool.get("towncrier")
    if isinstance(towncrier, dict):
        _towncrier(b, towncrier)
    for t in tool:
        low = t.lower()
        if low in LINT_TOOLS:
            b.facts.add("lint-config")
        if low in ("pytest", "coverage", "tox", "nox"):
            b.facts.add("test-config")


def _towncrier(b: _Builder, conf: Mapping[str, object]) -> None:
    """towncrier's changelog (``filename``, default ``NEWS.rst``) and its template."""
    directory = conf.get("directory")
    base = b.folder
    b.point("changelog", conf.get("filename") if isinstance(conf.get("filename"), str) else "NEWS.rst", base)
    template = conf.get("template")
    if isinstance(template, str) and ":" not in template:  # `package:file` names a package resource
        b.point("ledger-declared", template, base)
    if isinstance(directory, str):
        b.point("ledger-declared", posixpath.join(directory, "template.rst"), base)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    return []


def _declared_files(value: object) -> list[str]:
    if isinstance(value, dict):
        value = value.get("file")
    return _strings(value)


def _cargo_intent(p: tuple[str, ...]) -> str:
    top = p[0] if p else ""
    key = p[1] if len(p) > 1 else ""
    if top in ("package", "workspace") and (top == "package" or key == "package"):
        k = p[1] if top == "package" else (p[2] if len(p) > 2 else "")
        return (
            _first(
                (k == "version", "Version"),
                (k in ("authors", "license", "license-file"), "Owner"),
                (k in ("include", "exclude", "build", "links", "default-run", "workspace"), "Path"),
                (k in ("readme", "documentation", "homepage"), "Doc"),
            )
            or "Config"
        )
    if top == "workspace":
        return (
            _first(
                (key in ("members", "exclude", "default-members"), "Path"),
                (key == "dependencies", "Dependency"),
                (key == "lints", "Config"),
            )
            or "Config"
        )
    if top in ("dependencies", "dev-dependencies", "build-dependencies", "patch", "replace"):
        return "Dependency"
    if top == "target":
        return "Dependency" if any("dependencies" in x for x in p) else "Config"
    if top in ("lib", "bin", "example"):
        return "Path"
    if top in ("test", "bench"):
        return "Test"
    return "Config"


def _read_cargo(b: _Builder, text: str, path: str) -> None:
    data = _toml(text)
    if data is None:
        return
    _walk(b, data, (), _cargo_intent)
    package = data.get("package") if isinstance(data.get("package"), dict) else {}
    workspace = data.get("workspace") if isinstance(data.get("workspace"), dict) else {}
    assert isinstance(package, dict) and isinstance(workspace, dict)
    version = package.get("version")
    wp = workspace.get("package") if isinstance(workspace.get("package"), dict) else {}
    assert isinstance(wp, dict)
    if isinstance(version, str) or isinstance(wp.get("version"), str):
        b.facts.add("manifest-version")
    if isinstance(version, dict) and version.get("workspace") is True:  # inherited: the workspace root's
        parts = b.folder.split("/") if b.folder else []
        for i in range(len(parts) - 1, -1, -1):
            b.point("version-declared", posixpath.join(*parts[:i], "Cargo.toml") if i else "Cargo.toml", "")
    if package.get("authors"):
        b.facts.add("manifest-authors")
    if any(k in data for k in ("dependencies", "dev-dependencies", "build-dependencies")) or workspace.get(
        "dependencies"
    ):
        b.facts.add("dependency-manifest")
    if workspace.get("members") or "lib" in data or "bin" in data:
        b.facts.add("layout-manifest")


def _read_catalog(b: _Builder, text: str) -> None:
    """A Gradle version catalog: every table declares dependencies (libraries, their versions,
    bundles and plugins)."""
    data = _toml(text)
    if data is None:
        return
    _walk(b, data, (), lambda p: "Dependency")
    b.facts.add("dependency-manifest")


# ---------------------------------------------------------------------------- INI


def _ini_intent(section: str, key: str) -> str:
    """The intent of ``key`` in INI ``section`` (setup.cfg, tox.ini, pytest.ini, .flake8…)."""
    s = section.lower()
    k = key.lower()
    if s == "metadata":
        return (
            _first(
                (k == "version", "Version"),
                (k.startswith(("author", "maintainer", "license")), "Owner"),
                (k in ("long_description", "url", "project_urls"), "Doc"),
            )
            or "Config"
        )
    if s == "options":
        return (
            _first(
                (k in ("install_requires", "setup_requires", "tests_require"), "Dependency"),
                (k in ("packages", "package_dir", "py_modules", "include_package_data", "namespace_packages"), "Path"),
            )
            or "Config"
        )
    if s.startswith("options.packages") or s in ("options.package_data", "options.entry_points", "files"):
        return "Path"
    if s in ("options.extras_require",):
        return "Dependency"
    if s in ("pytest", "tool:pytest") or s.startswith(("coverage:", "tool:coverage")) or s in ("run", "report"):
        return "Test"
    if s.startswith(("bumpversion", "tbump")):
        return "Version"
    if s.split(":")[0] in LINT_TOOLS or s.startswith(("mypy-", "mypy:", "isort", "flake8", "pydocstyle")):
        return "Config"
    return "Config"


def _read_ini(b: _Builder, text: str, name: str) -> None:
    cp = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True, delimiters=("=", ":"))
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        cp.read_string(text)
    except (configparser.Error, ValueError, RecursionError):
        return
    whole_test = name in ("pytest.ini", ".coveragerc")
    for section in cp.sections()[:500]:
        s = section.lower()
        if s.split(":")[0] in LINT_TOOLS or s.startswith(("mypy", "isort", "flake8")):
            b.facts.add("lint-config")
        if s in ("pytest", "tool:pytest") or s.startswith("coverage:") or whole_test:
            b.facts.add("test-config")
        items = cp.items(section, raw=True)
        for key, value in items[:500]:
            if not b.tick():
                return
            intent = "Test" if whole_test else _ini_intent(section, key)
            b.add(intent, key)
            b.add(intent, value)
            if s == "metadata" and key.lower() == "version" and isinstance(value, str):
                b.facts.add("manifest-version")
                _setup_cfg_version(b, value)
            if s == "options" and key.lower() == "install_requires":
                b.facts.add("dependency-manifest")
            if s.startswith("metadata") and key.lower().startswith(("author", "maintainer")):
                b.facts.add("manifest-authors")
        intents: dict[str, float] = {}
        for key, _ in items[:500]:
            i = "Test" if whole_test else _ini_intent(section, key)
            intents[i] = intents.get(i, 0.0) + 1
        top = max(intents, key=lambda i: intents[i]) if intents else _ini_intent(section, "")
        b.add(top, section)
        if s.startswith("bumpversion:file:"):
            b.point("version-declared", section.split(":", 2)[2])
        if s in ("tool:towncrier", "towncrier"):
            _towncrier(b, dict(cp.items(section, raw=True)))


def _setup_cfg_version(b: _Builder, value: str) -> None:
    """``version = attr: pkg.__version__`` / ``file: VERSION`` (setuptools' declarative config)."""
    v = value.strip()
    if v.startswith("attr:"):
        attr = v[5:].strip()
        if "." in attr:
            for f in _module_files(attr.rsplit(".", 1)[0], {}):
                b.point("version-declared", f)
                b.point("version-declared", posixpath.join("src", f))
    elif v.startswith("file:"):
        for f in v[5:].split(","):
            b.point("version-declared", f.strip())


# ---------------------------------------------------------------------------- setup.py

_SETUP_KW = re.compile(r"^\s*(\w+)\s*=", re.MULTILINE)
_SETUP_INTENT: Final = {
    "version": "Version",
    "install_requires": "Dependency",
    "extras_require": "Dependency",
    "setup_requires": "Dependency",
    "tests_require": "Dependency",
    "python_requires": "Config",
    "packages": "Path",
    "package_dir": "Path",
    "py_modules": "Path",
    "package_data": "Path",
    "entry_points": "Path",
    "author": "Owner",
    "author_email": "Owner",
    "maintainer": "Owner",
    "maintainer_email": "Owner",
    "license": "Owner",
}


def _read_setup_py(b: _Builder, text: str) -> None:
    """``setup.py`` is never run: each ``keyword=`` line starts a section that runs to the
    next one; a version read from a file (``open("pkg/__init__.py")``) points there."""
    marks = list(_SETUP_KW.finditer(text))
    for i, m in enumerate(marks[:2000]):
        end = marks[i + 1].start() if i + 1 < len(marks) else min(len(text), m.end() + 400)
        intent = _SETUP_INTENT.get(m.group(1), "Config")
        b.add(intent, text[m.start() : end])
        if intent == "Version":
            b.facts.add("manifest-version")
        elif intent == "Dependency":
            b.facts.add("dependency-manifest")
        elif intent == "Owner":
            b.facts.add("manifest-authors")
    for m in re.finditer(r"""["']([\w./-]+(?:\.py|VERSION|version\.txt))["']""", text[:MAX_BYTES]):
        near = text[max(0, m.start() - 300) : m.end() + 300]
        if re.search(r"(?i)version", near):
            b.point("version-declared", m.group(1))


# ---------------------------------------------------------------------------- JSON


def _json(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


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


def _script_intent(name: str, command: str) -> str:
    if name.split(":")[0] in ("test", "pretest", "posttest", "coverage", "e2e") or _TEST_COMMAND.search(command):
        return "Test"
    if name.split(":")[0] in ("version", "release", "changeset", "bump"):
        return "Version"
    return "Config"


def _read_package_json(b: _Builder, text: str) -> None:
    data = _json(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        return (
            _first(
                (key == "version", "Version"),
                (key in _PKG_DEPS, "Dependency"),
                (key in _PKG_PATH, "Path"),
                (key in _PKG_OWNER, "Owner"),
                (key in _PKG_TEST, "Test"),
                (key in ("homepage", "repository", "bugs", "description", "readme"), "Doc"),
            )
            or "Config"
        )

    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    assert isinstance(scripts, dict)
    rest = {k: v for k, v in data.items() if k != "scripts"}
    _walk(b, rest, (), intent_of)
    b.add("Config", "scripts", LABEL)
    for name, command in list(scripts.items())[:500]:
        if not isinstance(name, str) or not isinstance(command, str):
            continue
        intent = _script_intent(name, command)
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
    if any(k in data for k in _PKG_TEST):
        b.facts.add("test-config")
    if any(k in data for k in _PKG_LINT - {"husky", "lint-staged", "nano-staged", "browserslist"}):
        b.facts.add("lint-config")


def _read_composer(b: _Builder, text: str) -> None:
    data = _json(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        if key == "extra" and len(p) > 1 and p[1] == "branch-alias":
            return "Version"
        return (
            _first(
                (key == "version", "Version"),
                (key in ("require", "require-dev", "conflict", "replace", "provide", "suggest"), "Dependency"),
                (key in ("autoload", "autoload-dev", "bin", "include-path", "target-dir"), "Path"),
                (key in ("authors", "license", "funding"), "Owner"),
                (key in ("homepage", "support", "description", "readme"), "Doc"),
            )
            or "Config"
        )

    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    assert isinstance(scripts, dict)
    _walk(b, {k: v for k, v in data.items() if k != "scripts"}, (), intent_of)
    for name, command in list(scripts.items())[:500]:
        if not isinstance(name, str):
            continue
        cmd = " ".join(_strings(command))
        intent = _script_intent(name, cmd)
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


# ---------------------------------------------------------------------------- YAML

_YAML_MAX: Final = 64 * 1024


def _yaml(text: str) -> Any:
    if len(text) > _YAML_MAX:
        return None
    import yaml

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError, ValueError):
        return None


def _read_pnpm_workspace(b: _Builder, text: str) -> None:
    data = _yaml(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        if key == "packages":
            return "Path"
        if key.startswith(("catalog", "overrides", "patchedDependencies", "onlyBuilt", "neverBuilt", "allowBuilds")):
            return "Dependency"
        return "Config"

    _walk(b, data, (), intent_of)
    b.facts.add("layout-manifest")


def _read_citation(b: _Builder, text: str) -> None:
    data = _yaml(text)
    if not isinstance(data, dict):
        return

    def intent_of(p: tuple[str, ...]) -> str:
        key = p[0] if p else ""
        return "Owner" if key in ("authors", "license", "contact") else "Version" if key == "version" else "Doc"

    _walk(b, data, (), intent_of)
    if data.get("authors"):
        b.facts.add("manifest-authors")


# ---------------------------------------------------------------------------- XML


def _xml_root(text: str) -> Any:
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


def _local(tag: object) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


_POM_TEST_PLUGINS: Final = frozenset(
    {"maven-surefire-plugin", "maven-failsafe-plugin", "jacoco-maven-plugin", "maven-surefire-report-plugin"}
    | {"pitest-maven", "junit-platform-maven-plugin"}
)
_POM_PATH_PLUGINS: Final = frozenset({"build-helper-maven-plugin"})
_POM_VERSION_PLUGINS: Final = frozenset(
    {"versions-maven-plugin", "maven-release-plugin", "flatten-maven-plugin", "jgitver-maven-plugin"}
)
_POM_OWNER_PLUGINS: Final = frozenset({"license-maven-plugin", "maven-license-plugin"})
_POM_LINT_PLUGINS: Final = frozenset(
    {"maven-checkstyle-plugin", "spotless-maven-plugin", "maven-pmd-plugin", "spotbugs-maven-plugin"}
    | {"error-prone", "animal-sniffer-maven-plugin", "fmt-maven-plugin", "maven-enforcer-plugin"}
)
_POM_PATH_LEAVES: Final = frozenset(
    {"sourceDirectory", "testSourceDirectory", "scriptSourceDirectory", "compileSourceRoot", "compileSourceRoots"}
    | {"directory", "source", "sources", "module", "modules", "resources", "testResources", "outputDirectory"}
)


def _plugin_intent(artifact: str) -> str:
    if artifact in _POM_TEST_PLUGINS:
        return "Test"
    if artifact in _POM_PATH_PLUGINS:
        return "Path"
    if artifact in _POM_VERSION_PLUGINS:
        return "Version"
    if artifact in _POM_OWNER_PLUGINS:
        return "Owner"
    return "Config"


def _read_pom(b: _Builder, text: str) -> None:
    root = _xml_root(text)
    if root is None or _local(root.tag) != "project":
        return
    used: dict[str, dict[str, float]] = {}  # property -> intents of the places that use ${it}
    props: list[tuple[str, str]] = []

    def visit(el: Any, path: tuple[str, ...], intent: str, depth: int) -> None:
        if depth > MAX_DEPTH or not b.tick():
            return
        name = _local(el.tag)
        if not name:
            return
        here = _pom_intent(path, name, intent, el)
        if path[-1:] == ("properties",) and len(path) <= 3:
            props.append((name, el.text or ""))
        else:
            b.add(here, name, LABEL if name in ("id", "phase", "goal") else 1.0)
            txt = el.text or ""
            weight = LABEL if name in ("id", "phase", "goal") else 1.0
            b.add(here, txt, weight)
            for ref in re.findall(r"\$\{([\w.-]+)\}", txt):
                d = used.setdefault(ref, {})
                d[here] = d.get(here, 0.0) + 1
        for child in el:
            visit(child, (*path, name), here, depth + 1)

    for child in root:
        visit(child, ("project",), "Config", 1)
    for name, value in props:
        d = used.get(name)
        intent = max(d, key=lambda i: d[i]) if d else _property_intent(name)
        b.add(intent, name)
        b.add(intent, value)
    top = {_local(c.tag): c for c in root}
    if top.get("version") is not None:
        b.facts.add("manifest-version")
    elif top.get("parent") is not None:  # the version is inherited from the parent POM
        parent = {_local(c.tag): c for c in top["parent"]}
        rel = parent.get("relativePath")
        target = (rel.text or "").strip() if rel is not None else "../pom.xml"
        if target and not target.endswith(".xml"):
            target = posixpath.join(target, "pom.xml")
        b.point("version-declared", target)
    if top.get("developers") is not None or top.get("contributors") is not None:
        b.facts.add("manifest-authors")
    if top.get("dependencies") is not None or top.get("dependencyManagement") is not None:
        b.facts.add("dependency-manifest")
    if top.get("modules") is not None:
        b.facts.add("layout-manifest")
    artifacts = {(a.text or "").strip() for a in root.iter("{*}artifactId")}
    if artifacts & _POM_TEST_PLUGINS:
        b.facts.add("test-config")
    if artifacts & _POM_LINT_PLUGINS:
        b.facts.add("lint-config")


def _property_intent(name: str) -> str:
    low = name.lower()
    if low in ("revision", "changelist", "sha1"):
        return "Version"
    if low.endswith((".version", "version")):
        return "Dependency"
    return "Config"


def _pom_intent(path: tuple[str, ...], name: str, parent: str, el: Any) -> str:
    """The intent of POM element ``name`` below ``path`` (profiles read like the project)."""
    rel = tuple(x for x in path if x not in ("profiles", "profile"))
    depth = len(rel)
    if depth == 1:
        return (
            _first(
                (name == "version", "Version"),
                (name in ("dependencies", "dependencyManagement"), "Dependency"),
                (name in ("modules",), "Path"),
                (name in ("developers", "contributors", "licenses", "organization", "inceptionYear"), "Owner"),
                (name in ("description", "url"), "Doc"),
                (name == "parent", "Version"),
            )
            or "Config"
        )
    if name == "plugin" and "plugins" in rel[-1:]:
        art = next((c for c in el if _local(c.tag) == "artifactId"), None)
        artifact = (art.text or "").strip() if art is not None else ""
        if "dependencies" in rel and "plugin" not in rel:
            return "Dependency"
        return _plugin_intent(artifact)
    if name in _POM_PATH_LEAVES and parent in ("Config", "Path"):
        return "Path"
    if rel[1:2] == ("parent",):
        return "Version" if name == "version" else "Config"
    return parent


_MSBUILD_VERSION: Final = frozenset(
    {"Version", "VersionPrefix", "VersionSuffix", "AssemblyVersion", "FileVersion", "InformationalVersion"}
    | {"PackageVersion", "ReleaseVersion", "ApplicationVersion", "ApplicationDisplayVersion"}
)
_MSBUILD_OWNER: Final = frozenset(
    {"Authors", "Company", "Copyright", "PackageLicenseExpression", "PackageLicenseFile", "Owners", "Product"}
)
_MSBUILD_TEST: Final = frozenset(
    {
        "IsTestProject",
        "CollectCoverage",
        "CoverletOutput",
        "CoverletOutputFormat",
        "VSTestLogger",
        "RunSettingsFilePath",
    }
)
_MSBUILD_PATH: Final = frozenset(
    {"RootNamespace", "AssemblyName", "OutputPath", "BaseOutputPath", "ArtifactsPath", "UseArtifactsOutput"}
    | {"BaseIntermediateOutputPath", "IntermediateOutputPath", "PackageId"}
)
_MSBUILD_DEPENDENCY: Final = frozenset(
    {"ManagePackageVersionsCentrally", "CentralPackageTransitivePinningEnabled", "RestoreSources"}
)
_MSBUILD_LINT: Final = frozenset(
    {"RunAnalyzers", "RunAnalyzersDuringBuild", "EnforceCodeStyleInBuild", "AnalysisLevel", "AnalysisMode"}
    | {"EnableNETAnalyzers", "CodeAnalysisRuleSet", "StyleCopTreatErrorsAsWarnings"}
)
_MSBUILD_ITEMS_PATH: Final = frozenset(
    {"Compile", "None", "Content", "EmbeddedResource", "Folder", "AdditionalFiles", "InternalsVisibleTo"}
)


def _msbuild_property(name: str) -> str:
    if name in _MSBUILD_VERSION or name.startswith(("MinVer", "GitVersion", "NerdbankGitVersioning")):
        return "Version"
    if name in _MSBUILD_OWNER or name.startswith("PackageLicense"):
        return "Owner"
    if name in _MSBUILD_TEST or name.startswith(("Coverlet", "VSTest", "Test")):
        return "Test"
    if name in _MSBUILD_PATH:
        return "Path"
    if name in _MSBUILD_DEPENDENCY:
        return "Dependency"
    return "Config"


def _read_msbuild(b: _Builder, text: str, name: str) -> None:
    root = _xml_root(text)
    if root is None or _local(root.tag) != "Project":
        return
    central = name == "Directory.Packages.props"
    for el in root.iter():
        if not b.tick():
            return
        tag = _local(el.tag)
        parent = el.getparent()
        ptag = _local(parent.tag) if parent is not None else ""
        if ptag == "PropertyGroup":
            intent = _msbuild_property(tag)
            b.add(intent, tag)
            b.add(intent, el.text or "")
            if intent == "Version" and tag in _MSBUILD_VERSION and (el.text or "").strip():
                b.facts.add("manifest-version")
            if intent == "Version" and tag.startswith("MinVer"):
                b.facts.add("version-tool")
            if intent == "Owner" and tag == "Authors":
                b.facts.add("manifest-authors")
            if intent == "Test" and tag == "IsTestProject" and (el.text or "").strip().lower() == "true":
                b.facts.add("test-config")
            if tag in _MSBUILD_LINT:
                b.facts.add("lint-config")
        elif tag == "ItemGroup":
            _msbuild_items(b, el, central)
        elif tag == "Import":
            b.add("Path", el.get("Project") or "")
        elif tag == "Target":
            target = el.get("Name") or ""
            b.add("Test" if "test" in target.lower() else "Config", target)
    if central:
        b.facts.add("dependency-manifest")


def _msbuild_items(b: _Builder, group: Any, central: bool) -> None:
    """An ``ItemGroup``: package references are Dependency, unless most of the group's
    packages are of one kind of tool (test frameworks → Test, analyzers → Config, version
    tools → Version): a group that wires the test packages configures the tests."""
    items = [c for c in group if _local(c.tag)][:500]
    refs = [c for c in items if _local(c.tag) in ("PackageReference", "GlobalPackageReference", "PackageVersion")]
    kinds = [_name_tool(c.get("Include") or c.get("Update") or "") for c in refs]
    label = group.get("Label") or ""
    group_intent = _name_tool(label) or ("Config" if "analyzer" in label.lower() else None)
    counted = [k for k in kinds if k is not None]
    if group_intent is None and refs and len(counted) * 2 >= len(refs):
        group_intent = max(set(counted), key=counted.count)
    b.add(group_intent or "Dependency", label)
    for c, kind in zip(refs, kinds, strict=False):
        tag = _local(c.tag)
        intent = "Dependency" if central or tag == "PackageVersion" else group_intent or kind or "Dependency"
        b.add(intent, tag, LABEL)
        for attr in ("Include", "Update", "Version", "VersionOverride"):
            b.add(intent, c.get(attr) or "")
        if intent == "Dependency":
            b.facts.add("dependency-manifest")
        elif intent == "Test":
            b.facts.add("test-config")
        elif intent == "Version":
            b.facts.add("version-tool")
        elif intent == "Config":
            b.facts.add("lint-config")
    for c in items:
        tag = _local(c.tag)
        if tag in ("PackageReference", "GlobalPackageReference", "PackageVersion"):
            continue
        intent = "Path" if tag in _MSBUILD_ITEMS_PATH else "Dependency" if tag == "ProjectReference" else "Config"
        b.add(intent, tag, LABEL)
        b.add(intent, c.get("Include") or c.get("Update") or "")


def _read_slnx(b: _Builder, text: str) -> None:
    root = _xml_root(text)
    if root is None:
        return
    for el in root.iter():
        if not b.tick():
            return
        b.add("Path", _local(el.tag), LABEL)
        b.add("Path", el.get("Path") or el.get("Name") or "")
    b.facts.add("layout-manifest")


def _read_sln(b: _Builder, text: str) -> None:
    for m in re.finditer(r'^Project\("[^"]*"\)\s*=\s*"([^"]*)",\s*"([^"]*)"', text, re.MULTILINE):
        if not b.tick():
            return
        b.add("Path", m.group(1))
        b.add("Path", m.group(2))
    b.facts.add("layout-manifest")


def _read_phpunit(b: _Builder, text: str) -> None:
    root = _xml_root(text)
    if root is None:
        return
    for el in root.iter():
        if not b.tick():
            return
        b.add("Test", _local(el.tag))
        b.add("Test", el.text or "")
        for v in list(el.attrib.values())[:20]:
            b.add("Test", v)
    b.facts.add("test-config")


# ---------------------------------------------------------------------------- Gradle

_GRADLE_TOKEN = re.compile(
    r'"""(?:.|\n)*?"""|\'\'\'(?:.|\n)*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|//[^\n]*|/\*(?:.|\n)*?\*/'
    r"|[{}\n]|[^\s{}\"'/]+|/"
)


def _gradle_block_intent(name: str, parent: str) -> str:
    """The intent of a Gradle block named ``name`` (the words before its ``{``)."""
    low = name.lower()
    head = re.split(r"[\s(.<]", low.strip(), maxsplit=1)[0]
    if parent == "Owner":
        return "Owner"
    if head in ("dependencies", "constraints") or "dependencies" in low:
        return "Dependency" if parent not in ("Test",) else "Test"
    if re.search(r"\btest\b|withtype\s*[(<]\s*test\b|testing|jacoco|named\s*[(<]\s*[\"']?test", low) and not re.search(
        r"sourcesets|testfixtures", low
    ):
        return "Test"
    if head in ("sourcesets", "srcdir", "srcdirs") or "sourcesets" in low:
        return "Path"
    if head in ("developers", "developer", "licenses", "license", "organization", "contributors"):
        return "Owner"
    if head in ("spotless", "checkstyle", "detekt", "ktlint", "errorprone", "pmd", "spotbugs", "apivalidation"):
        return "Config"
    return parent


def _read_gradle(b: _Builder, text: str, name: str) -> None:
    """A bounded read of a Gradle build script (Groovy or Kotlin DSL): blocks by their braces,
    strings and comments skipped; each word gets its block's intent; ``version = …`` is
    Version, and a version read from a property points to ``gradle.properties``."""
    settings = name.startswith("settings.gradle")
    stack: list[str] = []
    line: list[str] = []
    pending: list[str] = []

    def intent_here() -> str:
        return stack[-1] if stack else ("Path" if settings else "Config")

    def end_line() -> None:
        stmt = " ".join(line).strip()
        line.clear()
        if not stmt:
            return
        intent = intent_here()
        low = stmt.lower()
        m = re.match(r"^(?:project\.)?(version|versionname|versioncode)\s*=?\s*(.*)$", low)
        if m and intent in ("Config", "Path"):
            intent = "Version"
            b.facts.add("manifest-version")
            rhs = stmt[m.start(2) :]
            if not re.match(r"^[\"'][\w.+-]*\d", rhs.strip()):  # a property, not a literal
                b.point("version-declared", "gradle.properties")
                b.point("version-declared", "gradle.properties", "")
        elif settings and re.match(r"^(include|includebuild|rootproject\.name)\b", low):
            intent = "Path"
            b.facts.add("layout-manifest")
        elif intent == "Dependency":
            b.facts.add("dependency-manifest")
        elif intent == "Test":
            b.facts.add("test-config")
        elif intent == "Owner":
            b.facts.add("manifest-authors")
        elif re.search(r"\bsrcdirs?\b|\bsetsrcdirs\b|\bsourcesets\b", low):
            intent = "Path"
        # a top-level definition (`val testJdk = …`, `ext.x = …`) means what its uses mean:
        # its words weigh less here than where a block uses them
        defining = not stack and re.match(r"^(?:val|var|def|ext\.|project\.ext\.)?\s*[\w.]+\s*=", low)
        b.add(intent, stmt, LABEL if defining and intent == "Config" else 1.0)

    for m in _GRADLE_TOKEN.finditer(text[:MAX_BYTES]):
        tok = m.group(0)
        if not b.tick():
            break
        if tok.startswith(("//", "/*")):
            continue
        if tok == "\n":
            if line:
                pending = list(line)
            end_line()
            continue
        if tok == "{":
            head = " ".join(line).strip() or " ".join(pending).strip()
            pending = []
            intent = _gradle_block_intent(head, intent_here())
            if head:
                b.add(intent, head)
            line.clear()
            if len(stack) < MAX_DEPTH:
                stack.append(intent)
            continue
        if tok == "}":
            end_line()
            if stack:
                stack.pop()
            continue
        line.append(tok)
    end_line()
    if "libs." in text:
        b.point("dependency-manifest", "gradle/libs.versions.toml", "")


def _read_gradle_properties(b: _Builder, text: str) -> None:
    """``gradle.properties``: the project version (``version``, ``VERSION_NAME``), the POM's
    developers and licence (``POM_DEVELOPER_*``), dependency versions (``*Version``), test
    settings, and Gradle's own (``org.gradle.*``)."""
    for raw in text.splitlines()[:5000]:
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        m = re.match(r"^([^=:\s]+)\s*[=:]\s*(.*)$", line)
        if not m or not b.tick():
            continue
        key, value = m.group(1), m.group(2)
        low = key.lower()
        if low in ("version", "version_name", "versionname", "project.version") or low.endswith(
            (".version_name", "_version_name")
        ):
            intent = "Version"
            b.facts.add("manifest-version")
        elif low.startswith(("pom_developer", "pom_licen", "pom_organization")):
            intent = "Owner"
        elif low.endswith(("version", "_version", ".version")) and not low.startswith(("org.gradle", "android.")):
            intent = "Dependency"
        elif re.search(r"(?:^|[._-])tests?(?:$|[._-]|[A-Z])|[a-z]Tests?(?:$|[A-Z._-])", key):
            intent = "Test"  # `testJdk`, `kotlin.tests.x`: the tests' settings
        else:
            intent = "Config"
        b.add(intent, key)
        b.add(intent, value)


# ---------------------------------------------------------------------------- CMake

_CMAKE_CMD = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(", re.MULTILINE)
_CMAKE_INTENT: Final = {
    "add_library": "Path",
    "add_executable": "Path",
    "add_subdirectory": "Path",
    "target_sources": "Path",
    "target_include_directories": "Path",
    "include_directories": "Path",
    "find_package": "Dependency",
    "fetchcontent_declare": "Dependency",
    "fetchcontent_makeavailable": "Dependency",
    "externalproject_add": "Dependency",
    "cpmaddpackage": "Dependency",
    "target_link_libraries": "Dependency",
    "pkg_check_modules": "Dependency",
    "enable_testing": "Test",
    "add_test": "Test",
    "gtest_discover_tests": "Test",
    "gtest_add_tests": "Test",
    "catch_discover_tests": "Test",
    "doctest_discover_tests": "Test",
    "set_tests_properties": "Test",
}


def _cmake_args(text: str, start: int) -> tuple[str, int]:
    """The argument text of a command whose ``(`` ends at ``start``, and where it ends."""
    depth, i, n = 1, start, min(len(text), start + 20_000)
    while i < n and depth:
        c = text[i]
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == '"':
            j = text.find('"', i + 1)
            i = j if j != -1 else n
        i += 1
    return text[start : i - 1], i


def _read_cmake(b: _Builder, text: str, path: str) -> None:
    """Commands by name (``project(… VERSION …)``, ``add_library``, ``find_package``,
    ``add_test``…); a ``function``/``macro`` takes the intent of what its body does, and so
    do its calls (``add_fmt_test(x)`` of a function that calls ``add_test`` is Test); a
    ``file(READ|STRINGS <file> …)`` whose result feeds a version points to that file."""
    text = re.sub(r"#[^\n]*", "", text[:MAX_BYTES])
    funcs: dict[str, str] = {}
    calls: list[tuple[str, str]] = []
    defining: list[tuple[str, int]] = []
    done = 0  # where the last command's arguments ended: each character is scanned once
    for m in _CMAKE_CMD.finditer(text):
        if m.start() < done:
            continue  # a line of an argument list that looks like a command
        if not b.tick():
            break
        cmd = m.group(1).lower()
        args, done = _cmake_args(text, m.end())
        calls.append((cmd, args))
        if cmd in ("function", "macro"):
            first = args.split()
            if first:
                defining.append((first[0].lower(), len(calls)))
        elif cmd in ("endfunction", "endmacro") and defining:
            fname, begin = defining.pop()
            body = [c for c, _ in calls[begin:-1]]
            intents = [_CMAKE_INTENT.get(c) or funcs.get(c) for c in body]
            found = [i for i in intents if i]
            funcs[fname] = "Test" if "Test" in found else (max(set(found), key=found.count) if found else "Config")
    in_test = any(p.lower() in ("test", "tests", "testing") for p in path.split("/")[:-1])
    for idx, (cmd, args) in enumerate(calls):
        intent = _CMAKE_INTENT.get(cmd) or funcs.get(cmd)
        if cmd == "project" and re.search(r"\bVERSION\b", args):
            intent = "Version"
            b.facts.add("manifest-version")
        elif cmd == "set" and re.match(r"\s*\w*VERSION\w*\b", args) and not args.strip().startswith("CMAKE_"):
            intent = "Version"
        elif cmd in ("file",) and re.match(r"\s*(READ|STRINGS)\b", args):
            parts = args.split()
            around = " ".join(a for _, a in calls[idx : idx + 6])
            if len(parts) >= 3 and re.search(r"VERSION", around):
                target = (
                    parts[1]
                    .strip('"')
                    .replace("${CMAKE_CURRENT_SOURCE_DIR}/", "")
                    .replace("${PROJECT_SOURCE_DIR}/", "")
                )
                b.point("version-declared", target)
                intent = "Version"
        elif cmd in ("function", "macro"):
            first = args.split()
            intent = funcs.get(first[0].lower()) if first else None
        if intent is None:
            intent = "Test" if in_test else "Config"
        b.add(intent, cmd)
        b.add(intent, args)
        if intent == "Test":
            b.facts.add("test-config")
        elif intent == "Dependency" and cmd != "target_link_libraries":
            b.facts.add("dependency-manifest")
        elif intent == "Path" and cmd in ("add_library", "add_executable", "add_subdirectory"):
            b.facts.add("layout-manifest")


# ---------------------------------------------------------------------------- Go, Ruby


def _read_go_mod(b: _Builder, text: str, workspace: bool) -> None:
    block: str | None = None
    for raw in text.splitlines()[:20_000]:
        line = raw.split("//", 1)[0].strip()
        if not line or not b.tick():
            continue
        if block is not None:
            if line == ")":
                block = None
                continue
            directive = block
            rest = line
        else:
            directive, _, rest = line.partition(" ")
            if rest.strip() == "(":
                block = directive
                b.add(_go_intent(directive), directive)
                continue
        intent = _go_intent(directive)
        b.add(intent, directive)
        b.add(intent, rest)
        if intent == "Dependency":
            b.facts.add("dependency-manifest")
    b.facts.add("layout-manifest")
    if workspace:
        b.facts.discard("dependency-manifest")


def _go_intent(directive: str) -> str:
    return (
        _first(
            (directive in ("module", "use"), "Path"),
            (directive in ("require", "replace", "exclude"), "Dependency"),
            (directive == "retract", "Version"),
        )
        or "Config"
    )


_GEM_LINE = re.compile(r"^\s*(?:\w+\.)?(\w+)\b(.*)$")


def _read_ruby_manifest(b: _Builder, text: str, gemfile: bool) -> None:
    """A gemspec or Gemfile, line by line (never evaluated)."""
    for raw in text.splitlines()[:10_000]:
        line = raw.split("#", 1)[0]
        m = _GEM_LINE.match(line)
        if not m or not b.tick():
            continue
        word, rest = m.group(1).lower(), m.group(2)
        if word in ("gem", "add_dependency", "add_runtime_dependency", "add_development_dependency", "gemspec"):
            intent = "Dependency"
            b.facts.add("dependency-manifest")
        elif word == "version" and "=" in rest:
            intent = "Version"
            b.facts.add("manifest-version")
            refs = re.findall(r"""["']([\w./-]+)["']""", rest)
            if re.search(r"File\.read|IO\.read|File\.readlines", rest):  # the version is a file's text
                for ref in refs:
                    b.point("version-declared", ref)
            else:
                for ref in refs:
                    if "version" in ref.lower() and "/" in ref:
                        b.point("version-declared", ref if ref.endswith(".rb") else ref + ".rb")
        elif word in ("authors", "author", "email", "license", "licenses"):
            intent = "Owner"
            b.facts.add("manifest-authors")
        elif word in ("files", "require_paths", "executables", "bindir", "test_files"):
            intent = "Path"
        elif word in ("require", "require_relative") and "version" in rest:
            intent = "Version"
            for ref in re.findall(r"""["']([\w./-]+)["']""", rest):
                b.point("version-declared", ref + ("" if ref.endswith(".rb") else ".rb"))
                if word == "require":
                    b.point("version-declared", "lib/" + ref + ("" if ref.endswith(".rb") else ".rb"))
        elif gemfile and word in ("group", "source", "platforms", "git_source"):
            intent = "Dependency"
        else:
            intent = "Config"
        b.add(intent, line)


def _read_requirements(b: _Builder, text: str) -> None:
    """pip's requirements files: every requirement line declares a dependency; ``-r``/``-c``
    include another file."""
    for raw in text.splitlines()[:20_000]:
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or not b.tick():
            continue
        m = re.match(r"^(?:-r|--requirement|-c|--constraint)\s*[= ]?\s*(\S+)", line)
        if m:
            b.point("dependency-manifest", m.group(1))
            continue
        b.add("Dependency", line)
    b.facts.add("dependency-manifest")


# ---------------------------------------------------------------------------- dispatch

_LINT_NAMES: Final = re.compile(
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
_VERSION_TOOL_NAMES: Final = re.compile(
    r"^(?:\.bumpversion\.(?:cfg|toml)|\.releaserc(?:\.\w+)?|release\.config\.[cm]?js|release-please-config\.json"
    r"|\.release-please-manifest\.json|GitVersion\.ya?ml|version\.json|\.versionrc(?:\.\w+)?|\.tbump\.toml|tbump\.toml"
    r"|\.cz\.(?:toml|json|ya?ml)|cz\.(?:toml|json|ya?ml))$"
)
_MSBUILD_SUFFIXES: Final = (".csproj", ".fsproj", ".vbproj", ".props", ".targets", ".proj")


def is_manifest_name(path: str) -> bool:
    """Whether :func:`read` has a reader for ``path`` (by its name)."""
    name = path.rsplit("/", 1)[-1]
    return _reader(name) is not None


def _reader(name: str) -> Callable[[_Builder, str, str], None] | None:
    low = name.lower()
    if name == "pyproject.toml":
        return lambda b, t, p: _read_pyproject(b, t)
    if name in ("setup.cfg", "tox.ini", "pytest.ini", ".coveragerc", ".flake8", ".pylintrc", "mypy.ini", ".isort.cfg"):
        return lambda b, t, p: _read_ini(b, t, name)
    if name == "setup.py":
        return lambda b, t, p: _read_setup_py(b, t)
    if re.match(r"^[\w.-]*requirements[\w.-]*\.(?:txt|in)$", name):
        return lambda b, t, p: _read_requirements(b, t)
    if name == "package.json":
        return lambda b, t, p: _read_package_json(b, t)
    if name == "composer.json":
        return lambda b, t, p: _read_composer(b, t)
    if name in ("pnpm-workspace.yaml", "pnpm-workspace.yml"):
        return lambda b, t, p: _read_pnpm_workspace(b, t)
    if name == "CITATION.cff":
        return lambda b, t, p: _read_citation(b, t)
    if name == "Cargo.toml":
        return _read_cargo
    if low.endswith(".versions.toml"):
        return lambda b, t, p: _read_catalog(b, t)
    if name in ("go.mod", "go.work"):
        return lambda b, t, p: _read_go_mod(b, t, name == "go.work")
    if low.endswith(".gemspec") or name in ("Gemfile", "gems.rb"):
        return lambda b, t, p: _read_ruby_manifest(b, t, not low.endswith(".gemspec"))
    if name == "pom.xml" or low.endswith(".pom.xml"):
        return lambda b, t, p: _read_pom(b, t)
    if name in ("build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts") or low.endswith(
        (".gradle", ".gradle.kts")
    ):
        return lambda b, t, p: _read_gradle(b, t, name)
    if name == "gradle.properties":
        return lambda b, t, p: _read_gradle_properties(b, t)
    if low.endswith(_MSBUILD_SUFFIXES):
        return lambda b, t, p: _read_msbuild(b, t, name)
    if low.endswith(".slnx"):
        return lambda b, t, p: _read_slnx(b, t)
    if low.endswith(".sln"):
        return lambda b, t, p: _read_sln(b, t)
    if low in ("phpunit.xml", "phpunit.xml.dist", "phpunit.dist.xml"):
        return lambda b, t, p: _read_phpunit(b, t)
    if name == "CMakeLists.txt" or low.endswith(".cmake"):
        return _read_cmake
    return None


def read(path: str, text: str | None) -> Manifest | None:
    """What the manifest or tool configuration at ``path`` declares (module docstring);
    ``None`` for a file no reader knows, or unread (``text`` ``None``). Never raises."""
    name = path.rsplit("/", 1)[-1]
    b = _Builder(path)
    if _LINT_NAMES.match(name):
        b.facts.add("lint-config")
    if _VERSION_TOOL_NAMES.match(name):
        b.facts.add("version-tool")
        b.add("Version", name)
    reader = _reader(name)
    if reader is None or text is None:
        return b.build() if b.facts else None
    try:
        reader(b, text[:MAX_BYTES], path)
    except (RecursionError, MemoryError, ValueError, TypeError, KeyError, AttributeError, IndexError) as exc:
        # a reader's bug or a hostile file: what was read so far stands, nothing more
        log.debug("manifest reader failed on %s: %s", path, type(exc).__name__)
    return b.build()


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
