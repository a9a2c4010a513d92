"""Manifest readers (workspace/manifests/): each ecosystem's files read the way its tools read
them — facts, the intent of each section's words, the files a declaration points to — and
hostile inputs (entity bombs, huge and deep documents) that must cost nothing."""

from __future__ import annotations

import pytest
from dsh_sidecar.workspace import manifests
from dsh_sidecar.workspace.content import ContentIndexer
from dsh_sidecar.workspace.facts import describe
from dsh_sidecar.workspace.fts import fts5_available
from dsh_sidecar.workspace.manifests import keyed_vote, read
from support.trees import write_tree


def intent(m: manifests.Manifest | None, *searched: str) -> str | None:
    """The intent a search for ``searched`` inside the file is read as (the best of the vote)."""
    assert m is not None
    words = [w for s in searched for w in manifests.key_paths(s) + manifests.words(s)]
    vote = keyed_vote(m.keys, words)
    return None if vote is None else max(vote, key=lambda i: vote[i])


PYPROJECT = """\
[build-system]
requires = ["setuptools>=61", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "python-gitlab"
description = "The python wrapper for the GitLab REST and GraphQL APIs."
authors = [{name = "Gauvain Pocentek", email = "gauvain@pocentek.net"}]
maintainers = [{name = "John Villalovos"}]
requires-python = ">=3.9.0"
dependencies = ["requests>=2.32.0", "requests-toolbelt>=1.0.0"]
dynamic = ["version"]

[project.optional-dependencies]
autocompletion = ["argcomplete>=1.10.0,<3"]

[tool.setuptools.packages.find]
exclude = ["docs*", "tests*"]

[tool.setuptools.dynamic]
version = { attr = "gitlab._version.__version__" }

[tool.mypy]
files = "."
strict = true

[tool.semantic_release]
version_variables = ["gitlab/_version.py:__version__"]
commit_message = "chore: release v{version}"

[tool.semantic_release.changelog]
exclude_commit_patterns = ["chore*"]

[tool.pytest.ini_options]
xfail_strict = true
addopts = "--strict-markers"

[tool.towncrier]
directory = "changelog.d"
filename = "CHANGELOG.md"
template = "changelog.d/towncrier_template.md.jinja"
"""


def test_pyproject_sections_and_declared_version():
    m = read("pyproject.toml", PYPROJECT)
    assert m is not None
    assert m.facts == {
        "configures:mypy",
        "configures:pytest",
        "configures:semantic-release",
        "configures:setuptools",
        "configures:towncrier",
        "dependency-manifest",
        "layout-manifest",
        "lint-config",
        "manifest-authors",
        "test-config",
        "version-tool",
    }
    assert m.points == (
        ("version-declared", "gitlab/_version.py"),
        ("version-declared", "gitlab/_version/__init__.py"),
        ("changelog", "CHANGELOG.md"),
        ("ledger-declared", "changelog.d/towncrier_template.md.jinja"),
        ("ledger-declared", "changelog.d/template.rst"),
    )
    assert intent(m, "tool.setuptools.dynamic") == "Version"
    assert intent(m, "version_variables") == "Version"
    assert intent(m, "requests") == "Dependency"
    assert intent(m, "tool.pytest") == "Test"
    assert intent(m, "xfail_strict") == "Test"
    assert intent(m, "tool.mypy") == "Config"
    assert intent(m, "exclude") == "Path"
    assert intent(m, "maintainers") == "Owner"
    assert intent(m, "towncrier") == "Ledger"
    assert intent(m, "version") == "Version"


def test_pyproject_hatch_flit_and_src_layout_versions():
    hatch = read("pkg/pyproject.toml", '[tool.hatch.version]\npath = "src/pkg/__about__.py"\n')
    assert hatch is not None and hatch.points == (("version-declared", "pkg/src/pkg/__about__.py"),)
    src = read(
        "pyproject.toml",
        '[project]\nname="x"\ndynamic=["version"]\n[tool.setuptools]\npackage-dir = {"" = "src"}\n'
        '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__"}\n',
    )
    assert src is not None and src.points == (
        ("version-declared", "src/pkg.py"),
        ("version-declared", "src/pkg/__init__.py"),
    )
    flit = read(
        "pyproject.toml",
        '[build-system]\nrequires=["flit_core>=3.4"]\nbuild-backend="flit_core.buildapi"\n'
        '[project]\nname = "more-things"\ndynamic = ["version", "description"]\n',
    )
    assert flit is not None and flit.points == (
        ("version-declared", "more_things/__init__.py"),
        ("version-declared", "src/more_things/__init__.py"),
        ("version-declared", "more_things.py"),
    )
    scm = read("pyproject.toml", '[build-system]\nrequires=["hatchling","hatch-vcs"]\n[project]\ndynamic=["version"]\n')
    assert scm is not None and "version-tool" in scm.facts


def test_setup_cfg_and_tox_ini():
    cfg = read(
        "setup.cfg",
        "[metadata]\nname = six\nversion = attr: six.__version__\nauthor = Benjamin Peterson\n\n"
        "[options]\ninstall_requires =\n    requests\npy_modules = six\n\n[flake8]\nmax-line-length = 100\n\n"
        "[tool:pytest]\nminversion = 2.2.0\n",
    )
    assert cfg is not None
    assert cfg.facts == {
        "configures:flake8",
        "configures:pytest",  # `[tool:pytest]`, the section pytest reads in setup.cfg
        "dependency-manifest",
        "lint-config",
        "manifest-authors",
        "manifest-version",
        "test-config",
    }
    assert cfg.points == (
        ("version-declared", "six.py"),
        ("version-declared", "src/six.py"),
        ("version-declared", "six/__init__.py"),
        ("version-declared", "src/six/__init__.py"),
    )
    assert intent(cfg, "minversion") == "Test"
    assert intent(cfg, "max-line-length") == "Config"
    assert intent(cfg, "py_modules") == "Path"
    tox = read("tox.ini", "[tox]\nenvlist = py39,lint\n\n[testenv]\ncommands = pytest\n\n[flake8]\nignore = E501\n")
    # `commands = pytest` runs pytest; only a `[pytest]` section would configure it
    assert tox is not None and tox.facts == {"configures:flake8", "configures:tox", "lint-config"}
    assert intent(tox, "envlist") == "Config" and intent(tox, "flake8") == "Config"


def test_package_json_scripts_workspaces_and_test_config():
    m = read(
        "package.json",
        """{
  "name": "commander", "version": "14.0.0", "author": "TJ Holowaychuk",
  "license": "MIT", "type": "commonjs", "main": "./index.js",
  "exports": {".": {"require": "./index.js", "types": "./typings/index.d.ts"}},
  "workspaces": ["packages/*"],
  "scripts": {"test": "jest --config jest.config.cjs", "check:lint": "eslint .", "fix": "prettier --write ."},
  "devDependencies": {"typescript": "^5.0.4", "@types/node": "^22"},
  "eslintConfig": {"root": true}
}""",
    )
    assert m is not None
    assert m.facts == {
        "configures:eslint",  # its `eslintConfig` key
        "dependency-manifest",
        "layout-manifest",
        "lint-config",
        "manifest-authors",
        "manifest-version",
        "test-config",
    }
    assert m.points == (("test-config", "jest.config.cjs"),)
    assert intent(m, "typescript") == "Dependency"
    assert intent(m, '"exports"') == "Path"
    assert intent(m, "jest") == "Test"
    assert intent(m, "workspaces") == "Path"


def test_cargo_workspace_and_inherited_version():
    root = read(
        "Cargo.toml",
        '[package]\nname = "ripgrep"\nversion = "14.1.1"\nauthors = ["Andrew Gallant"]\n\n'
        '[workspace]\nmembers = ["crates/globset", "crates/grep"]\n\n'
        '[dependencies]\nbstr = "1.7.0"\ngrep = { version = "0.3.2", path = "crates/grep" }\n\n'
        '[features]\npcre2 = ["grep/pcre2"]\n\n[[test]]\nname = "integration"\n',
    )
    assert root is not None
    assert root.facts == {"dependency-manifest", "layout-manifest", "manifest-authors", "manifest-version"}
    assert intent(root, "bstr") == "Dependency"
    assert intent(root, "members") == "Path"
    assert intent(root, "[features]") == "Config"
    assert intent(root, "integration") == "Test"
    assert intent(root, "version") is None  # the package's and a dependency's: tells nothing on its own
    member = read("crates/grep/Cargo.toml", '[package]\nname = "grep"\nversion.workspace = true\n')
    assert member is not None and member.points == (
        ("version-declared", "crates/Cargo.toml"),
        ("version-declared", "Cargo.toml"),
    )


def test_go_mod():
    go = read("go.mod", "module github.com/go-chi/chi/v5\n\ngo 1.20\n\nrequire (\n\tgolang.org/x/net v0.1.0\n)\n")
    assert go is not None and go.facts == {"dependency-manifest", "layout-manifest"}
    assert intent(go, "golang.org/x/net") == "Dependency" and intent(go, "module") == "Path"


@pytest.mark.parametrize(
    "name, text, version_file, dependency",
    [
        (
            "setup.py",
            'from setuptools import setup\nimport re\nv = re.search("x", open("pkg/__version__.py").read())\n'
            "setup(\n    name='pkg',\n    version=v,\n    install_requires=['idna', 'certifi'],\n"
            "    packages=['pkg'],\n    author='Kenneth',\n)\n",
            "pkg/__version__.py",
            "certifi",
        ),
        (
            "sinatra.gemspec",
            "version = File.read(File.expand_path('VERSION', __dir__)).strip\n"
            "Gem::Specification.new 'sinatra', version do |s|\n  s.authors = ['Blake Mizerany']\n"
            "  s.add_dependency 'rack', '>= 3.0'\n  s.files = Dir['lib/**/*.rb']\nend\n",
            "VERSION",
            "rack",
        ),
    ],
    ids=["setup.py", "gemspec"],
)
def test_a_manifest_reading_its_version_from_another_file(name, text, version_file, dependency):
    m = read(name, text)
    assert m is not None
    assert m.facts == {"dependency-manifest", "manifest-authors", "manifest-version"}
    assert m.points == (("version-declared", version_file),)
    assert intent(m, dependency) == "Dependency"


POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.jsoup</groupId>
  <artifactId>jsoup</artifactId>
  <version>1.22.2-SNAPSHOT</version>
  <modules><module>extras</module></modules>
  <properties>
    <junit.version>5.10.2</junit.version>
    <failsafe.excludedGroups>long-running</failsafe.excludedGroups>
  </properties>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId>
        <configuration><argLine>-Xss640k</argLine></configuration>
      </plugin>
      <plugin>
        <artifactId>maven-failsafe-plugin</artifactId>
        <configuration><excludedGroups>${failsafe.excludedGroups}</excludedGroups></configuration>
      </plugin>
      <plugin>
        <groupId>org.codehaus.mojo</groupId>
        <artifactId>build-helper-maven-plugin</artifactId>
        <executions><execution><id>add-java11-sources</id>
          <configuration><sources><source>src/main/java11</source></sources></configuration>
        </execution></executions>
      </plugin>
    </plugins>
  </build>
  <dependencies>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <version>${junit.version}</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <developers>
    <developer><id>jhy</id><name>Jonathan Hedley</name></developer>
  </developers>
</project>
"""


def test_pom_sections_properties_followed_to_their_use_and_parent_version():
    m = read("pom.xml", POM)
    assert m is not None
    assert m.facts == {
        "configures:failsafe",
        "configures:surefire",
        "dependency-manifest",
        "layout-manifest",
        "manifest-authors",
        "manifest-version",
        "test-config",
    }
    assert intent(m, "<developers>") == "Owner"
    assert intent(m, "argLine") == "Test"
    assert intent(m, "maven-failsafe-plugin") == "Test"
    assert intent(m, "excludedGroups") == "Test"  # a property means what its use means
    assert intent(m, "junit.version") == "Dependency"
    assert intent(m, "junit-jupiter") == "Dependency"
    assert intent(m, "java11") == "Path"
    assert intent(m, "<module>") == "Path"
    child = read(
        "extras/pom.xml", "<project><parent><artifactId>jsoup</artifactId><version>1</version></parent></project>"
    )
    assert child is not None and child.points == (("version-declared", "pom.xml"),)


def test_gradle_build_settings_properties_and_catalog():
    build = read(
        "retrofit/build.gradle",
        """plugins { id 'java-library' }
def testJdk = providers.gradleProperty('testJdk')
version = VERSION_NAME
dependencies {
  api libs.okhttp
  testImplementation libs.junit
}
tasks.withType(Test).configureEach {
  javaLauncher = javaToolchains.launcherFor { languageVersion = JavaLanguageVersion.of(testJdk) }
}
sourceSets {
  main { java.srcDir 'src/main/java11' }
}
publishing { publications { maven { pom { developers { developer { id = 'square' } } } } } }
""",
    )
    assert build is not None
    assert build.facts == {
        "configures:junit",
        "dependency-manifest",
        "manifest-authors",
        "manifest-version",
        "test-config",
    }
    assert build.points == (
        ("version-declared", "retrofit/gradle.properties"),
        ("version-declared", "gradle.properties"),
        ("dependency-manifest", "gradle/libs.versions.toml"),
    )
    assert intent(build, "testJdk") == "Test"
    assert intent(build, "okhttp") == "Dependency"
    assert intent(build, "srcDir") == "Path"
    assert intent(build, "developers") == "Owner"
    settings = read("settings.gradle.kts", 'rootProject.name = "retrofit"\ninclude(":retrofit")\n')
    assert settings is not None and settings.facts == {"layout-manifest"}
    props = read(
        "gradle.properties", "GROUP=com.squareup\nVERSION_NAME=3.1.0-SNAPSHOT\ntestJdk=17\nPOM_DEVELOPER_ID=square\n"
    )
    assert props is not None and props.facts == {"manifest-version"}
    assert intent(props, "VERSION_NAME") == "Version" and intent(props, "testJdk") == "Test"
    assert intent(props, "POM_DEVELOPER_ID") == "Owner"
    catalog = read(
        "gradle/libs.versions.toml", '[versions]\nokhttp = "4.12.0"\n[libraries]\nokhttp = { module = "x:y" }\n'
    )
    assert catalog is not None and catalog.facts == {"dependency-manifest"}
    assert intent(catalog, "okhttp") == "Dependency"


def test_msbuild_groups_by_what_their_packages_are_for():
    common = read(
        "eng/Common.props",
        "<Project><PropertyGroup><LangVersion>latest</LangVersion></PropertyGroup>"
        '<ItemGroup Label="MinVer"><PackageReference Include="MinVer" PrivateAssets="All" /></ItemGroup>'
        "<PropertyGroup><MinVerMinimumMajorMinor>8.7</MinVerMinimumMajorMinor><Authors>Polly</Authors>"
        "</PropertyGroup></Project>",
    )
    assert common is not None and common.facts == {"manifest-authors", "version-tool"}
    assert intent(common, "MinVer") == "Version"
    tests = read(
        "eng/Test.targets",
        '<Project><ItemGroup><PackageReference Include="coverlet.msbuild" />'
        '<PackageReference Include="Microsoft.NET.Test.Sdk" /><PackageReference Include="Shouldly" />'
        '<PackageReference Include="xunit" /></ItemGroup></Project>',
    )
    assert tests is not None and tests.facts == {"test-config"}
    assert intent(tests, "xunit") == "Test" and intent(tests, "Shouldly") == "Test"
    analyzers = read(
        "eng/Analyzers.targets",
        '<Project><ItemGroup Label="Analyzers"><PackageReference Include="StyleCop.Analyzers" /></ItemGroup>'
        "<PropertyGroup><RunAnalyzers>true</RunAnalyzers></PropertyGroup></Project>",
    )
    assert analyzers is not None and analyzers.facts == {"lint-config"}
    assert intent(analyzers, "StyleCop.Analyzers") == "Config"
    central = read(
        "Directory.Packages.props",
        '<Project><ItemGroup><PackageVersion Include="Shouldly" Version="4.3.0" />'
        '<PackageVersion Include="xunit" Version="2.9.3" /></ItemGroup></Project>',
    )
    assert central is not None and central.facts == {"dependency-manifest"}
    assert intent(central, "Shouldly") == "Dependency" and intent(central, "xunit") == "Dependency"
    slnx = read("Polly.slnx", '<Solution><Project Path="src/Polly.Core/Polly.Core.csproj" /></Solution>')
    assert slnx is not None and slnx.facts == {"layout-manifest"} and intent(slnx, "Polly.Core") == "Path"


def test_composer_and_phpunit():
    composer = read(
        "composer.json",
        '{"name": "guzzlehttp/guzzle", "authors": [{"name": "Michael Dowling"}],'
        '"require": {"php": "^7.2.5 || ^8.0", "guzzlehttp/psr7": "^2.7"},'
        '"autoload": {"psr-4": {"GuzzleHttp\\\\": "src/"}},'
        '"extra": {"branch-alias": {"dev-master": "7.9-dev"}},'
        '"scripts": {"test": "vendor/bin/phpunit"}}',
    )
    assert composer is not None
    assert composer.facts == {"dependency-manifest", "layout-manifest", "manifest-authors", "test-config"}
    assert intent(composer, "psr7") == "Dependency"
    assert intent(composer, "psr-4") == "Path"
    assert intent(composer, "branch-alias") == "Version"
    phpunit = read("phpunit.xml.dist", '<phpunit bootstrap="tests/bootstrap.php"><testsuites/></phpunit>')
    assert phpunit is not None and phpunit.facts == {"configures:phpunit", "test-config"}
    assert intent(phpunit, "bootstrap") == "Test"


CMAKE = """\
cmake_minimum_required(VERSION 3.8...3.28)
project(FMT CXX)
# Get version from base.h.
file(READ include/fmt/base.h base_h)
if (NOT base_h MATCHES "FMT_VERSION ([0-9]+)([0-9][0-9])([0-9][0-9])")
  message(FATAL_ERROR "Cannot get FMT_VERSION from base.h.")
endif ()
add_library(fmt src/format.cc ${FMT_HEADERS})
find_package(Threads)
enable_testing()
add_subdirectory(test)
"""


def test_cmake_version_read_from_a_header_and_functions_that_add_tests():
    m = read("CMakeLists.txt", CMAKE)
    assert m is not None
    assert m.facts == {"dependency-manifest", "layout-manifest", "test-config"}
    assert m.points == (("version-declared", "include/fmt/base.h"),)
    assert intent(m, "add_library(fmt ") == "Path"
    assert intent(m, "find_package") == "Dependency"
    tests = read(
        "test/CMakeLists.txt",
        "function (add_fmt_test name)\n  add_executable(${name} ${name}.cc)\n  add_test(NAME ${name} COMMAND ${name})\n"
        "endfunction ()\nadd_fmt_test(args-test)\nadd_fmt_test(chrono-test)\n",
    )
    assert tests is not None and "test-config" in tests.facts
    assert intent(tests, "add_fmt_test") == "Test"
    facts, _ = describe("include/fmt/base.h", "source", "#define FMT_VERSION 120201\n")
    assert facts == {"version-module"}


def test_lint_and_version_tool_files_by_name_and_requirements():
    assert read(".php-cs-fixer.dist.php", None) == manifests.Manifest(
        frozenset({"configures:php-cs-fixer", "lint-config"})
    )
    assert read("README.md", "# x\n") is None
    bump = read(".bumpversion.cfg", None)
    assert bump is not None and bump.facts == {"version-tool"}
    req = read("support/doc-requirements.txt", "mkdocs==1.6.1\n-r base-requirements.txt\n")
    assert req is not None and req.facts == {"dependency-manifest"}
    assert req.points == (("dependency-manifest", "support/base-requirements.txt"),)
    assert intent(req, "mkdocs") == "Dependency"


@pytest.mark.skipif(not fts5_available(), reason="this Python's SQLite has no FTS5")
def test_content_index_follows_declarations_and_keeps_section_words(tmp_path):
    root = tmp_path / "ws"
    files = {
        "pyproject.toml": '[project]\nname = "pkg"\ndynamic = ["version"]\n'
        '[tool.setuptools.dynamic]\nversion = {attr = "pkg.__version__.VERSION"}\n',
        "pkg/__init__.py": "from .core import x\n",
        "pkg/__version__.py": 'VERSION = "1.0"\n',
        "pkg/core.py": "x = 1\n",
    }
    write_tree(root, files)
    ix = ContentIndexer(root, tmp_path / "home")
    ix.start(sorted(files))
    assert ix.wait(60) and ix.ready
    assert ix.with_fact("version-declared") == ["pkg/__version__.py"]  # the module that exists
    assert ix.fact_of["pkg/__version__.py"] == {"version-declared", "version-module"}
    assert ix.keys("pyproject.toml")["tool.setuptools.dynamic"] == {"Version": 1.0}
    assert ix.keys("pkg/core.py") is None
    # the manifest now reads the version from a file: the module loses the fact, the file gains it
    seen: list[object] = []
    ix.on_ready = lambda _ix, changes: seen.append(changes)
    (root / "VERSION").write_text("2.0\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "pkg"\n[tool.setuptools.dynamic]\nversion = {file = "VERSION"}\n'
    )
    ix.refresh(["pyproject.toml", "VERSION"], ["pyproject.toml", "VERSION"])
    assert ix.wait(60)
    assert seen == [
        {
            "pyproject.toml": frozenset({"configures:setuptools"}),
            "VERSION": frozenset({"version-declared"}),
            "pkg/__version__.py": frozenset({"version-module"}),
        }
    ]
    assert ix.with_fact("version-declared") == ["VERSION"]
    # a restart loads the points and derives the same facts
    again = ContentIndexer(root, tmp_path / "home")
    assert again.with_fact("version-declared") == ["VERSION"]
    ix.close()
    again.close()


@pytest.mark.slow  # six interpreters
def test_a_cmake_functions_intent_on_a_tie_is_its_first_commands_whatever_the_hash_seed():
    """A function whose body is one Path and one Dependency command is a Path function (the
    first of the tied intents), in every interpreter: the choice came from a set's order."""
    import os
    import subprocess
    import sys

    code = (
        "from dsh_sidecar.workspace.manifests.model import Builder\n"
        "from dsh_sidecar.workspace.manifests.native import _cmake_commands\n"
        "text = 'function(setup x)\\n  add_library(x a.c)\\n  find_package(Y)\\nendfunction()\\n'\n"
        "print(_cmake_commands(Builder('CMakeLists.txt'), text)[1]['setup'])\n"
    )
    seen = set()
    for seed in ("0", "1", "2", "3", "4", "5"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        seen.add(
            subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
        )
    assert seen == {"Path\n"}
