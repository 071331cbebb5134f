"""Recursion in a call graph: Tarjan's strongly connected components, and
which functions of a module call themselves, directly or through others.

The inliner (passes/optimisation/callgraph.py) judges recursion on the primal call graph;
the native backend guards the stack of every function on a cycle of calls
(`call_cycles`). Tarjan's algorithm runs with an explicit stack, so a
10,000-deep chain costs no Python recursion.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp


def strongly_connected(edges: Mapping[Hashable, Iterable[Hashable]]) -> list[list]:
    """Tarjan's SCCs of the graph whose nodes are the keys of `edges`, callees'
    components before their callers' (reverse topological order). Successors
    that are not keys are ignored."""
    index: dict = {}
    low: dict = {}
    on_stack: set = set()
    stack: list = []
    components: list[list] = []

    def visit(node) -> tuple:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        return node, iter(edges[node])

    for start in edges:
        if start in index:
            continue
        path = [visit(start)]  # the DFS path, each node with its remaining successors
        while path:
            node, successors = path[-1]
            for succ in successors:
                if succ not in edges:
                    continue
                if succ not in index:
                    path.append(visit(succ))
                    break
                if succ in on_stack:
                    low[node] = min(low[node], index[succ])
            else:
                path.pop()
                if path:
                    parent = path[-1][0]
                    low[parent] = min(low[parent], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(component)
    return components


def cycles(components: list[list], edges: Mapping) -> list[list]:
    """The components that are cycles: of two or more, or one that calls itself."""
    return [c for c in components if len(c) > 1 or c[0] in edges.get(c[0], ())]


def on_cycles(components: list[list], edges: Mapping) -> set:
    """Members of a cycle."""
    return {member for cycle in cycles(components, edges) for member in cycle}


def callees(module: ModuleOp) -> dict[str, list[str]]:
    """The symbols each function of `module` calls (func.call), by function symbol."""
    return {
        op.sym_name.data: [c.callee.root_reference.data for c in op.walk() if isinstance(c, func.CallOp)]
        for op in module.ops
        if isinstance(op, func.FuncOp)
    }


def call_cycles(module: ModuleOp) -> list[list[str]]:
    """The functions of `module` that may recurse without bound, grouped by the
    cycle of calls they are on (a strongly connected component)."""
    edges = callees(module)
    return cycles(strongly_connected(edges), edges)
