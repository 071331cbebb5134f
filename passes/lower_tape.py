"""`irad-lower-tape`: the tape ops of the irad dialect as memref code.

Reverse mode emits `irad.tape_create`, `irad.tape_push`, `irad.tape_read`,
`irad.tape_reserve` and `irad.tape_free` (see irad/ir/dialect.py; passes/ad/reverse_loops.py says what the
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

With `form=tensor` (for IREE, which compiles tensor programs and owns their
memory), the same records live in a `tensor<?xf64>` value instead
(TensorTape): a store is a `tensor.insert` or `tensor.insert_slice` yielding
the next tape, a load a `tensor.extract` or `extract_slice`, growth a
`tensor.empty` with the old slots inserted, and a free disappears. A
reserve before a loop of known trip count (passes/ad/reverse_loops.py) sizes the tape
once for all its iterations, so the loop's pushes never grow it. Every value
of the tape type (arguments, results, loop-carried values) becomes
`tensor<?xf64>`.

A batched tape (ops marked `irad.batch = B`: irad-vmap of a derivative
through a loop, passes/batching/records.py) keeps one element's positions;
each slot is B slots of memory, so position p starts at p*B, where a value
that varies along the batch (a tensor with the batch leading, `irad.batched`)
stores its B elements' slots and a shared one its own. With `form=objects`
(the Python backend, whose list holds a record's array in its first slot)
positions are not scaled: every record already fits.

The shadow ops (reverse over reverse) lower the same way on a shadow's buffer,
which starts zeroed and grows zero-filled: `irad.shadow_add` loads each float
field of a record, adds the cotangent and stores it back; `irad.shadow_read`
loads a record's float fields, or zeros when the shadow never grew that far
(no cotangent was ever added to it: records do not overlap); `irad.shadow_merge`
adds one shadow into another slot by slot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, bufferization, func, memref, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FunctionType,
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
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    TypeConversionPattern,
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
    tape_batch,
    unbatched_type,
)
from irad.ir.types import is_differentiable
from irad.base.errors import DifferentiationError
from irad.ir.locations import location
from irad.ir.walk import find

INDEX = IndexType()
# The tape's type in tensor form.
TENSOR_TAPE = TensorType(f64, [DYNAMIC_INDEX])
# Initial capacity of a tape, in f64 slots.
INITIAL_CAPACITY = 64


def _slots(t: Attribute) -> int:
    return record_slots([t])


def _flat_f64(c: IRBuilder, v: SSAValue) -> SSAValue:
    """A tensor record as the 1-d f64 tensor of its slots."""
    t = v.type
    if not isinstance(t.element_type, Float64Type):
        v = T.to_float(c, v, f64) if isinstance(t.element_type, IntegerType) else (
            c.value(arith.ExtFOp(v, TensorType(f64, t.get_shape())))
        )
    return T.reshape(c, v, [_slots(t)])


def _unflatten(c: IRBuilder, flat: SSAValue, t: TensorType) -> SSAValue:
    """The tensor of type `t` that the 1-d f64 slots `flat` hold."""
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


# ---- where the slots live: a memref (both CPU backends) or a tensor (IREE) -----------
class MemRefTape:
    """The tape as a `memref<?xf64>`: stores write it in place, so every
    operation returns the tape it was given (or the grown copy)."""

    tape_type = TAPE
    # a slot of a batched tape is `batch` slots of memory (a value that varies
    # along the batch fills them)
    scales_batch = True

    def create(self, c: IRBuilder, size: SSAValue) -> SSAValue:
        return c.value(memref.AllocOp.get(f64, shape=[DYNAMIC_INDEX], dynamic_sizes=[size]))

    def capacity(self, c: IRBuilder, tape: SSAValue) -> SSAValue:
        return c.value(memref.DimOp(tape, c.index(0)))

    def copy_prefix(self, c: IRBuilder, tape: SSAValue, pos: SSAValue, size: SSAValue) -> SSAValue:
        bigger = self.create(c, size)
        copy = Block(arg_types=[INDEX])
        k = copy.args[0]
        copy.add_op(load := memref.LoadOp.get(tape, [k]))
        copy.add_op(memref.StoreOp.get(load.res, bigger, [k]))
        copy.add_op(scf.YieldOp())
        copy_loop = c.insert(scf.ForOp(c.index(0), pos, c.index(1), [], Region(copy)))
        copy_loop.attributes[TAPE_COPY] = UnitAttr()
        c.insert(memref.DeallocOp.get(tape))
        return bigger

    def store(self, c: IRBuilder, tape: SSAValue, at: SSAValue, slot: SSAValue) -> SSAValue:
        c.insert(memref.StoreOp.get(slot, tape, [at]))
        return tape

    def load(self, c: IRBuilder, tape: SSAValue, at: SSAValue) -> SSAValue:
        return c.value(memref.LoadOp.get(tape, [at]))

    def _view(self, c: IRBuilder, tape: SSAValue, at: SSAValue, n: int) -> SSAValue:
        view_type = memref.SubviewOp.infer_result_type(TAPE, [at], [n], [1])
        return c.value(memref.SubviewOp.get(tape, [at], [n], [1], view_type))

    def store_flat(self, c: IRBuilder, tape: SSAValue, at: SSAValue, flat: SSAValue) -> SSAValue:
        # Into a buffer of its own, then onto the tape. Not to_buffer + copy:
        # bufferization does not see a to_buffer's memref used later and may reuse
        # its buffer meanwhile (two pushes of one value, CSE'd into one to_buffer,
        # stored another op's result). The buffer is freed by MLIR's deallocation
        # pipeline (natively) or by the garbage collector (Python backend).
        n = flat.type.get_shape()[0]
        buffer = c.value(memref.AllocOp.get(f64, shape=[n]))
        c.insert(bufferization.MaterializeInDestinationOp(
            operands=[flat, buffer],
            properties={"restrict": UnitAttr(), "writable": UnitAttr()},
            result_types=[[]],
        ))
        c.insert(memref.CopyOp(buffer, self._view(c, tape, at, n)))
        return tape

    def load_flat(self, c: IRBuilder, tape: SSAValue, at: SSAValue, n: int) -> SSAValue:
        buffer = c.value(memref.AllocOp.get(f64, shape=[n]))  # to_tensor wants an identity layout
        c.insert(memref.CopyOp(self._view(c, tape, at, n), buffer))
        return c.value(bufferization.ToTensorOp(buffer, restrict=True))

    def free(self, tape: SSAValue) -> list[Operation]:
        return [memref.DeallocOp.get(tape)]

    encode = staticmethod(_encode)
    decode = staticmethod(_decode)


class TensorTape:
    """The tape as a `tensor<?xf64>` value, for compilers that take tensors
    only (IREE): a store is a `tensor.insert` (or `insert_slice`) that yields
    the next tape value, a grown tape is a `tensor.empty` with the old slots
    inserted, and a free is nothing (the compiler owns the memory)."""

    tape_type = TENSOR_TAPE
    scales_batch = True

    def create(self, c: IRBuilder, size: SSAValue) -> SSAValue:
        return c.value(tensor.EmptyOp([size], TENSOR_TAPE))

    def capacity(self, c: IRBuilder, tape: SSAValue) -> SSAValue:
        return c.value(tensor.DimOp(tape, c.index(0)))

    def copy_prefix(self, c: IRBuilder, tape: SSAValue, pos: SSAValue, size: SSAValue) -> SSAValue:
        prefix = c.value(tensor.ExtractSliceOp(tape, [0], [pos], [1], TENSOR_TAPE))
        return c.value(tensor.InsertSliceOp.get(
            prefix, self.create(c, size), [DYNAMIC_INDEX], [0], [1], sizes=[pos]
        ))

    def store(self, c: IRBuilder, tape: SSAValue, at: SSAValue, slot: SSAValue) -> SSAValue:
        return c.value(tensor.InsertOp(slot, tape, [at]))

    def load(self, c: IRBuilder, tape: SSAValue, at: SSAValue) -> SSAValue:
        return c.value(tensor.ExtractOp(tape, [at], f64))

    def store_flat(self, c: IRBuilder, tape: SSAValue, at: SSAValue, flat: SSAValue) -> SSAValue:
        n = flat.type.get_shape()[0]
        return c.value(tensor.InsertSliceOp.get(flat, tape, [n], offsets=[at]))

    def load_flat(self, c: IRBuilder, tape: SSAValue, at: SSAValue, n: int) -> SSAValue:
        return c.value(tensor.ExtractSliceOp(tape, [at], [n], [1], TensorType(f64, [n])))

    def free(self, tape: SSAValue) -> list[Operation]:
        return []

    # integers as exact floats, as in a memref tape (sitofp/fptosi, which
    # irad's IREE backend writes for IREE's VM: irad/backends/iree/forms.py),
    # so a Hessian can differentiate the tape: a bit cast has no derivative
    encode = staticmethod(_encode)
    decode = staticmethod(_decode)


class ObjectTape(MemRefTape):
    """The memref form for the Python backend, whose tape is a list that holds
    a tensor's record as one array in its first slot: a batched tape's
    records fit in one element's slots, so its positions are not scaled (a
    list `batch` times as long would cost more to allocate than the run)."""

    scales_batch = False


STORAGE = {"memref": MemRefTape(), "tensor": TensorTape(), "objects": ObjectTape()}
SHADOW = STORAGE["memref"]  # shadow tapes (reverse over reverse) run on the CPU backends only


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


def _grown(c: IRBuilder, s, tape: SSAValue, pos: SSAValue, end: SSAValue, zeroed: bool = False) -> SSAValue:
    """The tape, or a copy of its first `pos` slots twice as large (at least
    `end` slots) when `end` is past its capacity; a shadow (`zeroed`, memref
    form only) has the slots past `pos` set to zero."""
    capacity = s.capacity(c, tape)
    full = c.value(arith.CmpiOp(end, capacity, "ugt"))
    grown = Block()
    g = IRBuilder(grown)
    doubled = g.value(arith.MaxSIOp(g.value(arith.AddiOp(capacity, capacity)), end))
    bigger = s.copy_prefix(g, tape, pos, doubled)
    if zeroed:
        _fill_zeros(g, bigger, pos, doubled)
    g.insert(scf.YieldOp(bigger))
    same = Block()
    same.add_op(scf.YieldOp(tape))
    return c.value(scf.IfOp(full, [s.tape_type], Region(grown), Region(same)))


def _create(c: IRBuilder, s) -> list[SSAValue]:
    return [s.create(c, c.index(INITIAL_CAPACITY)), c.index(0)]


def _physical(c: IRBuilder, at: SSAValue, batch: int) -> SSAValue:
    """Where the slot at position `at` starts in a tape of batch `batch`."""
    return at if batch == 1 else c.value(arith.MuliOp(at, c.index(batch)))


def _record_slots(types: Sequence[Attribute], flags: Sequence[bool]) -> list[int]:
    """The slots (positions) each field of a record takes: one element's, for a
    value that carries the batch (it fills `batch` times as many in memory)."""
    return [_slots(unbatched_type(t, 0) if f else t) for t, f in zip(types, flags or [False] * len(types))]


def _push(
    c: IRBuilder, s, tape: SSAValue, pos: SSAValue, values: Sequence[SSAValue], reserved: bool,
    batch: int = 1, flags: Sequence[bool] = (),
) -> list[SSAValue]:
    batch = batch if s.scales_batch else 1
    sizes = _record_slots([v.type for v in values], flags)
    end = c.value(arith.AddiOp(pos, c.index(sum(sizes))))
    if not reserved:
        tape = _grown(c, s, tape, _physical(c, pos, batch), _physical(c, end, batch))
    j = 0
    for v, size in zip(values, sizes):
        at = _physical(c, c.value(arith.AddiOp(pos, c.index(j))), batch)
        if isinstance(v.type, TensorType):
            tape = s.store_flat(c, tape, at, _flat_f64(c, v))
        else:
            for k, slot in enumerate(s.encode(c, v)):
                tape = s.store(c, tape, c.value(arith.AddiOp(at, c.index(k))) if k else at, slot)
        j += size
    return [tape, end]


def _read(c: IRBuilder, s, tape: SSAValue, end: SSAValue, types: Sequence[Attribute],
          batch: int = 1, flags: Sequence[bool] = ()) -> list[SSAValue]:
    batch = batch if s.scales_batch else 1
    sizes = _record_slots(types, flags)
    base = c.value(arith.SubiOp(end, c.index(sum(sizes))))
    values, j = [], 0
    for t, size in zip(types, sizes):
        at = _physical(c, c.value(arith.AddiOp(base, c.index(j))), batch)
        if isinstance(t, TensorType):
            values.append(_unflatten(c, s.load_flat(c, tape, at, _slots(t)), t))
        else:
            raw = [s.load(c, tape, c.value(arith.AddiOp(at, c.index(k))) if k else at) for k in range(_slots(t))]
            values.append(s.decode(c, raw, t))
        j += size
    return values


def _reserve(c: IRBuilder, s, tape: SSAValue, pos: SSAValue, slots: SSAValue, batch: int) -> list[SSAValue]:
    batch = batch if s.scales_batch else 1
    end = c.value(arith.AddiOp(pos, slots))
    return [_grown(c, s, tape, _physical(c, pos, batch), _physical(c, end, batch))]


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
    shadow = _grown(c, SHADOW, shadow, capacity, end, zeroed=True)
    j = 0
    for v in values:
        if is_differentiable(v.type):
            at = c.value(arith.AddiOp(base, c.index(j)))
            if isinstance(v.type, TensorType):
                total = c.value(arith.AddfOp(_unflatten(c, SHADOW.load_flat(c, shadow, at, _slots(v.type)), v.type), v))
                SHADOW.store_flat(c, shadow, at, _flat_f64(c, total))
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
                values.append(_unflatten(a, SHADOW.load_flat(a, shadow, at, _slots(t)), t))
            else:
                values.append(_decode(a, [a.value(memref.LoadOp.get(shadow, [at]))], t))
        j += _slots(t)
    a.insert(scf.YieldOp(*values))
    z.insert(scf.YieldOp(*(_zero(z, t) for t in types)))
    return list(c.insert(scf.IfOp(grew_there, list(types), Region(added), Region(never))).results)


def _shadow_merge(c: IRBuilder, into: SSAValue, other: SSAValue) -> list[SSAValue]:
    size = c.value(memref.DimOp(other, c.index(0)))
    capacity = c.value(memref.DimOp(into, c.index(0)))
    into = _grown(c, SHADOW, into, capacity, size, zeroed=True)

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


@dataclass
class LowerTapeOp(RewritePattern):
    storage: MemRefTape | TensorTape

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        s = self.storage
        if isinstance(op, TapeCreateOp):
            _lower(op, rewriter, lambda c: _create(c, s))
        elif isinstance(op, TapePushOp):
            _lower(op, rewriter, lambda c: _push(c, s, op.tape, op.pos, op.values, op.reserved is not None,
                                                 *tape_batch(op)))
        elif isinstance(op, TapeReadOp):
            _lower(op, rewriter, lambda c: _read(c, s, op.tape, op.end, op.values.types, *tape_batch(op)))
        elif isinstance(op, TapeReserveOp):
            _lower(op, rewriter, lambda c: _reserve(c, s, op.tape, op.pos, op.slots, tape_batch(op)[0]))
        elif isinstance(op, TapeFreeOp):
            rewriter.replace(op, s.free(op.tape), [])
        elif not isinstance(s, MemRefTape):  # a shadow op (reverse over reverse) on a tensor tape
            raise DifferentiationError(
                f"{location(op)}: {op.name}: a gradient of a gradient through a tape runs on the "
                "CPU backends only (the shadow tape is memref code)\n"
                "  hint: use backend='python' or backend='native' for it"
            )
        elif isinstance(op, ShadowCreateOp):
            _lower(op, rewriter, _create_shadow)
        elif isinstance(op, ShadowAddOp):
            _lower(op, rewriter, lambda c: _shadow_add(c, op.shadow, op.end, op.values))
        elif isinstance(op, ShadowReadOp):
            _lower(op, rewriter, lambda c: _shadow_read(c, op.shadow, op.end, op.values.types))
        elif isinstance(op, ShadowMergeOp):
            _lower(op, rewriter, lambda c: _shadow_merge(c, op.into, op.other))


class _RetypeTape(TypeConversionPattern):
    """The tape's values (function arguments and results, loop-carried values,
    calls) as `tensor<?xf64>` once the tape ops are tensor code."""

    def convert_type(self, typ: Attribute) -> Attribute | None:
        return TENSOR_TAPE if typ == TAPE else None


TAPE_OPS = (
    TapeCreateOp, TapePushOp, TapeReadOp, TapeReserveOp, TapeFreeOp,
    ShadowCreateOp, ShadowAddOp, ShadowReadOp, ShadowMergeOp,
)


@dataclass(frozen=True)
class LowerTapePass(ModulePass):
    """Lower irad's tape ops to memref code, or with `form=tensor` to tensor
    code, or with `form=objects` to memref code for the Python backend (see
    the module docstring)."""

    name = "irad-lower-tape"

    form: str = "memref"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.form not in STORAGE:
            raise ValueError(f"irad-lower-tape: form must be one of {', '.join(STORAGE)}, not {self.form!r}")
        # Only the tape ops are visited, each rewritten once: the greedy walker
        # would try the patterns on every op of what may be a large module with
        # no tape at all (4x the time). Without DCE, an unused read is lowered
        # too, so the optimiser sees exactly the code reverse mode emitted.
        lower = LowerTapeOp(STORAGE[self.form])
        tape_ops = find(op, TAPE_OPS)
        for tape_op in tape_ops:
            lower.match_and_rewrite(tape_op, PatternRewriter(tape_op))
        if self.form == "tensor" and tape_ops:
            PatternRewriteWalker(_RetypeTape(), apply_recursively=False).rewrite_module(op)
            _retype_functions(op)


def _retype_functions(module: ModuleOp) -> None:
    """Function types name the tape too (TypeConversionPattern converts
    properties only when it rebuilds an op)."""
    for f in module.ops:
        if isinstance(f, func.FuncOp):
            ft = f.function_type
            inputs = [TENSOR_TAPE if t == TAPE else t for t in ft.inputs.data]
            outputs = [TENSOR_TAPE if t == TAPE else t for t in ft.outputs.data]
            f.function_type = FunctionType.from_lists(inputs, outputs)
