"""The compiled languages' build files: ``Cargo.toml`` (workspace members, inherited versions),
``CMakeLists.txt``/``*.cmake`` (a bounded command reader) and ``go.mod``/``go.work``.
"""

from __future__ import annotations

import posixpath
import re
from typing import Final

from dsh_sidecar.workspace.manifests.formats import parse_toml, table, walk
from dsh_sidecar.workspace.manifests.model import MAX_BYTES, Builder, first_of


def _cargo_intent(p: tuple[str, ...]) -> str:
    top = p[0] if p else ""
    key = p[1] if len(p) > 1 else ""
    if top in ("package", "workspace") and (top == "package" or key == "package"):
        k = p[1] if top == "package" else (p[2] if len(p) > 2 else "")
        return (
            first_of(
                (k == "version", "Version"),
                (k in ("authors", "license", "license-file"), "Owner"),
                (k in ("include", "exclude", "build", "links", "default-run", "workspace"), "Path"),
                (k in ("readme", "documentation", "homepage"), "Doc"),
            )
            or "Config"
        )
    if top == "workspace":
        return (
            first_of(
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


def read_cargo(b: Builder, text: str, path: str) -> None:
    data = parse_toml(text)
    if data is None:
        return
    walk(b, data, (), _cargo_intent)
    package = table(data, "package")
    workspace = table(data, "workspace")
    version = package.get("version")
    wp = table(workspace, "package")
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


def read_cmake(b: Builder, text: str, path: str) -> None:
    """Commands by name (``project(… VERSION …)``, ``add_library``, ``find_package``,
    ``add_test``…); a ``function``/``macro`` takes the intent of what its body does, and so
    do its calls (``add_fmt_test(x)`` of a function that calls ``add_test`` is Test); a
    ``file(READ|STRINGS <file> …)`` whose result feeds a version points to that file."""
    calls, funcs = _cmake_commands(b, re.sub(r"#[^\n]*", "", text[:MAX_BYTES]))
    in_test = any(p.lower() in ("test", "tests", "testing") for p in path.split("/")[:-1])
    for idx, (cmd, args) in enumerate(calls):
        intent = _cmake_call_intent(b, calls, idx, funcs)
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


def _cmake_commands(b: Builder, text: str) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """The commands of ``text`` (comments removed) with their arguments, in order, and the intent
    of each function or macro it defines (what its body does)."""
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
            # the most frequent intent, the first of them on a tie (never the hash seed's choice)
            funcs[fname] = "Test" if "Test" in found else (max(found, key=found.count) if found else "Config")
    return calls, funcs


def _cmake_call_intent(b: Builder, calls: list[tuple[str, str]], idx: int, funcs: dict[str, str]) -> str | None:
    """The intent of command ``idx`` of ``calls`` (``None``: none of its own); a version it
    declares or reads from a file is recorded in ``b``."""
    cmd, args = calls[idx]
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
                parts[1].strip('"').replace("${CMAKE_CURRENT_SOURCE_DIR}/", "").replace("${PROJECT_SOURCE_DIR}/", "")
            )
            b.point("version-declared", target)
            intent = "Version"
    elif cmd in ("function", "macro"):
        first = args.split()
        intent = funcs.get(first[0].lower()) if first else None
    return intent


def read_go_mod(b: Builder, text: str, workspace: bool) -> None:
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
        first_of(
            (directive in ("module", "use"), "Path"),
            (directive in ("require", "replace", "exclude"), "Dependency"),
            (directive == "retract", "Version"),
        )
        or "Config"
    )
