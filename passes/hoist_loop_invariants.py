"""irad-hoist-loop-invariants: array and float code of an `scf.for` body that
reads only values from outside the loop, computed once before it.

Differentiation leaves such code in loops: the broadcast of a bias `b` to the
rows of a step's gates stays in the augmented primal's loop, and the reversed
loop transposes a weight every iteration for `g Whᵀ` (the adjoint of `h @ Wh`).
Before differentiation only scalar code is hoisted (passes/ad/reverse_loops.py,
`hoist_invariants`: what the reverse sweep then reads from outside, with
`hoist_out_of` below); this pass runs on the generated code, where a numpy call
or a native copy per iteration is what it saves.

An op moves when it has no effects (as `irad-optimize`'s DCE judges, linalg
ops on tensors by their bodies), is not a terminator or a loop, and takes no
integer or index operand: then it cannot trap or read out of bounds when
computed before its loop, even before a bounds check of the body or for a loop
that runs no iteration (which computes it for nothing). An op whose operands
are made by ops hoisted before it moves too; inner loops first, so an
invariant climbs as far as it can.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.dialects import builtin, scf
from xdsl.dialects.builtin import IndexType, IntegerType, TensorType
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator

from irad.passes.optimisation.simplify import dead_if_unused
from irad.ir.walk import defined_inside, find, walk


def _integer(v: SSAValue) -> bool:
    t = v.type
    elem = t.element_type if isinstance(t, TensorType) else t
    return isinstance(elem, IntegerType | IndexType)


def _movable(op: Operation) -> bool:
    return (
        (not op.regions or op.name.startswith("linalg."))
        and not any(_integer(v) for v in op.operands)
        and dead_if_unused(op)
    )


def hoist_loop_invariants(loop: scf.ForOp) -> bool:
    """Move the invariant ops of `loop`'s body before it (see the module
    docstring); whether any moved."""
    return hoist_out_of(loop, loop.body.block, _movable)


def hoist_out_of(loop: Operation, body: Block, movable: Callable[[Operation], bool]) -> bool:
    """Move the ops of `body` (a block of `loop`) that `movable` accepts and that
    read only values from outside `loop` or made by ops moved before them, in
    their order, before `loop`; whether any moved."""
    chosen: dict[Operation, None] = {}  # in order
    for op in body.ops:
        if (
            not op.has_trait(IsTerminator)
            and movable(op)
            and not any(defined_inside(v, loop) and v.owner not in chosen for v in _reads(op))
        ):
            chosen[op] = None
    # A tensor.empty moves only with all its users (the destinations of linalg
    # ops the loop keeps stay in it: natively, a destination made outside the
    # loop and written in every iteration would be copied); so do the ops that
    # read what stays.
    kept = set(body.ops) - set(chosen)
    while True:
        stays = {
            op for op in chosen
            if (op.name == "tensor.empty" and any(use.operation in kept for use in op.results[0].uses))
            or any(v.owner in kept for v in _reads(op))
        }
        if not stays:
            break
        kept |= stays
        chosen = {op: None for op in chosen if op not in stays}
    for op in chosen:
        op.detach()
        loop.parent_block().insert_op_before(op, loop)
    return bool(chosen)


def _reads(op: Operation):
    """The values `op` reads from outside itself: its operands, and those its
    regions' ops (a linalg op's body) take from further out."""
    yield from op.operands
    for inner in walk(op) if op.regions else ():
        if inner is not op:
            yield from (v for v in inner.operands if not defined_inside(v, op))


class HoistLoopInvariantsPass(ModulePass):
    """Move loop-invariant, effect-free array and float ops out of `scf.for`
    loops (see passes/hoist_loop_invariants.py)."""

    name = "irad-hoist-loop-invariants"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        for loop in reversed(find(op, scf.ForOp)):
            hoist_loop_invariants(loop)
