"""Batching rules (irad-vmap): the `batch` field of the registry's entries.

A rule `batch(b, op)` runs when at least one value `op` reads varies along
the batch. `b` is the BatchBuilder (passes/batching/batcher.py): `b.get(v)` is
`v`'s batched counterpart or its unbatched copy, `b.is_batched(v)` says which,
`b.batched(v)` gives it the batch axis (broadcast when it has none),
`b.unbatched(v, op, what)` refuses a batched value where the rule needs one
value for the whole batch (an index, a shape). A batched value carries the
batch as its leading axis: a float becomes tensor<Bxf64>, a tensor<3x4xf64>
tensor<Bx3x4xf64>. A rule returns the batched results of `op`, or None when
it has recorded them itself (`b.set`, for results that may stay unbatched:
calls and regions).

JAX keeps these rules beside its primitives (primitive_batchers); irad keeps
them beside each op's reverse and forward rules, one module of rules per
kind of op: elementwise ops (the same op on the batched tensors, or a
linalg.generic where xDSL builds the op for scalars only), structural ops
(the batch axis prepended to their dimensions), contractions, and the ops
with regions and calls, which the builder batches recursively.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX, AffineMapAttr, DenseArrayBase, DenseIntOrFPElementsAttr, FloatAttr, IntegerAttr, StringAttr, TensorType, f64, i1, i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import BroadcastOp, GenericOp, IndexOp, MatmulOp, ReduceOp, TransposeOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from irad.ir import contraction as C
from irad.ir import gather as G
from irad.ir import scan as S
from irad.ir import tensor as T
from irad.ir.types import is_float
from irad.passes.batching import basis


def _create(op: Operation, operands, result_types) -> SSAValue:
    """`op` made again with `operands` and `result_types` (its properties and attributes kept)."""
    return op.__class__.create(
        operands=list(operands), result_types=list(result_types),
        properties=dict(op.properties), attributes=dict(op.attributes),
    )


# ---- elementwise ops ----------------------------------------------------------------
# xDSL builds these for scalars only: on tensors irad uses a linalg.generic
# (irad/ir/tensor.py), of the kind whose derivative matches.
_GENERIC_KINDS = {"arith.cmpf": "piecewise-constant", "arith.cmpi": "piecewise-constant", "arith.select": "select"}
# ops the backends run on scalars only (the frontend never emits them on arrays)
SCALAR_ONLY = frozenset({"math.fma", "math.fpowi", "math.round"})


def elementwise(b, op: Operation) -> list[SSAValue]:
    """The op on the batched operands: the same op on tensors for float
    arithmetic, else a linalg.generic applying it to each element."""
    if op.name in SCALAR_ONLY:
        b.refuse(op, "the backends run it on numbers only, not on the arrays a batch makes",
                 "compute it per element with a Python loop, or with other operations")
    args = [b.batched(v) for v in op.operands]
    types = [b.batched_type(r.type) for r in op.results]
    floats = all(is_float(T.element(v)) for v in (*op.operands, *op.results))
    if floats and op.name not in _GENERIC_KINDS:
        return list(b.results(_create(op, args, types)))
    kind = _GENERIC_KINDS.get(op.name, "other")

    def body(e, scalars):
        copy = _create(op, scalars, [T.element(r) for r in op.results])
        return e.op(copy)

    return [T.elementwise(b, body, args, T.element(op.results[0]), kind)]


# Integer arithmetic (loop counters, indices) has no registry entry (nothing
# says it is constant to reverse mode); batched, it is elementwise.
INTEGER_OPS = frozenset(f"arith.{name}" for name in (
    "addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "floordivsi", "ceildivsi", "maxsi", "minsi",
    "andi", "ori", "xori", "shli", "shrsi", "shrui", "index_cast", "extsi", "extui", "trunci",
))


def assert_(b, op: Operation) -> list[SSAValue]:
    """A run-time check (cf.assert) on a batched condition holds when it holds
    for every element, as in a loop over the batch; under a mask (a branch's
    arm, a masked loop's body: BatchBuilder.masked), for every element the
    mask takes."""
    holds = b.batched(op.operands[0])
    if b.mask is not None:  # holds, or the element does not take this path
        holds = T.elementwise(b, lambda e, a: e.op(arith.OrIOp(a[0], e.op(arith.XOrIOp(
            a[1], e.op(arith.ConstantOp(IntegerAttr(1, i1))))))), [holds, b.mask], i1, "piecewise-constant")
    flags = T.to_float(b, holds, f64)
    least = T.extract_scalar(b, T.reduce(b, flags, [0], arith.MinimumfOp))
    holds = b.op(arith.CmpfOp(least, b.op(arith.ConstantOp(FloatAttr(1.0, f64))), "oeq"))
    b.insert(_create(op, [holds], []))
    return []


# ops without a derivative entry (nothing to differentiate), batched all the same
UNDIFFERENTIATED = {**{name: elementwise for name in INTEGER_OPS}, "cf.assert": assert_}


# ---- structural ops: the batch axis goes first ---------------------------------------
def _dims(values, shift: int = 1) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [d + shift for d in values])


def broadcast(b, op: Operation) -> list[SSAValue]:
    x = b.batched(op.operands[0])
    out = b.batched_type(op.results[0].type)
    init = b.op(tensor.EmptyOp([], out))
    return [b.op(BroadcastOp(x, init, _dims(op.dimensions.get_values())))]


def splat(b, op: Operation) -> list[SSAValue]:
    if len(op.operands) > 1:
        b.unbatched(op.operands[1], op, "a dynamic size")
    x = b.batched(op.operands[0])
    out = b.batched_type(op.results[0].type)
    init = b.op(tensor.EmptyOp([], out))
    return [b.op(BroadcastOp(x, init, DenseArrayBase.from_list(i64, list(range(1, len(out.get_shape()))))))]


def reduce(b, op: Operation) -> list[SSAValue]:
    x, init = b.batched(op.input), b.batched(op.init)
    b.no_batched_inside(op)
    return list(b.results(ReduceOp(x, init, _dims(op.dimensions.get_values()), op.regions[0].clone())))


def transpose(b, op: Operation) -> list[SSAValue]:
    x = b.batched(op.operands[0])
    out = b.batched_type(op.results[0].type)
    init = b.op(tensor.EmptyOp([], out))
    perm = [0, *(p + 1 for p in op.permutation.get_values())]
    return [b.op(TransposeOp(x, init, DenseArrayBase.from_list(i64, perm)))]


def reshape(b, op: Operation) -> list[SSAValue]:
    b.unbatched(op.operands[1], op, "the shape")
    x = b.batched(op.operands[0])
    return [T.reshape(b, x, b.batched_type(op.results[0].type).get_shape())]


def cumsum(b, op: Operation) -> list[SSAValue]:
    return [S.cumsum(b, b.batched(op.input), op.axis_value + 1, op.reverse is not None)]


def linear_scan(b, op: Operation) -> list[SSAValue]:
    a, x = b.batched(op.a), b.batched(op.b)
    return [S.linear_scan(b, a, x, op.axis_value + 1, op.reverse is not None)]


def _mixed(static, dynamic) -> list:
    """A slice's offsets (sizes, strides): the static numbers, with the dynamic values in place of DYNAMIC_INDEX."""
    dynamic = iter(dynamic)
    return [next(dynamic) if s == DYNAMIC_INDEX else s for s in static]


def _slice_operands(b, op: Operation) -> tuple[list, list, list]:
    for v in (*op.offsets, *op.sizes, *op.strides):
        b.unbatched(v, op, "an offset, size or stride")
    get = lambda values: [b.get(v) for v in values]  # noqa: E731
    return (
        [0, *_mixed(op.static_offsets.get_values(), get(op.offsets))],
        [b.size, *_mixed(op.static_sizes.get_values(), get(op.sizes))],
        [1, *_mixed(op.static_strides.get_values(), get(op.strides))],
    )


def _window(b, op: Operation, dims: Sequence[int]) -> SSAValue | None:
    """For a slice of a tensor of `dims` whose offsets vary along the batch
    (sizes and strides the same for all: known numbers): each element's
    row-major flat positions of the slice's entries, as i64s of shape (B,
    entries); None where no offset varies."""
    if not any(b.is_batched(v) for v in op.offsets):
        return None
    for v in (*op.sizes, *op.strides):
        b.unbatched(v, op, "a size or stride (with an offset that varies)")
    if op.sizes or op.strides:
        b.refuse(op, "a slice whose offset varies along the batch and whose size or stride is known only "
                 "at run time", "give the slice a length known while lowering")
    offsets = _mixed(op.static_offsets.get_values(), list(op.offsets))
    sizes, strides = op.static_sizes.get_values(), op.static_strides.get_values()
    scales = [int(np.prod(dims[d + 1:])) for d in range(len(dims))]
    # the entries' positions from the slice's origin, and the known part of the origin
    steps = np.zeros(sizes, np.int64) + sum(np.arange(n).reshape([-1 if e == d else 1 for e in range(len(sizes))])
                                            * strides[d] * scales[d] for d, n in enumerate(sizes))
    known = sum(o * scales[d] for d, o in enumerate(offsets) if not isinstance(o, SSAValue))
    entries = int(np.prod(sizes))
    dynamic = [(o, d) for d, o in enumerate(offsets) if isinstance(o, SSAValue)]
    origin = _flat_positions(b, [o for o, _ in dynamic], [dims[d] for _, d in dynamic],
                             [scales[d] for _, d in dynamic])
    origin = T.broadcast_to(b, origin, [b.size, entries])
    window = T.dense(b, (steps.ravel() + known).tolist() * b.size, TensorType(i64, [b.size, entries]))
    return T.elementwise(b, lambda e, a: e.op(arith.AddiOp(a[0], a[1])), [origin, window], i64)


def extract_slice(b, op: Operation) -> list[SSAValue]:
    dims = T.shape(op.source)
    window = _window(b, op, dims)
    if window is not None:  # a gather: each element's own window
        flat = T.reshape(b, b.batched(op.source), [b.size, int(np.prod(dims))])
        picked = G.gather(b, flat, window, 1)
        return [T.reshape(b, picked, b.batched_type(op.results[0].type).get_shape())]
    offsets, sizes, strides = _slice_operands(b, op)
    x = b.batched(op.source)
    return [b.op(tensor.ExtractSliceOp(x, offsets, sizes, strides, b.batched_type(op.results[0].type)))]


def insert_slice(b, op: Operation) -> list[SSAValue]:
    dims = T.shape(op.dest)
    window = _window(b, op, dims)
    if window is not None:  # a scatter: each element's own window
        flat = T.reshape(b, b.batched(op.dest), [b.size, int(np.prod(dims))])
        values = T.reshape(b, b.batched(op.source), T.shape(window))
        put = G.scatter(b, flat, window, values, 1)
        return [T.reshape(b, put, [b.size, *dims])]
    offsets, sizes, strides = _slice_operands(b, op)
    source, dest = b.batched(op.source), b.batched(op.dest)
    statics = lambda mixed: [DYNAMIC_INDEX if isinstance(m, SSAValue) else m for m in mixed]  # noqa: E731
    dynamics = lambda mixed: [m for m in mixed if isinstance(m, SSAValue)]  # noqa: E731
    new = tensor.InsertSliceOp.get(
        source, dest, statics(sizes), statics(offsets), statics(strides),
        dynamics(offsets), dynamics(sizes), dynamics(strides), dest.type,
    )
    return [b.op(new)]


def _unit_slice(b, op: Operation, rank: int) -> tuple[list, list, list]:
    """x[:, i, j, ...] as a slice of size 1 along each indexed axis, its indices unbatched."""
    indices = [b.get(b.unbatched(v, op, "an index")) for v in op.indices]
    return [0, *indices], [b.size, *([1] * rank)], [1] * (rank + 1)


def _flat_positions(b, indices, dims, strides=None) -> SSAValue:
    """The row-major flat position of each element's indices (some batched), as
    i64s of shape (B, 1); `strides`: each index's, where they are not those of
    a tensor of `dims`."""
    total = None
    strides = strides or [int(np.prod(dims[i + 1:])) for i in range(len(dims))]
    for v, stride in zip(indices, strides):
        cast = v.owner
        if isinstance(cast, arith.IndexCastOp) and cast.input.type == i64:  # the i64 before the cast (left dead)
            as_int = b.batched(cast.input)
        else:
            as_int = T.elementwise(b, lambda e, a: e.op(arith.IndexCastOp(a[0], i64)), [b.batched(v)], i64)
        if stride != 1:
            scale = T.dense(b, stride, TensorType(i64, [b.size]))
            as_int = T.elementwise(b, lambda e, a: e.op(arith.MuliOp(a[0], a[1])), [as_int, scale], i64)
        total = as_int if total is None else T.elementwise(
            b, lambda e, a: e.op(arith.AddiOp(a[0], a[1])), [total, as_int], i64)
    return T.reshape(b, total, [b.size, 1])


def extract(b, op: Operation) -> list[SSAValue]:
    x = b.batched(op.tensor)
    rank = len(T.shape(op.tensor))
    if rank == 0:  # a 0-d tensor's element: the batch itself
        return [x]
    if any(b.is_batched(v) for v in op.indices):  # a gather: each element's own position
        dims = T.shape(op.tensor)
        flat = T.reshape(b, x, [b.size, int(np.prod(dims))])
        picked = G.gather(b, flat, _flat_positions(b, op.indices, dims), 1)
        return [T.reshape(b, picked, [b.size])]
    offsets, sizes, strides = _unit_slice(b, op, rank)
    piece = b.op(tensor.ExtractSliceOp(x, offsets, sizes, strides, TensorType(T.element(x), sizes)))
    return [T.reshape(b, piece, [b.size])]


def insert(b, op: Operation) -> list[SSAValue]:
    dest = b.batched(op.dest)
    rank = len(T.shape(op.dest))
    if any(b.is_batched(v) for v in op.indices):  # a scatter: each element's own position
        dims = T.shape(op.dest)
        flat = T.reshape(b, dest, [b.size, int(np.prod(dims))])
        value = T.reshape(b, b.batched(op.scalar), [b.size, 1])
        put = G.scatter(b, flat, _flat_positions(b, op.indices, dims), value, 1)
        return [T.reshape(b, put, [b.size, *dims])]
    offsets, sizes, strides = _unit_slice(b, op, rank)
    piece = T.reshape(b, b.batched(op.scalar), sizes)
    statics = [DYNAMIC_INDEX if isinstance(m, SSAValue) else m for m in offsets]
    new = tensor.InsertSliceOp.get(
        piece, dest, sizes, statics, strides, [m for m in offsets if isinstance(m, SSAValue)], [], [], dest.type,
    )
    return [b.op(new)]


def concat(b, op: Operation) -> list[SSAValue]:
    items = [b.batched(v) for v in op.operands]
    return [b.op(tensor.ConcatOp(items, op.dim.value.data + 1, b.batched_type(op.results[0].type)))]


def from_elements(b, op: Operation) -> list[SSAValue]:
    columns = [T.reshape(b, b.batched(v), [b.size, 1]) for v in op.operands]
    return [T.reshape(b, T.concat(b, columns, 1), b.batched_type(op.results[0].type).get_shape())]


# ---- contractions -----------------------------------------------------------------------
def _is_zero(v: SSAValue) -> bool:
    owner = v.owner
    if not isinstance(owner, arith.ConstantOp) or not isinstance(owner.value, DenseIntOrFPElementsAttr):
        return False
    values = owner.value.get_values()
    return bool(np.all(np.asarray(values) == 0))


def _matmul(b, x: SSAValue, y: SSAValue) -> SSAValue:
    """x @ y from a tensor.splat of 0 (not a dense constant of the batched
    size); with an identity basis (or a diagonal scaling of one), no product."""
    cheap = basis.matmul(b, x, y, b.bases)
    if cheap is not None:
        return cheap
    zero = b.op(arith.ConstantOp(FloatAttr(0.0, T.element(x))))
    return b.op(MatmulOp([x, y], [T.splat(b, zero, [T.shape(x)[0], T.shape(y)[1]])]))


def _swap_last(b, v: SSAValue) -> SSAValue:
    """`v` (batch, rows, cols) with its last two axes swapped: a reshape, not
    a copy, when one of them has one element (a matrix-vector product's)."""
    batch, rows, cols = T.shape(v)
    return T.reshape(b, v, [batch, cols, rows]) if 1 in (rows, cols) else T.transpose(b, v, [0, 2, 1])


def _transposed(b, v: SSAValue) -> SSAValue:
    """v^T, the input of a transpose when `v` is one (a vjp's A^T: A)."""
    if isinstance(v.owner, TransposeOp) and list(v.owner.permutation.get_values()) == [1, 0]:
        return v.owner.operands[0]
    return T.transpose(b, v, [1, 0])


def matmul(b, op: Operation) -> list[SSAValue]:
    """A batched left operand alone folds the batch into its rows (one
    matmul), a batched right operand alone into the columns (one matmul:
    (x @ y_i)^T = y_i^T @ x^T, the batch stacked on the rows: a Jacobian's
    sweeps through x @ v); both: a batched contraction (irad/ir/contraction.py)."""
    x, y, acc = op.operands
    m, k = T.shape(x)
    n = T.shape(y)[1]
    if not b.is_batched(y):
        rows = T.reshape(b, b.get(x), [b.size * m, k])
        product = T.reshape(b, _matmul(b, rows, b.get(y)), [b.size, m, n])
    elif not b.is_batched(x):
        rows = T.reshape(b, _swap_last(b, b.get(y)), [b.size * n, k])
        product = _matmul(b, rows, _transposed(b, b.get(x)))
        product = _swap_last(b, T.reshape(b, product, [b.size, n, m]))
    else:
        subscripts = ["bmk" if b.is_batched(x) else "mk", "bkn"]
        product = C.contract(b, [b.get(x), b.get(y)], subscripts, "bmn")
    if _is_zero(acc) and not b.is_batched(acc):
        return [product]
    return [b.add(product, b.batched(acc))]


# ---- linalg.generic: one more parallel loop, over the batch ------------------------------
def _shifted(mapping: AffineMap, batched: bool) -> AffineMapAttr:
    results = tuple(AffineDimExpr(0) for _ in range(batched)) + tuple(
        e.replace_dims_and_symbols([AffineDimExpr(d + 1) for d in range(mapping.num_dims)], [])
        for e in mapping.results
    )
    return AffineMapAttr(AffineMap(mapping.num_dims + 1, mapping.num_symbols, results))


def generic(b, op: Operation) -> list[SSAValue]:
    """Every output and each batched input indexed by the new loop (the first);
    the body's linalg.index dimensions and an irad.axis move up by one."""
    b.no_batched_inside(op)
    # The backends read a gather's, scatter's or select's operands by its kind
    # (irad.kind), all of one rank: all batched. A contraction's maps are read
    # as einsum subscripts: an unbatched input stays as it is.
    shared = op.attributes.get(T.KIND) == StringAttr(C.KIND)
    inputs = [b.get(v) if shared else b.batched(v) for v in op.inputs]
    outputs = [b.batched(v) for v in op.outputs]
    maps = [m.data for m in op.indexing_maps.data]
    batched_inputs = [b.is_batched(v) or not shared for v in op.inputs]
    new_maps = [_shifted(m, flag) for m, flag in zip(maps, [*batched_inputs, *([True] * len(outputs))])]
    body = op.regions[0].clone()
    for inner in list(body.walk()):
        if isinstance(inner, IndexOp):
            inner.properties["dim"] = IntegerAttr(inner.dim.value.data + 1, i64)
    iterators = [IteratorTypeAttr.parallel(), *op.iterator_types.data]
    new = GenericOp(inputs, outputs, body, new_maps, iterators, [v.type for v in outputs])
    new.attributes.update(op.attributes)
    if G.AXIS in op.attributes:
        new.attributes[G.AXIS] = IntegerAttr(op.attributes[G.AXIS].value.data + 1, i64)
    return list(b.results(new))


# ---- ops with regions, and calls: the builder batches them -------------------------------
def if_(b, op: Operation) -> None:
    b.if_(op)


def for_(b, op: Operation) -> None:
    b.for_(op)


def while_(b, op: Operation) -> None:
    b.while_(op)


def call(b, op: Operation) -> None:
    b.call(op)


def tape(b, op: Operation) -> None:
    # vmap of a derivative request batches the primal before it is differentiated
    # (passes/batching/requests.py); a tape only meets batched values in IR written so
    b.refuse(op, "a reverse-mode tape would record values that vary along the batch",
             "vmap the function before differentiating it (an irad.vmap of the irad.grad request "
             "does this), or take the per-element gradients with a Python loop")


__all__ = [
    "INTEGER_OPS", "SCALAR_ONLY", "UNDIFFERENTIATED", "assert_", "broadcast", "call", "concat", "elementwise", "extract", "extract_slice", "for_", "from_elements", "generic",
    "if_", "insert", "insert_slice", "matmul", "reduce", "reshape", "splat", "tape", "transpose", "while_",
]
