"""Batched values one-hot along their first axis, kept compact: a reverse
Jacobian's cotangents over an output of N rows (a residual per observation).

jacrev maps its vjp over the identity basis of the output. When the output
has shape (N, *rest) (m elements a row), the k-th cotangent is zero but in
row k // m, and so is everything the pullback computes from it by products
with unbatched values, sums and differences of such values, quotients by
unbatched values, negation, sums over the other axes, and slices,
concatenations, insertions into zeros and broadcasts along the other axes.
Batched as it is, each is a dense (B, N, *rest) tensor (B = N * m) of which
one row in N is not zero: on a bundle adjustment's 150 observations, some 80
elementwise ops over (300, 150, 3) arrays.

So irad-vmap keeps, beside such a batched value X, a compact twin C of shape
(B, *rest), C[k] = X[k, k // m] (`OneHot`); an unbatched operand enters as
its rows repeated m times. Where the row axis ends, the dense batched result
is computed from the twin instead: a sum over the row axis is the twin's sum
over the others, and a scatter-add along it (the adjoint of gathering each
observation's camera and point) adds each twin row at its observation's one
index. The dense values are still built beside the twins; nothing reads
them then, and the optimiser removes them. Across a call, a value that has
a twin is passed (returned) as the twin alone (the batcher's signature
letter `r`, `BatchedFunction.result_rows`), and the other side rebuilds the
dense value (`dense`) for the ops that need it: a helper's pullback stays
compact too.

The result is the same matrix; the compact form leaves out the products of
the basis's zeros, as the matmul with the basis does (basis.py): where a
partial derivative is inf or nan, the rows of the other observations stay
finite (the dense products spread the nan over them, as JAX's jacrev does),
and the last bits of a sum may differ (fewer zeros added).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX, DenseArrayBase, DenseIntOrFPElementsAttr, FloatAttr, StringAttr, TensorType, i64,
)
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, ReduceOp, YieldOp
from xdsl.ir import Operation, SSAValue

from irad.ir import gather as G
from irad.ir import tensor as T
from irad.ir.types import is_tensor
from irad.passes.batching.basis import is_basis

# A longer row makes the twin of the basis (eye(m) repeated) too large a
# constant for what it saves: the dense form is kept.
MAX_ROW = 64


@dataclass(frozen=True)
class OneHot:
    """The compact twin of a batched value X of element shape (rows, *rest):
    `value`[k] = X[k, k // m], shape (B, *rest)."""

    value: SSAValue
    rows: int


def follow(b, op: Operation) -> None:
    """Record the twins of `op`'s results from its operands' (or, where the
    row axis ends, replace its batched result); `b` is the BatchBuilder,
    which has batched `op` already. Does nothing when no rule applies."""
    rule = _RULES.get(op.name)
    if rule is not None and (isinstance(op, tensor.ReshapeOp) or any(v in b.one_hot for v in op.operands)):
        rule(b, op)


def _record(b, old: SSAValue, value: SSAValue, rows: int) -> None:
    b.one_hot[old] = OneHot(value, rows)


def _repeated_rows(b, v: SSAValue, rows: int) -> SSAValue:
    """The unbatched `v` (rows, *rest) as a twin: row k // m at k, shape (B, *rest)."""
    new, rest = b.get(v), list(T.shape(v)[1:])
    m = b.size // rows
    if m == 1:
        return new
    init = b.op(tensor.EmptyOp([], T.tensor_type(T.element(new), [rows, m, *rest])))
    spread = b.op(BroadcastOp(new, init, DenseArrayBase.from_list(i64, [1])))
    return T.reshape(b, spread, [b.size, *rest])


def _same_op(op: Operation, operands, result_shape) -> Operation:
    """`op` again on `operands`, its result of `result_shape` (its flags kept)."""
    return op.__class__.create(
        operands=list(operands), result_types=[T.tensor_type(T.element(op.results[0]), result_shape)],
        properties=dict(op.properties), attributes=dict(op.attributes),
    )


def _is_zero(v: SSAValue) -> bool:
    """A constant zero array (arith.constant or tensor.splat of 0)."""
    owner = v.owner
    if isinstance(owner, tensor.SplatOp):
        owner = owner.input.owner
        return isinstance(owner, arith.ConstantOp) and isinstance(owner.value, FloatAttr) and owner.value.value.data == 0
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        return bool(np.all(np.asarray(owner.value.get_values()) == 0))
    return False


def start(b, old: SSAValue) -> None:
    """Give `old` a twin if its batched value is the identity basis seen as
    (N, *rest), N >= 2 rows of m elements: row k // m holds e_(k % m)."""
    shape = T.shape(old)
    if len(shape) < 2 or shape[0] < 2 or not b.is_batched(old) or not is_basis(b.get(old), b.bases):
        return
    rows, m = shape[0], b.size // shape[0]
    if m > MAX_ROW:
        return
    elem = T.element(old)
    eye = T.dense(b, np.eye(m), T.tensor_type(elem, [m, m]))
    init = b.op(tensor.EmptyOp([], T.tensor_type(elem, [rows, m, m])))
    tiled = b.op(BroadcastOp(eye, init, DenseArrayBase.from_list(i64, [0])))
    _record(b, old, T.reshape(b, tiled, [b.size, *shape[1:]]), rows)


def twin_type(t: TensorType, size: int) -> TensorType:
    """The type of the twin of a value of type `t` (its rows the first axis), in a batch of `size`."""
    return T.tensor_type(t.element_type, [size, *t.get_shape()[1:]])


def receive(b, old: SSAValue, twin: SSAValue, rows: int) -> None:
    """`old` arrives as its twin (an argument of a batched function, a
    result of a call): recorded, with the dense value for the ops that need
    it (`dense`; unread, the optimiser removes it)."""
    b.one_hot[old] = OneHot(twin, rows)
    b.set(old, dense(b, twin, T.shape(old), rows, b.size), True)


def dense(b, twin: SSAValue, shape, rows: int, size: int) -> SSAValue:
    """The batched value (`size`, *`shape`) whose twin is `twin`: a mask of
    each element's row (k // m == j) times the twin spread over the rows."""
    elem = T.element(twin)
    m = size // rows
    owners = T.dense(b, np.arange(size) // m, T.tensor_type(elem, [size]))
    ramp = T.dense(b, np.arange(rows), T.tensor_type(elem, [rows]))
    down, across = (_spread(b, v, [size, rows], [axis]) for v, axis in ((owners, 1), (ramp, 0)))
    mask = T.to_float(b, T.compare(b, "oeq", down, across), elem)
    full = [size, *shape]
    if len(full) > 2:
        mask = _spread(b, mask, full, list(range(2, len(full))))
    return b.op(arith.MulfOp(mask, _spread(b, twin, full, [1])))


def _spread(b, v: SSAValue, dims, added) -> SSAValue:
    init = b.op(tensor.EmptyOp([], T.tensor_type(T.element(v), dims)))
    return b.op(BroadcastOp(v, init, DenseArrayBase.from_list(i64, added)))


def reshape(b, op: tensor.ReshapeOp) -> None:
    """A reshape of the rest of each row keeps the twin; the basis reshaped
    to rows starts one."""
    before, after = T.shape(op.source), T.shape(op.result)
    twin = b.one_hot.get(op.source)
    if twin is None:
        start(b, op.result)
    elif len(after) >= 1 and after[:1] == before[:1]:
        _record(b, op.result, T.reshape(b, twin.value, [b.size, *after[1:]]), twin.rows)


def elementwise(b, op: Operation) -> None:
    """x * y, x + y, x - y with both twins; x * u, u * x, x / u with u
    unbatched; -x. (x + u, u / x and the rest are not zero off the row.)"""
    result = op.results[0]
    if not is_tensor(result.type) or not T.shape(result):
        return
    twins = [b.one_hot.get(v) for v in op.operands]
    rows = next(t.rows for t in twins if t is not None)
    shape = [b.size, *T.shape(result)[1:]]
    if isinstance(op, arith.NegfOp):
        operands = [twins[0].value]
    elif all(twins):
        if isinstance(op, arith.DivfOp):
            return
        operands = [t.value for t in twins]
    elif isinstance(op, (arith.AddfOp, arith.SubfOp)) or b.is_batched(op.operands[twins.index(None)]):
        return
    elif isinstance(op, arith.DivfOp) and twins[0] is None:
        return
    else:
        operands = [t.value if t is not None else _repeated_rows(b, v, rows) for t, v in zip(twins, op.operands)]
    _record(b, result, b.op(_same_op(op, operands, shape)), rows)


def broadcast(b, op: BroadcastOp) -> None:
    """Along the other axes: the twin broadcast the same way."""
    twin, added = b.one_hot[op.input], list(op.dimensions.get_values())
    if 0 in added:
        return
    shape = [b.size, *T.shape(op.results[0])[1:]]
    init = b.op(tensor.EmptyOp([], T.tensor_type(T.element(twin.value), shape)))
    _record(b, op.results[0], b.op(BroadcastOp(twin.value, init, DenseArrayBase.from_list(i64, added))), twin.rows)


def reduce(b, op: ReduceOp) -> None:
    """A sum from zero: over the other axes, the twin's sum; over the row
    axis too, the batched result itself (the one row that is not zero)."""
    twin = b.one_hot.get(op.input)
    body = list(op.regions[0].block.ops)
    if twin is None or b.is_batched(op.init) or not _is_zero(b.get(op.init)):
        return
    if len(body) != 2 or not isinstance(body[0], arith.AddfOp) or not isinstance(body[1], YieldOp):
        return
    axes = list(op.dimensions.get_values())
    summed = T.reduce(b, twin.value, [d for d in axes if d != 0])
    if 0 in axes:
        b.set(op.results[0], summed, True)
    else:
        _record(b, op.results[0], summed, twin.rows)


def concat(b, op: tensor.ConcatOp) -> None:
    twins = [b.one_hot.get(v) for v in op.operands]
    axis = op.dim.value.data
    if axis == 0 or not all(twins):
        return
    _record(b, op.results[0], T.concat(b, [t.value for t in twins], axis), twins[0].rows)


def _static_rest(op: Operation, rows: int) -> tuple[list, list, list] | None:
    """A slice's offsets, sizes and strides on the twin (the batch first),
    when static and whole along the row axis."""
    if op.offsets or op.sizes or op.strides:
        return None
    offsets, sizes, strides = (list(a.get_values()) for a in (op.static_offsets, op.static_sizes, op.static_strides))
    if (offsets[0], sizes[0], strides[0]) != (0, rows, 1) or DYNAMIC_INDEX in offsets + sizes + strides:
        return None
    return offsets[1:], sizes[1:], strides[1:]


def extract_slice(b, op: tensor.ExtractSliceOp) -> None:
    twin = b.one_hot[op.source]
    found = _static_rest(op, twin.rows)
    if found is None or len(T.shape(op.result)) != len(T.shape(op.source)):
        return
    offsets, sizes, strides = found
    piece = tensor.ExtractSliceOp(twin.value, [0, *offsets], [b.size, *sizes], [1, *strides],
                                  T.tensor_type(T.element(twin.value), [b.size, *sizes]))
    _record(b, op.result, b.op(piece), twin.rows)


def insert_slice(b, op: tensor.InsertSliceOp) -> None:
    """A twin inserted into a twin, or into unbatched zeros."""
    twin, into = b.one_hot.get(op.source), b.one_hot.get(op.dest)
    if twin is None or len(T.shape(op.source)) != len(T.shape(op.dest)) or T.shape(op.dest)[0] != twin.rows:
        return
    found = _static_rest(op, twin.rows)
    if found is None:
        return
    if into is None:
        if b.is_batched(op.dest) or not _is_zero(b.get(op.dest)):
            return
        zero = b.op(arith.ConstantOp(FloatAttr(0.0, T.element(op.dest))))
        into = OneHot(T.splat(b, zero, [b.size, *T.shape(op.dest)[1:]]), twin.rows)
    offsets, sizes, strides = found
    new = tensor.InsertSliceOp.get(twin.value, into.value, [b.size, *sizes], [0, *offsets], [1, *strides],
                                   result_type=into.value.type)
    _record(b, op.result, b.op(new), twin.rows)


def generic(b, op: GenericOp) -> None:
    """A scatter-add along the row axis of a twin (unbatched indices): each
    twin row added at its one index, a scatter-add of B rows of one element."""
    if op.attributes.get(T.KIND) != StringAttr("scatter-add") or G.axis_of(op) != 0:
        return
    (idx, values), (dest,) = op.inputs, op.outputs
    twin = b.one_hot.get(values)
    if twin is None or b.is_batched(idx) or idx in b.one_hot:
        return
    rest = list(T.shape(values)[1:])
    one = [b.size, 1, *rest]
    positions = T.reshape(b, _repeated_rows(b, idx, twin.rows), one)
    added = G.scatter_add(b, b.batched(dest), positions, T.reshape(b, twin.value, one), 1)
    b.set(op.results[0], added, True)


_RULES = {
    "tensor.reshape": reshape,
    **dict.fromkeys(("arith.mulf", "arith.addf", "arith.subf", "arith.divf", "arith.negf"), elementwise),
    "linalg.broadcast": broadcast,
    "linalg.reduce": reduce,
    "tensor.concat": concat,
    "tensor.extract_slice": extract_slice,
    "tensor.insert_slice": insert_slice,
    "linalg.generic": generic,
}

__all__ = ["MAX_ROW", "OneHot", "dense", "follow", "receive", "start", "twin_type"]
