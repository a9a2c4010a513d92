"""Size gates on the server's source: no module over 600 lines, no function over 60 lines
beyond a short named list, no import cycle between its modules (module level, imports made
only for type checking included; the import-linter contract checks the same between
packages). They fail when a file or a function grows past what a reader holds in their head,
at the commit that grows it, not at the next review."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp

SERVER = Path(__file__).resolve().parents[2] / "server"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60

#: Functions allowed over :data:`MAX_FUNCTION_LINES` (``module:qualified.name``), at most five:
#: the registration closures, one short nested handler per method or tool, sharing the server
#: instance they close over.
LONG_FUNCTIONS = {
    "dsh_sidecar/lsp/handlers.py:register",
    "dsh_sidecar/mcp/server.py:build_server",
}
#: Modules allowed over :data:`MAX_MODULE_LINES`: none.
LONG_MODULES: set[str] = set()


def _modules() -> list[Path]:
    return sorted(SERVER.rglob("*.py"))


def _functions(tree: ast.AST, prefix: str = "") -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of every function in ``tree``, nested ones included."""
    out = []
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = f"{prefix}{node.name}"
            if not isinstance(node, ast.ClassDef):
                out.append((name, node.end_lineno - node.lineno + 1))
            out += _functions(node, f"{name}.")
        else:
            out += _functions(node, prefix)
    return out


def test_the_gates_see_the_server_source():
    assert len(_modules()) > 100
    assert len(LONG_FUNCTIONS) <= 5


def test_no_module_under_server_passes_600_lines():
    long = {
        rel: n
        for p in _modules()
        if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
        and (rel := p.relative_to(SERVER).as_posix()) not in LONG_MODULES
    }
    assert long == {}, f"split these by reason to change: {long}"


def test_no_function_passes_60_lines_beyond_the_named_ones():
    long = {}
    for p in _modules():
        rel = p.relative_to(SERVER).as_posix()
        for name, n in _functions(ast.parse(p.read_text())):
            if n > MAX_FUNCTION_LINES and f"{rel}:{name}" not in LONG_FUNCTIONS:
                long[f"{rel}:{name}"] = n
    assert long == {}, f"functions over {MAX_FUNCTION_LINES} lines: {long}"


def test_the_named_long_functions_still_exist():
    present = {
        f"{p.relative_to(SERVER).as_posix()}:{name}"
        for p in _modules()
        for name, _ in _functions(ast.parse(p.read_text()))
    }
    assert present >= LONG_FUNCTIONS, LONG_FUNCTIONS - present


def test_no_import_cycle_between_modules_of_the_server():
    graph = grimp.build_graph("dsh_sidecar", cache_dir=None)
    cycles = _strongly_connected(graph)
    assert cycles == [], f"import cycles: {cycles}"


def _strongly_connected(graph: grimp.ImportGraph) -> list[list[str]]:
    """The groups of two or more modules that import each other, directly or not (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[list[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    groups.append(sorted(group))
    return groups
