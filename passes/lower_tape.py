"""`irad-lower-tape`: the tape ops of the irad dialect as memref code.

Reverse mode emits `irad.tape_create`, `irad.tape_push`, `irad.tape_read`,
`irad.tape_reserve` and `irad.tape_free` (see irad/ir/dialect.py; passes/loops.py says what the
records hold). This pass turns them into standard memref/arith/scf code, which
both backends run and mlir-opt 22 parses and lowers:

* the tape is a `memref<?xf64>`, created with room for INITIAL_CAPACITY slots;
* a push computes its end position and, if the record does not fit, grows the
  tape by doubling (a fresh buffer, a copy loop, a dealloc of the old one), so
  pushing is amortised O(1) and a run costs O(total iterations); then it
  stores each value at the next slots. A `reserved` push skips the check: a
  reserve grew the tape once, the same way, for all the pushes of a loop;
* values are stored as f64: f32 is widened, i1 goes through uitofp, ints of up
  to 32 bits (exact) and indices (positions and counts, far below 2**53) through
  sitofp/fptosi, and an i64 as two slots, `v // 2**32` and `v % 2**32`, so every
  i64 comes back exact. A tensor (of static shape) takes one slot per element
  (an i64 element is exact below 2**53 only): it is copied into a `memref.subview` of
  the tape (`bufferization.materialize_in_destination` into a buffer, then `memref.copy`) and read back by a copy
  into a buffer and `bufferization.to_tensor`;
* a reserve grows the tape as a push would, for `slots` slots after its position;
* a read loads the record that ends at its position, field by field;
* a free is a `memref.dealloc`.

The shadow ops (reverse over reverse) lower the same way on a shadow's buffer,
which starts zeroed and grows zero-filled: `irad.shadow_add` loads each float
field of a record, adds the cotangent and stores it back; `irad.shadow_read`
loads a record's float fields, or zeros when the shadow never grew that far
(no cotangent was ever added to it: records do not overlap); `irad.shadow_merge`
adds one shadow into another slot by slot.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.context import Context
from xdsl.dialects import arith, bufferization, memref, scf
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.constants import zero_constant
from irad.ir.dialect import (
    TAPE,
    TAPE_COPY,
    ShadowAddOp,
    ShadowCreateOp,
    ShadowMergeOp,
    ShadowReadOp,
    TapeCreateOp,
    TapeFreeOp,
    TapePushOp,
    TapeReadOp,
    TapeReserveOp,
    record_slots,
)
from irad.ir.types import is_differentiable

INDEX = IndexType()
# Initial capacity of a tape, in f64 slots.
INITIAL_CAPACITY = 64


def _slots(t: Attribute) -> int:
    return record_slots([t])


def _tape_view(c: IRBuilder, tape: SSAValue, at: SSAValue, n: int) -> SSAValue:
    view_type = memref.SubviewOp.infer_result_type(TAPE, [at], [n], [1])
    return c.value(memref.SubviewOp.get(tape, [at], [n], [1], view_type))


def _push_tensor(c: IRBuilder, tape: SSAValue, at: SSAValue, v: SSAValue) -> None:
    t = v.type
    if not isinstance(t.element_type, Float64Type):
        v = T.to_float(c, v, f64) if isinstance(t.element_type, IntegerType) else (
            c.value(arith.ExtFOp(v, TensorType(f64, t.get_shape())))
        )
    n = _slots(t)
    flat = T.reshape(c, v, [n])
    # Into a buffer of its own, then onto the tape. Not to_buffer + copy:
    # bufferization does not see a to_buffer's memref used later and may reuse
    # its buffer meanwhile (two pushes of one value, CSE'd into one to_buffer,
    # stored another op's result). The buffer is freed by MLIR's deallocation
    # pipeline (natively) or by the garbage collector (Python backend).
    buffer = c.value(memref.AllocOp.get(f64, shape=[n]))
    c.insert(bufferization.MaterializeInDestinationOp(
        operands=[flat, buffer],
        properties={"restrict": UnitAttr(), "writable": UnitAttr()},
        result_types=[[]],
    ))
    c.insert(memref.CopyOp(buffer, _tape_view(c, tape, at, n)))


def _load_tensor(c: IRBuilder, tape: SSAValue, at: SSAValue, t: TensorType) -> SSAValue:
    n = _slots(t)
    buffer = c.value(memref.AllocOp.get(f64, shape=[n]))  # to_tensor wants an identity layout
    c.insert(memref.CopyOp(_tape_view(c, tape, at, n), buffer))
    flat = c.value(bufferization.ToTensorOp(buffer, restrict=True))
    raw = T.reshape(c, flat, t.get_shape())
    elem = t.element_type
    if isinstance(elem, Float64Type):
        return raw
    if isinstance(elem, Float32Type):
        return c.value(arith.TruncFOp(raw, t))

    def decode(e: IRBuilder, args) -> SSAValue:
        return _decode(e, args[:1], elem)

    return T.elementwise(c, decode, [raw], elem)


_HIGH = 2**32  # a wide integer is recorded as v // 2**32 and v % 2**32, each exact in f64


def _encode(c: IRBuilder, v: SSAValue) -> list[SSAValue]:
    """A scalar as the f64 slots it takes (dialect.record_slots)."""
    t = v.type
    if isinstance(t, Float64Type):
        return [v]
    if isinstance(t, Float32Type):
        return [c.value(arith.ExtFOp(v, f64))]
    if isinstance(t, IndexType):  # a position or count: far below 2**53
        v = c.value(arith.IndexCastOp(v, i64))
        t = i64
    elif record_slots([t]) == 2:
        scale = c.value(arith.ConstantOp.from_int_and_width(_HIGH, t))
        high = c.value(arith.FloorDivSIOp(v, scale))
        low = c.value(arith.SubiOp(v, c.value(arith.MuliOp(high, scale))))
        return [c.value(arith.SIToFPOp(high, f64)), c.value(arith.SIToFPOp(low, f64))]
    if t.width.data == 1:
        return [c.value(arith.UIToFPOp(v, f64))]
    return [c.value(arith.SIToFPOp(v, f64))]


def _decode(c: IRBuilder, raw: Sequence[SSAValue], t: Attribute) -> SSAValue:
    """The scalar of type `t` the slots `raw` hold."""
    if isinstance(t, Float64Type):
        return raw[0]
    if isinstance(t, Float32Type):
        return c.value(arith.TruncFOp(raw[0], t))
    if isinstance(t, IntegerType) and t.width.data == 1:
        return c.value(arith.CmpfOp(raw[0], c.value(arith.ConstantOp(FloatAttr(0.0, f64))), "une"))
    if len(raw) == 2:
        high, low = (c.value(arith.FPToSIOp(r, t)) for r in raw)
        scale = c.value(arith.ConstantOp.from_int_and_width(_HIGH, t))
        return c.value(arith.AddiOp(c.value(arith.MuliOp(high, scale)), low))
    as_int = c.value(arith.FPToSIOp(raw[0], i64))
    if isinstance(t, IndexType):
        return c.value(arith.IndexCastOp(as_int, INDEX))
    if t.width.data != 64:
        return c.value(arith.TruncIOp(as_int, t))
    return as_int


def _for_each_slot(c: IRBuilder, lower: SSAValue, upper: SSAValue, body) -> scf.ForOp:
    """An scf.for over slots [lower, upper) whose body `body(builder, k)` builds."""
    block = Block(arg_types=[INDEX])
    body(IRBuilder(block), block.args[0])
    block.add_op(scf.YieldOp())
    return c.insert(scf.ForOp(lower, upper, c.index(1), [], Region(block)))


def _fill_zeros(c: IRBuilder, buffer: SSAValue, lower: SSAValue, upper: SSAValue) -> None:
    def store_zero(e: IRBuilder, k: SSAValue) -> None:
        e.insert(memref.StoreOp.get(e.value(arith.ConstantOp(FloatAttr(0.0, f64))), buffer, [k]))

    _for_each_slot(c, lower, upper, store_zero)


def _grown(c: IRBuilder, tape: SSAValue, pos: SSAValue, end: SSAValue, zeroed: bool = False) -> SSAValue:
    """The tape, or a copy of its first `pos` slots twice as large (at least
    `end` slots) when `end` is past its capacity; a shadow (`zeroed`) has the
    slots past `pos` set to zero."""
    capacity = c.value(memref.DimOp(tape, c.index(0)))
    full = c.value(arith.CmpiOp(end, capacity, "ugt"))
    grown = Block()
    g = IRBuilder(grown)
    doubled = g.value(arith.MaxSIOp(g.value(arith.AddiOp(capacity, capacity)), end))
    bigger = g.value(memref.AllocOp.get(f64, shape=[DYNAMIC_INDEX], dynamic_sizes=[doubled]))

    def copy(e: IRBuilder, k: SSAValue) -> None:
        e.insert(memref.StoreOp.get(e.value(memref.LoadOp.get(tape, [k])), bigger, [k]))

    copy_loop = _for_each_slot(g, g.index(0), pos, copy)
    copy_loop.attributes[TAPE_COPY] = UnitAttr()
    if zeroed:
        _fill_zeros(g, bigger, pos, doubled)
    g.insert(memref.DeallocOp.get(tape))
    g.insert(scf.YieldOp(bigger))
    same = Block()
    same.add_op(scf.YieldOp(tape))
    return c.value(scf.IfOp(full, [TAPE], Region(grown), Region(same)))


def _create(c: IRBuilder) -> list[SSAValue]:
    size = c.index(INITIAL_CAPACITY)
    tape = c.value(memref.AllocOp.get(f64, shape=[DYNAMIC_INDEX], dynamic_sizes=[size]))
    return [tape, c.index(0)]


def _push(
    c: IRBuilder, tape: SSAValue, pos: SSAValue, values: Sequence[SSAValue], reserved: bool
) -> list[SSAValue]:
    end = c.value(arith.AddiOp(pos, c.index(sum(_slots(v.type) for v in values))))
    if not reserved:
        tape = _grown(c, tape, pos, end)
    j = 0
    for v in values:
        if isinstance(v.type, TensorType):
            _push_tensor(c, tape, c.value(arith.AddiOp(pos, c.index(j))), v)
        else:
            at = c.value(arith.AddiOp(pos, c.index(j)))
            for k, slot in enumerate(_encode(c, v)):
                if k:
                    at = c.value(arith.AddiOp(pos, c.index(j + k)))
                c.insert(memref.StoreOp.get(slot, tape, [at]))
        j += _slots(v.type)
    return [tape, end]


def _read(c: IRBuilder, tape: SSAValue, end: SSAValue, types: Sequence[Attribute]) -> list[SSAValue]:
    base = c.value(arith.SubiOp(end, c.index(sum(_slots(t) for t in types))))
    values, j = [], 0
    for t in types:
        if isinstance(t, TensorType):
            values.append(_load_tensor(c, tape, c.value(arith.AddiOp(base, c.index(j))), t))
        else:
            raw = [
                c.value(memref.LoadOp.get(tape, [c.value(arith.AddiOp(base, c.index(j + k)))]))
                for k in range(_slots(t))
            ]
            values.append(_decode(c, raw, t))
        j += _slots(t)
    return values


def _create_shadow(c: IRBuilder) -> list[SSAValue]:
    size = c.index(INITIAL_CAPACITY)
    shadow = c.value(memref.AllocOp.get(f64, shape=[DYNAMIC_INDEX], dynamic_sizes=[size]))
    _fill_zeros(c, shadow, c.index(0), size)
    return [shadow]


def _record_start(c: IRBuilder, end: SSAValue, types: Sequence[Attribute]) -> SSAValue:
    return c.value(arith.SubiOp(end, c.index(sum(_slots(t) for t in types))))


def _shadow_add(c: IRBuilder, shadow: SSAValue, end: SSAValue, values: Sequence[SSAValue]) -> list[SSAValue]:
    types = [v.type for v in values]
    base = _record_start(c, end, types)
    capacity = c.value(memref.DimOp(shadow, c.index(0)))
    shadow = _grown(c, shadow, capacity, end, zeroed=True)
    j = 0
    for v in values:
        if is_differentiable(v.type):
            at = c.value(arith.AddiOp(base, c.index(j)))
            if isinstance(v.type, TensorType):
                total = c.value(arith.AddfOp(_load_tensor(c, shadow, at, v.type), v))
                _push_tensor(c, shadow, at, total)
            else:
                old = _decode(c, [c.value(memref.LoadOp.get(shadow, [at]))], v.type)
                (new,) = _encode(c, c.value(arith.AddfOp(old, v)))
                c.insert(memref.StoreOp.get(new, shadow, [at]))
        j += _slots(v.type)
    return [shadow]


def _zero(c: IRBuilder, t: Attribute) -> SSAValue:
    return c.value(zero_constant(t))


def _shadow_read(c: IRBuilder, shadow: SSAValue, end: SSAValue, types: Sequence[Attribute]) -> list[SSAValue]:
    capacity = c.value(memref.DimOp(shadow, c.index(0)))
    grew_there = c.value(arith.CmpiOp(end, capacity, "ule"))
    added, never = Block(), Block()
    a, z = IRBuilder(added), IRBuilder(never)
    base = _record_start(a, end, types)
    values, j = [], 0
    for t in types:
        if not is_differentiable(t):
            values.append(_zero(a, t))
        else:
            at = a.value(arith.AddiOp(base, a.index(j)))
            if isinstance(t, TensorType):
                values.append(_load_tensor(a, shadow, at, t))
            else:
                values.append(_decode(a, [a.value(memref.LoadOp.get(shadow, [at]))], t))
        j += _slots(t)
    a.insert(scf.YieldOp(*values))
    z.insert(scf.YieldOp(*(_zero(z, t) for t in types)))
    return list(c.insert(scf.IfOp(grew_there, list(types), Region(added), Region(never))).results)


def _shadow_merge(c: IRBuilder, into: SSAValue, other: SSAValue) -> list[SSAValue]:
    size = c.value(memref.DimOp(other, c.index(0)))
    capacity = c.value(memref.DimOp(into, c.index(0)))
    into = _grown(c, into, capacity, size, zeroed=True)

    def add(e: IRBuilder, k: SSAValue) -> None:
        total = e.value(arith.AddfOp(e.value(memref.LoadOp.get(into, [k])), e.value(memref.LoadOp.get(other, [k]))))
        e.insert(memref.StoreOp.get(total, into, [k]))

    _for_each_slot(c, c.index(0), size, add)
    c.insert(memref.DeallocOp.get(other))
    return [into]


def _lower(op, rewriter: PatternRewriter, emit) -> None:
    """Replace `op` by the code `emit(cursor)` builds, whose values replace its results."""
    code = Block()
    results = emit(IRBuilder(code))
    rewriter.inline_block(code, InsertPoint.before(op))
    rewriter.replace(op, [], results)


class LowerTapeCreate(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TapeCreateOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, _create)


class LowerTapePush(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TapePushOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, lambda c: _push(c, op.tape, op.pos, op.values, op.reserved is not None))


class LowerTapeReserve(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TapeReserveOp, rewriter: PatternRewriter, /):
        def grow(c: IRBuilder) -> list[SSAValue]:
            return [_grown(c, op.tape, op.pos, c.value(arith.AddiOp(op.pos, op.slots)))]

        _lower(op, rewriter, grow)


class LowerTapeRead(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TapeReadOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, lambda c: _read(c, op.tape, op.end, op.values.types))


class LowerShadowCreate(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ShadowCreateOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, _create_shadow)


class LowerShadowAdd(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ShadowAddOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, lambda c: _shadow_add(c, op.shadow, op.end, op.values))


class LowerShadowRead(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ShadowReadOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, lambda c: _shadow_read(c, op.shadow, op.end, op.values.types))


class LowerShadowMerge(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ShadowMergeOp, rewriter: PatternRewriter, /):
        _lower(op, rewriter, lambda c: _shadow_merge(c, op.into, op.other))


class LowerTapeFree(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TapeFreeOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, memref.DeallocOp.get(op.tape), [])


_TAPE_OPS = (
    TapeCreateOp, TapePushOp, TapeReadOp, TapeReserveOp, TapeFreeOp,
    ShadowCreateOp, ShadowAddOp, ShadowReadOp, ShadowMergeOp,
)


class LowerTapePass(ModulePass):
    """Lower irad's tape ops to memref code (see the module docstring)."""

    name = "irad-lower-tape"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Only the tape ops are visited, each rewritten once: the greedy walker
        # would try the patterns on every op of what may be a large module with
        # no tape at all (4x the time). Without DCE, an unused read is lowered
        # too, so the optimiser sees exactly the code reverse mode emitted.
        lower = GreedyRewritePatternApplier(
            [
                LowerTapeCreate(), LowerTapePush(), LowerTapeRead(), LowerTapeReserve(), LowerTapeFree(),
                LowerShadowCreate(), LowerShadowAdd(), LowerShadowRead(), LowerShadowMerge(),
            ],
            dce_enabled=False,
        )
        for tape_op in [inner for inner in op.walk() if isinstance(inner, _TAPE_OPS)]:
            lower.match_and_rewrite(tape_op, PatternRewriter(tape_op))
