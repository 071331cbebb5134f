"""Derivatives of the tape ops, for reverse over reverse (Enzyme's shadow tape).

Differentiating a gradient again meets the tape its loops and recursion keep
(irad/ir/dialect.py). A tape's cotangent is a *shadow tape*: at each slot, the
cotangent of the value recorded there. Push and read are each other's adjoint:

- `tape_read` of a record: its values' cotangents are added to the shadow at
  that record (`irad.shadow_add`);
- `tape_push` of a record: its values' cotangents are that record of the
  shadow (`irad.shadow_read`); the tape before the push gets the same shadow;
- `tape_reserve` (room for records to come) passes the shadow through;
- `tape_create`: the shadow has no more readers and is freed (so is a shadow
  handed to a tape that records nothing active, see PullbackBuilder.accumulate).

The shadow ops are linear, so they are adjoints of each other too (third
order): `shadow_add` is transposed like a push, `shadow_read` like a read,
`shadow_create` like `tape_create`.

A shadow is updated in place, so each shadow value is used once. The pullback
builder keeps it so: a read's adjoint takes the current shadow of its tape and
replaces it, and the reversed loops and `scf.if`s pass the current shadow of a
tape they read in and out (passes/ad/reverse.py, passes/ad/reverse_loops.py). Two shadows of
one tape (a tape read in place and by a callee's pullback) are merged.

Forward mode sees tapes only once irad-lower-tape has made them memref code
(which it follows with shadow memrefs, passes/ad/forward_regions.py).
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, f64, i64
from xdsl.ir import Operation, SSAValue

from irad.base.errors import DifferentiationError
from irad.ir import tensor as T
from irad.ir.constants import zero_constant
from irad.ir.dialect import (
    ShadowAddOp,
    ShadowCreateOp,
    ShadowReadOp,
    TapeCreateOp,
    TapeFreeOp,
    TapePushOp,
    TapeReadOp,
    TapeReserveOp,
    set_tape_batch,
    tape_batch,
)
from irad.ir.locations import location
from irad.ir.types import is_differentiable
from irad.passes.ad.derivatives import batching
from irad.passes.ad.derivatives.registry import OpDerivative


def _record_cotangents(b, values, cotangents) -> list[SSAValue]:
    """One value per record field: its cotangent, or zero (ints get zeros too,
    which shadow_add ignores)."""
    out = []
    for v, ct in zip(values, cotangents):
        if ct is None or not is_differentiable(v.type):
            ct = b.op(zero_constant(v.type))
        out.append(ct)
    return out


def _reverse_read(b, op: Operation, cotangents, adj) -> None:
    """values = tape[record ending at end]: add their cotangents into the shadow."""
    tape, end = op.operands[:2]
    values = op.results
    if all(ct is None for ct in cotangents) or not b.is_active(tape):
        return
    shadow = b.shadow(adj, tape)
    adj[tape] = b.op(ShadowAddOp(shadow, b.primal(end), _record_cotangents(b, values, cotangents)))


def _transpose_write(b, tape: SSAValue, end: SSAValue, values, shadow: SSAValue | None, adj) -> None:
    """A write of `values` as the record ending at `end` onto `tape`, given the
    shadow of the tape it makes: the values' cotangents are that record of the
    shadow, and the tape before the write has the same shadow."""
    if shadow is None:
        return
    if any(b.is_active(v) for v in values):
        cts = b.results(ShadowReadOp(shadow, b.primal(end), [v.type for v in values]))
        for v, ct in zip(values, cts):
            if is_differentiable(v.type):
                b.accumulate(adj, v, ct)
    b.accumulate(adj, tape, shadow)


def _reverse_push(b, op: TapePushOp, cotangents, adj) -> None:
    _transpose_write(b, op.tape, op.end, op.values, cotangents[0], adj)


def _reverse_shadow_add(b, op: ShadowAddOp, cotangents, adj) -> None:
    _transpose_write(b, op.shadow, op.end, op.values, cotangents[0], adj)


def _reverse_reserve(b, op: TapeReserveOp, cotangents, adj) -> None:
    """Room made on the tape records nothing: the shadow passes through."""
    b.accumulate(adj, op.tape, cotangents[0])


def _reverse_create(b, op: Operation, cotangents, adj) -> None:
    """The first op of a tape's life is the last of its shadow's: free it."""
    if cotangents[0] is not None:
        b.op(TapeFreeOp(cotangents[0]))


def _forward(b, op: Operation) -> None:
    if any(o in b.tangents for o in op.operands):
        raise DifferentiationError(
            f"{location(op)}: forward mode follows a tape once it is memref code\n"
            "  hint: run irad-lower-tape before irad-jvp"
        )
    b.clone(op)


# ---- batching (irad-vmap of a derivative through a loop) ---------------------------
# A tape created in a batched function is a batched tape (dialect.TAPE_BATCH):
# positions stay one element's, and each record's values that vary along the
# batch are stored for every element, the others once (passes/batching/records.py
# keeps push and read agreeing on which). The loop's state is recorded per
# element; a shared weight stays shared, in the pullback too.
def _batched_tape(b, op: Operation, tape: SSAValue) -> SSAValue:
    if not b.is_batched(tape):
        b.refuse(op, "a tape recorded for one element would record values that vary along the batch",
                 "vmap the function before differentiating it (an irad.vmap of the irad.grad request "
                 "does this), or take the per-element gradients with a Python loop")
    return b.get(tape)


def _position(b, op: Operation, v: SSAValue) -> SSAValue:
    return b.get(b.unbatched(v, op, "the tape position (a trip count that varies along the batch)"))


def _batch_create(b, op: TapeCreateOp) -> None:
    new = b.insert(TapeCreateOp())
    b.set(op.tape, new.tape, True)
    b.set(op.pos, new.pos, False)


def _index_as_float(e, a) -> SSAValue:
    return e.op(arith.SIToFPOp(e.op(arith.IndexCastOp(a[0], i64)), f64))


def _float_as_index(e, a) -> SSAValue:
    return e.op(arith.IndexCastOp(e.op(arith.FPToSIOp(a[0], i64)), IndexType()))


def _batch_push(b, op: TapePushOp) -> None:
    tape, pos = _batched_tape(b, op, op.tape), _position(b, op, op.pos)
    flags = [b.is_batched(v) for v in op.values]
    # an index per element (a position read from each element's data) is
    # recorded as the floats a tape records an index as: one slot each
    values = [T.elementwise(b, _index_as_float, [b.get(v)], f64) if f and isinstance(v.type, IndexType)
              else b.get(v) for v, f in zip(op.values, flags)]
    new = b.insert(TapePushOp(tape, pos, values, op.reserved is not None))
    set_tape_batch(new, b.size, flags)
    b.batcher.records.pushed(b, new, [v.type for v in op.values], flags)
    b.set(op.new_tape, new.new_tape, True)
    b.set(op.end, new.end, False)


def _batch_read(b, op: TapeReadOp) -> None:
    tape, end = _batched_tape(b, op, op.tape), _position(b, op, op.end)
    types = list(op.values.types)
    flags = b.batcher.records.read_flags(b, op, types)
    read = [b.batched_type(f64 if isinstance(t, IndexType) else t) if f else t for t, f in zip(types, flags)]
    new = b.insert(TapeReadOp(tape, end, read))
    set_tape_batch(new, b.size, flags)
    for old, v, flag in zip(op.values, new.values, flags):
        if flag and isinstance(old.type, IndexType):
            v = T.elementwise(b, _float_as_index, [v], IndexType())
        b.set(old, v, flag)


def _batch_reserve(b, op: TapeReserveOp) -> None:
    tape = _batched_tape(b, op, op.tape)
    new = b.insert(TapeReserveOp(tape, _position(b, op, op.pos), _position(b, op, op.slots)))
    set_tape_batch(new, b.size)
    b.set(op.new_tape, new.new_tape, True)


def batch_free(b, op: TapeFreeOp) -> None:
    b.insert(TapeFreeOp(_batched_tape(b, op, op.tape)))


def _refuse_batched(reverse):
    """`reverse`, refusing a batched tape: a shadow tape has no batch."""

    def rule(b, op: Operation, cotangents, adj) -> None:
        if tape_batch(op)[0] != 1:
            raise DifferentiationError(
                f"{location(op)}: {op.name}: differentiating per-example gradients through a loop again "
                "(a batched tape) is not supported\n  hint: take the outer derivative inside the vmap, "
                "or the per-example gradients with a Python loop"
            )
        reverse(b, op, cotangents, adj)

    return rule


ENTRIES: dict[str, OpDerivative] = {
    e.name: e
    for e in (
        OpDerivative(TapeCreateOp.name, _reverse_create, _forward, structured=True, batch=_batch_create),
        OpDerivative(TapePushOp.name, _refuse_batched(_reverse_push), _forward, structured=True, batch=_batch_push),
        OpDerivative(TapeReadOp.name, _refuse_batched(_reverse_read), _forward, structured=True, batch=_batch_read),
        OpDerivative(TapeReserveOp.name, _refuse_batched(_reverse_reserve), _forward, structured=True,
                     batch=_batch_reserve),
        OpDerivative(ShadowCreateOp.name, _reverse_create, _forward, structured=True, batch=batching.tape),
        OpDerivative(ShadowAddOp.name, _reverse_shadow_add, _forward, structured=True, batch=batching.tape),
        OpDerivative(ShadowReadOp.name, _reverse_read, _forward, structured=True, batch=batching.tape),
    )
}
