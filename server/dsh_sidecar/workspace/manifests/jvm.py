"""The JVM's build files: Maven's ``pom.xml`` (modules, parent, properties followed to where
they are used, plugins), Gradle build and settings scripts (a bounded reader of blocks),
``gradle.properties`` and version catalogs (``libs.versions.toml``).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Final

from dsh_sidecar.workspace.manifests.formats import local_name, parse_toml, walk, xml_root
from dsh_sidecar.workspace.manifests.model import LABEL, MAX_BYTES, MAX_DEPTH, Builder, first_of, tools_in


def read_catalog(b: Builder, text: str) -> None:
    """A Gradle version catalog: every table declares dependencies (libraries, their versions,
    bundles and plugins)."""
    data = parse_toml(text)
    if data is None:
        return
    walk(b, data, (), lambda p: "Dependency")
    b.facts.add("dependency-manifest")


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


def read_pom(b: Builder, text: str) -> None:
    root = xml_root(text)
    if root is None or local_name(root.tag) != "project":
        return
    used: dict[str, dict[str, float]] = {}  # property -> intents of the places that use ${it}
    props: list[tuple[str, str]] = []

    def visit(el: Any, path: tuple[str, ...], intent: str, depth: int) -> None:
        if depth > MAX_DEPTH or not b.tick():
            return
        name = local_name(el.tag)
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
    _pom_facts(b, root)


def _pom_facts(b: Builder, root: Any) -> None:
    """What the POM's top-level elements declare; a version inherited from the parent points to it."""
    top = {local_name(c.tag): c for c in root}
    if top.get("version") is not None:
        b.facts.add("manifest-version")
    elif top.get("parent") is not None:  # the version is inherited from the parent POM
        parent = {local_name(c.tag): c for c in top["parent"]}
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
    for plugin in root.iter("{*}plugin"):  # `<build><plugins>`' and `<pluginManagement>`'s plugins
        art = next((c for c in plugin if local_name(c.tag) == "artifactId"), None)
        if art is not None:
            for tool in tools_in(
                re.sub(r"(?i)(?:^maven-|-maven-plugin$|-plugin$|-maven$)", "", (art.text or "").strip())
            )[:1]:
                b.configures(tool)
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
            first_of(
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
        art = next((c for c in el if local_name(c.tag) == "artifactId"), None)
        artifact = (art.text or "").strip() if art is not None else ""
        if "dependencies" in rel and "plugin" not in rel:
            return "Dependency"
        return _plugin_intent(artifact)
    if name in _POM_PATH_LEAVES and parent in ("Config", "Path"):
        return "Path"
    if rel[1:2] == ("parent",):
        return "Version" if name == "version" else "Config"
    return parent


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


def read_gradle(b: Builder, text: str, name: str) -> None:
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
        if stmt:
            _gradle_statement(b, stmt, intent_here(), settings, not stack)

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
            _gradle_tool_block(b, head)
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


def _gradle_tool_block(b: Builder, head: str) -> None:
    """A block configuring a tool's Gradle plugin (``checkstyle {``, ``spotless {``, ``tasks.test {``,
    ``tasks.withType<Test> {``: the test task, Gradle's Surefire)."""
    low = head.lower().strip()
    if re.match(r"^(?:tasks\.)?(?:test|named\s*\(?\s*[\"']test[\"']\s*\)?|withtype\s*[(<]\s*test\b.*)$", low):
        b.configures("junit")
        return
    m = re.match(r"^([a-z][\w-]*)$", low)
    if m:
        for tool in tools_in(m.group(1))[:1]:
            b.configures(tool)


def _gradle_statement(b: Builder, stmt: str, intent: str, settings: bool, top_level: bool) -> None:
    """One statement of a Gradle script in a block of ``intent`` (``top_level``: in no block)."""
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
    defining = top_level and re.match(r"^(?:val|var|def|ext\.|project\.ext\.)?\s*[\w.]+\s*=", low)
    b.add(intent, stmt, LABEL if defining and intent == "Config" else 1.0)


def read_gradle_properties(b: Builder, text: str) -> None:
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
