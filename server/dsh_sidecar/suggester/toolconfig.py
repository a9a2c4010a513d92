r"""Where a named tool's configuration lives, read the way the tool reads it.

A call that asks for one tool's configuration — by the tool's own file name (``ruff.toml``,
``.eslintrc*``, ``{jest,vitest}.config.*``, ``pytest.ini``), by its section (``tool.ruff``,
``\[tool.pytest``, ``^\[flake8\]``, ``tool:pytest``) or by the bare name searched inside
configuration — is answered with the files that hold that tool's section
(``workspace/manifests/``: the ``configures:<tool>`` facts of ``[tool.<name>]`` in
``pyproject.toml``, ``[tool:pytest]``/``[flake8]``/``[mypy]`` of ``setup.cfg``,
``[pytest]``/``[flake8]``/``[testenv]`` of ``tox.ini``, a ``package.json``'s ``jest``/
``eslintConfig``/``prettier`` key, a POM's or Gradle script's plugin, the tool's own file),
first; then the intent's other targets that mention the tool (a CI workflow or the pre-commit
hooks running it: content-index lookups of the tool's name, no file read); an unrelated
target (a workflow that never runs it) is not named.

The configuration files a tool shares with others (``setup.cfg``, ``tox.ini``,
``pyproject.toml``, ``package.json``…) name the tool only when nothing else the call asks
for does (``find -name pytest.ini -o -name setup.cfg -o -name tox.ini`` asks for pytest's).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, Protocol

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.candidates import Target
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.suggester.ports import ContentView
from dsh_sidecar.workspace import manifests


class Workspace(Protocol):
    """What the ranking reads of the workspace (``evidence.Workspace`` has it all)."""

    @property
    def with_fact(self) -> Callable[[str], list[str]]: ...
    @property
    def keys(self) -> Callable[[str], Mapping[str, Mapping[str, float]] | None]: ...
    @property
    def facts(self) -> Callable[[str], frozenset[str]]: ...
    @property
    def kind(self) -> Callable[[str], str]: ...


#: Files several tools keep their sections in (their names name no one tool's configuration).
SHARED: Final = re.compile(
    r"(?i)(?:^|[/*{,])(?:pyproject\.toml|setup\.cfg|tox\.ini|package\.json|pom\.xml|build\.gradle(?:\.kts)?"
    r"|composer\.json|Cargo\.toml)(?:$|[,}*])"
)
#: A searched pattern naming a tool's section: a key path (``tool.ruff``), an INI header
#: (``[flake8]``, ``tool:pytest``, ``testenv``) or the bare name (``mypy``).
_SECTION: Final = re.compile(r"(?i)^\^?\[?\s*(?:tool[.:])?[\w.:-]+\]?\$?$")
#: The intents a tool's configuration is asked under.
INTENTS: Final = frozenset({"Config", "Test"})
#: The files with a fact (``evidence.Workspace.with_fact``).
WithFact = Callable[[str], list[str]]
#: Most files configuring the asked tools named, and most mentions looked up.
MAX_FILES: Final = 8
_MENTION_LIMIT: Final = 200


def asked(q: Query, missing: Sequence[str] = (), is_file: Callable[[str], bool] | None = None) -> list[str]:
    """The tools whose configuration the call asks for, in order (module docstring): from the
    file names it looks for (``missing``: names it looked for that are not there), then the
    sections its patterns name (a bare tool name only searched inside files, ``is_file``)."""
    # a tool's bare name searched inside named files (`rg phpstan Makefile`) asks how the tool is
    # set up; searched across folders it asks where the name is mentioned
    inside = bool(q.scope) and is_file is not None and all(s and is_file(s) for s in q.scope)
    return from_names([*q.name_patterns, *missing], sections(q.patterns, bare=inside))


def from_names(names: Sequence[str], also: Sequence[str] = ()) -> list[str]:
    """The tools the file names ``names`` ask for (those of shared files only when nothing
    else names a tool), then ``also``."""
    names = [n for n in names if n]
    own = [t for n in names if not SHARED.search(n) for t in manifests.tools_in(_name(n))]
    found = list(dict.fromkeys([*own, *also]))
    if not found:
        found = list(dict.fromkeys(t for n in names for t in manifests.tools_in(_name(n))))
    return found


def sections(patterns: Sequence[str], bare: bool = True) -> list[str]:
    """The tools whose sections searched ``patterns`` name: a key path (``tool.ruff``), an INI
    header (``[flake8]``, ``tool:pytest``) and, when ``bare``, a tool's bare name (``mypy``)."""
    out: list[str] = []
    for p in patterns:
        if not bare and not _HEADER.search(p.replace("\\", "")):
            # no alternative can hold a section's spelling: each is a run of this text (escapes
            # undone), so a header in one would be found in the whole (most searches: no split)
            continue
        for alt in re.split(r"\\?\||\s+-e\s+", p):
            alt = alt.replace("\\", "").strip()  # regex escapes undone: `\[tool\.ruff` is `[tool.ruff`
            if not alt or not _SECTION.match(alt):
                continue
            if not bare and not _HEADER.search(alt):
                continue
            out += manifests.tools_in(alt)
    return list(dict.fromkeys(out))


#: A section's spelling, not a bare word: ``tool.x``, ``tool:x``, ``[x``.
_HEADER: Final = re.compile(r"(?i)tool[.:]\w|\[\s*\w")


def _name(pattern: str) -> str:
    return pattern.rstrip("/").rsplit("/", 1)[-1]


def configuring(tools: Iterable[str], with_fact: WithFact) -> list[tuple[str, str]]:
    """``(path, tool)`` of the files holding the configuration of ``tools``, each file once:
    per tool its own files first (``ruff.toml``), then shared ones, shallower paths first."""
    out: dict[str, str] = {}
    for tool in tools:
        fact = manifests.tool_fact(tool)
        if fact is None:
            continue
        paths = with_fact(fact)[:200]
        for p in sorted(paths, key=lambda p: (SHARED.search(p) is not None, p.count("/"), p)):
            out.setdefault(p, tool)
    return list(out.items())[:MAX_FILES]


#: Configuration files of linters, formatters and type checkers (by name).
LINT_CONFIG_NAME = LazyPattern(
    r"(?i)(?:^|[/*{,|.])(?:eslint|prettier|stylelint|biome|ruff|flake8|pylint|mypy|isort|black|setup\.cfg|tox\.ini"
    r"|rubocop|golangci|rustfmt|clippy|clang-format|clang-tidy|editorconfig|php-cs-fixer|phpstan|psalm|phpcs"
    r"|checkstyle|detekt|swiftlint|stylecop|tsconfig|pre-commit-config|oxlint|oxfmt|mkdocs|readthedocs|doxyfile"
    r"|docusaurus\.config|typedoc|renovate|dependabot)\b"
)
#: Files that hold the settings of several Python tools (a miss of one: they are elsewhere).
_TOOL_CONTAINER = re.compile(r"(?i)(?:^|[/*{,])(?:setup\.cfg|tox\.ini)(?:$|[,}*])")
#: Most files whose section words a missing tool configuration is looked for in.
_TOOL_FILES: Final = 30


def configured_elsewhere(names: Sequence[str], with_fact: WithFact) -> str | None:
    """The intent of configuration files asked for by name and not found (``names``), when the
    tools they name (:func:`from_names`) are configured in files of the workspace
    (:func:`configuring`): Test for a test runner's, else Config; ``None`` otherwise."""
    named = from_names(names)
    return intent_of(named) if named and configuring(named, with_fact) else None


def lint_configured(names: Sequence[str], ws: Workspace) -> str | None:
    """Config when the linters' or formatters' files asked for by name and not found
    (``names``, :data:`LINT_CONFIG_NAME`) name a tool configured in another file of the
    workspace (its name, or a manifest's section words: ``[flake8]`` of ``tox.ini``), or name a
    Python tools' file (``setup.cfg``, ``tox.ini``) where the tools are configured in a manifest
    (``pyproject.toml``); ``None`` otherwise."""
    configured = ws.with_fact("lint-config")[:_TOOL_FILES]
    if not configured:
        return None
    if any(_TOOL_CONTAINER.search(n) for n in names) and any(manifests.is_manifest_name(p) for p in configured):
        return "Config"
    tools = {m.group(0).lower().lstrip("/*{,|.") for n in names for m in LINT_CONFIG_NAME.finditer(n)}
    tools = {t for t in tools if t in manifests.LINT_TOOLS}
    for path in configured:
        name = path.rsplit("/", 1)[-1].lower()
        if any(t in name for t in tools):
            return "Config"
        keys = ws.keys(path) if tools and manifests.is_manifest_name(path) else None
        if keys and any((keys.get(t) or {}).get("Config") for t in tools):
            return "Config"
    return None


def intent_of(tools: Iterable[str]) -> str:
    """Test for a test runner's configuration (pytest, jest, Surefire…), else Config."""
    return "Test" if any(t in manifests.TEST_TOOLS for t in tools) else "Config"


def section(path: str, tool: str, keys: Mapping[str, object] | None) -> str:
    """Where in ``path`` the tool reads its settings, for the note's reason: ``[tool.ruff]``,
    ``[tool.pytest.ini_options]``, ``[tool:pytest]``, ``[flake8]``, ``"jest" key``; ``""`` for
    the tool's own file."""
    name = path.rsplit("/", 1)[-1].lower()
    if name == "pyproject.toml":
        if tool == "pytest" and keys is not None and "tool.pytest.ini_options" in keys:
            return "[tool.pytest.ini_options]"
        return f"[tool.{tool}]"
    if name in ("setup.cfg", "tox.ini"):
        if tool == "coverage":
            return "[coverage:*]"
        if tool == "tox":
            return "[tox:tox]" if name == "setup.cfg" else "[tox] and [testenv]"
        return "[tool:pytest]" if tool == "pytest" and name == "setup.cfg" else f"[{tool}]"
    if name == "package.json":
        key = {"eslint": "eslintConfig"}.get(tool, tool)
        return f'the "{key}" key'
    if name == "pom.xml" or name.endswith((".gradle", ".gradle.kts")):
        return f"its {tool} plugin"
    return ""


def reason(path: str, tool: str, keys: Mapping[str, object] | None) -> str:
    """The note's reason for a file configuring ``tool``."""
    where = section(path, tool, keys)
    return f"{tool}'s configuration ({where})" if where else f"{tool}'s own configuration file"


def mentioning(tools: Sequence[str], paths: Sequence[str], ws: Workspace, content: ContentView | None) -> set[str]:
    """Of ``paths``, those that name one of ``tools``: a manifest whose section words hold the
    tool's name (a ``package.json`` script running ``jest``), else a file the content index
    finds by that name (a CI workflow or hook that runs it); index lookups, no file read."""
    words = [max(ws_, key=len) for ws_ in (_words(t) for t in tools) if ws_]
    if not words or not paths:
        return set()
    out = {p for p in paths if (keys := ws.keys(p)) is not None and any(w in keys for w in words)}
    rest = set(paths) - out
    if rest and content is not None and content.ready:
        for word in words:  # the name's most telling word (`commit` of pre-commit, `fixer` of php-cs-fixer)
            out |= {p for p, _ in content.search([word], _MENTION_LIMIT) if p in rest}
    return out


def _words(tool: str) -> list[str]:
    return [w for w in re.split(r"[^a-z0-9]+", tool) if len(w) >= 3]


def rank(
    tools: Sequence[str],
    targets: list[Target],
    ws: Workspace,
    content: ContentView | None,
    listed: Iterable[str] = (),
) -> list[Target] | None:
    """``targets`` of a question about ``tools``' configuration, the way the tools read it: the
    files configuring them first (each with where it holds the section), then the targets that
    are configuration themselves (no code or test module importing the tool) and mention a
    tool; when the call already shows a configuring file, only the configuring files (the
    question is answered: what else mentions the tool adds nothing). ``None`` when no file of
    the workspace configures the tools (the intent's own ranking stands)."""
    conf = configuring(tools, ws.with_fact)
    if not conf:
        # nothing configures the tools (`jest` run by a package script): the configuration that
        # mentions them (never a module that imports the tool), when there is some
        settings = [t for t in targets if _settings(t.path, ws)]
        named = mentioning(tools, [t.path for t in settings], ws, content)
        return [t for t in settings if t.path in named] or None
    first = [Target(p, reason(p, t, ws.keys(p)), 1.0) for p, t in conf]
    shown = set(listed)
    if any(p in shown for p, _ in conf):
        return first
    have = {t.path for t in first}
    rest = [t for t in targets if t.path not in have and _settings(t.path, ws)]
    named = mentioning(tools, [t.path for t in rest], ws, content)
    return first + [t for t in rest if t.path in named]


def settings_only(targets: list[Target], ws: Workspace) -> list[Target]:
    """Of ``targets``, the configuration (no code or test module); all of them when none is."""
    return [t for t in targets if _settings(t.path, ws)] or targets


def _settings(path: str, ws: Workspace) -> bool:
    """Whether ``path`` is configuration (a manifest, a tool's or the CI's file, a test runner's
    set-up such as ``conftest.py``), not code or a test module that merely imports a tool."""
    facts = ws.facts(path)
    if facts & _SETTINGS_FACTS:
        return True
    return "test-module" not in facts and ws.kind(path) not in ("source", "test", "code")


_SETTINGS_FACTS: Final = frozenset({"test-config", "lint-config", "ci-workflow", "ci-tests"})
