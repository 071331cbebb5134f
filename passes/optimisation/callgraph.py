"""The call graph of a module, and the two views of recursion the inliner needs.

Functions are grouped into *nodes*: a generated function belongs to the node of
the primal its `irad.primal` names (at order 2 and above, of the function its
`irad.derived_from` names), any other function to its own symbol. So
`@f.pullback.d -> @g.pullback.d` is the edge `f -> g` of the primal call graph,
and only a cycle there is recursion. A call between two functions of one node
with different roles or orders (a rule's augmented primal calling the primal
itself) is not an edge: it is how the node computes, not recursion.

Strongly connected components are found by irad.ir.callgraph (Tarjan's
algorithm, no Python recursion).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Operation

from irad.ir.callgraph import on_cycles, strongly_connected
from irad.ir.metadata import derived_from, origin
from irad.ir.walk import walk
from irad.ir.isa import isa
from irad.ir.symbols import functions_by_name


def node_of(fn: func.FuncOp) -> str:
    """The primal-call-graph node of a function: the function it was generated
    from (its original primal at order 1). At order 2 that keeps apart what one
    primal's order-1 functions were: `@f.grad.augmented` calling
    `@f.augmented.augmented` is the edge `f.grad -> f.augmented`, not recursion."""
    return derived_from(fn)


def role_of(fn: func.FuncOp) -> tuple[str, int]:
    """What a function is for its node: its role and derivative order ("", 0 for a primal)."""
    role = fn.attributes.get("irad.role")
    return (role.data if isinstance(role, StringAttr) else "", origin(fn)[1])


def is_generated(fn: func.FuncOp) -> bool:
    return "irad.primal" in fn.attributes


def symbol_uses(op: Operation) -> Sequence[str]:
    """The symbols one op names in its properties and attributes (in that order).

    Asked of every op of a module: the exact type (SymbolRefAttr has no
    subclasses), since isinstance against xDSL's attribute classes is slow, and
    no list for the many ops that name none (a float op's one property)."""
    found: list[str] | None = None
    for attrs in (op.properties, op.attributes):
        if attrs:
            for a in attrs.values():
                if type(a) is SymbolRefAttr:
                    if found is None:
                        found = []
                    found.append(a.root_reference.data)
    return () if found is None else found


@dataclass
class CallGraph:
    """Functions by symbol, the calls in each, and which of them recurse."""

    functions: dict[str, func.FuncOp]
    calls: dict[str, list[func.CallOp]] = field(default_factory=dict)
    uses: Counter = field(default_factory=Counter)  # references to each symbol
    size: dict[str, int] = field(default_factory=dict)  # ops in each body, bar terminators
    # components in reverse topological order: callees first
    order: list[list[str]] = field(default_factory=list)
    component: dict[str, int] = field(default_factory=dict)
    raw_recursive: set[str] = field(default_factory=set)
    primal_recursive: set[str] = field(default_factory=set)  # nodes, not symbols

    @staticmethod
    def build(module: ModuleOp) -> CallGraph:
        functions = functions_by_name(module)
        graph = CallGraph(functions)
        raw: dict[str, list[str]] = {}
        primal: dict[str, list[str]] = {}
        for top in module.ops:
            if not isinstance(top, func.FuncOp):
                for op in top.walk():
                    graph.uses.update(symbol_uses(op))
        for name, fn in functions.items():
            sites = []
            graph.size[name] = -1 - len(fn.body.blocks)  # not the func.func, nor terminators
            for op in walk(fn):
                graph.size[name] += 1
                if isa(op, func.CallOp):
                    sites.append(op)
                if op is not fn and (used := symbol_uses(op)):  # its own attributes (irad.primal)
                    graph.uses.update(used)  # are provenance, not a use
            graph.calls[name] = sites
            raw[name] = [s.callee.root_reference.data for s in sites]
            here = node_of(fn)
            edges = primal.setdefault(here, [])
            for callee_name in raw[name]:
                callee = functions.get(callee_name)
                if callee is None:
                    continue
                there = node_of(callee)
                if there == here and role_of(callee) != role_of(fn):
                    continue  # a node's functions of other roles or orders: not recursion
                edges.append(there)
        graph.order = strongly_connected(raw)
        for i, members in enumerate(graph.order):
            for name in members:
                graph.component[name] = i
        graph.raw_recursive = on_cycles(graph.order, raw)
        graph.primal_recursive = on_cycles(strongly_connected(primal), primal)
        return graph

