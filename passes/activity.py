"""Activity analysis: which values need cotangent code.

A value is active when it is a float that both *varies* (depends on an active
argument through differentiable ops) and is *useful* (a returned float depends
on it through differentiable ops). Integers and booleans are never active, and
neither are results of piecewise-constant ops (floor, comparisons, ...), so no
cotangent code is emitted for them, and a call whose results only feed a
comparison is not differentiated at all.
"""

from __future__ import annotations

from collections.abc import Sequence, Set

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import Float32Type, Float64Type, TensorType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from irad.passes.adjoints import NON_DIFFERENTIABLE


def is_float_type(t: Attribute) -> bool:
    """A float, or a tensor of floats (whose cotangent is a tensor of its shape)."""
    if isinstance(t, TensorType):
        t = t.element_type
    return isinstance(t, (Float64Type, Float32Type))


def active_values(
    fn: func.FuncOp, active_args: Sequence[bool], constant: Set[Operation] = frozenset()
) -> set[SSAValue]:
    """`constant` are ops (calls to non-differentiable functions) whose results
    carry no derivative."""
    varied: set[SSAValue] = {
        arg
        for arg, is_active in zip(fn.body.block.args, active_args)
        if is_active and is_float_type(arg.type)
    }
    _propagate(fn.body.block, varied, constant)
    body = fn.body.block
    useful = {v for v in body.last_op.operands if is_float_type(v.type)}
    _propagate_back(body, useful, constant)
    return varied & useful


def _propagate_back(block: Block, useful: set[SSAValue], constant: Set[Operation]) -> None:
    for op in reversed(list(block.ops)):
        if op.name in NON_DIFFERENTIABLE or op in constant:
            continue
        if not any(r in useful for r in op.results):
            continue
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                yielded = region.block.last_op.operands
                useful.update(y for y, r in zip(yielded, op.results) if r in useful)
                _propagate_back(region.block, useful, constant)
            continue
        useful.update(o for o in op.operands if is_float_type(o.type))


def _propagate(block: Block, active: set[SSAValue], constant: Set[Operation]) -> None:
    for op in block.ops:
        if op.name in NON_DIFFERENTIABLE or op in constant:
            continue
        if isinstance(op, scf.IfOp):
            for region in op.regions:
                _propagate(region.block, active, constant)
            yields = [r.block.last_op for r in op.regions]
            for i, result in enumerate(op.results):
                if is_float_type(result.type) and any(
                    y.operands[i] in active for y in yields
                ):
                    active.add(result)
            continue
        if any(operand in active for operand in op.operands):
            active.update(r for r in op.results if is_float_type(r.type))
