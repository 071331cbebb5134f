"""Auxiliary results (JAX's has_aux): a request's `aux = k` says that the
callee's results from #k on are returned but never differentiated.

The request is rewritten on a copy of the callee whose aux float results pass
through irad.stop_gradient, so no cotangent reaches what computes them: zero
cotangents fed to their pullbacks could still make NaN (0 * inf). The callee
itself is unchanged (its recursive calls use all its results)."""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, StringAttr
from xdsl.ir import Attribute, Block, Region
from xdsl.rewriter import Rewriter

from irad.ir.symbols import fresh_symbol, functions_by_name
from irad.ir.types import is_differentiable
from irad.markers import stop_gradient
from irad.passes.ad.rule_ir import rule_key
from irad.rules.keys import target_key


def stop_gradient_function(module: ModuleOp, t: Attribute) -> str:
    """A function `x -> x` of type `t` that the rule table marks non-differentiable
    (irad.stop_gradient): no cotangent flows through a call to it."""
    key = target_key(stop_gradient)
    taken = functions_by_name(module)
    for name, op in taken.items():
        if rule_key(op) == key and tuple(op.function_type.inputs.data) == (t,):
            return name
    name = fresh_symbol(key, taken)
    block = Block(arg_types=[t])
    block.add_op(func.ReturnOp(block.args[0]))
    op = func.FuncOp(name, FunctionType.from_lists([t], [t]), Region(block), visibility="private")
    if name != key:
        op.attributes["irad.target"] = StringAttr(key)
    module.body.block.add_op(op)
    return name


def cut_aux(module: ModuleOp, name: str, aux: int) -> str:
    """A private copy of @name whose float results from #aux on pass through
    irad.stop_gradient; returns the copy's name."""
    primal = functions_by_name(module)[name]
    copy = primal.clone()
    copy.sym_name = StringAttr(fresh_symbol(f"{name}.aux", functions_by_name(module)))
    copy.sym_visibility = StringAttr("private")
    ret = copy.body.block.last_op
    values = list(ret.operands)
    for i in range(aux, len(values)):
        if is_differentiable(values[i].type):
            stop = func.CallOp(stop_gradient_function(module, values[i].type), [values[i]], [values[i].type])
            copy.body.block.insert_op_before(stop, ret)
            values[i] = stop.res[0]
    Rewriter.replace_op(ret, func.ReturnOp(*values))
    module.body.block.add_op(copy)
    return copy.sym_name.data
