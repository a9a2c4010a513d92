"""Build the data of one corpus repository from its checkout (authoring tool, not run by CI).

    python bench/corpus/intents/build.py extract DIR --cache CACHE
    python bench/corpus/intents/build.py trace DIR --cache CACHE [--git-dir GIT_DIR]

``extract`` writes ``paths.txt`` (every tracked regular file, sorted) and ``symbols.tsv``
(``name<TAB>kind<TAB>path<TAB>line``: definitions found by Universal Ctags in the source
languages of the corpus, plus ``ref`` rows: the first line of each file that mentions a name
the trace searches for, so a materialized workspace keeps who-uses-what).

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
``Write``/``edit``/``apply_patch`` (a path).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from checkout import tree_path  # noqa: E402

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
}
LANGS = "Python,Go,Rust,Ruby"
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
        raise SystemExit(f"no checkout {tree}: run bench/corpus/checkout.py --cache {cache}")
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
        ["ctags", "-R", "--sort=no", f"--languages={LANGS}", "-x", "--_xformat=%N\t%K\t%F\t%n\t%{scopeKind}", "."],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    rows = set()
    for raw in proc.stdout.splitlines():
        parts = raw.split("\t")
        if len(parts) != 5 or parts[1] not in KINDS or not parts[3].isdigit():
            continue
        name, kind, path, line, scope = parts
        if scope in ("function", "method", "func", "constant", "variable", "singletonMethod"):
            continue  # a local of a function body, not a definition the module exports
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


# ---------------------------------------------------------------------------- trace


def _bases(command: str | list[str], tree: Path) -> list[Path]:
    """The folders a command names (``ls src/attr``: names are listed relative to them)."""
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


def run_shell(command: str | list[str], tree: Path, git_dir: Path | None, commit: str) -> tuple[str, bool]:
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
}


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
    elif key in ("Read", "read", "view"):
        inp = {"file_path": value} if isinstance(value, str) else dict(value)
        if key == "view":
            inp = {"command": "view", "path": inp.pop("file_path", inp.get("path"))}
        target = inp.get("file_path") or inp.get("path")
        exists = (tree / target).is_file()
        result = {"isError": not exists, "text": "" if exists else "File does not exist."}
    else:
        inp = {"file_path": value} if isinstance(value, str) else dict(value)
        if key == "apply_patch":
            inp = {"input": f"*** Begin Patch\n*** Update File: {value}\n*** End Patch"}
        result = {"isError": False, "text": ""}
    if c.get("error"):
        result["isError"] = True
    return {"tool": {"name": name, "input": inp}, "result": result}, parse_expect(c.get("expect"))


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
        lines.append(json.dumps({"params": params, "expect": expect}, ensure_ascii=False))
    (out / "trace.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    silent = sum(1 for ln in lines if ln.endswith('"expect": null}'))
    sys.stdout.write(f"{name}: {len(lines)} calls, {silent} expect null ({silent / len(lines):.0%})\n")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", choices=["extract", "trace"])
    p.add_argument("dirs", nargs="+")
    p.add_argument("--cache", type=Path, default=os.environ.get("DSH_CORPUS_CACHE"))
    p.add_argument("--local", help="local git dir pattern with {owner} and {name} (for git grep)")
    args = p.parse_args(argv)
    for d in args.dirs:
        if args.command == "extract":
            cmd_extract(d, args.cache)
        else:
            row = manifest()[d]
            owner, rname = row["repo"].split("/")
            git_dir = Path(args.local.format(owner=owner, name=rname)) if args.local else None
            cmd_trace(d, args.cache, git_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
