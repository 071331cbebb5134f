"""Using a rule's IR in a module: copying the functions it calls, inlining its bodies.

Shared by reverse mode (rrules) and forward mode (frules).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, SSAValue

from irad.base.errors import DifferentiationError
from irad.ir.symbols import fresh_symbol, rename_callees


def rule_key(fn: func.FuncOp) -> str:
    """The rule-table target of a function: its `irad.target`, else its symbol."""
    target = fn.attributes.get("irad.target")
    return target.data if isinstance(target, StringAttr) else fn.sym_name.data


def import_helpers(
    module, functions: dict[str, func.FuncOp], ir, callee: str
) -> dict[str, str]:
    """Copy the functions a rule's IR calls into `module` (whose functions by
    symbol are `functions`); returns the renaming of the rule's symbols, with
    calls to the primal pointing at `callee`."""
    symbols = {s: callee for s in ir.primal_symbols}
    fresh = []
    for helper in ir.helpers:
        sym = helper.sym_name.data
        existing = functions.get(sym)
        if existing is not None and _same_function(existing, helper):
            continue
        name = fresh_symbol(sym, functions)
        symbols[sym] = name
        copy = helper.clone()
        copy.sym_name = StringAttr(name)
        copy.sym_visibility = StringAttr("private")
        if name != sym and "irad.target" not in copy.attributes:
            copy.attributes["irad.target"] = StringAttr(rule_key(helper))
        functions[name] = copy
        fresh.append(copy)
    for copy in fresh:
        rename_callees(copy, symbols)
        module.body.block.add_op(copy)
    return symbols


def _same_function(a: func.FuncOp, b: func.FuncOp) -> bool:
    """Whether a module's function can stand in for a rule's helper of the same name."""
    return a.function_type == b.function_type and rule_key(a) == rule_key(b)


def inline_body(
    fn: func.FuncOp, symbols: dict[str, str], args: Sequence[SSAValue], dst: Block
) -> list[SSAValue]:
    """Clone a rule function's body into `dst` with its arguments bound to `args`,
    renaming the callees of calls by `symbols`; returns the values it returns."""
    body = fn.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(body.args, args))
    for op in body.ops:
        if isinstance(op, func.ReturnOp):
            return [mapping[v] for v in op.operands]
        copy = op.clone(value_mapper=mapping, clone_name_hints=False)
        rename_callees(copy, symbols)
        dst.add_op(copy)
    raise DifferentiationError(f"rule function @{fn.sym_name.data} has no func.return")
