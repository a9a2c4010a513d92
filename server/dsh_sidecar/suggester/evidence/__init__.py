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
                                      version → Version; module layout → Path; a code
                                      name (``prepare_docstring``) → Usage; doc comments
                                      (``//!``, ``///``; not Python's triple quote) → Doc;
                                      else a name → Usage
========================  ==========  =================================================

Several files searched (or, for a search of the whole tree, the files it found when they are
all manifests or tool configurations): each file votes for its intent (a manifest by the
share of its sections the words stand in), a file the result shows no hit in does not vote,
and the intent with the most votes wins (a tie goes to the more specific intent: Config is
what any configuration is when nothing more is known).

Scope rules — the call searches folders or file types: a docs root, ``--type md`` or
``*.md`` → Doc (not a definition the result found in code: a code package named like docs,
Go's ``doc``, is searched for its code); ``.github/workflows``/CI files → Config; ``changelog.d``/``.changeset`` →
Ledger; a test folder or test-file names with a pattern that is no identifier → Test.

Listing rules (``ls``, ``find``, ``fd``, ``glob``): names or folders of changelogs → Ledger,
owners/licence files → Owner, CI → Config, test files and test-runner configurations →
Test, lock files → Dependency, solution/workspace files (``*.sln``, ``settings.gradle``,
``pnpm-workspace.yaml``, ``go.work``) → Path, linter/formatter configurations → Config,
doc files → Doc.

Name rules: a definition pattern (``class X``, ``def f``, ``fn f``…) → Symbol; an identifier
(``snake_case``, ``CamelCase``, ``f(``, ``X::new``, ``m!``; an alternation of them, ``a|b``) searched across folders → Usage;
an ``UPPER_SNAKE`` name no code defines (an environment variable) → Config, unless a search
of the tree printed a result that lists no file (the name is written nowhere here: nothing
reads it). A search inside code files
that no rule decides, or of a word in code folders, weighs against Doc: a path word that names
a docs tool (``grep -n type sphinx/domains/python.py``) asks nothing about the doc pages.

Wrong guesses (:func:`wrong_guess`): a call that fails on a file or folder the workspace
does not have (``cat setup.py``, ``ls Cargo.lock``), or lists a docs folder that is missing or
holds no doc page (a listing of code only is a package, not a docs folder), hunts for
something whose canonical place *every* repository has: a missing lock file or manifest →
Dependency (the manifests), a missing docs folder → Doc (the README and top-level pages). A
listing that finds no configuration file of a tool the project configures elsewhere (an ``ls`` of named files none of which exists is such a listing, its error the empty
result; ``find -name tox.ini`` where the tools are configured in ``pyproject.toml``, a
``{jest,vitest}.config.*`` glob where a package script runs the tests, ``packages.config``
where the packages are pinned centrally) → that tool's intent (Config, Test, Dependency),
when the workspace has such a file to name. A look for one named tool's configuration
that missed where the tool is configured (``suggester/toolconfig.py``: a listing of the tool's
files that found only other configuration, a search of its section that found nothing while
another file holds that section) → that tool's intent too. A read, listing or scoped search
of any other path the workspace does not have, when the workspace has it under another name
(``evidence/missing.py``, ``suggester/meant.py``: the same name in another folder, ``test/``
for ``tests/``, ``-JsonUtf8Writer.kt`` for ``JsonUtf8Writer.kt``, the ``CMakeLists.txt`` that
mention ``gtest`` for a search of it in a missing ``cmake/``) → Test when what it meant is
tests, Symbol when it is code. A miss of anything else (CODEOWNERS, a changelog) may simply
mean the repository has none: silence.

Weights are ours (``docs/SCHEME.md`` gives the corpus figures that chose them).
"""

from __future__ import annotations

import fnmatch
import re
from typing import Final

from dsh_sidecar.lazyre import LazyPattern
from dsh_sidecar.suggester import toolconfig
from dsh_sidecar.suggester.evidence.missing import guessed as guessed
from dsh_sidecar.suggester.evidence.missing import meant as meant
from dsh_sidecar.suggester.evidence.missing import meant_intent, missing_scope
from dsh_sidecar.suggester.evidence.subject import _vote
from dsh_sidecar.suggester.evidence.vocabulary import (
    _CALL,
    _CI_NAME,
    _CONFIG_DIRS,
    _CONFIG_W,
    _DEP_MANIFEST_NAME,
    _DOC_DIRS,
    _DOC_NAME,
    _DOC_W,
    _ENV_VAR,
    _IDENT,
    _IDENTLIKE,
    _IMPORT,
    _LAYOUT_NAME,
    _LEDGER_DIRS,
    _LEDGER_NAME,
    _LEDGER_WORD,
    _LOCK_NAME,
    _OWNER_NAME,
    _OWNER_W,
    _TEST_CONFIG_NAME,
    _TEST_DIRS,
    _TEST_NAME,
    _VERSION_DECL,
    AGAINST,
    INTENT_WORDS,
    NAME,
    SCOPE,
    SUBJECT,
    Workspace,
)
from dsh_sidecar.suggester.gate import INTENTS
from dsh_sidecar.suggester.parse import Query
from dsh_sidecar.workspace import manifests

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


#: A call's or a macro's tail on a name (``f(``, ``f\(``, ``m!``, ``X::new``), dropped before the
#: symbol index is asked about it.
_CALL_SUFFIX: Final = LazyPattern(r"(\\?\(|!|::new)$")


#: An alternation in a grep pattern: ERE's ``|`` or BRE's ``\|`` (a code name holds neither,
#: so either spelling splits names in both dialects).
_ALTERNATION: Final = LazyPattern(r"\\?\|")
#: A word edge (``\b``, GNU grep's ``\<``/``\>``) or a group's bracket (``(``, BRE ``\(``)
#: around a name: regex syntax, not part of it.
_NAME_SYNTAX: Final = LazyPattern(r"\\[b<>]|^\\?\(|\\?\)$")


def _is_identifier(p: str, ws: Workspace) -> bool:
    r"""Whether pattern ``p`` is a code name, or an alternation of code names (``a|b``, BRE
    ``a\|b``, ``(a|b)``), each an identifier syntax that looks like code (snake or camel case,
    a call, ``::``, a macro ``!``; a dot escaped as the regex needs it, ``Byte\.MAX_VALUE``, is
    the dot of a dotted name) or a name the symbol index says is defined."""
    core = _NAME_SYNTAX.sub("", p.strip().strip("^$"))
    names = [a.strip().strip("^$") for a in _ALTERNATION.split(core)]
    return all(_is_name(a.replace("\\.", "."), ws) for a in names)


def _is_name(core: str, ws: Workspace) -> bool:
    """Whether ``core`` (regex syntax taken away) is one code name (:func:`_is_identifier`)."""
    if not _IDENT.match(core):
        return False
    if _IDENTLIKE.search(core):
        return True
    bare = _CALL_SUFFIX.sub("", core)
    return len(bare) >= 3 and ws.defined(bare) is True


def rules(q: Query, ws: Workspace | None = None) -> dict[str, float]:
    """``{intent: summed evidence weight}`` of ``q`` (module docstring); reads are never
    evidence (a read is where a search ends, not a new one)."""
    ws = ws or Workspace()
    if q.question:
        return _question(q, ws)
    if q.tool not in ("grep", "glob", "bash"):
        return {}
    if missing_scope(q, ws):
        return _decided("none", 0.0)  # it searches folders the workspace does not have: nothing to name
    subjects = [s for s in q.scope if s and ws.is_file(s)]
    folders = [s for s in q.scope if s not in subjects]
    folders = [f for f in folders if not f or ws.is_dir(f)]
    by_files = _files_rule(q, ws, subjects)
    if by_files is not None:
        return by_files
    if subjects and all(_code_file(s) for s in subjects):
        # inside code files whose words decide nothing (a path word like a docs tool's name,
        # `grep -n type sphinx/domains/python.py`): it asks about that code, never the doc pages
        return {**_searched_rules(q, ws, folders), "Doc": AGAINST}
    return _searched_rules(q, ws, folders)


def _searched_rules(q: Query, ws: Workspace, folders: list[str]) -> dict[str, float]:
    """The listing, scope and words rules of a call no file it searches inside decided."""
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


def _found_in_code(q: Query, ws: Workspace) -> bool:
    """Whether the call's result lists workspace files and every one is source code (by its
    extension, whatever folder it is in)."""
    found = _found(q, ws)
    return bool(found) and all(_code_file(p) for p in found)


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
    if any(toolconfig.LINT_CONFIG_NAME.search(n) for n in q.name_patterns):
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
    scoped = bool(names) or bool(folders)  # (else a search of the whole tree: no name, no folder part)
    doc_scope = (
        "markdown" in q.languages
        or "rst" in q.languages
        or (
            scoped
            and (
                any(_DOC_NAME.search(n) for n in q.name_patterns)
                or bool(set(parts) & _DOC_DIRS)
                or _in_docs(folders, ws)
            )
        )
    )
    if doc_scope and q.definition_keyword is not None and _found_in_code(q, ws):
        doc_scope = False  # a definition found in code: a code package named like docs (Go's `doc`)
    if doc_scope and not (q.languages & {"python", "javascript", "typescript", "go", "rust", "ruby", "java"}):
        found = _found(q, ws)
        if _LEDGER_WORD.search(" ".join(patterns)) or (found and all("changelog" in ws.facts(p) for p in found)):
            return _decided("Ledger", SCOPE)  # a release marker, or found only in the change ledger
        return _decided("Owner" if _OWNER_W.search(" ".join(patterns)) else "Doc", SCOPE)
    if scoped:
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
    test_scope = (bool(folders) and all(set(f.split("/")) & _TEST_DIRS for f in folders)) or (
        bool(q.name_patterns) and any(_TEST_NAME.search(n) for n in q.name_patterns)
    )
    if ident is not None:
        core = ident.strip("^$")
        if _ENV_VAR.match(core) and ws.defined(core) is False and not _found_nothing(q):
            return {"Config": NAME}
        out["Usage"] = NAME
        if folders and all(ws.code_folder(f) for f in folders) and not _DOC_W.search(" ".join(patterns)):
            out["Doc"] = AGAINST  # a name searched in the code folders: its uses, whatever the folder is called
        if test_scope or any(set(f.split("/")) & _TEST_DIRS for f in folders):
            out["Test"] = AGAINST  # a name searched in tests: its uses there, not the tests' set-up
        return out
    if test_scope:
        return {"Test": SCOPE}
    if folders and all(ws.code_folder(f) for f in folders) and q.terms and not _DOC_W.search(" ".join(patterns)):
        # a word searched in the project's code folders asks about that code, found or not (a
        # folder named like a docs tool — `grep -r X sphinx` in Sphinx — is no doc topic); found
        # in code, it asks for the code that handles it
        out["Doc"] = AGAINST
        if any(_code_file(p) for p in q.result_paths):
            out["Symbol"] = NAME
    return out


def _found_nothing(q: Query) -> bool:
    """Whether a search of the tree printed a result that lists no file (``No matches found``,
    ``No files found``): what it searched for is written nowhere here (a count is no listing)."""
    return q.matched and not q.result_paths and not q.listing and not {"wc", "uniq"} & set(q.commands)


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
        *INTENT_WORDS,
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
    # `ls a b` of files none of which exists looks for them by name as a `find -name` that found
    # nothing does (its error is the answer: not there)
    missed = q.tool == "bash" and set(q.commands) == {"ls"} and bool(names) and len(missing) == len(names)
    if not q.result_paths and ((q.listing and q.tool in ("bash", "glob") and not q.is_error) or missed):
        asked = q.name_patterns + [w for p in q.patterns for w in re.split(r"\\?\|", p) if w] + missing
        intent = _missing_config(asked, ws)
        if intent is not None:
            return intent
    intent = _tool_configured_elsewhere(q, ws)
    if intent is not None:
        return intent
    docs = [p for p in q.scope if _DOCS_FOLDER.search(p)]
    if not docs:
        return meant_intent(q, ws)  # the docs rules below are about a docs folder the call names
    if q.tool in ("grep", "glob", "bash") and all(not ws.is_dir(d) and not ws.is_file(d) for d in docs):
        return "Doc"  # a search of any tool scoped to a docs folder this workspace does not have
    listing = q.listing or (q.is_error and set(q.commands) & {"ls", "find", "tree"})
    no_pages = all(not ws.is_dir(d) or not any(_is_doc(r) for r in q.result_paths) for d in docs)
    if listing and q.tool in ("bash", "glob") and docs and no_pages and not _found_in_code(q, ws):
        return "Doc"  # a docs folder listed without doc pages (one listing only code is a package: Go's `doc`)
    return None


def _missing_config(asked: list[str], ws: Workspace) -> str | None:
    """The intent of the configuration files a listing asked for by name and did not find,
    when the project has that configuration elsewhere: a tool's (:mod:`..toolconfig` reads
    which tool a file name asks for and where the tool is configured: its own file, a section
    of a shared one) → Test for a test runner's, else Config; a test runner's set-up without a
    named tool → Test (a package script, ``[tool.pytest.ini_options]``); a dependency manifest →
    Dependency; ``None`` otherwise (the project may simply have none)."""
    intent = toolconfig.configured_elsewhere(asked, ws.with_fact)
    if intent is not None:
        return intent  # the tool is configured, in a file the call did not ask for
    if any(_TEST_CONFIG_NAME.search(n) for n in asked):
        return "Test" if ws.with_fact("test-config") else None
    if any(_DEP_MANIFEST_NAME.search(n) for n in asked):
        return "Dependency" if ws.with_fact("dependency-manifest") else None
    return toolconfig.lint_configured(asked, ws)


def _tool_configured_elsewhere(q: Query, ws: Workspace) -> str | None:
    r"""The intent of a look for one tool's configuration that did not find it where the tool
    is configured: a listing of its files by name that found only other configuration
    (``find -name pytest.ini -o -name tox.ini`` finding a ``tox.ini`` without ``[pytest]``,
    where ``pyproject.toml`` has ``[tool.pytest.ini_options]``), or a search of its section
    (``grep -rn '\[tool.pytest'``) that found nothing, where another file holds it in that
    file's form (``[tool:pytest]`` of ``setup.cfg``); ``None`` otherwise."""
    if q.tool not in ("bash", "glob", "grep"):
        return None
    if q.listing and q.result_paths and not q.is_error:
        tools = toolconfig.from_names(q.name_patterns)
    elif not q.listing and not q.result_paths and q.patterns:
        tools = toolconfig.sections(q.patterns, bare=False)
    else:
        return None
    conf = {p for p, _ in toolconfig.configuring(tools, ws.with_fact)} if tools else set()
    if not conf or conf & set(q.scope):
        return None
    found = _found(q, ws)  # (only for a call asking for a configured tool's files)
    if conf & set(found) or (q.listing and not (found and all(_configuration(p, ws) for p in found))):
        return None
    return toolconfig.intent_of(tools)


def _is_doc(path: str) -> bool:
    return path.lower().endswith((".md", ".rst", ".adoc", ".mdx", ".txt"))


def _in_docs(folders: list[str], ws: Workspace) -> bool:
    return any(f == r or f.startswith(r + "/") for f in folders for r in ws.docs_roots)


def weights(q: Query, ws: Workspace | None = None) -> dict[str, float]:
    """Alias of :func:`rules` (the classifier's input)."""
    return rules(q, ws)
