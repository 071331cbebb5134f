"""Activity analysis: which values need cotangent code.

A value is active when it is a float that both *varies* (depends on an active
argument through differentiable ops) and is *useful* (a returned float depends
on it through differentiable ops). A tape (reverse mode's own records, met when
generated code is differentiated again) is active when it records an active
value: its cotangent is a shadow tape (passes/ad/derivatives/tape.py). Integers
and booleans are never active, and
neither are results of piecewise-constant ops (floor, comparisons, ...), so no
cotangent code is emitted for them, and a call whose results only feed a
comparison is not differentiated at all.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence, Set

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType
from xdsl.ir import Attribute, Block, Operation, SSAValue

from irad.ir.dialect import TAPE
from irad.ir.types import is_differentiable
from irad.passes.ad.derivatives import is_non_differentiable, refused_reason
from irad.ir.walk import defined_inside, ops_of, walk
from irad.ir.isa import isa


def carries_cotangent(t) -> bool:
    """Floats, float tensors, and tapes (whose cotangents are shadow tapes)."""
    return is_differentiable(t) or t == TAPE


def varied_values(
    fn: func.FuncOp,
    active_args: Sequence[bool],
    constant: Set[Operation] = frozenset(),
    carries: Callable[[Attribute], bool] = carries_cotangent,
    shadows: bool = False,
) -> set[SSAValue]:
    """The values of `fn` that depend on an active argument (propagate_varied)."""
    varied = {arg for arg, is_active in zip(fn.body.block.args, active_args) if is_active and carries(arg.type)}
    propagate_varied(fn.body.block.ops, varied, constant, carries, shadows)
    return varied


def propagate_varied(
    ops: Iterable[Operation],
    varied: set[SSAValue],
    constant: Set[Operation] = frozenset(),
    carries: Callable[[Attribute], bool] = carries_cotangent,
    shadows: bool = False,
) -> None:
    """Add to `varied` the values of `ops` (and of the ops nested in them) that
    depend on it through differentiable ops, where their type `carries` a
    derivative (reverse mode: carries_cotangent; forward mode: a tangent).
    `constant` are ops (calls to non-differentiable functions) whose results
    carry no derivative. With `shadows` (forward mode), a memref that `carries`
    accepts always varies, for its shadow always exists."""

    def always(t: Attribute) -> bool:
        return shadows and not is_differentiable(t) and carries(t)

    def inner(block: Block, values: set[SSAValue]) -> None:
        propagate_varied(block.ops, values, constant, carries, shadows)

    for op in ops:
        if is_non_differentiable(op) or op in constant:
            continue
        # op.regions first: isinstance against xDSL's op classes is slow, and most ops have none
        if op.regions and isinstance(op, (scf.ForOp, scf.WhileOp)):
            propagate_loop(op, varied, inner, carries, forward=True)
            continue
        if op.regions and isinstance(op, scf.IfOp):
            for region in op.regions:
                inner(region.block, varied)
            yields = [r.block.last_op for r in op.regions]
            for i, result in enumerate(op.results):
                if carries(result.type) and any(y.operands[i] in varied for y in yields):
                    varied.add(result)
            continue
        inputs = op.operands
        if op.regions:  # a linalg op: what its body yields depends on what it reads
            for region in op.regions:
                for block in region.blocks:
                    varied.update(a for a in block.args if always(a.type))
                    inner(block, varied)
            inputs = [*op.operands, *(v for r in op.regions for b in r.blocks if b.ops for v in b.last_op.operands)]
        depends = any(v in varied for v in inputs)
        varied.update(r for r in op.results if carries(r.type) and (depends or always(r.type)))


def active_values(
    fn: func.FuncOp,
    active_args: Sequence[bool],
    constant: Set[Operation] = frozenset(),
    varied: set[SSAValue] | None = None,
) -> set[SSAValue]:
    """`constant` as in varied_values; `varied`: what varied_values gave, if
    the caller has it already."""
    if varied is None:
        varied = varied_values(fn, active_args, constant)
    body = fn.body.block
    useful = {v for v in body.last_op.operands if carries_cotangent(v.type)}
    _propagate_back(body, useful, constant)
    return varied & useful


def varied_memory(fn: func.FuncOp, varied: Set[SSAValue]) -> Operation | None:
    """An op that puts a `varied` value (varied_values) into memory (a
    memref.store of it, or a call taking it and returning a memref), if any.

    Reverse mode does not follow derivatives through memory, so such code
    (generated code's tape once lowered, differentiated again) must be refused,
    not given a silently wrong zero. Tapes are followed (passes/ad/derivatives/tape.py)."""
    for op in walk(fn):
        if op.name == "memref.store" and op.operands[0] in varied:
            return op
        if any(isa(r.type, MemRefType) and r.type != TAPE for r in op.results) and any(
            o in varied for o in op.operands
        ):
            return op
    return None


def refused_use(fn: func.FuncOp, varied: Set[SSAValue]) -> Operation | None:
    """An op the registry refuses to differentiate that a `varied` value
    (varied_values) reaches, if any (the pass reports it rather than let its
    results pass for constants)."""
    for op in walk(fn):
        if refused_reason(op) and any(o in varied for o in op.operands):
            return op
    return None


def loop_links(op: Operation) -> list[tuple[tuple[SSAValue, ...], tuple[SSAValue, ...]]]:
    """Per value a loop carries, (the values that flow into it, the values that
    hold it). scf.for: ((init, yielded value), (body argument, result)).
    scf.while: ((init, value the after region yields), (before-region argument,)),
    and for what the condition passes on, ((condition operand,), (after-region
    argument, result))."""
    if isinstance(op, scf.ForOp):
        body = op.body.block
        return [((init, out), (arg, result)) for init, arg, out, result in
                zip(op.operands[3:], body.args[1:], body.last_op.operands, op.results)]
    before, after = op.before_region.block, op.after_region.block
    carried = [((init, out), (arg,)) for init, arg, out in zip(op.operands, before.args, after.last_op.operands)]
    forwarded = [((out,), (arg, result)) for out, arg, result in
                 zip(before.last_op.operands[1:], after.args, op.results)]
    return carried + forwarded


def propagate_loop(
    op: Operation, values: set[SSAValue], propagate, carries=is_differentiable, *, forward: bool
) -> None:
    """Iterate a loop's body to a fixed point, along the flow of each carried
    value (of a type `carries` accepts): going forward (what varies), what holds
    it varies where what flows into it does; going back (what is useful), what
    flows into it is useful where what holds it is. So a loop that makes `v`
    vary makes neither `v`'s starting value vary nor a value an iteration yields
    that depends on nothing varying (a constant call's result, which is never
    differentiated)."""
    while True:
        size = len(values)
        for into, holds in loop_links(op):
            if carries(into[0].type):
                source, target = (into, holds) if forward else (holds, into)
                if any(v in values for v in source):
                    values.update(target)
        for region in op.regions:
            propagate(region.block, values)
        if len(values) == size:
            return


def _propagate_back(block: Block, useful: set[SSAValue], constant: Set[Operation]) -> None:
    for op in reversed(ops_of(block)):
        if is_non_differentiable(op) or op in constant:
            continue
        if not any(r in useful for r in op.results):
            continue
        if op.regions and isinstance(op, (scf.ForOp, scf.WhileOp)):
            propagate_loop(
                op, useful, lambda b, v: _propagate_back(b, v, constant), carries_cotangent, forward=False
            )
            continue
        if op.regions and isinstance(op, scf.IfOp):
            for region in op.regions:
                yielded = region.block.last_op.operands
                useful.update(y for y, r in zip(yielded, op.results) if r in useful)
                _propagate_back(region.block, useful, constant)
            continue
        useful.update(o for o in op.operands if carries_cotangent(o.type))


def free_values(
    region_op: Operation, active: set[SSAValue] | None
) -> list[SSAValue]:
    """Active values (all values if `active` is None) used inside `region_op`
    but defined outside it, in order."""
    seen: dict[SSAValue, None] = {}
    for region in region_op.regions:
        for inner in region.walk():
            for v in inner.operands:
                if (active is None or v in active) and v not in seen:
                    if not defined_inside(v, region_op):
                        seen[v] = None
    return list(seen)
