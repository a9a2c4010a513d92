"""Build the data of one corpus repository from its checkout (authoring tool, not run by CI).

    python corpus/intents/build.py extract DIR --cache CACHE
    python corpus/intents/build.py facts DIR --cache CACHE
    python corpus/intents/build.py trace DIR --cache CACHE [--local GIT_DIR_PATTERN]

``extract`` writes ``paths.txt`` (every tracked regular file, sorted) and ``symbols.tsv``
(``name<TAB>kind<TAB>path<TAB>line``: definitions found by Universal Ctags in the source
languages of the corpus — Python, Go, Rust, Ruby, Java, Kotlin, C#, C/C++, PHP — and by
tree-sitter in TypeScript/JavaScript, plus ``ref`` rows: the first line of each file that
mentions a name the trace searches for, so a materialized workspace keeps who-uses-what).

``facts`` writes ``facts.yaml``: versions, changelogs, manifests (PEP 621/setuptools,
``package.json``, ``Cargo.toml``, ``go.mod``, gemspecs, Maven ``pom.xml``, Gradle scripts and
version catalogs, ``.csproj``/``Directory.*.props``/solutions, ``composer.json``,
``CMakeLists.txt``), locks, CI workflows, tool configuration, tests, docs, owners, and the
skeletons of manifest/config files (XML element names, Gradle blocks and dependency lines,
CMake commands, TOML/INI/YAML keys, a JSON key tree).

``opens`` adds to every line of ``trace.jsonl`` the repository files its call opened, searched
inside or edited (``"opens"``, in order) and the folders its result's bare names are relative to
(``"dirs"``: the folders a shell command ``cd``-ed into or listed) — the trajectories' ``opens``
and ``dirs``, read with the same shell reader (``corpus/trajectories/core.py``): what the call
showed (docs/corpus.md, "what a call showed"); ``trace`` writes them too. It needs only
``paths.txt``.

``trace`` turns the hand-written ``calls.yaml`` (tool calls and their labels) into
``trace.jsonl``: one ``{"params": <dsh/postExecute params>, "expect": …}`` per call, the
result text made by really running the search on the checkout (``bash -c`` in the work tree
for shell commands; ``git grep`` against ``--git-dir`` at the pinned commit; the Grep/Glob
tools computed the way Claude Code's tools answer) and then cut to path lines only
(``path``, ``path:line``); file contents are never kept.

``calls.yaml``: ``calls:`` a list; each item has one tool key and optional ``expect``
(``"<Intent> <target> [<target> …]"``; absent or null: no note expected), ``session``/``turn``
(sticky: they carry over to the next items), ``error: true`` for a failing call. Tool keys:
``bash``/``Bash``/``shell`` (a string, or a list for list-form commands), ``Grep``/``grep``
(an object), ``Glob``/``glob``, ``Read``/``read``/``view`` (a path or an object), ``Edit``/
``Write``/``edit``/``apply_patch`` (a path); the SWE-agent tools ``search_dir`` (a term or
``{search_term, dir}``), ``find_file`` (a name or ``{file_name, dir}``), ``search_file``
(``{search_term, file}``) and ``open`` (a path or ``{path, line_number}``), and the OpenHands
tools ``execute_bash`` (a command), ``view`` (``str_replace_editor`` ``view`` of a file, a
``{path, view_range}``, or a folder: its files two levels deep) and ``str_replace`` (a path).
Their result texts are made the way those tools answer, with paths relative to the root
(SWE-agent prints absolute ones).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))
from checkout import tree_path  # noqa: E402

from corpus.trajectories.codex import script_of  # noqa: E402
from corpus.trajectories.core import WORKDIR, dirs_of, opens_of, rel_path, segments, shell_call  # noqa: E402

#: Universal Ctags kinds kept as definitions (fields, locals, imports and parameters dropped).
KINDS = {
    "class",
    "function",
    "method",
    "singletonMethod",
    "struct",
    "interface",
    "type",
    "typedef",
    "enum",
    "trait",
    "module",
    "constant",
    "const",
    "variable",
    "macro",
    "func",
    "alias",
    "implementation",
    "member",
}
LANGS = "Python,Go,Rust,Ruby,Java,Kotlin,C#,C,C++,PHP"
#: Per language, kinds dropped although :data:`KINDS` has them (their meaning differs there):
#: a PHP ``alias`` is a ``use`` import; a C/C++ ``member`` or ``variable`` of a class or struct
#: is a data field; a C# ``typedef`` is a ``using X = …`` alias. PHP's ``define`` (a class or
#: global constant, ``const MAJOR_VERSION = 7;``) is kept as a constant.
LANG_DROP = {"PHP": {"alias", "variable"}, "C++": {"member"}, "C": {"member"}, "C#": {"typedef"}}
LANG_EXTRA = {
    "PHP": {"define": "constant"},
    "C++": {"union": "union"},
    "C": {"union": "union"},
    "C#": {"property": "property"},
}
#: TypeScript/JavaScript: Universal Ctags 5.9 reports function locals as constants, so these
#: are read with tree-sitter instead (top-level declarations and class members).
TS_EXT = {
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "tsx",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
}
TS_KINDS = {
    "class_declaration": "class",
    "abstract_class_declaration": "class",
    "function_declaration": "function",
    "generator_function_declaration": "function",
    "interface_declaration": "interface",
    "type_alias_declaration": "type",
    "enum_declaration": "enum",
    "internal_module": "module",
}
TEXT_CAP = 2000
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]{2,}")


def manifest() -> dict[str, dict[str, Any]]:
    rows = yaml.safe_load((HERE / "manifest.yaml").read_text("utf-8"))["repositories"]
    return {r["dir"]: r for r in rows}


def checkout_of(name: str, cache: Path) -> tuple[dict[str, Any], Path]:
    row = manifest()[name]
    tree = tree_path(cache, row["repo"], row["commit"])
    if not tree.is_dir():
        raise SystemExit(f"no checkout {tree}: run corpus/checkout.py --cache {cache}")
    return row, tree


def tracked(tree: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(tree):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for f in filenames:
            p = Path(dirpath, f)
            if p.is_file() and not p.is_symlink():
                out.append(p.relative_to(tree).as_posix())
    return sorted(out)


def ctags(tree: Path) -> list[tuple[str, str, str, int]]:
    proc = subprocess.run(
        [
            "ctags",
            "-R",
            "--sort=no",
            f"--languages={LANGS}",
            "-x",
            "--_xformat=%N\t%K\t%F\t%n\t%{scopeKind}\t%l",
            ".",
        ],
        cwd=tree,
        capture_output=True,
        text=True,
        errors="replace",  # ctags 5.9 prints stray bytes for Kotlin `back-quoted` names; IDENT drops them
        check=True,
    )
    rows = set()
    for raw in proc.stdout.splitlines():
        parts = raw.split("\t")
        if len(parts) != 6 or not parts[3].isdigit():
            continue
        name, kind, path, line, scope, lang = parts
        extra = LANG_EXTRA.get(lang, {})
        kind = extra.get(kind, kind)
        if kind not in KINDS and kind not in extra.values() or kind in LANG_DROP.get(lang, ()):
            continue
        if scope in ("function", "method", "func", "constant", "variable", "singletonMethod", "member"):
            continue  # a local of a function body, not a definition the module exports
        if kind == "variable" and scope in ("class", "struct", "union"):
            continue  # a class attribute
        path = path.removeprefix("./")
        if not IDENT.fullmatch(name) and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*[!?]?", name):
            continue
        rows.add((name, kind, path, int(line)))
    return sorted(rows, key=lambda r: (r[2], r[3], r[0]))


def ts_symbols(tree: Path, paths: list[str]) -> list[tuple[str, str, str, int]]:
    import tree_sitter as ts
    import tree_sitter_javascript
    import tree_sitter_typescript

    langs = {
        "typescript": ts.Language(tree_sitter_typescript.language_typescript()),
        "tsx": ts.Language(tree_sitter_typescript.language_tsx()),
        "javascript": ts.Language(tree_sitter_javascript.language()),
    }
    out = []
    for path in paths:
        ext = Path(path).suffix
        if ext not in TS_EXT or path.endswith(".min.js"):
            continue
        parser = ts.Parser(langs[TS_EXT[ext]])
        root = parser.parse((tree / path).read_bytes()).root_node

        def name_of(node):
            n = node.child_by_field_name("name")
            return n.text.decode("utf-8", "replace") if n is not None and n.text else None

        def visit(node, top: bool, path: str = path) -> None:
            for child in node.named_children:
                t = child.type
                if t == "export_statement":
                    visit(child, top, path)
                    continue
                if t in TS_KINDS and (nm := name_of(child)):
                    out.append((nm, TS_KINDS[t], path, child.start_point[0] + 1))
                    if "class" in t:
                        body = child.child_by_field_name("body")
                        for m in body.named_children if body is not None else []:
                            if m.type in ("method_definition", "abstract_method_signature") and (mn := name_of(m)):
                                out.append((mn, "method", path, m.start_point[0] + 1))
                elif t in ("lexical_declaration", "variable_declaration") and top:
                    for d in child.named_children:
                        if (
                            d.type == "variable_declarator"
                            and (nm := name_of(d))
                            and d.child_by_field_name("name").type == "identifier"
                        ):
                            out.append((nm, "constant", path, d.start_point[0] + 1))

        visit(root, True)
    return [r for r in out if re.fullmatch(r"[A-Za-z_$][A-Za-z0-9_$]*", r[0]) and r[0] != "constructor"]


def refs(tree: Path, paths: list[str], names: set[str]) -> list[tuple[str, str, str, int]]:
    """The first line of each text file that mentions each name (word match)."""
    out = []
    if not names:
        return out
    pat = re.compile(r"\b(" + "|".join(sorted(map(re.escape, names))) + r")\b")
    for path in paths:
        try:
            data = (tree / path).read_bytes()
        except OSError:
            continue
        if b"\0" in data[:4096] or len(data) > 2_000_000:
            continue
        seen: set[str] = set()
        for no, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
            for m in pat.finditer(line):
                if m.group(1) not in seen:
                    seen.add(m.group(1))
                    out.append((m.group(1), "ref", path, no))
    return out


def call_terms(calls: list[dict[str, Any]]) -> set[str]:
    """Identifiers that appear in the search calls of ``calls.yaml``."""
    names: set[str] = set()
    for c in calls:
        body = json.dumps({k: v for k, v in c.items() if k not in ("expect", "session", "turn")})
        names.update(IDENT.findall(body))
    return names


def cmd_extract(name: str, cache: Path) -> None:
    row, tree = checkout_of(name, cache)
    out = HERE / name
    out.mkdir(exist_ok=True)
    paths = tracked(tree)
    (out / "paths.txt").write_text("\n".join(paths) + "\n", "utf-8")
    defs = sorted(set(ctags(tree)) | set(ts_symbols(tree, paths)), key=lambda r: (r[2], r[3], r[0]))
    calls_file = out / "calls.yaml"
    wanted: set[str] = set()
    if calls_file.is_file():
        calls = yaml.safe_load(calls_file.read_text("utf-8"))["calls"]
        defined = {d[0] for d in defs}
        wanted = call_terms(calls) & defined
    ref_rows = refs(tree, paths, wanted)
    defined_at = {(d[0], d[2]) for d in defs}
    ref_rows = [r for r in ref_rows if (r[0], r[2]) not in defined_at]
    with (out / "symbols.tsv").open("w", encoding="utf-8") as fh:
        fh.write("name\tkind\tpath\tline\n")
        for n, k, p, ln in defs + ref_rows:
            fh.write(f"{n}\t{k}\t{p}\t{ln}\n")
    sys.stdout.write(f"{name}: {len(paths)} paths, {len(defs)} definitions, {len(ref_rows)} refs\n")


# ---------------------------------------------------------------------------- facts

MANIFESTS = re.compile(
    r"(^|/)(pyproject\.toml|setup\.py|setup\.cfg|requirements[^/]*\.txt|package\.json|Cargo\.toml|go\.mod|Gemfile|"
    r"[^/]+\.gemspec|pnpm-workspace\.yaml|pom\.xml|(build|settings)\.gradle(\.kts)?|libs\.versions\.toml|[^/]+\.csproj|"
    r"[^/]+\.slnx?|Directory\.(Build|Packages)\.props|composer\.json|CMakeLists\.txt|vcpkg\.json)$"
)
LOCKS = re.compile(
    r"(^|/)(uv\.lock|Cargo\.lock|go\.sum|pnpm-lock\.yaml|package-lock\.json|yarn\.lock|Gemfile\.lock|composer\.lock|"
    r"packages\.lock\.json|gradle\.lockfile)$"
)
CHANGELOG = re.compile(
    r"(?i)(^|/)(changelog|changes|history|news|releases?)(\.[a-z]+)?$|^docs?/(versions|changelog|changes|news)\.(rst|md)$"
)
OWNERS = re.compile(
    r"(?i)(^|/)(codeowners|maintainers|authors|contributors|owners|licen[cs]e|copying|unlicense|citation)"
    r"([.-][a-z]+)*$"
)
CONFIG = re.compile(
    r"(^|/)(tox\.ini|\.pre-commit-config\.yaml|\.golangci\.ya?ml|\.rubocop\.yml|rustfmt\.toml|\.editorconfig|"
    r"tsconfig[^/]*\.json|config\.toml|Makefile|Rakefile|mkdocs\.yml|\.oxfmtrc\.jsonc|vitest\.config\.[a-z]+|"
    r"\.readthedocs\.yaml|rust-toolchain\.toml|build\.rs|\.npmrc|codspeed\.yml|netlify\.toml|\.changeset/config\.json|"
    # Java, C#, PHP, C++ and Node tool configuration
    r"gradle\.properties|gradle-wrapper\.properties|Directory\.Build\.targets|global\.json|NuGet\.config|"
    r"phpunit\.xml(\.dist)?|phpstan\.neon(\.dist)?|psalm\.xml|\.php-cs-fixer(\.dist)?\.php|\.clang-format|\.clang-tidy|"
    r"jest\.config\.[a-z]+|eslint\.config\.[a-z]+|\.prettierrc(\.[a-z]+)?|\.readthedocs\.yml|codecov\.yml)$"
)
VERSION_RX = [
    (re.compile(r"\.pyi?$"), re.compile(r"^__version__\s*(?::[^=]*)?=\s*['\"]([^'\"]+)['\"]")),
    (re.compile(r"(^|/)(pyproject|Cargo)\.toml$"), re.compile(r"^version\s*=\s*['\"]([^'\"]+)['\"]")),
    (re.compile(r"(^|/)setup\.cfg$"), re.compile(r"^version\s*=\s*(\S+)")),
    (re.compile(r"(^|/)package\.json$"), re.compile(r"^\s{0,4}\"version\":\s*\"([^\"]+)\"")),
    (re.compile(r"\.rb$"), re.compile(r"^\s*VERSION\s*=\s*['\"]([^'\"]+)['\"]")),
    (re.compile(r"\.go$"), re.compile(r"^\s*(?:const|var)?\s*Version\s*=\s*\"([^\"]+)\"")),
    (re.compile(r"(^|/)VERSION$"), re.compile(r"^(\d+\.\d+[^\s]*)$")),
]
#: Version declarations kept with their line (``text``), for manifests and sources of the Java,
#: C#, PHP and C/C++ layouts, where the key names the version (``VERSION_NAME=``, ``<version>``
#: of the project, ``const MAJOR_VERSION = 7;``, ``#define FMT_VERSION 120000``).
VERSION_LINE_RX = [
    (re.compile(r"(^|/)gradle\.properties$"), re.compile(r"^(?:VERSION_NAME|version)\s*=\s*(\S+)")),
    (re.compile(r"(^|/)pom\.xml$"), re.compile(r"^ {2}<version>([^<]+)</version>")),
    (re.compile(r"\.(csproj|props)$"), re.compile(r"^\s*<(?:Version|VersionPrefix)>([^<$]+)</")),
    (re.compile(r"\.php$"), re.compile(r"^\s*(?:public\s+)?const\s+\w*VERSION\s*=\s*['\"]?([\d.]+)")),
    (re.compile(r"\.(h|hpp)$"), re.compile(r"^#\s*define\s+\w+_VERSION\s+(\d+)\s*$")),
]
SKELETON_EXT = re.compile(
    r"(\.(toml|cfg|ini|ya?ml|json|jsonc|mod|gemspec)|(^|/)(Gemfile|Makefile|Rakefile|setup\.py))$"
    r"|\.(xml|dist|csproj|props|targets|slnx|gradle|kts|properties|neon)$|(^|/)(CMakeLists\.txt|\.clang-\w+)$"
)
#: XML elements whose text is kept in a skeleton (names, versions, modules), and attributes kept.
XML_VALUES = {"groupId", "artifactId", "version", "module", "scope", "Version", "VersionPrefix", "TargetFramework"}
XML_VALUES |= {"TargetFrameworks", "name", "id", "directory"}
XML_ATTRS = ("Include", "Update", "Version", "Path", "name", "Project")


def _heading_lines(text: str) -> list[tuple[int, str]]:
    lines = text.splitlines()
    out = []
    for i, ln in enumerate(lines):
        if re.match(r"^#{1,3} \S", ln):
            out.append((i + 1, ln.strip()))
        elif i + 1 < len(lines) and re.match(r"^(=+|-+)$", lines[i + 1]) and ln.strip() and len(lines[i + 1]) >= 3:
            out.append((i + 1, ln.strip()))
            out.append((i + 2, lines[i + 1][:3] * (len(lines[i + 1]) // 3)))
    return out


def _json_shape(value: Any, depth: int, key: str = "", paths: bool = False) -> Any:
    if isinstance(value, dict):
        if depth >= 4:
            return {}
        return {k: _json_shape(v, depth + 1, k, paths) for k, v in value.items()}
    if isinstance(value, list):
        return []
    if paths and isinstance(value, str) and depth >= 3 and value.endswith("/") and len(value) < 80:
        return value  # composer.json autoload: the PSR-4 folder of a namespace
    if isinstance(value, str) and depth == 2 and key in ("version", "name", "main", "module", "type"):
        return value
    if isinstance(value, str) and depth == 3:
        return value if re.fullmatch(r"[\^~<>=*0-9.x|\s-]*|workspace:\S*", value) else ""  # dependency ranges
    return "" if isinstance(value, str) else value


def skeleton(path: str, text: str) -> list[tuple[int, str]]:
    """The structure of a manifest/config file: section headers, key names (values dropped,
    except versions and dependency names), targets of a Makefile; ``(line, text)``. A JSON file
    becomes its key tree (strings emptied except names, versions and dependency ranges)."""
    out = []
    name = path.rsplit("/", 1)[-1]
    if name.endswith((".json", ".jsonc")):
        bare = re.sub(r"(?m)^\s*//.*$", "", text)
        bare = re.sub(r",(\s*[}\]])", r"\1", bare)
        try:
            shape = _json_shape(json.loads(bare), 1, paths=name == "composer.json")
            return [(1, json.dumps(shape, indent=2))]
        except ValueError:
            return []
    if name.endswith((".xml", ".csproj", ".props", ".targets", ".slnx", ".xml.dist")):
        return _xml_skeleton(text)
    if name.endswith((".gradle", ".gradle.kts")):
        return _gradle_skeleton(text)
    if name == "CMakeLists.txt":
        return _cmake_skeleton(text)
    if name.endswith(".properties"):
        for no, ln in enumerate(text.splitlines(), 1):
            if m := re.match(r"^([A-Za-z0-9_.-]+)\s*[=:]\s*(.*)$", ln.strip()):
                keep = re.search(r"(?i)version|group|artifact|name", m.group(1)) and len(m.group(2)) < 80
                out.append((no, f"{m.group(1)}={m.group(2) if keep else ''}"))
        return out[:200]
    for no, raw in enumerate(text.splitlines(), 1):
        ln = raw.rstrip()
        if not ln.strip() or ln.lstrip().startswith(("#", "//")):
            continue
        if name.endswith((".toml", ".cfg", ".ini")) and ln[:1].isspace() and not re.match(r"^\s*[\w\"-]+\s*=", ln):
            continue  # an item of a multi-line array or value
        if m := re.match(r"^\s*(\[\[?[^\]]+\]\]?)\s*(#.*)?$", ln):
            out.append((no, m.group(1)))
        elif name in ("Makefile",) and (m := re.match(r"^([A-Za-z0-9_.-]+):", ln)):
            out.append((no, m.group(1) + ":"))
        elif name.endswith(".gemspec") or name in ("Gemfile", "Rakefile"):
            if m := re.match(
                r"^\s*(gem|s\.add_(?:development_)?dependency|spec\.add_(?:development_)?dependency)\s+(['\"][^'\"]+['\"])",
                ln,
            ):
                out.append((no, f"{m.group(1)} {m.group(2)}"))
            elif m := re.match(r"^\s*(task|namespace)\b\s*:?([A-Za-z0-9_:'\"-]+)", ln):
                out.append((no, f"{m.group(1)} {m.group(2)}"))
        elif name.endswith(".mod"):
            if m := re.match(r"^\s*(module|go|require|toolchain)?\s*([A-Za-z0-9_./-]+)(\s+v[0-9][^\s]*)?", ln):
                out.append((no, ln.strip().split("//")[0].strip()))
        elif name == "setup.py":
            if m := re.match(r"^\s*(\w+)\s*=", ln):
                out.append((no, ln.split("=")[0].rstrip() + "=None,"))
        elif m := re.match(r"^(\s*-?\s*)(\"?[A-Za-z0-9_.@/$-]+\"?)\s*([:=])", ln):
            key = m.group(2)
            rest = ln[m.end() :].strip()
            bare = key.strip('"')
            keep = bare in ("version", "name", "module", "members", "packages") and len(rest) < 80
            if path.endswith((".json", ".jsonc")):
                val = rest.rstrip(",") if keep else ("{" if rest.startswith("{") else '""' if rest else "")
                out.append((no, f"{m.group(1)}{key}{m.group(3)} {val}".rstrip()))
            elif m.group(3) == ":":
                out.append((no, f"{m.group(1)}{key}: {rest if keep else ''}".rstrip()))
            else:
                out.append((no, f"{m.group(1)}{key} = {rest if keep else chr(34) * 2}".rstrip()))
    return out[:200]


def _xml_skeleton(text: str) -> list[tuple[int, str]]:
    """Element names of an XML manifest (pom.xml, .csproj, .props, phpunit.xml): the opening tag
    of each line with its :data:`XML_ATTRS` attributes, and the text of :data:`XML_VALUES`."""
    out = []
    in_comment = False
    for no, raw in enumerate(text.splitlines(), 1):
        ln = raw.rstrip()
        if in_comment:
            in_comment = "-->" not in ln
            continue
        if ln.lstrip().startswith("<!--"):
            in_comment = "-->" not in ln
            continue
        m = re.match(r"^(\s*)<([A-Za-z_][\w.:-]*)([^>]*?)(/?)>", ln)
        if not m or m.group(2).startswith(("?", "!")):
            continue
        indent, tag, attrs, close = m.groups()
        kept = "".join(f' {a}="{v}"' for a, v in re.findall(r'\b([\w.:-]+)="([^"]*)"', attrs) if a in XML_ATTRS)
        piece = f"{indent}<{tag}{kept}{close}>"
        val = re.match(r"([^<]*)</" + re.escape(tag) + ">", ln[m.end() :])
        if val and tag in XML_VALUES and len(val.group(1)) < 80:
            piece += f"{val.group(1)}</{tag}>"
        out.append((no, piece))
    return out[:600]


def _gradle_skeleton(text: str) -> list[tuple[int, str]]:
    """Blocks, assignments and dependency lines of a Gradle build script: ``name {``, ``key =``
    (versions and groups kept), ``implementation(libs.okhttp)`` / ``api 'g:a:v'`` kept whole."""
    out = []
    for no, raw in enumerate(text.splitlines(), 1):
        ln = raw.rstrip()
        body = ln.strip()
        if not body or body.startswith(("//", "*", "/*")):
            continue
        indent = ln[: len(ln) - len(ln.lstrip())]
        if m := re.match(
            r"^(api|implementation|testImplementation|compileOnly|runtimeOnly|testRuntimeOnly|kapt|ksp|"
            r"annotationProcessor|classpath|id|alias|include|androidTestImplementation|testFixturesApi)\b(.*)$",
            body,
        ):
            out.append((no, f"{indent}{body[:120]}"))
        elif m := re.match(r"^([\w.]+)\s*(\(.*\))?\s*\{\s*$", body):
            out.append((no, f"{indent}{m.group(1)} {{"))
        elif m := re.match(r"^([\w.]+)\s*=\s*(.*)$", body):
            keep = re.search(r"(?i)version|group", m.group(1)) and len(m.group(2)) < 80
            out.append((no, f"{indent}{m.group(1)} = {m.group(2) if keep else chr(34) * 2}"))
        elif m := re.match(r"^(apply|plugins|dependencies|tasks|test|repositories)\b", body):
            out.append((no, f"{indent}{body[:80]}"))
    return out[:300]


def _cmake_skeleton(text: str) -> list[tuple[int, str]]:
    """Commands of a CMakeLists.txt with their first argument (``project(FMT``, ``option(FMT_TEST``,
    ``add_subdirectory(test``); ``project``'s ``VERSION`` kept."""
    out = []
    for no, raw in enumerate(text.splitlines(), 1):
        if m := re.match(r"^(\s*)([A-Za-z_]\w*)\s*\(\s*([^\s)]*)", raw):
            piece = f"{m.group(1)}{m.group(2)}({m.group(3)}"
            if v := re.search(r"\bVERSION\s+([\d.]+)", raw):
                piece += f" VERSION {v.group(1)}"
            out.append((no, piece + ")"))
    return out[:300]


def _test_root(path: str) -> str:
    """The folder a test file is filed under: the top folder (``tests/``), or the Maven/Gradle
    ``…/src/test/`` and a ``…/__tests__/`` folder where the tests sit beside the sources."""
    if m := re.match(r"^(.*?(?:^|/)(?:src/test|__tests__)/)", path):
        return m.group(1)
    return path.split("/")[0] + "/" if "/" in path else path


def cmd_facts(name: str, cache: Path) -> None:
    row, tree = checkout_of(name, cache)
    out = HERE / name
    paths = (out / "paths.txt").read_text("utf-8").split()
    version = []
    for p in paths:
        for prx, vrx in VERSION_RX:
            if not prx.search(p) or "/test" in "/" + p or p.startswith(("test", "spec")):
                continue
            try:
                text = (tree / p).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for no, ln in enumerate(text.splitlines(), 1):
                if m := vrx.match(ln):
                    version.append({"path": p, "line": no, "value": m.group(1)})
                    break
        for prx, vrx in VERSION_LINE_RX:
            if not prx.search(p) or "/test" in "/" + p or p.startswith(("test", "spec")):
                continue
            try:
                text = (tree / p).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            for no, ln in enumerate(text.splitlines(), 1):
                if m := vrx.match(ln):
                    line_text = re.split(r"<!--|//", ln)[0].strip()
                    version.append({"path": p, "line": no, "value": m.group(1).strip(), "text": line_text})
                    break
    changelog = []
    for p in paths:
        if CHANGELOG.search(p):
            try:
                heads = _heading_lines((tree / p).read_text("utf-8"))[:12]
            except (OSError, UnicodeDecodeError):
                heads = []
            changelog.append({"path": p, "headings": [[n, t] for n, t in heads]})
    tests = sorted(
        {
            _test_root(p)
            for p in paths
            if re.search(r"(^|/)(tests?|spec)/|(^|/)test_[^/]+\.py$|_test\.go$|_spec\.rb$|\.test\.[jt]sx?$", p)
            or re.search(r"(^|/)__tests__/|\.spec\.[jt]sx?$|[a-z]Tests?\.(java|kt|cs|php)$|[-_]test\.(cc|cpp)$", p)
        }
    )
    docs = sorted(
        p
        for p in paths
        if re.search(r"(?i)(^|/)readme(\.\w+)?$|^(docs?|documentation|site/content)/.*\.(md|rst)$", p)
        or re.search(r"^[A-Z][A-Za-z]*\.md$", p)
    )
    skeletons = {}
    for p in paths:
        if (
            (MANIFESTS.search(p) or CONFIG.search(p) or p.startswith(".github/workflows/"))
            and SKELETON_EXT.search(p)
            and not LOCKS.search(p)
        ):
            try:
                text = (tree / p).read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            skeletons[p] = [[n, t] for n, t in skeleton(p, text)]
    facts = {
        "repo": row["repo"],
        "commit": row["commit"],
        "version": version,
        "changelog": changelog,
        "manifests": [p for p in paths if MANIFESTS.search(p)],
        "locks": [p for p in paths if LOCKS.search(p)],
        "ci": [p for p in paths if p.startswith(".github/workflows/") and p.endswith((".yml", ".yaml"))],
        "config": [p for p in paths if CONFIG.search(p)],
        "tests": tests[:40],
        "docs": docs[:60],
        "owners": [p for p in paths if OWNERS.search(p)],
        "skeletons": skeletons,
    }
    with (out / "facts.yaml").open("w", encoding="utf-8") as fh:
        fh.write(f"# Facts of {row['repo']}@{row['commit'][:12]} (build.py facts; reviewed by hand, see notes.md).\n")
        yaml.safe_dump(facts, fh, sort_keys=False, allow_unicode=True, width=120, default_flow_style=None)
    sys.stdout.write(f"{name}: {len(version)} version facts, {len(changelog)} changelogs, {len(skeletons)} skeletons\n")


# ---------------------------------------------------------------------------- trace


def _bases(command: str | list[str], tree: Path) -> list[Path]:
    """The folders a command names (``ls src/attr``: names are listed relative to them)."""
    if isinstance(command, list) and len(command) == 3 and command[:2] in (["bash", "-lc"], ["bash", "-c"]):
        command = command[2]  # a list-form ``bash -lc LINE``: the folders LINE names
    words = command if isinstance(command, list) else re.split(r"[\s;|&]+", command)
    out = []
    for w in words:
        w = w.strip("'\"").removeprefix("./")
        if w and not w.startswith("-") and len(w) < 300:
            try:
                if (tree / w).is_dir() and (tree / w).resolve().is_relative_to(tree.resolve()):
                    out.append(tree / w)
            except OSError:
                continue
    return out


def _to_path_lines(text: str, tree: Path, cwd: Path, bases: list[Path] | None = None) -> str:
    """Keep only the lines that name a path of the tree: ``path`` or ``path:line``; a bare
    name listed by ``ls DIR`` is kept when it exists in DIR."""
    keep = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        num = re.match(r"^(\d+)[:-]", line)
        if num:  # grep -n on one file: keep the line number, never the text
            keep.append(num.group(1))
            continue
        m = re.match(r"^(?:\./)?([^:\s][^:]*?)(?::(\d+))?(?::.*)?$", line)
        cand = [line.removeprefix("./")]
        if m:
            cand.append(m.group(1))
        for c in cand:
            p = (cwd / c) if not c.startswith("/") else Path(c)
            try:
                p.resolve().relative_to(tree.resolve())
                exists = len(c) < 1000 and p.exists()
            except (ValueError, OSError):
                continue
            if exists:
                if c == cand[-1] and m and m.group(2) and c != line.removeprefix("./"):
                    keep.append(f"{c}:{m.group(2)}")
                else:
                    keep.append(c.rstrip("/") + ("/" if p.is_dir() and c.endswith("/") else ""))
                break
        else:
            if line.endswith(":") and (cwd / line[:-1]).is_dir():  # ls -R / ls a b headers
                keep.append(line)
            elif "/" not in line and len(line) < 300 and any((b / line).exists() for b in bases or ()):
                keep.append(line)
    out = "\n".join(keep)
    return out[:TEXT_CAP]


GIT_SHIM = """#!/usr/bin/env python3
import os, subprocess, sys
args = sys.argv[1:]
if not args or args[0] != "grep":
    sys.stderr.write("git: only grep is available in the corpus builder\\n"); sys.exit(1)
commit = os.environ["CORPUS_COMMIT"]
rest = args[1:]
if "--" in rest:
    i = rest.index("--"); rest = rest[:i] + [commit] + rest[i:]
else:
    rest = rest + [commit]
p = subprocess.run(["/usr/bin/git", "--git-dir=" + os.environ["CORPUS_GIT_DIR"], "grep"] + rest, capture_output=True, text=True)
pre = commit + ":"
sys.stdout.write("".join(l[len(pre):] if l.startswith(pre) else l for l in p.stdout.splitlines(True)))
sys.exit(p.returncode)
"""


#: Programs the builder runs to make a result text: read-only searches and listings. Anything
#: else (tests, builds, installs, editors) is not run; its result text stays empty.
READ_ONLY = {
    "rg",
    "grep",
    "egrep",
    "git",
    "find",
    "fd",
    "ls",
    "cat",
    "sed",
    "head",
    "tail",
    "jq",
    "wc",
    "sort",
    "uniq",
    "cut",
    "tr",
    "nl",
    "awk",
    "xargs",
    "echo",
    "true",
}


def read_only(command: str | list[str]) -> bool:
    """Every command word of every pipeline segment is in :data:`READ_ONLY` (and ``sed`` only
    with ``-n``, ``git`` only ``grep``, ``xargs`` only a read-only program, ``find`` without
    ``-exec``/``-delete``)."""
    text = shlex.join(command) if isinstance(command, list) else command  # argv: each word quoted
    if isinstance(command, list) and command[:2] in (["bash", "-lc"], ["bash", "-c"]):
        text = command[2]
    bare = re.sub(r"'[^']*'|\"(?:[^\"\\]|\\.)*\"", "''", text)  # quoted patterns may hold anything
    if re.search(r"-exec|-delete|>\s*[^&/]|`|\$\(", bare.replace("2>/dev/null", "").replace("2>&1", "")):
        return False
    for seg in re.split(r"\|\||&&|[|;\n]", bare):
        words = [w for w in seg.strip().split() if not re.match(r"^[A-Z_]+=", w)]
        if not words or words[0].startswith("#"):
            continue
        prog = words[0]
        if prog not in READ_ONLY or (prog == "git" and words[1:2] != ["grep"]):
            return False
        if prog == "sed" and any(w.startswith("-i") or w.startswith("--in-place") for w in words):
            return False
        if prog == "xargs" and (len(words) < 2 or words[-1] not in READ_ONLY and words[1] not in READ_ONLY):
            return False
    return True


def run_shell(command: str | list[str], tree: Path, git_dir: Path | None, commit: str) -> tuple[str, bool]:
    if not read_only(command):
        return "", False
    with tempfile.TemporaryDirectory(prefix="corpus-shim-") as shim:
        if git_dir is not None:
            g = Path(shim, "git")
            g.write_text(GIT_SHIM)
            g.chmod(0o755)
        env = {
            "PATH": f"{shim}:/usr/local/bin:/usr/bin:/bin",
            "HOME": shim,
            "LANG": "C.UTF-8",
            "CORPUS_COMMIT": commit,
            "CORPUS_GIT_DIR": str(git_dir or ""),
        }
        argv = command if isinstance(command, list) else ["bash", "-c", command]
        if isinstance(command, list) and command[:2] in (["bash", "-lc"], ["bash", "-c"]):
            argv = ["bash", "-c", command[2]]
        try:
            proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, text=True, timeout=60)
        except FileNotFoundError:
            return "", False  # a build/test tool absent here: its output is never kept anyway
    if proc.returncode == 127:
        return "", False
    return proc.stdout + proc.stderr, proc.returncode not in (0, 1)


def _rg_type_globs(t: str) -> list[str]:
    return {
        "py": ["*.py", "*.pyi"],
        "ts": ["*.ts", "*.tsx", "*.mts", "*.cts"],
        "js": ["*.js", "*.jsx", "*.mjs", "*.cjs"],
        "go": ["*.go"],
        "rust": ["*.rs"],
        "ruby": ["*.rb", "*.gemspec", "Gemfile", "Rakefile"],
        "md": ["*.md", "*.markdown"],
        "toml": ["*.toml"],
        "yaml": ["*.yml", "*.yaml"],
        "json": ["*.json"],
    }.get(t, [f"*.{t}"])


def _glob_match(path: str, pattern: str) -> bool:
    """Claude Code style glob: ``**`` spans folders, ``{a,b}`` alternatives, a pattern without
    ``/`` matches the file name."""
    alts = [pattern]
    m = re.search(r"\{([^{}]*)\}", pattern)
    if m:
        alts = [pattern[: m.start()] + a + pattern[m.end() :] for a in m.group(1).split(",")]
        return any(_glob_match(path, a) for a in alts)
    if "/" not in pattern:
        return fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], pattern)
    rx = re.escape(pattern).replace(r"\*\*/", "(?:.*/)?").replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
    rx = rx.replace(r"\?", "[^/]")
    return re.fullmatch(rx, path) is not None


def grep_tool(inp: dict[str, Any], tree: Path, paths: list[str]) -> str:
    flags = re.IGNORECASE if inp.get("-i") else 0
    rx = re.compile(inp["pattern"], flags)
    scope = (inp.get("path") or "").rstrip("/").removeprefix("./")
    globs = [inp["glob"]] if inp.get("glob") else []
    if inp.get("type"):
        globs += _rg_type_globs(inp["type"])
    hits: list[tuple[str, list[int]]] = []
    for p in paths:
        if scope and not (p == scope or p.startswith(scope + "/")):
            continue
        if globs and not any(_glob_match(p, g) for g in globs):
            continue
        try:
            text = (tree / p).read_text("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        lines = [no for no, ln in enumerate(text.splitlines(), 1) if rx.search(ln)]
        if lines:
            hits.append((p, lines))
    mode = inp.get("output_mode", "files_with_matches")
    if not hits:
        return "No files found" if mode == "files_with_matches" else "No matches found"
    if mode == "content":
        return "\n".join(f"{p}:{n}" if inp.get("-n") else p for p, ls in hits for n in ls)[:TEXT_CAP]
    if mode == "count":
        return "\n".join(f"{p}:{len(ls)}" for p, ls in hits)[:TEXT_CAP]
    return (f"Found {len(hits)} file{'s' if len(hits) != 1 else ''}\n" + "\n".join(p for p, _ in hits))[:TEXT_CAP]


def glob_tool(inp: dict[str, Any], paths: list[str]) -> str:
    scope = (inp.get("path") or "").rstrip("/").removeprefix("./")
    out = []
    for p in paths:
        rel = p
        if scope:
            if not p.startswith(scope + "/"):
                continue
            rel = p[len(scope) + 1 :]
        if _glob_match(rel, inp["pattern"]) if "/" in inp["pattern"] else _glob_match(rel, "**/" + inp["pattern"]):
            out.append(p)
    return ("\n".join(out) if out else "No files found")[:TEXT_CAP]


TOOL_KEYS = {
    "bash": "bash",
    "Bash": "Bash",
    "shell": "shell",
    "Grep": "Grep",
    "grep": "grep",
    "Glob": "Glob",
    "glob": "glob",
    "Read": "Read",
    "read": "read",
    "view": "str_replace_editor",
    "Edit": "Edit",
    "Write": "Write",
    "edit": "edit",
    "apply_patch": "apply_patch",
    # SWE-agent and OpenHands tool forms
    "execute_bash": "execute_bash",
    "str_replace": "str_replace_editor",
    "search_dir": "search_dir",
    "find_file": "find_file",
    "search_file": "search_file",
    "open": "open",
}


def _rel(tree: Path, p: str) -> str:
    return Path(os.path.normpath(tree / p)).relative_to(tree).as_posix() if p not in ("", ".", "./") else "."


def search_dir_tool(inp: dict[str, Any], tree: Path) -> str:
    """SWE-agent's ``search_dir``: ``grep -nIH`` of the term in every non-hidden file under the
    folder, one ``path (N matches)`` line a file (paths relative to the root, not absolute)."""
    term, folder = inp["search_term"], _rel(tree, inp.get("dir", "./"))
    if not (tree / folder).is_dir():
        return f"Directory {inp.get('dir')} not found"
    proc = subprocess.run(
        ["find", folder, "-type", "f", "!", "-path", "*/.*", "-exec", "grep", "-nIH", "--", term, "{}", "+"],
        cwd=tree,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"},
    )
    counts: dict[str, int] = {}
    for ln in proc.stdout.splitlines():
        f = ln.split(":", 1)[0].removeprefix("./")
        counts[f] = counts.get(f, 0) + 1
    shown = inp.get("dir", "./")
    if not counts:
        return f'No matches found for "{term}" in {shown}'
    if len(counts) > 100:
        return f'More than {len(counts)} files matched for "{term}" in {shown}. Please narrow your search.'
    rows = "\n".join(f"{f} ({n} matches)" for f, n in sorted(counts.items()))
    text = (
        f'Found {sum(counts.values())} matches for "{term}" in {shown}:\n{rows}\nEnd of matches for "{term}" in {shown}'
    )
    return text[:TEXT_CAP]


def find_file_tool(inp: dict[str, Any], tree: Path) -> str:
    """SWE-agent's ``find_file``: ``find DIR -type f -name NAME`` (paths relative to the root)."""
    name, folder = inp["file_name"], _rel(tree, inp.get("dir", "./"))
    if not (tree / folder).is_dir():
        return f"Directory {inp.get('dir')} not found"
    proc = subprocess.run(
        ["find", folder, "-type", "f", "-name", name],
        cwd=tree,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    found = sorted(ln.removeprefix("./") for ln in proc.stdout.splitlines() if ln)
    shown = inp.get("dir", "./")
    if not found:
        return f'No matches found for "{name}" in {shown}'
    return (f'Found {len(found)} matches for "{name}" in {shown}:\n' + "\n".join(found))[:TEXT_CAP]


def search_file_tool(inp: dict[str, Any], tree: Path) -> tuple[str, bool]:
    """SWE-agent's ``search_file``: the matching line numbers of one file (``Line N``; the line
    text is not kept)."""
    term, f = inp["search_term"], inp["file"]
    if not (tree / f).is_file():
        return f"Usage: search_file <search_term> [<file>]\nError: File name {f} not found.", True
    rows = [no for no, ln in enumerate((tree / f).read_text("utf-8", "replace").splitlines(), 1) if term in ln]
    if not rows:
        return f'No matches found for "{term}" in {f}', False
    lines = "\n".join(f"Line {n}" for n in rows)
    return f'Found {len(rows)} matches for "{term}" in {f}:\n{lines}\nEnd of matches for "{term}" in {f}'[
        :TEXT_CAP
    ], False


def view_dir(path: str, tree: Path, paths: list[str]) -> str:
    """OpenHands ``str_replace_editor view`` of a folder: files and folders up to two levels
    deep, hidden ones left out (paths relative to the root)."""
    base = _rel(tree, path)
    pre = "" if base == "." else base + "/"
    seen: set[str] = set()
    for p in paths:
        if not p.startswith(pre):
            continue
        parts = p[len(pre) :].split("/")
        if any(x.startswith(".") for x in parts):
            continue
        for depth in range(1, min(2, len(parts)) + 1):
            seen.add(pre + "/".join(parts[:depth]) + ("/" if depth < len(parts) else ""))
    head = f"Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:"
    return (head + "\n" + "\n".join(sorted(seen)))[:TEXT_CAP]


def parse_expect(e: Any) -> dict[str, Any] | None:
    if e is None:
        return None
    if isinstance(e, str):
        intent, *targets = e.split()
        return {"intent": intent, "targets": targets}
    return {"intent": e["intent"], "targets": list(e["targets"])}


def build_call(
    c: dict[str, Any], tree: Path, paths: list[str], git_dir: Path | None, commit: str
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    key = next(k for k in c if k in TOOL_KEYS)
    value = c[key]
    name = TOOL_KEYS[key]
    result: dict[str, Any] | None
    if key in ("bash", "Bash"):
        inp: dict[str, Any] = {"command": value} if isinstance(value, str) else dict(value)
        text, err = run_shell(inp["command"], tree, git_dir, commit)
        result = {"isError": err, "text": _to_path_lines(text, tree, tree, _bases(inp["command"], tree))}
    elif key == "shell":
        inp = {"command": value} if isinstance(value, list) else dict(value)
        text, err = run_shell(inp["command"], tree, git_dir, commit)
        result = {"isError": err, "text": _to_path_lines(text, tree, tree, _bases(inp["command"], tree))}
    elif key in ("Grep", "grep"):
        inp = dict(value)
        result = {"isError": False, "text": grep_tool(inp, tree, paths)}
    elif key in ("Glob", "glob"):
        inp = {"pattern": value} if isinstance(value, str) else dict(value)
        result = {"isError": False, "text": glob_tool(inp, paths)}
    elif key == "view" and isinstance(value, str) and (tree / value).is_dir():
        inp = {"command": "view", "path": value}
        result = {"isError": False, "text": view_dir(value, tree, paths)}
    elif key in ("Read", "read", "view"):
        inp = {"file_path": value} if isinstance(value, str) else dict(value)
        if key == "view":
            rng = inp.get("view_range")
            inp = {"command": "view", "path": inp.pop("file_path", inp.get("path"))}
            if rng:
                inp["view_range"] = rng
        target = inp.get("file_path") or inp.get("path")
        exists = (tree / target).is_file()
        result = {"isError": not exists, "text": "" if exists else "File does not exist."}
    elif key == "open":
        inp = {"path": value} if isinstance(value, str) else dict(value)
        exists = (tree / inp["path"]).is_file()
        result = {"isError": not exists, "text": "" if exists else f"File {inp['path']} not found"}
    elif key == "execute_bash":
        inp = {"command": value} if isinstance(value, str) else dict(value)
        text, err = run_shell(inp["command"], tree, git_dir, commit)
        result = {"isError": err, "text": _to_path_lines(text, tree, tree, _bases(inp["command"], tree))}
    elif key == "search_dir":
        inp = {"search_term": value} if isinstance(value, str) else dict(value)
        text = search_dir_tool(inp, tree)
        result = {"isError": text.startswith("Directory "), "text": text}
    elif key == "find_file":
        inp = {"file_name": value} if isinstance(value, str) else dict(value)
        text = find_file_tool(inp, tree)
        result = {"isError": text.startswith("Directory "), "text": text}
    elif key == "search_file":
        inp = dict(value)
        text, err = search_file_tool(inp, tree)
        result = {"isError": err, "text": text}
    else:
        inp = {"file_path": value} if isinstance(value, str) else dict(value)
        if key == "apply_patch":
            inp = {"input": f"*** Begin Patch\n*** Update File: {value}\n*** End Patch"}
        elif key == "str_replace":
            inp = {"command": "str_replace", "path": value}
        result = {"isError": False, "text": ""}
    if c.get("error"):
        result["isError"] = True
    return {"tool": {"name": name, "input": inp}, "result": result}, parse_expect(c.get("expect"))


#: Tool forms whose input names one file the call opens, searches inside or edits, and the key.
FILE_TOOLS = {
    "Read": "file_path",
    "read": "file_path",
    "Edit": "file_path",
    "Write": "file_path",
    "edit": "file_path",
    "open": "path",
    "search_file": "file",
    "str_replace_editor": "path",
    "Grep": "path",
    "grep": "path",
}
SHELL_TOOLS = frozenset({"bash", "Bash", "shell", "execute_bash"})
_PATCH_FILE = re.compile(r"^\*\*\* (?:Update|Add|Delete) File: (.+)$", re.M)


def opens_of_call(tool: dict[str, Any], tracked: set[str]) -> list[str]:
    """The repository files a call opened, searched inside or edited, in order: the file of a
    Read/Edit/Write, SWE-agent ``open``/``search_file``, OpenHands ``str_replace_editor``, a
    Grep whose ``path`` is a file, the files of an ``apply_patch``; for a shell command (a
    string, or Codex's list form) the files it views or writes as the trajectories read them
    (``core.opens_of``). A folder, a glob or a search over folders opens nothing."""
    name, inp = tool.get("name"), tool.get("input")
    if not isinstance(inp, dict):
        return []
    if name in SHELL_TOOLS:
        command = inp.get("command")
        script = script_of([str(w) for w in command]) if isinstance(command, list) else str(command or "")
        _, segs, writes, _ = shell_call(script, tracked, {}, WORKDIR)
        return opens_of(segs, writes, tracked)
    if name == "apply_patch":
        found = [rel_path(m, WORKDIR) for m in _PATCH_FILE.findall(str(inp.get("input") or ""))]
        return list(dict.fromkeys(p for p in found if p and p in tracked))
    key = FILE_TOOLS.get(str(name))
    value = inp.get(key) if key else None
    rel = rel_path(value, WORKDIR) if isinstance(value, str) and value.strip() else None
    return [rel] if rel and rel in tracked else []


def dirs_of_call(tool: dict[str, Any]) -> list[str]:
    """The folders a shell call's bare result names are relative to (the folders it ``cd``-ed
    into or listed with a plain ``ls``; ``core.dirs_of``); ``[]`` for the other tools."""
    inp = tool.get("input")
    if tool.get("name") not in SHELL_TOOLS or not isinstance(inp, dict):
        return []
    command = inp.get("command")
    script = script_of([str(w) for w in command]) if isinstance(command, list) else str(command or "")
    return dirs_of(segments(script, WORKDIR))


def shown_fields(tool: dict[str, Any], tracked: set[str]) -> dict[str, list[str]]:
    """A trace line's ``opens`` and ``dirs`` (:func:`opens_of_call`, :func:`dirs_of_call`)."""
    return {"opens": opens_of_call(tool, tracked), "dirs": dirs_of_call(tool)}


def cmd_opens(name: str) -> None:
    """Rewrite ``trace.jsonl`` with each line's ``opens`` and ``dirs`` (:func:`shown_fields`),
    nothing else changed."""
    out = HERE / name
    tracked = set((out / "paths.txt").read_text("utf-8").split())
    lines = []
    for raw in (out / "trace.jsonl").read_text("utf-8").splitlines():
        if not raw.strip():
            continue
        obj = json.loads(raw)
        row = {"params": obj["params"], **shown_fields(obj["params"]["tool"], tracked), "expect": obj["expect"]}
        lines.append(json.dumps(row, ensure_ascii=False))
    (out / "trace.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    opened = sum(1 for ln in lines if '"opens": []' not in ln)
    sys.stdout.write(f"{name}: {len(lines)} calls, {opened} open a repository file\n")


def cmd_trace(name: str, cache: Path, git_dir: Path | None) -> None:
    row, tree = checkout_of(name, cache)
    out = HERE / name
    paths = (out / "paths.txt").read_text("utf-8").split()
    calls = yaml.safe_load((out / "calls.yaml").read_text("utf-8"))["calls"]
    session, turn, n = f"{name}-1", 1, 0
    lines = []
    for c in calls:
        if "session" in c:
            session, turn = f"{name}-{c['session']}", 1
        if "turn" in c:
            turn = c["turn"]
        n += 1
        body, expect = build_call(c, tree, paths, git_dir, row["commit"])
        params = {"sessionId": session, "turn": turn, "callId": f"{name}-{n}", **body}
        for t in (expect or {}).get("targets", []):
            if t not in paths:
                raise SystemExit(f"{name} call {n}: target {t} is not a tracked path")
        shown = shown_fields(params["tool"], set(paths))
        lines.append(json.dumps({"params": params, **shown, "expect": expect}, ensure_ascii=False))
    (out / "trace.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    silent = sum(1 for ln in lines if ln.endswith('"expect": null}'))
    sys.stdout.write(f"{name}: {len(lines)} calls, {silent} expect null ({silent / len(lines):.0%})\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["extract", "trace", "facts", "opens"])
    p.add_argument("dirs", nargs="+")
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"))
    p.add_argument("--local", help="local git dir pattern with {owner} and {name} (for git grep)")
    args = p.parse_args(argv)
    for d in args.dirs:
        if args.command == "extract":
            cmd_extract(d, args.cache)
        elif args.command == "facts":
            cmd_facts(d, args.cache)
        elif args.command == "opens":
            cmd_opens(d)
        else:
            row = manifest()[d]
            owner, rname = row["repo"].split("/")
            git_dir = Path(args.local.format(owner=owner, name=rname)) if args.local else None
            cmd_trace(d, args.cache, git_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
