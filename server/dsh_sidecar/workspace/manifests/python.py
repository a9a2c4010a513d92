"""Python's manifests: ``pyproject.toml`` (PEP 621, build backends, dynamic versions, tool
tables), the INI files (``setup.cfg``, ``tox.ini``, ``pytest.ini``, ``.coveragerc``,
``.flake8``…), ``setup.py`` read as keyword lines (never run) and pip's requirements files.
"""

from __future__ import annotations

import configparser
import posixpath
import re
from collections.abc import Mapping
from typing import Any, Final

from dsh_sidecar.workspace.manifests.formats import parse_toml, strings, table, walk
from dsh_sidecar.workspace.manifests.model import (
    LEDGER_TOOLS,
    LINT_TOOLS,
    MAX_BYTES,
    VERSION_TOOLS,
    Builder,
    first_of,
    tools_in,
)


def _pyproject_intent(p: tuple[str, ...]) -> str:
    """The intent of a key of ``pyproject.toml`` (PEP 621, PEP 735, build backends, tools)."""
    top = p[0] if p else ""
    key = p[1] if len(p) > 1 else ""
    if top == "project":
        return (
            first_of(
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
    return _tool_intent(key.lower(), p)


def _tool_intent(tool: str, p: tuple[str, ...]) -> str:
    """The intent of a key of ``pyproject.toml``'s ``[tool.<tool>]`` table (``p``: the whole key)."""
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
        return first_of((sub == "version", "Version"), (sub == "build", "Path"), (sub == "envs", "Test")) or "Config"
    if tool == "poetry":
        return (
            first_of(
                (sub == "version", "Version"),
                (sub in ("dependencies", "dev-dependencies", "group", "extras", "source"), "Dependency"),
                (sub in ("packages", "include", "exclude", "scripts", "plugins"), "Path"),
                (sub in ("authors", "maintainers", "license"), "Owner"),
            )
            or "Config"
        )
    if tool == "pdm":
        return (
            first_of((sub == "version", "Version"), (sub == "build", "Path"), ("dependencies" in sub, "Dependency"))
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


def read_pyproject(b: Builder, text: str) -> None:
    data = parse_toml(text)
    if data is None:
        return
    project = table(data, "project")
    # `dynamic = ["version"]` is about the values it names: its words follow them (below)
    walk(b, {**data, "project": {k: v for k, v in project.items() if k != "dynamic"}}, (), _pyproject_intent)
    tool = table(data, "tool")
    dynamic = project.get("dynamic") if isinstance(project.get("dynamic"), list) else []
    assert isinstance(dynamic, list)
    _project_facts(b, data, project, dynamic)
    _setuptools(b, tool)
    _version_sources(b, tool)
    _release_tools(b, tool)
    _build_backend(b, data, tool, project, dynamic)
    towncrier = tool.get("towncrier")
    if isinstance(towncrier, dict):
        _towncrier(b, towncrier)
    for t in tool:
        low = t.lower()
        if isinstance(tool[t], dict):
            b.configures(low)  # `[tool.<name>]` (pytest's `[tool.pytest.ini_options]`): where the tool reads it
        if low in LINT_TOOLS:
            b.facts.add("lint-config")
        if low in ("pytest", "coverage", "tox", "nox"):
            b.facts.add("test-config")


def _project_facts(b: Builder, data: dict[str, Any], project: dict[str, Any], dynamic: list[Any]) -> None:
    """The ``[project]`` table's facts; ``dynamic = ["version"]``'s words follow the values they name."""
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


def _setuptools(b: Builder, tool: dict[str, Any]) -> None:
    """``[tool.setuptools]``: its layout, and the files its dynamic version and dependencies name."""
    setuptools = table(tool, "setuptools")
    pkg_dir = table(setuptools, "package-dir")
    package_dir = {k: v for k, v in pkg_dir.items() if isinstance(k, str) and isinstance(v, str)}
    if setuptools.get("packages") or package_dir or setuptools.get("py-modules"):
        b.facts.add("layout-manifest")
    dyn = table(setuptools, "dynamic")
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


def _version_sources(b: Builder, tool: dict[str, Any]) -> None:
    """Hatch's, PDM's and setuptools-scm's version sources: the file they read or write, or a VCS."""
    hatch = table(tool, "hatch")
    hv = table(hatch, "version")
    if hv.get("path"):
        b.point("version-declared", hv.get("path"))
    if hv.get("source") in ("vcs", "regex_commit") or "setuptools_scm" in tool or "setuptools-scm" in tool:
        b.facts.add("version-tool")
    pdm = table(tool, "pdm")
    pv = table(pdm, "version")
    if pv.get("path"):
        b.point("version-declared", pv.get("path"))
    if pv.get("source") == "scm":
        b.facts.add("version-tool")
    for key in ("setuptools_scm", "setuptools-scm"):
        scm = tool.get(key)
        if isinstance(scm, dict):
            b.point("version-declared", scm.get("version_file") or scm.get("write_to"))


def _release_tools(b: Builder, tool: dict[str, Any]) -> None:
    """semantic-release, bumpversion, tbump and commitizen: the files whose version they bump."""
    sr = tool.get("semantic_release") or tool.get("semantic-release")
    if isinstance(sr, dict):
        b.facts.add("version-tool")
        for entry in strings(sr.get("version_variables")) + strings(sr.get("version_toml")):
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


def _build_backend(
    b: Builder, data: dict[str, Any], tool: dict[str, Any], project: dict[str, Any], dynamic: list[Any]
) -> None:
    """A dynamic version from the build backend: a VCS plugin, or flit reading the module's ``__version__``."""
    build = table(data, "build-system")
    requires = " ".join(strings(build.get("requires"))).lower()
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


def _towncrier(b: Builder, conf: Mapping[str, object]) -> None:
    """towncrier's changelog (``filename``, default ``NEWS.rst``) and its template."""
    directory = conf.get("directory")
    base = b.folder
    b.point("changelog", conf.get("filename") if isinstance(conf.get("filename"), str) else "NEWS.rst", base)
    template = conf.get("template")
    if isinstance(template, str) and ":" not in template:  # `package:file` names a package resource
        b.point("ledger-declared", template, base)
    if isinstance(directory, str):
        b.point("ledger-declared", posixpath.join(directory, "template.rst"), base)


def _declared_files(value: object) -> list[str]:
    if isinstance(value, dict):
        value = value.get("file")
    return strings(value)


def _ini_intent(section: str, key: str) -> str:
    """The intent of ``key`` in INI ``section`` (setup.cfg, tox.ini, pytest.ini, .flake8…)."""
    s = section.lower()
    k = key.lower()
    if s == "metadata":
        return (
            first_of(
                (k == "version", "Version"),
                (k.startswith(("author", "maintainer", "license")), "Owner"),
                (k in ("long_description", "url", "project_urls"), "Doc"),
            )
            or "Config"
        )
    if s == "options":
        return (
            first_of(
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


#: The tools that never read a section of a shared INI file even though it is named after them
#: (pytest rejects ``[pytest]`` in ``setup.cfg``; mypy reads no ``tox.ini``; tox reads
#: ``setup.cfg`` only as ``[tox:tox]``).
_NOT_READ: Final = {
    "setup.cfg": frozenset({"pytest:bare", "tox:bare"}),
    "tox.ini": frozenset({"mypy", "pytest:tool"}),
}


def ini_section_tool(name: str, section: str) -> str | None:
    """The tool whose settings section ``section`` (lower-cased) of the INI file ``name`` holds,
    read the way that tool reads the file: ``[tool:pytest]`` of ``setup.cfg`` and ``[pytest]``
    of ``tox.ini``/``pytest.ini`` are pytest's, ``[flake8]``/``[isort]``/``[pycodestyle]``
    their tools', ``[mypy]``/``[mypy-pkg.*]`` mypy's, ``[coverage:run]`` coverage's, ``[tox]``/
    ``[testenv…]`` (``[tox:tox]`` in ``setup.cfg``) tox's; ``None`` for any other section
    (``[metadata]``, ``[options]``, ``[bdist_wheel]``)."""
    prefixed = section.startswith("tool:")
    bare = section.removeprefix("tool:")
    head = re.split(r"[:.\s]", bare, maxsplit=1)[0]
    if head.startswith("mypy-"):
        head = "mypy"
    found = tools_in(head)
    if not found:
        return None
    tool = found[0]
    skip = _NOT_READ.get(name, frozenset())
    form = f"{tool}:tool" if prefixed else f"{tool}:bare" if ":" not in bare else f"{tool}:sub"
    if tool in skip or form in skip:
        return None
    return tool


def read_ini(b: Builder, text: str, name: str) -> None:
    cp = configparser.ConfigParser(interpolation=None, strict=False, allow_no_value=True, delimiters=("=", ":"))
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        cp.read_string(text)
    except (configparser.Error, ValueError, RecursionError):
        return
    whole_test = name in ("pytest.ini", ".coveragerc")
    for section in cp.sections()[:500]:
        s = section.lower()
        tool = ini_section_tool(name, s)
        if tool is not None:
            b.configures(tool)
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


def _setup_cfg_version(b: Builder, value: str) -> None:
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


def read_setup_py(b: Builder, text: str) -> None:
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


def read_requirements(b: Builder, text: str) -> None:
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
