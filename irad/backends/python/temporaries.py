"""Fewer numpy temporaries in the Python backend's generated code.

python/arrays.py emits one numpy call per tensor op, each allocating its
result. Two rewrites, decided per op while generating, skip temporaries
without changing what the program computes:

* **out=**: an elementwise op writes its result into an operand that no other
  code can see (`np.add(a, b, out=a)`). The operand must be *owned and dead*:
  - owned: the result of an op that always allocates a new array
    (`python_arrays.allocates`; never a view, a constant, an argument or a
    numpy scalar: rank-0 tensors are excluded), of its full shape;
  - dead: every use of it is this op, in the same block. In SSA that means no
    later op reads it, no view of it exists (a view would be a use), and it
    does not escape: not returned, yielded, passed to a call or pushed onto
    the tape (all uses too). Each run of a loop body makes a new array.
  - its type is the result's type (shape and dtype), so numpy's broadcasting
    gives the result exactly its shape.
  numpy defines ufuncs whose output overlaps an input (here: is the input) to
  compute what they would without the overlap, so the values are unchanged.
* **fused reductions**: a sum (`linalg.reduce` by addf from zero) whose input
  is a product or a negation used by nothing else takes that op into itself,
  and the product is never stored. `sum(-x)` becomes `-sum(x)`, exactly equal
  since rounding to nearest is symmetric. `sum(a * b)` becomes `np.einsum`
  (numpy's sum over a short last axis is slow; size-1 axes of a broadcast
  operand broadcast inside it, so the broadcast is never expanded), or
  `np.vdot` when every axis is summed and neither operand is broadcast. These
  two add in their own order and may fuse each multiply-add into one rounding,
  as `@` and the contractions (np.einsum) this backend already emits do: the
  value of a sum is the exact one up to rounding in every backend (numpy's
  `sum` adds pairwise, native code sequentially), never bit-identical across
  them. A float32 sum of more than 128 elements is not fused: numpy's
  pairwise `sum` keeps its error near one rounding (_long_float32). The
  absorbed op emits nothing (`absorbed`).

Everything else here is bit-exact.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import Float32Type, Float64Type, TensorType
from xdsl.ir import Operation, SSAValue

from irad.backends.python import arrays as python_arrays
from irad.ir.constants import is_splat_of
from irad.ir.tensor import REDUCTIONS

_UFUNCS = python_arrays.UFUNCS


def _float_array(t) -> bool:
    return (
        isinstance(t, TensorType)
        and len(t.get_shape()) > 0
        and isinstance(t.element_type, (Float64Type, Float32Type))
    )


def _only_user(value: SSAValue, user: Operation) -> bool:
    """Every use of `value` is `user`, which is in the block that defines it."""
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and owner.parent_block() is user.parent_block()
        and all(use.operation is user for use in value.uses)
    )


def _owned_and_dead(value: SSAValue, user: Operation) -> bool:
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and python_arrays.allocates(owner)
        and value.type == user.results[0].type
        and _only_user(value, user)
        and not absorbed(owner)
    )


def _in_place(tr, op: Operation) -> str | None:
    """`np.ufunc(a, b, out=a)` if an operand of elementwise `op` is owned and dead."""
    if op.name not in _UFUNCS or not _float_array(op.results[0].type):
        return None
    for operand in op.operands:
        if _owned_and_dead(operand, op):
            args = ", ".join(tr.operands(op))
            return f"{_UFUNCS[op.name]}({args}, out={tr.value(operand)})"
    return None


# ---- fused reductions -------------------------------------------------------------


def _is_sum(op: Operation) -> bool:
    if op.name != "linalg.reduce" or len(op.operands) != 2:
        return False
    combiner = next(iter(op.regions[0].block.ops))
    return isinstance(combiner, arith.AddfOp) and is_splat_of(op.operands[1], REDUCTIONS[arith.AddfOp])


def _fusable_input(reduce: Operation) -> Operation | None:
    """The product or negation a sum takes into itself, if any."""
    if not _is_sum(reduce):
        return None
    source = reduce.operands[0]
    producer = source.owner
    if not isinstance(producer, Operation) or not _float_array(source.type) or not _only_user(source, reduce):
        return None
    if producer.name == "arith.negf":
        return producer
    rank = len(source.type.get_shape())
    if producer.name == "arith.mulf" and all(
        len(python_arrays.smallest_shape(v)) == rank for v in producer.operands
    ) and not _long_float32(reduce):  # einsum needs every axis (size-1 axes broadcast); a number stays a product
        return producer
    return None


# float32 sums longer than this stay numpy's pairwise `sum`: BLAS's sdot and
# einsum add in a few float32 lanes, in order (the mean of 10^6 float32 squares
# was off by 1.8e-6, numpy's sum by 9e-8); float64's error there stays ~1e-13.
_FLOAT32_FUSED = 128


def _long_float32(reduce: Operation) -> bool:
    t = reduce.operands[0].type
    length = 1
    for axis in reduce.dimensions.get_values():
        length *= t.get_shape()[axis]
    return isinstance(t.element_type, Float32Type) and length > _FLOAT32_FUSED


def absorbed(op: Operation) -> bool:
    """`op` is computed inside its only use (a sum, or an accumulation), and
    emits nothing."""
    if op.name in _INSERTS:
        use = op.results[0].first_use
        found = None if use is None else _accumulation(use.operation)
        return found is not None and found[1] is op
    if op.name not in ("arith.mulf", "arith.negf") or len(op.results) != 1:
        return False
    use = op.results[0].first_use
    return use is not None and _fusable_input(use.operation) is op


def _fused_sum(tr, op: Operation) -> str | None:
    producer = _fusable_input(op)
    if producer is None:
        return None
    axes = tuple(op.dimensions.get_values())
    if producer.name == "arith.negf":
        return f"(-{python_arrays.sum_expression(tr, producer.operands[0], axes)})"
    shape = tuple(producer.results[0].type.get_shape())
    a, b = tr.operands(producer)
    if len(axes) == len(shape) and all(python_arrays.smallest_shape(v) == shape for v in producer.operands):
        return f"_vdot({a}, {b})"  # the whole product summed: BLAS's dot
    letters = "abcdefghijklmnopqrstuvwxyz"[: len(shape)]
    kept = "".join(c for i, c in enumerate(letters) if i not in axes)
    return f"np.einsum({f'{letters},{letters}->{kept}'!r}, {a}, {b})"


# ---- accumulation into a slot -------------------------------------------------------

_INSERTS = ("tensor.insert", "tensor.insert_slice")


def _insert_into_zeros(value: SSAValue, add: Operation) -> bool:
    """`value` is a slot (an element or a slice) written into zeros, read only by `add`."""
    owner = value.owner
    return (
        isinstance(owner, Operation)
        and owner.name in _INSERTS
        and value.type == add.results[0].type
        and is_splat_of(owner.dest, 0.0)
        and _only_user(value, add)
    )


def _accumulation(op: Operation) -> tuple[SSAValue, Operation] | None:
    """(accumulator, insert) if `op` adds a slot written into zeros to an
    array it may write (allocated by generated code, of the result's type,
    read by nothing else): `acc[slot] += value` computes it."""
    if op.name != "arith.addf" or not _float_array(op.results[0].type):
        return None
    a, b = op.operands
    for acc, ins in ((a, b), (b, a)):
        owner = acc.owner
        if (
            acc is not ins
            and _insert_into_zeros(ins, op)
            and isinstance(owner, Operation)
            and python_arrays.allocates(owner)
            and acc.type == op.results[0].type
            and _only_user(acc, op)
        ):
            return acc, ins.owner
    return None


def emit_accumulation(tr, op: Operation) -> bool:
    """Emit `acc[slot] += value` for an accumulation (`_accumulation`); the
    sum is then `acc`'s array. False (nothing emitted) for any other op."""
    found = _accumulation(op)
    if found is None:
        return False
    acc, insert = found
    name = tr.value(acc)
    if insert.name == "tensor.insert":
        index = "".join(f"{tr.value(i)}, " for i in insert.indices)
        tr.line(f"{name}[{index}] += {tr.value(insert.scalar)}")
    else:
        tr.line(f"{name}[{python_arrays.slices(tr, insert)}] += {python_arrays.slice_source(tr, insert)}")
    tr.alias(op.results[0], name)
    return True


def expression(tr, op: Operation) -> str | None:
    """An expression for tensor op `op` that saves a temporary, or None."""
    return _fused_sum(tr, op) or _in_place(tr, op)
