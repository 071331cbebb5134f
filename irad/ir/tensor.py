"""Builders for the tensor IR irad uses for numpy arrays.

Both the frontend (lowering numpy calls) and the array adjoints emit this IR,
so it lives beside the passes (which never import the frontend). Every builder
takes `b`, anything with an `op(operation) -> first result` method: the
frontend's Emitter or the pass's PullbackBuilder.

The vocabulary is small on purpose, so each op has a simple adjoint:
elementwise `arith`/`math` ops on tensors of one shape; `linalg.generic` with
identity maps for elementwise comparisons and selects (xDSL 0.75 builds
`arith.cmpf`/`arith.select` for scalars only), each recording what it computes
where it is built (`irad.kind`, see GENERIC_KINDS); `tensor.splat` and
`linalg.broadcast` + `tensor.reshape` for numpy broadcasting, whose adjoint is
`linalg.reduce` (the unbroadcast); `linalg.matmul`, `linalg.transpose`;
`tensor.extract`/`insert`, `extract_slice`/`insert_slice` and `concat`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    FloatAttr,
    IndexType,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import (
    BroadcastOp,
    GenericOp,
    MatmulOp,
    ReduceOp,
    TransposeOp,
    YieldOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap

from irad.base.errors import DifferentiationError
from irad.ir.builder import IRBuilder
from irad.ir.constants import LARGE_SPLAT, dense_attr
from irad.ir.locations import location
from irad.ir.types import F32, F64, is_tensor, numpy_dtype

I1 = IntegerType(1)
I64 = IntegerType(64)

# linalg.reduce combiner -> its neutral element
REDUCTIONS: dict[type, float] = {
    arith.AddfOp: 0.0,
    arith.MulfOp: 1.0,
    arith.MaximumfOp: -np.inf,
    arith.MinimumfOp: np.inf,
    # int64 arrays reduce in int64, wrapping as numpy's do (never rounded through float)
    arith.AddiOp: 0,
    arith.MuliOp: 1,
    arith.MaxSIOp: -(2**63),
    arith.MinSIOp: 2**63 - 1,
}


def identity(combiner: type, elem: Attribute):
    """The neutral element of `combiner` on elements of type `elem`: REDUCTIONS'
    one, except for max and min of numpy's narrow int dtypes (uint64 too)."""
    dtype = numpy_dtype(elem)
    if combiner in (arith.MaxSIOp, arith.MinSIOp) and dtype is not None:
        info = np.iinfo(dtype)
        return int(info.min if combiner is arith.MaxSIOp else info.max)
    return REDUCTIONS[combiner]


def shape(v: SSAValue) -> tuple[int, ...]:
    t = v.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def element(v: SSAValue | Attribute) -> Attribute:
    t = v.type if isinstance(v, SSAValue) else v
    return t.element_type if isinstance(t, TensorType) else t


def tensor_type(elem: Attribute, dims: Sequence[int]) -> TensorType:
    return TensorType(elem, list(dims))


def dense(b, values, type: TensorType) -> SSAValue:
    """A constant tensor from a numpy array, or one number (a splat, held as
    that number: irad/ir/constants.py)."""
    return b.op(arith.ConstantOp(dense_attr(values, type)))


def splat(b, scalar: SSAValue, dims: Sequence[int]) -> SSAValue:
    return b.op(tensor.SplatOp(scalar, [], tensor_type(scalar.type, dims)))


def reshape(b, x: SSAValue, dims: Sequence[int]) -> SSAValue:
    dims = tuple(dims)
    if isinstance(x.owner, tensor.ReshapeOp):  # a reshape of a reshape is one reshape
        x = x.owner.source
    if shape(x) == dims:
        return x
    spec = dense(b, np.array(dims, dtype=np.int64), tensor_type(i64, [len(dims)]))
    return b.op(tensor.ReshapeOp(x, spec, tensor_type(element(x), dims)))


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...] | None:
    """numpy's broadcast of `shapes`, None if they do not broadcast. By the rule
    itself, not np.broadcast_shapes, which refuses shapes of more than 2^63
    bytes as if they did not broadcast: those are refused where they would be
    made (native checks.py), with numpy's "array is too big"."""
    rank = max((len(s) for s in shapes), default=0)
    out = []
    for axis in range(rank):
        sizes = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0} - {1}
        if len(sizes) > 1:
            return None
        out.append(sizes.pop() if sizes else 1)
    return tuple(out)


def broadcast_to(b, x: SSAValue, dims: Sequence[int]) -> SSAValue:
    """numpy broadcasting made explicit: drop the size-1 axes that stretch
    (tensor.reshape), then add the missing axes (linalg.broadcast)."""
    dims = tuple(dims)
    if not is_tensor(x.type):
        return splat(b, x, dims) if dims else x
    src = shape(x)
    if src == dims:
        return x
    offset = len(dims) - len(src)
    kept = [i for i, n in enumerate(src) if n == dims[offset + i]]
    x = reshape(b, x, [src[i] for i in kept])
    added = [d for d in range(len(dims)) if d - offset not in kept]
    init = b.op(tensor.EmptyOp([], tensor_type(element(x), dims)))
    return b.op(BroadcastOp(x, init, DenseArrayBase.from_list(i64, added)))


def reduce(b, x: SSAValue, axes: Sequence[int], combiner: type = arith.AddfOp) -> SSAValue:
    """linalg.reduce over `axes` (the axes disappear from the shape)."""
    axes = sorted(set(axes))
    if not axes:
        return x
    elem = element(x)
    out = [n for i, n in enumerate(shape(x)) if i not in axes]
    init = dense(b, identity(combiner, elem), tensor_type(elem, out))
    body = Block(arg_types=[elem, elem])
    combined = combiner(body.args[0], body.args[1])
    body.add_ops([combined, YieldOp(combined.result)])
    return b.op(ReduceOp(x, init, DenseArrayBase.from_list(i64, axes), Region(body)))


def extract_scalar(b, x: SSAValue) -> SSAValue:
    """The element of a 0-d tensor."""
    return b.op(tensor.ExtractOp(x, [], element(x)))


def reduce_all(b, x: SSAValue, combiner: type = arith.AddfOp) -> SSAValue:
    return extract_scalar(b, reduce(b, x, range(len(shape(x))), combiner))


def unbroadcast(b, ct: SSAValue, target: Attribute) -> SSAValue:
    """The adjoint of broadcasting to `ct`'s shape from a value of type
    `target`: sum over the axes broadcasting added or stretched (ProjectTo)."""
    if not isinstance(target, TensorType):
        return reduce_all(b, ct) if is_tensor(ct.type) else ct
    src, dims = tuple(target.get_shape()), shape(ct)
    if src == dims:
        return ct
    offset = len(dims) - len(src)
    axes = [d for d in range(len(dims)) if d < offset or src[d - offset] != dims[d]]
    return reshape(b, reduce(b, ct, axes), src)


def slice_along(b, x: SSAValue, axis: int, start: int, size: int, step: int = 1) -> SSAValue:
    """x[..., start : start + size * step : step, ...] on `axis` (a negative step
    walks backwards from `start`)."""
    dims = list(shape(x))
    if start == 0 and size == dims[axis] and step == 1:
        return x
    start = start if size else 0  # MLIR wants an offset inside the axis, even for nothing
    offsets = [start if d == axis else 0 for d in range(len(dims))]
    strides = [step if d == axis else 1 for d in range(len(dims))]
    dims[axis] = size
    return b.op(tensor.ExtractSliceOp(x, offsets, dims, strides, tensor_type(element(x), dims)))


def concat(b, items: Sequence[SSAValue], axis: int) -> SSAValue:
    """tensor.concat of tensors of one rank along `axis` (one tensor is itself)."""
    items = [v for v in items if shape(v)[axis] > 0] or list(items[:1])
    if len(items) == 1:
        return items[0]
    dims = list(shape(items[0]))
    dims[axis] = sum(shape(v)[axis] for v in items)
    return b.op(tensor.ConcatOp(list(items), axis, tensor_type(element(items[0]), dims)))


def positions(b, dims: Sequence[int], axis: int, elem: Attribute = I64) -> SSAValue:
    """0, 1, 2, ... along `axis`, as a constant of shape `dims`."""
    counts = np.arange(dims[axis]).reshape([-1 if d == axis else 1 for d in range(len(dims))])
    return dense(b, np.broadcast_to(counts, tuple(dims)), tensor_type(elem, dims))


def transpose(b, x: SSAValue, perm: Sequence[int]) -> SSAValue:
    perm = list(perm)
    if perm == list(range(len(perm))):
        return x
    dims = [shape(x)[p] for p in perm]
    init = b.op(tensor.EmptyOp([], tensor_type(element(x), dims)))
    return b.op(TransposeOp(x, init, DenseArrayBase.from_list(i64, perm)))


def matmul(b, x: SSAValue, y: SSAValue) -> SSAValue:
    out = tensor_type(element(x), [shape(x)[0], shape(y)[1]])
    return b.op(MatmulOp([x, y], [dense(b, 0.0, out)]))


# What a linalg.generic irad builds computes, as far as its derivative goes. The
# builder that knows records it on the op (a discardable StringAttr, so upstream
# MLIR keeps it), and the adjoints read it instead of inspecting the body.
KIND = "irad.kind"
GENERIC_KINDS: dict[str, str] = {
    "select": "np.where: operand 0 picks operand 1 or operand 2, elementwise",
    "piecewise-constant": "comparisons and np.sign: constant near every point, derivative 0",
    "contraction": "einsum: the product of the inputs, summed over the indices the output lacks "
    "(irad/ir/contraction.py)",
    "other": "anything else (casts, integer index arithmetic): no derivative rule",
    # along the axis `irad.axis` (irad/ir/gather.py)
    "gather": "np.take_along_axis(operand 1, operand 0): linear in operand 1",
    "scatter-add": "operand 2 plus operand 1 added at the positions operand 0 holds",
    "scatter": "operand 2 with operand 1 written at the positions operand 0 holds (the last wins)",
    "rank": "the stable rank of each element of operand 0 along the axis (ints)",
}
ELEMENTWISE_KINDS = frozenset({"select", "piecewise-constant", "other"})


def elementwise(
    b,
    body: Callable[[IRBuilder, Sequence[SSAValue]], SSAValue],
    inputs: Sequence[SSAValue],
    result_element: Attribute,
    kind: str = "other",
) -> SSAValue:
    """linalg.generic with identity maps over tensors of one shape; `body`
    emits scalar ops with the builder it is given and returns the yielded value.
    `kind` (GENERIC_KINDS) says what it computes; "other" has no adjoint."""
    assert kind in GENERIC_KINDS, kind
    dims = shape(inputs[0])
    out_type = tensor_type(result_element, dims)
    init = b.op(tensor.EmptyOp([], out_type))
    block = Block(arg_types=[*(element(v) for v in inputs), result_element])
    result = body(IRBuilder(block), block.args[: len(inputs)])
    block.add_op(YieldOp(result))
    identity = AffineMapAttr(AffineMap.identity(len(dims)))
    op = GenericOp(
        list(inputs), [init], Region(block), [identity] * (len(inputs) + 1),
        [IteratorTypeAttr.parallel()] * len(dims), [out_type],
    )
    op.attributes[KIND] = StringAttr(kind)
    return b.op(op)


def pointwise(
    b,
    body: Callable[[IRBuilder, Sequence[SSAValue]], SSAValue],
    inputs: Sequence[SSAValue],
    result_element: Attribute,
    kind: str = "other",
) -> SSAValue:
    """`body` on scalars as they are, or elementwise (a linalg.generic of `kind`)
    on tensors of one shape: one builder serves numbers and arrays."""
    if not any(is_tensor(v.type) for v in inputs):
        return body(b, inputs)
    return elementwise(b, body, inputs, result_element, kind)


def compare(b, predicate: str, x: SSAValue, y: SSAValue) -> SSAValue:
    """arith.cmpf, elementwise on tensors."""
    if not is_tensor(x.type):
        return b.op(arith.CmpfOp(x, y, predicate))
    return elementwise(
        b, lambda e, a: e.op(arith.CmpfOp(a[0], a[1], predicate)), [x, y], I1,
        "piecewise-constant",
    )


def select(b, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    """arith.select, elementwise on tensors."""
    if not is_tensor(x.type):
        return b.op(arith.SelectOp(cond, x, y))
    return elementwise(
        b, lambda e, a: e.op(arith.SelectOp(a[0], a[1], a[2])), [cond, x, y], element(x),
        "select",
    )


# Ops whose result is their tensor operand seen another way: the same elements,
# another type or shape (a view in numpy's terms, no copy).
SAME_ELEMENTS = (tensor.CastOp, tensor.ReshapeOp, tensor.CollapseShapeOp, tensor.ExpandShapeOp)

DYNAMIC = -(2**63)  # a dynamic offset in tensor.extract_slice/insert_slice
INDEX = IndexType()


def to_float(b, x: SSAValue, elem: Attribute) -> SSAValue:
    """An int or bool tensor as floats (arith casts on tensors, as a linalg.generic)."""
    src = element(x)
    cast = arith.UIToFPOp if isinstance(src, IntegerType) and src.width.data == 1 else arith.SIToFPOp
    return elementwise(b, lambda e, a: e.op(cast(a[0], elem)), [x], elem)


# band's predicates: where i + k <predicate> j, as numpy computes it
_BAND = {"oeq": np.equal, "oge": np.greater_equal, "ole": np.less_equal}


def band(b, n: int, m: int, k: int, elem: Attribute, predicate: str = "oeq", computed: bool = False) -> SSAValue:
    """The n×m array that is 1 where row i and column j have i + k
    `predicate` j, 0 elsewhere, of elements of type `elem` (i1: the mask):
    "oeq" is np.eye(n, m, k), "oge" np.tri(n, m, k) (np.tril's mask), "ole"
    np.triu's. A constant up to LARGE_SPLAT elements; larger, or `computed`,
    it is made when run, comparing two ramps broadcast across the array (a
    constant would hold n*m elements while compiling). The ramps are in
    `elem` where it holds them exactly, else in f64."""
    if n * m <= LARGE_SPLAT and not computed:
        values = _BAND[predicate](np.arange(n)[:, None] + k, np.arange(m)[None, :])
        return dense(b, values, tensor_type(elem, [n, m]))
    exact = elem == F64 or (elem == F32 and max(n, m) + abs(k) < 2**24)
    ramp_elem = elem if exact else F64
    rows = dense(b, np.arange(n, dtype=np.float64) + k, tensor_type(ramp_elem, [n]))
    columns = rows if (n, k) == (m, 0) else dense(b, np.arange(m, dtype=np.float64), tensor_type(ramp_elem, [m]))
    square = tensor_type(ramp_elem, [n, m])
    down = b.op(BroadcastOp(rows, b.op(tensor.EmptyOp([], square)), DenseArrayBase.from_list(i64, [1])))
    across = b.op(BroadcastOp(columns, b.op(tensor.EmptyOp([], square)), DenseArrayBase.from_list(i64, [0])))
    ones = compare(b, predicate, down, across)
    if elem == I1:
        return ones
    if isinstance(elem, IntegerType):
        return elementwise(b, lambda e, a: e.op(arith.ExtUIOp(a[0], elem)), [ones], elem)
    return to_float(b, ones, elem)


def sign(b, x: SSAValue) -> SSAValue:
    """(x > 0) - (x < 0), elementwise, and NaN where x is NaN (as numpy's):
    built from comparisons, so its derivative is 0."""
    elem = element(x)

    def body(e, a: Sequence[SSAValue]) -> SSAValue:
        zero = e.op(arith.ConstantOp(FloatAttr(0.0, elem)))
        pos = e.op(arith.UIToFPOp(e.op(arith.CmpfOp(a[0], zero, "ogt")), elem))
        neg = e.op(arith.UIToFPOp(e.op(arith.CmpfOp(a[0], zero, "olt")), elem))
        nan = e.op(arith.CmpfOp(a[0], a[0], "uno"))
        return e.op(arith.SelectOp(nan, a[0], e.op(arith.SubfOp(pos, neg))))

    if not is_tensor(x.type):
        return body(b, [x])
    return elementwise(b, body, [x], elem, "piecewise-constant")


def broadcast_back(b, y: SSAValue, like: SSAValue, dims) -> SSAValue:
    """Undo a reduction over `dims`: broadcast `y` to the shape of `like`."""
    init = b.op(tensor.EmptyOp([], TensorType(element(y), shape(like))))
    return b.op(BroadcastOp(y, init, DenseArrayBase.from_list(i64, list(dims))))


def generic_kind(op: Operation) -> str:
    """What a linalg.generic irad built computes (GENERIC_KINDS), as its builder
    recorded it. One irad did not build (hand-written IR) has no kind: an error,
    rather than a guess from its body."""
    kind = op.attributes.get(KIND)
    if not isinstance(kind, StringAttr):
        raise DifferentiationError(
            f"{location(op)}: no `{KIND}` attribute says what it computes; irad "
            "differentiates only the linalg.generic ops it builds (np.where, np.sign, "
            "comparisons), which record it"
        )
    return kind.data
