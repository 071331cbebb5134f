"""irad's layers only point down, and no modules import each other in a circle.

Every import counts, function-level ones included (see docs/design.md):

    api       irad.api, pipeline, compiled, jacobians, mlir_export, report, cli, universe, ...
    frontend  irad.frontend   -> rules, ir        (Python source -> IR)
    passes    irad.passes     -> rules, ir        (IR -> IR; never the frontend, API or backends)
    backends  irad.backends   -> passes, rules, ir (IR -> running code; a backend runs its own passes)
    rules     irad.rules      -> ir               (the table)
    ir        irad.ir         -> base             (dialect, types, tensor ops, metadata, builder)
    base      irad.base (errors, recursion, gc_pause, stack_chunk); the library irad.numerics, markers, linalg, special
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the library functions programs call, written in irad's subset: base too
LIBRARY = {"irad.numerics", "irad.markers", "irad.linalg", "irad.special"}
MAY_IMPORT = {
    "base": {"base"},
    "ir": {"base", "ir"},
    "rules": {"base", "ir", "rules"},
    "frontend": {"base", "ir", "rules", "frontend"},
    "passes": {"base", "ir", "rules", "passes"},
    "backends": {"base", "ir", "rules", "passes", "backends"},
    "api": {"base", "ir", "rules", "frontend", "passes", "backends", "api"},
}


def modules() -> dict[str, pathlib.Path]:
    found = {}
    for folder, package in (("irad", ["irad"]), ("passes", ["irad", "passes"])):
        for path in (ROOT / folder).rglob("*.py"):
            parts = package + list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def layer(module: str) -> str:
    if module in LIBRARY:
        return "base"
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in ("base", "ir", "rules", "frontend", "passes", "backends"):
        return parts[1]
    return "api"


def import_graph() -> dict[str, set[str]]:
    mods = modules()

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for name, path in mods.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    kept = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join(kept + ([base] if base else []))
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            deps.update(r for t in targets if (r := resolve(t)) is not None)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_graph_sees_function_level_imports():
    graph = import_graph()
    assert "irad.frontend.source" in graph["irad.arguments"]
    assert {"irad.api", "irad.jacobians"} <= graph["irad"]  # imported inside __getattr__
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_imports_point_down_the_layers():
    upward = [
        f"{m} ({layer(m)}) imports {d} ({layer(d)})"
        for m, deps in sorted(import_graph().items())
        for d in sorted(deps)
        if layer(d) not in MAY_IMPORT[layer(m)]
    ]
    assert not upward, "imports that point up the layer order:\n" + "\n".join(upward)


def test_no_import_cycles():
    found = cycles(import_graph())
    assert not found, "modules that import each other in a circle:\n" + "\n".join(map(" -> ".join, found))
