"""irad's layers only point down, and no modules import each other in a circle.

Every import counts, function-level ones included (see docs/design.md):

    api       irad.api, pipeline, compiled, jacobians, mlir_export, report, cli, universe, ...
    frontend  irad.frontend   -> rules, ir        (Python source -> IR)
    passes    irad.passes     -> rules, ir        (IR -> IR; never the frontend, API or backends)
    backends  irad.backends   -> passes, rules, ir (IR -> running code; a backend runs its own passes)
    rules     irad.rules      -> ir               (the table)
    ir        irad.ir         -> base             (dialect, types, tensor ops, metadata, builder)
    base      irad.base (errors, pytrees, config, recursion, gc_pause, stack_chunk); the library irad.numerics,
              numpy_python, functional_python, markers, linalg, special, scipy_linalg
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
# the library functions programs call, written in irad's subset: base too
LIBRARY = {"irad.numerics", "irad.numpy_python", "irad.functional_python", "irad.markers", "irad.linalg", "irad.special",
           "irad.scipy_linalg"}
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


# ---- private attributes: a lower layer never reaches an upper layer's by name ----------
ORDER = ["base", "ir", "rules", "frontend", "passes", "backends", "api"]


def _private_names_defined(tree: ast.AST) -> set[str]:
    """The private attributes a module defines on its own objects: `self._name
    = ...`, `f._name = ...` for its own functions and classes, and the private
    methods and class attributes of its classes (not what it writes into
    another library's objects)."""
    own = {"self", "cls"} | {
        n.name for n in getattr(tree, "body", []) if isinstance(n, (ast.FunctionDef, ast.ClassDef))
    }
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for sub in ast.walk(t):
                    if (isinstance(sub, ast.Attribute) and sub.attr.startswith("_") and not sub.attr.startswith("__")
                            and isinstance(sub.value, ast.Name) and sub.value.id in own):
                        found.add(sub.attr)
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                names = [item.name] if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) else [
                    t.id for t in getattr(item, "targets", []) if isinstance(t, ast.Name)
                ]
                found.update(n for n in names if n.startswith("_") and not n.startswith("__"))
    return found


def _private_names_reached(tree: ast.AST) -> set[str]:
    """Private names a module reads off objects: `x._name`, and the string
    of getattr/hasattr/setattr(x, "_name")."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            found.add(node.attr)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr", "setattr")
                and len(node.args) >= 2 and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                and node.args[1].value.startswith("_") and not node.args[1].value.startswith("__")):
            found.add(node.args[1].value)
    return found


# the private-looking names of Python's own protocols (NamedTuple's): not irad's
PYTHON_NAMES = {"_fields", "_field_defaults", "_asdict", "_replace", "_make"}


def private_up_reaches(sources: dict[str, str]) -> list[str]:
    """`module (layer) reaches _name, defined only above it (in modules ...)`
    for every such reach among `sources` (module name -> source)."""
    trees = {m: ast.parse(s) for m, s in sources.items()}
    defined_at: dict[str, set[str]] = {}
    for m, tree in trees.items():
        for name in _private_names_defined(tree):
            defined_at.setdefault(name, set()).add(m)
    found = []
    for m, tree in trees.items():
        rank = ORDER.index(layer(m))
        for name in sorted(_private_names_reached(tree) - PYTHON_NAMES):
            owners = defined_at.get(name, set())
            if owners and all(ORDER.index(layer(o)) > rank for o in owners):
                found.append(f"{m} ({layer(m)}) reaches {name}, defined only above it in {', '.join(sorted(owners))}")
    return found


def test_no_lower_layer_reaches_an_upper_layers_private_attributes():
    sources = {m: p.read_text() for m, p in modules().items()}
    found = private_up_reaches(sources)
    assert not found, "private attributes reached up the layers:\n" + "\n".join(found)


def test_a_planted_private_up_reach_is_found():
    """The old protocol: the frontend duck-typed the API's derivative objects."""
    sources = {
        "irad.api": "class GradFunction:\n    def _irad_module(self, s):\n        return s\n\n"
                    "def grad(f):\n    return f\n\ngrad._irad_transform = True\n",
        "irad.frontend.calls": "def call(fn, s):\n    if getattr(fn, '_irad_transform', False):\n        return fn\n"
                               "    return fn._irad_module(s) if hasattr(fn, '_irad_module') else None\n",
        "irad.frontend.own": "class A:\n    def _mine(self):\n        return self._mine\n",
    }
    assert private_up_reaches(sources) == [
        "irad.frontend.calls (frontend) reaches _irad_module, defined only above it in irad.api",
        "irad.frontend.calls (frontend) reaches _irad_transform, defined only above it in irad.api",
    ]
