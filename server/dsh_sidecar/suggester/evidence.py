"""Structural evidence: what the *shape* of a call says about its intent, beside the pack's
regex signals (docs/SCHEME.md, "Classification: pack signals + structural evidence").

The rules read the query model (``parse/``) and the workspace (kinds and content facts of
the searched files, the symbol index): *where* the call searches is the strongest evidence
there is. Each rule adds a weight to one intent's signal sum before the gate
(``k = sigmoid(Σw + b)``, plan "The gate") — exactly like a pack signal that matched — and a
**subject** rule (the call searches inside one known kind of file) also adds
:data:`AGAINST` to every other intent, so a regex signal of a higher-priority intent cannot
win over what the file itself says (``grep -n 'rust-version' Cargo.toml`` is Config, not
Version). Priority order and thresholds are the seed's, untouched.

Subject rules — the call searches inside, or queries (``jq``/``awk``), a file ``F`` (the
intent follows ``F``'s kind, then the pattern's words; first match wins):

========================  ==========  =================================================
``F`` is                  intent      words that change it
========================  ==========  =================================================
a changelog               Ledger
a licence/owners file     Owner
a lock file               Dependency
a test module             Test
a CI workflow, config     Config      test words → Test (``grep '^test' Makefile``)
a doc page                Doc         owner words (copyright, maintainer, @handle) → Owner
a manifest                by section  the section of the words searched, read the way the
                                      ecosystem's tools read the file
                                      (``workspace/manifests/``: ``<developers>`` of a
                                      POM → Owner, a dependency's name → Dependency,
                                      ``argLine`` of Surefire → Test); words the file does
                                      not place: ledger → Ledger, owner → Owner, version →
                                      Version, dependency → Dependency, test → Test,
                                      layout (packages, members, paths, exports) → Path,
                                      else tool/config words → Config
a linter's configuration  Config
a code file               by words    definition keyword or a name ``F`` defines → Symbol;
                                      version → Version; module layout → Path; doc
                                      comments → Doc; else a name → Usage
========================  ==========  =================================================

Several files searched (or, for a search of the whole tree, the files it found when they are
all manifests or tool configurations): each file votes for its intent (a manifest by the
share of its sections the words stand in), a file the result shows no hit in does not vote,
and the intent with the most votes wins (a tie goes to the more specific intent: Config is
what any configuration is when nothing more is known).

Scope rules — the call searches folders or file types: a docs root, ``--type md`` or
``*.md`` → Doc; ``.github/workflows``/CI files → Config; ``changelog.d``/``.changeset`` →
Ledger; a test folder or test-file names with a pattern that is no identifier → Test.

Listing rules (``ls``, ``find``, ``fd``, ``glob``): names or folders of changelogs → Ledger,
owners/licence files → Owner, CI → Config, test files and test-runner configurations →
Test, lock files → Dependency, solution/workspace files (``*.sln``, ``settings.gradle``,
``pnpm-workspace.yaml``, ``go.work``) → Path, linter/formatter configurations → Config,
doc files → Doc.

Name rules: a definition pattern (``class X``, ``def f``, ``fn f``…) → Symbol; an identifier
(``snake_case``, ``CamelCase``, ``f(``, ``X::new``, ``m!``) searched across folders → Usage;
an ``UPPER_SNAKE`` name no code defines (an environment variable) → Config.

Wrong guesses (:func:`wrong_guess`): a call that fails on a file or folder the workspace
does not have (``cat setup.py``, ``ls Cargo.lock``), or lists a docs folder that is missing or
holds no doc page, hunts for something whose canonical place *every* repository has: a missing
lock file or manifest → Dependency (the manifests), a missing docs folder → Doc (the README and
top-level pages). A listing that finds no configuration file of a tool the project configures
elsewhere (``find -name tox.ini`` where the tools are configured in ``pyproject.toml``, a
``{jest,vitest}.config.*`` glob where a package script runs the tests, ``packages.config``
where the packages are pinned centrally) → that tool's intent (Config, Test, Dependency),
when the workspace has such a file to name. A miss of anything else (CODEOWNERS, a
changelog) may simply mean the repository has none: silence.

Weights are ours (``docs/SCHEME.md`` gives the corpus figures that chose them).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.workspace import manifests

#: Weight of a subject rule for its intent.
SUBJECT: Final = 3.0
#: Weight a subject rule adds to every other intent.
AGAINST: Final = -3.0
#: Weight of a scope or listing rule.
SCOPE: Final = 2.4
#: Weight of a name rule (definition → Symbol, identifier → Usage, env var → Config).
NAME: Final = 2.0

_LEDGER_W = re.compile(r"(?i)towncrier|changelog|changeset|unreleased|release[-_ ]?notes|^#+\s|\^#")
#: Words of the change ledger itself (a release marker searched in prose is a ledger question).
_LEDGER_WORD = re.compile(r"(?i)towncrier|changelog|changeset|unreleased|release[-_ ]?notes|next[-_ ]release")
_OWNER_W = re.compile(
    r"(?i)\b(authors?|maintainers?|copyright|licen[cs]es?|owners?|contributors?|developers?|email)\b|@[a-z]"
)
_VERSION_W = re.compile(r"(?i)(^|[^a-z-])_*version_*\b|html_root_url|\bbump\b|#:version")
_DEP_W = re.compile(
    r"(?i)dependenc|\brequires?\b|install_requires|add_(?:runtime_|development_)?dependency|^\s*gem\b|\bgem '"
    r"|extras_require|dependency-groups|\bdeps\b|^name = \"|^\s*/?[\w@.-]+@|\bimport\b.*\bfrom\b"
)
_TEST_W = re.compile(
    r"(?i)\btest(s|paths|_|\b)|pytest|\bava\b|jest|vitest|mocha|filterwarnings|\bspec\b|fixture|coverage"
)
_PATH_W = re.compile(
    r"(?i)\bpackages?\b|package[-_]dir|\bmembers\b|workspaces?\b|\"paths\"|\bpaths\b|exports|\.files\b|outDir|rootDir"
    r"|\binclude\b|\bmodule\b|\bpath:|baseUrl|hatch\.build|find_packages|\bmain\b|^\s*\^?mod\b|pub mod|/v\d+\b"
)
_CONFIG_W = re.compile(
    r"(?i)\btool\b|\[tool|ruff|lint|\bxo\b|eslint|prettier|features|rust-version|edition|config|settings|mypy"
    r"|black|isort|flake8|fmt|target|envlist|testenv|matrix|ruby-version|go-version|cargo|layout|style|allcops"
)
_DOC_W = re.compile(r"^\^?//!|^\^?///|\"\"\"|^\^?#+\s|docstring|\bdocs?\b")
_DEP_KEY = re.compile(r"^\^?\s*\"?[A-Za-z0-9_.@/-]+\"?\s*(?:=|:)\s*\"?$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(?:(?:::|\.)[A-Za-z_][A-Za-z0-9_]*)*(?:\\?\(|!|::new)?$")
_IDENTLIKE = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]|[A-Za-z0-9]_[A-Za-z0-9]|\\?\(|::|!$")
_CALL = re.compile(r"(?:^|\bnew\s+)[A-Za-z_][A-Za-z0-9_.:]*\\?\($|\bnew\s+[A-Z]\w+")
_VERSION_DECL = re.compile(
    r"(?i)__version__|\bversion\s*\\?[:=]|\bVERSION\s*=|\"version\"|^\^version"
    r"|<(?:version|VersionPrefix|AssemblyVersion|FileVersion)\\?>|#?\bdefine\s+\w*_VERSION\b"
)
_CONFIG_DIRS: Final = frozenset({".github", ".cargo", ".circleci", ".devcontainer", ".vscode", ".husky", ".config"})
_IMPORT = re.compile(r"^\^?\s*(?:import\s+\w|from\s+[\w.]+\s+import\b|use\s+\w|require\()")
_ENV_VAR = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_MOD_LAYOUT = re.compile(r"(?i)\^?(?:pub )?mod\b|\bimport\b|__all__|^\^?from\b|\bexports?\b|require\(")
_LEDGER_NAME = re.compile(
    r"(?i)(?:^|[/*{,])(?:change[-_]?log|changes|history|news|release[-_]?notes)|changelog\.d|\.changeset"
)
_OWNER_NAME = re.compile(r"(?i)(?:^|[/*{,])(?:codeowners|owners|maintainers|authors|contributors|licen[cs]e|copying)")
_CI_NAME = re.compile(r"(?i)\.github/workflows|\.gitlab-ci|\.circleci|azure-pipelines|\.travis|jenkinsfile|\.buildkite")
_DOC_NAME = re.compile(r"(?i)\*\.(?:md|rst|adoc|mdx)$|(?:^|/)readme|(?:^|/)docs?(?:/|$)")
_TEST_NAME = re.compile(
    r"(?i)(?:^|[/*])(?:test_|tests?/|spec/|__tests__)|_test\b|\.test\.|\.spec\.|_spec\b|\*test\*|[-_]test\.c\w*$"
    r"|(?-i:[a-z*](?:Tests?|IT|Spec)\.(?:java|kt|kts|cs|fs|vb|scala|groovy|swift|php)$)"
)
#: Configuration files of test runners (a listing of them asks for the tests' set-up).
_TEST_CONFIG_NAME = re.compile(
    r"(?i)(?:^|[/*{,])(?:jest|vitest|karma|playwright|cypress|ava|wdio)\.config\b|(?:^|[/*{,])(?:pytest\.ini|conftest\.py"
    r"|\.mocharc|phpunit\.xml|\.rspec|\.coveragerc|codecov\.ya?ml|jest|vitest|pytest|phpunit|karma)(?:$|[.,}*])"
)
#: Configuration files of linters, formatters and type checkers.
_LINT_CONFIG_NAME = re.compile(
    r"(?i)(?:^|[/*{,|.])(?:eslint|prettier|stylelint|biome|ruff|flake8|pylint|mypy|isort|black|setup\.cfg|tox\.ini"
    r"|rubocop|golangci|rustfmt|clippy|clang-format|clang-tidy|editorconfig|php-cs-fixer|phpstan|psalm|phpcs"
    r"|checkstyle|detekt|swiftlint|stylecop|tsconfig|pre-commit-config|oxlint|oxfmt|mkdocs|readthedocs|doxyfile"
    r"|docusaurus\.config|typedoc|renovate|dependabot)\b"
)
#: Files that list a solution's or workspace's projects.
_LAYOUT_NAME = re.compile(
    r"(?i)(?:^|[/*{,])[\w*.-]*\.slnx?\*?$|\.sln\*?$|(?:^|[/*{,])(?:settings\.gradle(?:\.kts)?|pnpm-workspace\.ya?ml"
    r"|go\.work|lerna\.json|nx\.json|rush\.json|turbo\.json)(?:$|[,}*])"
)
#: Dependency manifests of one ecosystem or another (a miss of one hunts for the dependencies).
_DEP_MANIFEST_NAME = re.compile(
    r"(?i)(?:^|[/*{,])(?:packages\.config|paket\.dependencies|directory\.packages\.props|requirements[\w.-]*\.txt"
    r"|pipfile|gemfile|vcpkg\.json|conanfile\.(?:txt|py)|libs\.versions\.toml)(?:$|[,}*])"
)
_LOCK_NAME = re.compile(r"(?i)\.lock$|lock\.json$|lock\.ya?ml$|go\.sum$")
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


def _words(q: Query) -> str:
    """The call's searched words, one string (patterns, jq keys and comment-free text)."""
    return " ".join(q.patterns + q.keys)


def _subject_intent(path: str, q: Query, ws: Workspace) -> str | None:
    """The subject rule's intent for searching inside ``path`` (module docstring)."""
    kind, facts = ws.kind(path), ws.facts(path)
    name = path.rsplit("/", 1)[-1]
    words = _words(q)
    if "changelog" in facts or _LEDGER_NAME.search(name):
        return "Ledger"
    if "owners" in facts or _OWNER_NAME.search(name):
        return "Owner"
    if kind == "lock":
        return "Dependency"
    if kind == "test" or "test-module" in facts:
        return "Test"
    manifest = kind == "manifest" or (manifests.is_manifest_name(path) and "ci-workflow" not in facts)
    if "lint-config" in facts and kind != "config" and not manifest:
        return "Config"  # a linter's or formatter's own configuration file (`.prettierrc.js`)
    if manifest:
        return _manifest_subject(words)
    if kind in ("config",) or "ci-workflow" in facts:
        return _config_subject(words, name)
    if kind == "doc":
        return "Owner" if _OWNER_W.search(words) else "Doc"
    if kind in ("source", "generated"):
        return _code_subject(path, q, ws, words)
    return None


def _manifest_subject(words: str) -> str:
    """The subject rule's intent inside a manifest: what the searched ``words`` name, else Config."""
    for intent, rx in (
        ("Ledger", _LEDGER_W),
        ("Owner", _OWNER_W),
        ("Version", _VERSION_W),
        ("Dependency", _DEP_W),
        ("Test", _TEST_W),
        ("Path", _PATH_W),
    ):
        if rx.search(words):
            return intent
    if _DEP_KEY.match(words.strip()) and not _CONFIG_W.search(words):
        return "Dependency"  # `ignore = `, `"left-pad":`: a package named as a key
    return "Config"


def _config_subject(words: str, name: str) -> str:
    """The subject rule's intent inside a tool's configuration or a CI workflow (file ``name``)."""
    if _TEST_W.search(words) and not _CONFIG_W.search(words):
        return "Test"
    if _PATH_W.search(words) and name.startswith(("tsconfig", "jsconfig", "pnpm-workspace")):
        return "Path"
    if _DEP_W.search(words) and name.startswith(("pnpm-workspace",)):
        return "Path"
    return "Config"


def _code_subject(path: str, q: Query, ws: Workspace, words: str) -> str | None:
    """The subject rule's intent inside a code file: the searched name's definition, an
    environment variable it reads, a version, the module layout, docs, or the name's uses."""
    ident = q.identifier
    if q.definition_keyword is not None or (ident is not None and ws.defines(path, ident)):
        return "Symbol"
    if ident is not None and _ENV_VAR.match(ident) and ws.defined(ident) is False:
        return "Config"  # an environment variable the file reads
    if _VERSION_W.search(words):
        return "Version"
    if _MOD_LAYOUT.search(words):
        return "Path"
    if _DOC_W.search(words):
        return "Doc"
    if ident is not None:
        return "Usage"
    return None


def _searched(q: Query) -> list[str]:
    """What a call searches for, as a manifest's sections are keyed: its dotted key paths,
    then its words (``manifests.key_paths``, ``manifests.words``)."""
    text = " ".join(q.patterns + q.keys)
    return manifests.key_paths(text) + manifests.words(text)


#: The words that name an intent themselves, whatever section they stand in (the manifest
#: rule's ladder without its catch-all Config): ``version`` in a Cargo.toml is Version even
#: though every dependency there has a version too.
_INTENT_WORDS: Final = (
    ("Ledger", _LEDGER_W),
    ("Owner", _OWNER_W),
    ("Version", _VERSION_W),
    ("Dependency", _DEP_W),
    ("Test", _TEST_W),
    ("Path", _PATH_W),
)


def _file_vote(path: str, q: Query, ws: Workspace) -> dict[str, float] | None:
    """What searching inside ``path`` asks for: for a manifest whose words name no intent
    themselves, the intents of the sections the searched words stand in (shares adding up to
    1); else the subject rule's one intent; ``None`` when neither says anything."""
    if manifests.is_manifest_name(path) and "changelog" not in ws.facts(path):
        words = _words(q)
        if not any(rx.search(words) for _, rx in _INTENT_WORDS):
            keys = ws.keys(path)
            vote = manifests.keyed_vote(keys, _searched(q)) if keys else None
            if vote:
                return vote
    intent = _subject_intent(path, q, ws)
    return {intent: 1.0} if intent is not None else None


def _vote(paths: list[str], q: Query, ws: Workspace) -> str | None:
    """The intent the files ``paths`` vote for (module docstring): the most votes, a tie to
    the more specific intent (Config last), then to the intents' priority order."""
    votes: dict[str, float] = {}
    for p in paths:
        for intent, share in (_file_vote(p, q, ws) or {}).items():
            votes[intent] = votes.get(intent, 0.0) + share
    if not votes:
        return None
    return min(votes, key=lambda i: (-round(votes[i], 6), i == "Config", INTENTS.index(i) if i in INTENTS else 99))


#: Kinds and facts of the files a search of the whole tree may be read by (its configuration,
#: not its code or prose).
_CONFIG_KINDS: Final = frozenset({"manifest", "config", "lock"})
_CONFIG_FACTS: Final = frozenset(
    {"lint-config", "test-config", "ci-workflow", "changelog", "owners", "dependency-manifest", "version-tool"}
)


def _configuration(path: str, ws: Workspace) -> bool:
    """Whether ``path`` is a manifest or a tool's configuration (not code, tests or prose)."""
    facts = ws.facts(path)
    if "test-module" in facts:
        return False
    return ws.kind(path) in _CONFIG_KINDS or bool(facts & _CONFIG_FACTS) or manifests.is_manifest_name(path)


def _is_identifier(p: str, ws: Workspace) -> bool:
    """Whether pattern ``p`` is a code name: identifier syntax that looks like code (snake or
    camel case, a call, ``::``, a macro ``!``) or a name the symbol index says is defined."""
    core = p.strip().strip("^$").replace("\\b", "")
    if not _IDENT.match(core):
        return False
    if _IDENTLIKE.search(core):
        return True
    bare = re.sub(r"(\\?\(|!|::new)$", "", core)
    return len(bare) >= 3 and ws.defined(bare) is True


def rules(q: Query, ws: Workspace | None = None) -> dict[str, float]:
    """``{intent: summed evidence weight}`` of ``q`` (module docstring); reads are never
    evidence (a read is where a search ends, not a new one)."""
    ws = ws or Workspace()
    if q.question:
        return _question(q, ws)
    if q.tool not in ("grep", "glob", "bash"):
        return {}
    subjects = [s for s in q.scope if s and ws.is_file(s)]
    folders = [s for s in q.scope if s not in subjects]
    if folders and all(f and not ws.is_dir(f) for f in folders) and not subjects:
        return _decided("none", 0.0)  # it searches folders the workspace does not have: nothing to name
    folders = [f for f in folders if not f or ws.is_dir(f)]
    by_files = _files_rule(q, ws, subjects)
    if by_files is not None:
        return by_files
    names = q.name_patterns + [f for f in folders if f]
    parts = [p for f in folders for p in f.split("/")]
    if q.listing or (not q.patterns and (q.name_patterns or folders)):
        return _listing_rule(q, ws, names, parts, folders)
    if not q.patterns:
        return {}
    scoped = _scope_rule(q, ws, names, parts, folders)
    if scoped is not None:
        return scoped
    return _words_rule(q, ws, folders)


def _decided(intent: str, w: float) -> dict[str, float]:
    """``intent`` with weight ``w``, and every other intent weighed against."""
    out = {intent: w}
    for other in INTENTS:
        if other != intent:
            out[other] = AGAINST
    return out


def _files_rule(q: Query, ws: Workspace, subjects: list[str]) -> dict[str, float] | None:
    """The intent the files searched in vote for (the subject rule), or, for a search of the
    tree that found only manifests and tool configurations, the files it found; ``None``
    when no file decides."""
    if subjects and (q.patterns or q.keys):
        hit = [s for s in subjects if s in q.result_paths]  # the result shows where it matched
        intent = _vote(hit or subjects, q, ws)
        if intent is not None:
            return _decided(intent, SUBJECT)
    found = _found(q, ws)
    if (
        q.patterns
        and not q.listing
        and not subjects
        and 0 < len(found) <= 10
        and all(_configuration(p, ws) for p in found)
    ):
        # a search of the tree that found only manifests and tool configurations: what it
        # names is their configuration (`rg -l junit-jupiter` → the POM's dependencies)
        intent = _vote(found, q, ws)
        if intent is not None:
            return _decided(intent, SUBJECT)
    return None


def _found(q: Query, ws: Workspace) -> list[str]:
    """The workspace files the call's result lists, each once, in order."""
    return [p for p in dict.fromkeys(q.result_paths) if ws.is_file(p)]


def _listing_rule(q: Query, ws: Workspace, names: list[str], parts: list[str], folders: list[str]) -> dict[str, float]:
    """A listing, or a search for files by name: what the names and folders it asks for say."""
    decided = _named_files_rule(q, ws, names, parts, folders)
    if decided is not None:
        return _decided(decided, SCOPE)
    if not q.name_patterns:
        return _decided("none", 0.0)  # a bare listing of any other folder asks for no intent
    if (
        all(not f or f == "." or ws.code_folder(f) for f in folders)
        and any(_specific_name(n) for n in q.name_patterns)
        and any(_code_file(p) for p in q.result_paths)
    ):
        # a module asked for by name (`find . -name introspection.py`, `*quickstart*`) in the
        # project's code, and found: the pack signals of higher intents still come first
        return {"Symbol": SCOPE}
    return {}  # files asked for by name: the packs' signals say which intent


def _named_files_rule(q: Query, ws: Workspace, names: list[str], parts: list[str], folders: list[str]) -> str | None:
    """The intent of the files a listing asks for by name or folder, ``None`` when they name none."""
    filtered = bool(q.patterns) or bool(q.name_patterns)
    if any(_LEDGER_NAME.search(n) for n in names) or set(parts) & _LEDGER_DIRS:
        return "Ledger"
    if any(_OWNER_NAME.search(n) for n in names):
        return "Owner"
    if any(_CI_NAME.search(n) for n in names) or set(parts) & _CONFIG_DIRS:
        return "Config"
    if any(_TEST_NAME.search(n) for n in q.name_patterns) or (
        filtered and (set(parts) & _TEST_DIRS or any(_TEST_NAME.search(p) for p in q.result_paths))
    ):
        return "Test"  # test files asked for by name (a bare `ls tests/` asks nothing)
    if any(_LOCK_NAME.search(n) for n in names):
        return "Dependency"
    if any(_TEST_CONFIG_NAME.search(n) for n in q.name_patterns):
        return "Test"  # the test runner's configuration
    if any(_LAYOUT_NAME.search(n) for n in q.name_patterns):
        return "Path"  # the solution's or workspace's projects
    if any(_LINT_CONFIG_NAME.search(n) for n in q.name_patterns):
        return "Config"
    if any(_DOC_NAME.search(n) for n in names) or set(parts) & _DOC_DIRS or _in_docs(folders, ws):
        return "Doc"
    return None


def _scope_rule(
    q: Query, ws: Workspace, names: list[str], parts: list[str], folders: list[str]
) -> dict[str, float] | None:
    """A search in the docs, the CI or the change ledger's folders, of a definition or of a
    version declaration: what its scope or pattern says; ``None`` when they say nothing."""
    patterns = q.patterns
    doc_scope = (
        "markdown" in q.languages
        or "rst" in q.languages
        or any(_DOC_NAME.search(n) for n in q.name_patterns)
        or bool(set(parts) & _DOC_DIRS)
        or _in_docs(folders, ws)
    )
    if doc_scope and not (q.languages & {"python", "javascript", "typescript", "go", "rust", "ruby", "java"}):
        found = _found(q, ws)
        if _LEDGER_WORD.search(" ".join(patterns)) or (found and all("changelog" in ws.facts(p) for p in found)):
            return _decided("Ledger", SCOPE)  # a release marker, or found only in the change ledger
        return _decided("Owner" if _OWNER_W.search(" ".join(patterns)) else "Doc", SCOPE)
    if any(_CI_NAME.search(n) for n in names) or set(parts) & _CONFIG_DIRS:
        return _decided("Config", SCOPE)
    if set(parts) & _LEDGER_DIRS:
        return _decided("Ledger", SCOPE)
    if q.definition_keyword is not None and q.tool in ("grep", "bash"):
        return {"Symbol": NAME}
    if any(_VERSION_DECL.search(p) for p in patterns):
        return {"Version": SCOPE}
    return None


def _words_rule(q: Query, ws: Workspace, folders: list[str]) -> dict[str, float]:
    """A search of words in the code, the tests or the tree: a code name's definition or uses,
    the tests, or the code that handles a word."""
    patterns = q.patterns
    out: dict[str, float] = {}
    ident = next((p for p in patterns if _is_identifier(p, ws)), None)
    if ident is None and any(_IMPORT.search(p) or _CALL.search(p) for p in patterns):
        ident = patterns[0]  # `import X`, `from x import`, `require(`, `new X(`, `f(`: who uses it
    if ident is not None and q.identifier is not None and _narrowed_to_definition(q, ws):
        return {"Symbol": NAME}  # searched in the very files that define it: where it is defined
    test_scope = (bool(folders) and all(set(f.split("/")) & _TEST_DIRS for f in folders)) or any(
        _TEST_NAME.search(n) for n in q.name_patterns
    )
    if ident is not None:
        core = ident.strip("^$")
        if _ENV_VAR.match(core) and ws.defined(core) is False:
            return {"Config": NAME}
        out["Usage"] = NAME
        if folders and all(ws.code_folder(f) for f in folders) and not _DOC_W.search(" ".join(patterns)):
            out["Doc"] = AGAINST  # a name searched in the code folders: its uses, whatever the folder is called
        if test_scope or any(set(f.split("/")) & _TEST_DIRS for f in folders):
            out["Test"] = AGAINST  # a name searched in tests: its uses there, not the tests' set-up
        return out
    if test_scope:
        return {"Test": SCOPE}
    if (
        folders
        and all(ws.code_folder(f) for f in folders)
        and q.terms
        and not _DOC_W.search(" ".join(patterns))
        and any(_code_file(p) for p in q.result_paths)
    ):
        # a word searched in the project's code folders, found in code: the code that handles
        # it (a folder named like a docs tool — `grep -r X sphinx` in Sphinx — is no doc topic)
        out["Symbol"] = NAME
        out["Doc"] = AGAINST
    return out


def _specific_name(pattern: str) -> bool:
    """Whether a file-name pattern names something (at least 3 letters besides its glob
    characters and extension: ``introspection.py``, ``*quickstart*``), not a mere type (``*.py``)."""
    name = pattern.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0] if "." in name.lstrip("*.") else name
    return len(re.sub(r"[^A-Za-z]", "", stem)) >= 3


def _code_file(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return "." in name and name.rsplit(".", 1)[1].lower() in _CODE_EXTENSIONS


#: Extensions of source code (the query model's languages that are code).
_CODE_EXTENSIONS: Final = frozenset(
    {"py", "pyi", "js", "jsx", "ts", "tsx", "mjs", "cjs", "go", "rs", "rb", "java", "kt", "c", "h", "cc", "cpp", "hpp"}
    | {"cs", "swift", "php", "scala", "ex", "exs", "lua", "pyx"}
)


#: What a question's words ask for, first match wins: the manifest rule's ladder (Ledger,
#: Owner, Version, Dependency, Test, Path), then CI and tool words (Config), then doc words.
_QUESTION_CI = re.compile(r"(?i)\bci\b|workflows?\b|pipelines?\b|github actions")


def _question(q: Query, ws: Workspace) -> dict[str, float]:
    """The evidence of a free-text question (``parse.parse_question``): a code name in it is
    searched like a grep pattern of that name (definition → Symbol, else Usage); otherwise its
    words decide one intent with the scope weight (and :data:`AGAINST` the others), as the
    words searched inside a manifest do."""
    out: dict[str, float] = {}
    ident = q.identifier
    words = q.text
    ladder = (
        ("Ledger", _LEDGER_W),
        ("Owner", _OWNER_W),
        ("Version", _VERSION_W),
        ("Dependency", _DEP_W),
        ("Test", _TEST_W),
        ("Path", _PATH_W),
        ("Config", _QUESTION_CI),
        ("Config", _CONFIG_W),
        ("Doc", _DOC_W),
    )
    intent = next((i for i, rx in ladder if rx.search(words)), None)
    if intent is None and ident is not None and ws.defined(ident) is not False:
        intent = "Symbol" if ws.definitions(ident) or q.definition_keyword else "Usage"
    if intent is None:
        return out
    out[intent] = SCOPE
    for other in INTENTS:
        if other != intent:
            out[other] = AGAINST
    return out


def _narrowed_to_definition(q: Query, ws: Workspace) -> bool:
    """Whether the call narrows its search to path globs (``packages/x/*.ts``) and a file
    defining the identifier matches one of them."""
    name = q.identifier
    globs = [g for g in q.name_patterns if "/" in g and not g.startswith("!")]
    if name is None or not globs:
        return False
    files = ws.definitions(name)
    return any(fnmatch.fnmatch(f, g) or fnmatch.fnmatch(f, g.replace("/*", "/**/*")) for f in files for g in globs)


_DEP_FILE = re.compile(
    r"(?i)(?:^|/)(?:[\w.-]+\.lock|go\.sum|package-lock\.json|npm-shrinkwrap\.json|pnpm-lock\.ya?ml|setup\.py"
    r"|requirements[\w.-]*\.txt|pipfile|gemfile|cargo\.toml|go\.mod|package\.json|pyproject\.toml|pom\.xml"
    r"|build\.gradle(?:\.kts)?|[\w.-]+\.gemspec)$"
)
_DOCS_FOLDER = re.compile(r"(?i)(?:^|/)(?:docs?|documentation|manual|guide)/?$")


def wrong_guess(q: Query, ws: Workspace) -> str | None:
    """The intent a wrong guess hunts for (module docstring), or ``None``."""
    names = [p for p in q.reads + q.scope + q.name_patterns if p]
    missing = [p for p in names if not ws.is_file(p) and not ws.is_dir(p)]
    if q.is_error and missing and any(_DEP_FILE.search(p) for p in missing):
        return "Dependency"
    if q.listing and not q.result_paths and q.tool in ("bash", "glob") and not q.is_error:
        asked = q.name_patterns + [w for p in q.patterns for w in re.split(r"\\?\|", p) if w]
        intent = _missing_config(asked, ws)
        if intent is not None:
            return intent
    if (q.listing or (q.is_error and set(q.commands) & {"ls", "find", "tree"})) and q.tool in ("bash", "glob"):
        docs = [p for p in q.scope if _DOCS_FOLDER.search(p)]
        if docs and all(not ws.is_dir(d) or not any(_is_doc(r) for r in q.result_paths) for d in docs):
            return "Doc"
    return None


#: Files that hold the settings of several Python tools (a miss of one: they are elsewhere).
_TOOL_CONTAINER = re.compile(r"(?i)(?:^|[/*{,])(?:setup\.cfg|tox\.ini)(?:$|[,}*])")
#: Most files whose section words a missing tool configuration is looked for in.
_TOOL_FILES: Final = 30


def _missing_config(asked: list[str], ws: Workspace) -> str | None:
    """The intent of the configuration files a listing asked for by name and did not find,
    when the project has that configuration elsewhere: a test runner's → Test (where the
    tests are set up: a package script, ``[tool.pytest.ini_options]``), a dependency manifest
    → Dependency, a linter's or formatter's → Config when that tool is configured in another
    file (``[flake8]`` of ``tox.ini``), or a Python tools' file when the tools are configured
    in ``pyproject.toml``; ``None`` otherwise (the project may simply have none)."""
    if any(_TEST_CONFIG_NAME.search(n) for n in asked):
        return "Test" if ws.with_fact("test-config") else None
    if any(_DEP_MANIFEST_NAME.search(n) for n in asked):
        return "Dependency" if ws.with_fact("dependency-manifest") else None
    configured = ws.with_fact("lint-config")[:_TOOL_FILES]
    if not configured:
        return None
    if any(_TOOL_CONTAINER.search(n) for n in asked) and any(manifests.is_manifest_name(p) for p in configured):
        return "Config"
    tools = {m.group(0).lower().lstrip("/*{,|.") for n in asked for m in _LINT_CONFIG_NAME.finditer(n)}
    tools = {t for t in tools if t in manifests.LINT_TOOLS}
    for path in configured:
        name = path.rsplit("/", 1)[-1].lower()
        if any(t in name for t in tools):
            return "Config"
        keys = ws.keys(path) if tools and manifests.is_manifest_name(path) else None
        if keys and any((keys.get(t) or {}).get("Config") for t in tools):
            return "Config"
    return None


def _is_doc(path: str) -> bool:
    return path.lower().endswith((".md", ".rst", ".adoc", ".mdx", ".txt"))


def _in_docs(folders: list[str], ws: Workspace) -> bool:
    return any(f == r or f.startswith(r + "/") for f in folders for r in ws.docs_roots)


def weights(q: Query, ws: Workspace | None = None) -> dict[str, float]:
    """Alias of :func:`rules` (the classifier's input)."""
    return rules(q, ws)
