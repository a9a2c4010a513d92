"""Materialize a corpus repository from its data: ``paths.txt`` + ``symbols.tsv`` +
``facts.yaml`` → a workspace of stub files (no source text of the repository).

Every tracked path becomes a file. A file with definitions gets, at each definition's line, a
one-line definition in its language (``def name(): ...``, ``func Name() {}``, ``pub fn name()
{}``, ``export class Name {}``, ``class Name {}``/``void name() {}`` in Java, ``def name; end``…);
a ``ref`` row becomes a comment naming the identifier at its line. Facts fill in the rest: the manifest/config skeletons (section headers
and key names, versions), the version assignments (``__version__ = "x"``, ``VERSION = 'x'``, a
bare ``VERSION`` file) and the changelog headings, each at its recorded line. Other text files
get a one-line title; everything else stays empty.

    python corpus/materialize.py DATA_DIR DEST          # e.g. corpus/intents/httpx /tmp/httpx
    python corpus/materialize.py --trajectory ID DEST    # a trajectory's repo@commit from
                                                               # trajectories/paths/ and symbols/

A trajectory workspace comes from ``trajectories/paths/<owner>__<name>@<commit>.txt`` and
``trajectories/symbols/<…>.tsv`` (no header; ``\\t``/``\\n``/``\\\\`` escapes) and has no facts.

The result is deterministic (same data, same bytes) and the files carry one fixed mtime
(2026-01-01T00:00:00Z) so that recency is the same on every run.
"""

from __future__ import annotations

import argparse
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

#: The one modification time of every materialized file (2026-01-01T00:00:00Z).
MTIME = 1_767_225_600
_HASH = (".py", ".pyi", ".rb", ".toml", ".yml", ".yaml", ".cfg", ".ini", ".sh", ".gemspec")


def _lang(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    ext = ("." + name.rsplit(".", 1)[-1]) if "." in name else ""
    return {
        ".py": "py",
        ".pyi": "py",
        ".go": "go",
        ".rs": "rs",
        ".ts": "ts",
        ".tsx": "ts",
        ".mts": "ts",
        ".cts": "ts",
        ".js": "ts",
        ".jsx": "ts",
        ".mjs": "ts",
        ".cjs": "ts",
        ".rb": "rb",
        ".java": "java",
    }.get(ext, "rb" if name in ("Gemfile", "Rakefile") or ext == ".gemspec" else "")


#: Per language: ctags/tree-sitter kind → one-line definition of ``{n}`` (``""``: the default).
DEFINITIONS: dict[str, dict[str, str]] = {
    "py": {
        "class": "class {n}: ...",
        "function": "def {n}(): ...",
        "member": "def {n}(): ...",
        "method": "def {n}(): ...",
        "": "{n} = None",
    },
    "go": {
        "func": "func {n}() {{}}",
        "function": "func {n}() {{}}",
        "method": "func {n}() {{}}",
        "struct": "type {n} struct{{}}",
        "type": "type {n} struct{{}}",
        "interface": "type {n} struct{{}}",
        "alias": "type {n} struct{{}}",
        "typedef": "type {n} struct{{}}",
        "": "var {n} = 0",
    },
    "rs": {
        "struct": "pub struct {n};",
        "enum": "pub enum {n} {{}}",
        "interface": "pub trait {n} {{}}",
        "trait": "pub trait {n} {{}}",
        "macro": "macro_rules! {n} {{ () => {{}}; }}",
        "typedef": "pub type {n} = ();",
        "module": "pub mod {n} {{}}",
        "implementation": "impl {n} {{}}",
        "constant": "pub const {n}: u8 = 0;",
        "variable": "pub static {n}: u8 = 0;",
        "": "pub fn {n}() {{}}",
    },
    "ts": {
        "class": "export class {n} {{}}",
        "interface": "export interface {n} {{}}",
        "type": "export type {n} = unknown;",
        "enum": "export enum {n} {{}}",
        "module": "export namespace {n} {{}}",
        "constant": "export const {n} = 0;",
        "": "export function {n}() {{}}",
    },
    "java": {
        "class": "class {n} {{}}",
        "interface": "interface {n} {{}}",
        "enum": "enum {n} {{}}",
        "": "void {n}() {{}}",
    },
    "rb": {
        "class": "class {n}; end",
        "module": "module {n}; end",
        "singletonMethod": "def self.{n}; end",
        "constant": "{n} = nil",
        "alias": "alias_method :{n}, :{n}",
        "": "def {n}; end",
    },
}


def definition(lang: str, kind: str, name: str) -> str:
    """One line defining ``name`` of ctags/tree-sitter ``kind`` in ``lang`` (the name alone
    for a language without a template)."""
    table = DEFINITIONS.get(lang)
    if table is None:
        return name
    return table.get(kind, table[""]).format(n=name)


def comment(path: str, text: str) -> str:
    """``text`` as a comment in the file's syntax (plain text for docs and unknown kinds)."""
    name = path.rsplit("/", 1)[-1]
    if name.endswith(_HASH) or name in ("Gemfile", "Rakefile", "Makefile", "VERSION") or name.startswith("."):
        return f"# {text}"
    if _lang(path) in ("go", "rs", "ts", "java") or name.endswith((".json", ".jsonc")):
        return f"// {text}"
    return text


def _version_line(path: str, value: str) -> str:
    name = path.rsplit("/", 1)[-1]
    if name == "VERSION":
        return value
    if name.endswith(".json"):
        return f'  "version": "{value}",'
    if name.endswith((".toml", ".cfg")):
        return f'version = "{value}"'
    if _lang(path) == "py":
        return f'__version__ = "{value}"'
    if _lang(path) == "rb":
        return f"VERSION = '{value}'"
    if _lang(path) == "go":
        return f'const Version = "{value}"'
    return f"version {value}"


def _unescape(cell: str) -> str:
    return re.sub(r"\\(.)", lambda m: {"t": "\t", "n": "\n", "\\": "\\"}.get(m.group(1), m.group(0)), cell)


def read_symbols(path: Path) -> list[tuple[str, str, str, int]]:
    """``name<TAB>kind<TAB>path<TAB>line`` rows (an optional header line is skipped)."""
    out = []
    for raw in path.read_text("utf-8").splitlines():
        cells = raw.split("\t")
        if len(cells) != 4 or cells == ["name", "kind", "path", "line"] or not cells[3].isdigit():
            continue
        name, kind, p, line = (_unescape(c) for c in cells)
        out.append((name, kind, p, int(line)))
    return out


def load(data: Path) -> tuple[list[str], dict[str, list[tuple[int, str]]]]:
    """The tracked paths and, per path, ``(line, text)`` stub lines of an intent data folder."""
    facts: dict[str, Any] = {}
    if (data / "facts.yaml").is_file():
        # libyaml's safe loader where PyYAML has it: ~9x the pure-Python one on these files
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        facts = yaml.load((data / "facts.yaml").read_text("utf-8"), Loader=loader) or {}  # noqa: S506 (safe)
    symbols = read_symbols(data / "symbols.tsv") if (data / "symbols.tsv").is_file() else []
    return stub_lines((data / "paths.txt").read_text("utf-8").split("\n"), symbols, facts)


def stub_lines(
    paths: list[str], symbols: list[tuple[str, str, str, int]], facts: dict[str, Any]
) -> tuple[list[str], dict[str, list[tuple[int, str]]]]:
    """Paths (blank entries dropped) and per path the ``(line, text)`` stub lines."""
    paths = [p for p in paths if p]
    lines: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for p, rows in (facts.get("skeletons") or {}).items():
        lines[p].extend((int(n), str(t)) for n, t in rows)
    for cl in facts.get("changelog") or []:
        lines[cl["path"]].extend((int(n), str(t)) for n, t in cl.get("headings") or [])
    taken = {(p, n + k) for p, rows in lines.items() for n, t in rows for k in range(t.count("\n") + 1)}
    for v in facts.get("version") or []:
        if (v["path"], int(v["line"])) not in taken:
            lines[v["path"]].append((int(v["line"]), _version_line(v["path"], str(v["value"]))))
            taken.add((v["path"], int(v["line"])))
    for name, kind, p, n in symbols:
        if (p, n) in taken or "\n" in name:
            continue
        text = comment(p, f"uses {name}") if kind == "ref" else definition(_lang(p), kind, name)
        lines[p].append((n, text))
        taken.add((p, n))
    return paths, lines


def _title(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    stem = name.split(".", 1)[0] or name
    if name.lower().endswith((".md", ".markdown")):
        return f"# {stem}"
    if name.lower().endswith(".rst"):
        return f"{stem}\n{'=' * max(3, len(stem))}"
    return comment(path, stem)


_BINARY = re.compile(r"(?i)\.(png|jpe?g|gif|ico|ai|svg|pdf|woff2?|ttf|gz|zip|pem|key|lock|sum)$")


def materialize(data: Path, dest: Path) -> int:
    """Write the stub workspace of the intent data folder ``data`` under ``dest``; return the
    number of files written. Raises ``ValueError`` on an unsafe path."""
    return write_stubs(*load(data), dest)


def trajectory_key(repo: str, commit: str) -> str:
    """``<owner>__<name>@<commit>``: the file stem of a trajectory workspace's data."""
    owner, _, name = repo.partition("/")
    return f"{owner}__{name}@{commit}"


def materialize_trajectory(trajectories: Path, repo: str, commit: str, dest: Path) -> int:
    """Write the stub workspace of ``repo@commit`` from ``trajectories/paths/`` and
    ``trajectories/symbols/`` under ``dest``; return the number of files."""
    key = trajectory_key(repo, commit)
    paths = (trajectories / "paths" / f"{key}.txt").read_text("utf-8").split("\n")
    sym = trajectories / "symbols" / f"{key}.tsv"
    return write_stubs(*stub_lines(paths, read_symbols(sym) if sym.is_file() else [], {}), dest)


def write_stubs(paths: list[str], lines: dict[str, list[tuple[int, str]]], dest: Path) -> int:
    """Write one stub file per path (see the module docstring); return how many."""
    dest.mkdir(parents=True, exist_ok=True)
    for p in paths:
        if p.startswith("/") or ".." in p.split("/") or ".git" in p.split("/"):
            raise ValueError(f"unsafe path: {p!r}")
        target = dest / p
        target.parent.mkdir(parents=True, exist_ok=True)
        rows = sorted(lines.get(p, []))
        if rows:
            body: list[str] = []
            lang = _lang(p)
            if lang == "go" and rows[0][0] > 1:
                body.append(
                    "package " + (p.rsplit("/", 2)[-2] if "/" in p else "main").replace("-", "_").replace(".", "_")
                )
            for n, text in rows:
                while len(body) < n - 1:
                    body.append("")
                body.extend(text.split("\n"))
            target.write_text("\n".join(body) + "\n", "utf-8")
        elif _BINARY.search(p):
            target.write_bytes(b"")
        else:
            target.write_text(_title(p) + "\n", "utf-8")
    for root, _dirs, files in os.walk(dest):
        for f in files:
            os.utime(os.path.join(root, f), (MTIME, MTIME))
    return len(paths)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("data", help="an intent data folder, or with --trajectory a trace id")
    p.add_argument("dest", type=Path)
    p.add_argument("--trajectory", action="store_true", help="DATA is a trajectory id of trajectories/index.jsonl")
    p.add_argument("--trajectories-dir", type=Path, default=Path(__file__).resolve().parent / "trajectories")
    args = p.parse_args(argv)
    if args.trajectory:
        import json

        tdir = args.trajectories_dir
        rows = [json.loads(x) for x in (tdir / "index.jsonl").read_text("utf-8").splitlines() if x.strip()]
        row = next(r for r in rows if r["id"] == args.data)
        n = materialize_trajectory(tdir, row["repo"], row["commit"], args.dest)
    else:
        n = materialize(Path(args.data), args.dest)
    print(f"{n} files under {args.dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
