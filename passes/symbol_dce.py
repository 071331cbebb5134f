"""`irad-symbol-dce`: drop private functions nothing public reaches.

After differentiation the primal helpers (and generated functions whose
callers were inlined or folded away) are often unused; MLIR has
`symbol-dce` for this, xDSL 0.75 does not.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from irad.ir.walk import walk
from irad.passes.optimisation.callgraph import symbol_uses
from irad.ir.symbols import functions_by_name


def _referenced_symbols(op) -> set[str]:
    """The symbols the ops nested in `op` name (not `op`'s own: a function's
    provenance attributes name its primal)."""
    names = set()
    for inner in walk(op):
        if inner is not op:
            names.update(symbol_uses(inner))
    return names


class SymbolDCEPass(ModulePass):
    """Erase private func.func ops that no public function can reach."""

    name = "irad-symbol-dce"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        functions = functions_by_name(op)
        live = [
            name
            for name, f in functions.items()
            if f.sym_visibility is None or f.sym_visibility.data != "private"
        ]
        seen = set(live)
        while live:
            for name in _referenced_symbols(functions[live.pop()]):
                if name in functions and name not in seen:
                    seen.add(name)
                    live.append(name)
        for name, f in functions.items():
            if name not in seen:
                op.body.block.erase_op(f)
