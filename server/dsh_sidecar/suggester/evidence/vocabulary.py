"""What the structural evidence rules recognise: their weights, the words and file names of each
intent, and what they read of the workspace (:class:`Workspace`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester.parse import Query

#: Weight of a subject rule for its intent.
SUBJECT: Final = 3.0
#: Weight a subject rule adds to every other intent.
AGAINST: Final = -3.0
#: Weight of a scope or listing rule.
SCOPE: Final = 2.4
#: Weight of a name rule (definition → Symbol, identifier → Usage, env var → Config).
NAME: Final = 2.0

_LEDGER_W = LazyPattern(r"(?i)towncrier|changelog|changeset|unreleased|release[-_ ]?notes|^#+\s|\^#")
#: Words of the change ledger itself (a release marker searched in prose is a ledger question).
_LEDGER_WORD = LazyPattern(r"(?i)towncrier|changelog|changeset|unreleased|release[-_ ]?notes|next[-_ ]release")
_OWNER_W = LazyPattern(
    r"(?i)\b(authors?|maintainers?|copyright|licen[cs]es?|owners?|contributors?|developers?|email)\b|@[a-z]"
)
_VERSION_W = LazyPattern(r"(?i)(^|[^a-z-])_*version_*\b|html_root_url|\bbump\b|#:version")
_DEP_W = LazyPattern(
    r"(?i)dependenc|\brequires?\b|install_requires|add_(?:runtime_|development_)?dependency|^\s*gem\b|\bgem '"
    r"|extras_require|dependency-groups|\bdeps\b|^name = \"|^\s*/?[\w@.-]+@|\bimport\b.*\bfrom\b"
)
_TEST_W = LazyPattern(
    r"(?i)\btest(s|paths|_|\b)|pytest|\bava\b|jest|vitest|mocha|filterwarnings|\bspec\b|fixture|coverage"
)
_PATH_W = LazyPattern(
    r"(?i)\bpackages?\b|package[-_]dir|\bmembers\b|workspaces?\b|\"paths\"|\bpaths\b|exports|\.files\b|outDir|rootDir"
    r"|\binclude\b|\bmodule\b|\bpath:|baseUrl|hatch\.build|find_packages|\bmain\b|^\s*\^?mod\b|pub mod|/v\d+\b"
)
_CONFIG_W = LazyPattern(
    r"(?i)\btool\b|\[tool|ruff|lint|\bxo\b|eslint|prettier|features|rust-version|edition|config|settings|mypy"
    r"|black|isort|flake8|fmt|target|envlist|testenv|matrix|ruby-version|go-version|cargo|layout|style|allcops"
)
_DOC_W = LazyPattern(r"^\^?//!|^\^?///|\"\"\"|^\^?#+\s|docstring|\bdocs?\b")
#: Doc words searched inside a code file: its doc comments (``//!``, ``///``), ``docstring``,
#: ``docs``. Not Python's ``"""``: it opens every docstring and multi-line string of the file, so
#: a search of it in one file walks that file's own functions (their bounds), never its doc pages.
_DOC_COMMENT = LazyPattern(r"^\^?//!|^\^?///|^\^?#+\s|docstring|\bdocs?\b")
_DEP_KEY = LazyPattern(r"^\^?\s*\"?[A-Za-z0-9_.@/-]+\"?\s*(?:=|:)\s*\"?$")
_IDENT = LazyPattern(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*(?:\\?\(|!|::new)?$")
#: (``[A-Z][A-Z][a-z]`` is found in exactly the texts ``[A-Z]{2,}[a-z]`` is, which tried at each position
#: read a run of capitals to its end: quadratic in it)
_IDENTLIKE = LazyPattern(r"[a-z0-9][A-Z]|[A-Z][A-Z][a-z]|[A-Za-z0-9]_[A-Za-z0-9]|\\?\(|::|!$")
_CALL = LazyPattern(r"(?:^|\bnew\s+)[A-Za-z_][A-Za-z0-9_.:]*\\?\($|\bnew\s+[A-Z]\w+")
_VERSION_DECL = LazyPattern(
    r"(?i)__version__|\bversion\s*\\?[:=]|\bVERSION\s*=|\"version\"|^\^version"
    r"|<(?:version|VersionPrefix|AssemblyVersion|FileVersion)\\?>|#?\bdefine\s+\w*_VERSION\b"
)
_CONFIG_DIRS: Final = frozenset({".github", ".cargo", ".circleci", ".devcontainer", ".vscode", ".husky", ".config"})
_IMPORT = LazyPattern(r"^\^?\s*(?:import\s+\w|from\s+[\w.]+\s+import\b|use\s+\w|require\()")
_ENV_VAR = LazyPattern(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_MOD_LAYOUT = LazyPattern(r"(?i)\^?(?:pub )?mod\b|\bimport\b|__all__|^\^?from\b|\bexports?\b|require\(")
_LEDGER_NAME = LazyPattern(
    r"(?i)(?:^|[/*{,])(?:change[-_]?log|changes|history|news|release[-_]?notes)|changelog\.d|\.changeset"
)
_OWNER_NAME = LazyPattern(r"(?i)(?:^|[/*{,])(?:codeowners|owners|maintainers|authors|contributors|licen[cs]e|copying)")
_CI_NAME = LazyPattern(
    r"(?i)\.github/workflows|\.gitlab-ci|\.circleci|azure-pipelines|\.travis|jenkinsfile|\.buildkite"
)
_DOC_NAME = LazyPattern(r"(?i)\*\.(?:md|rst|adoc|mdx)$|(?:^|/)readme|(?:^|/)docs?(?:/|$)")
_TEST_NAME = LazyPattern(
    r"(?i)(?:^|[/*])(?:test_|tests?/|spec/|__tests__)|_test\b|\.test\.|\.spec\.|_spec\b|\*test\*|[-_]test\.c\w*$"
    r"|(?-i:[a-z*](?:Tests?|IT|Spec)\.(?:java|kt|kts|cs|fs|vb|scala|groovy|swift|php)$)"
)
#: Configuration files of test runners (a listing of them asks for the tests' set-up).
_TEST_CONFIG_NAME = LazyPattern(
    r"(?i)(?:^|[/*{,])(?:jest|vitest|karma|playwright|cypress|ava|wdio)\.config\b|(?:^|[/*{,])(?:pytest\.ini|conftest\.py"
    r"|\.mocharc|phpunit\.xml|\.rspec|\.coveragerc|codecov\.ya?ml|jest|vitest|pytest|phpunit|karma)(?:$|[.,}*])"
)
#: Files that list a solution's or workspace's projects.
_LAYOUT_NAME = LazyPattern(
    r"(?i)(?:^|[/*{,])[\w*.-]*\.slnx?\*?$|\.sln\*?$|(?:^|[/*{,])(?:settings\.gradle(?:\.kts)?|pnpm-workspace\.ya?ml"
    r"|go\.work|lerna\.json|nx\.json|rush\.json|turbo\.json)(?:$|[,}*])"
)
#: Dependency manifests of one ecosystem or another (a miss of one hunts for the dependencies).
_DEP_MANIFEST_NAME = LazyPattern(
    r"(?i)(?:^|[/*{,])(?:packages\.config|paket\.dependencies|directory\.packages\.props|requirements[\w.-]*\.txt"
    r"|pipfile|gemfile|vcpkg\.json|conanfile\.(?:txt|py)|libs\.versions\.toml)(?:$|[,}*])"
)
_LOCK_NAME = LazyPattern(r"(?i)\.lock$|lock\.json$|lock\.ya?ml$|go\.sum$")
_DOC_DIRS: Final = frozenset({"docs", "doc", "documentation", "website", "guide", "guides", "manual", "book"})
_TEST_DIRS: Final = frozenset({"tests", "test", "spec", "specs", "__tests__", "testing", "testdata", "e2e"})
_LEDGER_DIRS: Final = frozenset({"changelog.d", ".changeset", "changes", "newsfragments", "changelog"})


@dataclass
class Workspace:
    """What the rules read of the workspace (repo-relative paths); every field has a safe
    default so the rules run without a workspace too."""

    is_file: Callable[[str], bool] = lambda p: False
    is_dir: Callable[[str], bool] = lambda p: True
    kind: Callable[[str], str] = lambda p: "other"
    facts: Callable[[str], frozenset[str]] = lambda p: frozenset()
    defines: Callable[[str, str], bool] = lambda path, name: False
    defined: Callable[[str], bool | None] = lambda name: None
    definitions: Callable[[str], list[str]] = lambda name: []
    docs_roots: frozenset[str] = field(default_factory=frozenset)
    code_folder: Callable[[str], bool] = lambda p: False
    #: the section words of a manifest (``workspace/manifests/``), ``None`` when unknown
    keys: Callable[[str], Mapping[str, Mapping[str, float]] | None] = lambda p: None
    #: the files with a fact (``workspace/facts.py``), the project's own first
    with_fact: Callable[[str], list[str]] = lambda fact: []
    #: the listed files a missing file most likely meant (``meant.files_meant``), best first
    #: the listed files of a basename
    named: Callable[[str], list[str]] = lambda name: []
    files_meant: Callable[[str], list[str]] = lambda path: []
    #: the listed folders a missing folder most likely meant (``meant.folders_meant``), best first
    folders_meant: Callable[[str], list[str]] = lambda path: []
    #: the listed files at or below a folder (at most ``meant.MAX_UNDER``), in listing order
    files_under: Callable[[str], list[str]] = lambda folder: []
    #: the content index's matches of any of the words, best first (at most ``meant.MAX_SEARCHED``)
    search: Callable[[list[str]], list[str]] = lambda words: []


def _words(q: Query) -> str:
    """The call's searched words, one string (patterns, jq keys and comment-free text)."""
    return " ".join(q.patterns + q.keys)


#: The words that name an intent themselves, in the order they are tried, whatever file or
#: section they stand in: the subject rule's manifest ladder (before its Config catch-all), the
#: file vote's test for a named intent, and the words rule's ladder (before Config and Doc).
#: ``version`` in a Cargo.toml is Version even though every dependency there has a version too.
INTENT_WORDS: Final = (
    ("Ledger", _LEDGER_W),
    ("Owner", _OWNER_W),
    ("Version", _VERSION_W),
    ("Dependency", _DEP_W),
    ("Test", _TEST_W),
    ("Path", _PATH_W),
)
