""".NET's build files: MSBuild projects and props (``*.csproj``/``*.fsproj``/``*.vbproj``/
``*.props``/``*.targets``, central package management) and solutions (``*.sln``, ``*.slnx``).
"""

from __future__ import annotations

import re
from typing import Any, Final

from dsh_sidecar.workspace.manifests.formats import local_name, xml_root
from dsh_sidecar.workspace.manifests.model import LABEL, Builder, name_tool

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


def read_msbuild(b: Builder, text: str, name: str) -> None:
    root = xml_root(text)
    if root is None or local_name(root.tag) != "Project":
        return
    central = name == "Directory.Packages.props"
    for el in root.iter():
        if not b.tick():
            return
        tag = local_name(el.tag)
        parent = el.getparent()
        ptag = local_name(parent.tag) if parent is not None else ""
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


def _msbuild_items(b: Builder, group: Any, central: bool) -> None:
    """An ``ItemGroup``: package references are Dependency, unless most of the group's
    packages are of one kind of tool (test frameworks → Test, analyzers → Config, version
    tools → Version): a group that wires the test packages configures the tests."""
    items = [c for c in group if local_name(c.tag)][:500]
    refs = [c for c in items if local_name(c.tag) in ("PackageReference", "GlobalPackageReference", "PackageVersion")]
    kinds = [name_tool(c.get("Include") or c.get("Update") or "") for c in refs]
    label = group.get("Label") or ""
    group_intent = name_tool(label) or ("Config" if "analyzer" in label.lower() else None)
    counted = [k for k in kinds if k is not None]
    if group_intent is None and refs and len(counted) * 2 >= len(refs):
        group_intent = max(set(counted), key=counted.count)
    b.add(group_intent or "Dependency", label)
    for c, kind in zip(refs, kinds, strict=False):
        tag = local_name(c.tag)
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
        tag = local_name(c.tag)
        if tag in ("PackageReference", "GlobalPackageReference", "PackageVersion"):
            continue
        intent = "Path" if tag in _MSBUILD_ITEMS_PATH else "Dependency" if tag == "ProjectReference" else "Config"
        b.add(intent, tag, LABEL)
        b.add(intent, c.get("Include") or c.get("Update") or "")


def read_slnx(b: Builder, text: str) -> None:
    root = xml_root(text)
    if root is None:
        return
    for el in root.iter():
        if not b.tick():
            return
        b.add("Path", local_name(el.tag), LABEL)
        b.add("Path", el.get("Path") or el.get("Name") or "")
    b.facts.add("layout-manifest")


def read_sln(b: Builder, text: str) -> None:
    for m in re.finditer(r'^Project\("[^"]*"\)\s*=\s*"([^"]*)",\s*"([^"]*)"', text, re.MULTILINE):
        if not b.tick():
            return
        b.add("Path", m.group(1))
        b.add("Path", m.group(2))
    b.facts.add("layout-manifest")
