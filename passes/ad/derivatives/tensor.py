"""Derivatives of the tensor ops numpy arrays lower to (irad/ir/tensor.py).

Each op is one entry with both rules, the reverse rule decorated and its
forward rule beside it (the interfaces are in registry.py):

- structural ops (broadcast, splat, reshape, transpose, extract, inserts,
  slices, concat, from_elements, irad.cumsum) are linear in their data operands: the tangent
  is the same op on the tangents, the cotangent the transposed map;
- irad.linear_scan (np.cumprod) is linear in b and bilinear in (a, h):
  its cotangent is the recurrence run the other way, its tangent the same
  recurrence driven by the tangents;
- reductions: a sum is linear; max/min share the derivative among the elements
  that attain it; a product's is prod / x per element;
- matmul is bilinear: tA B + A tB forwards, dC B^T and A^T dC backwards;
- linalg.generic, by the kind its builder recorded: np.where selects as it
  selects values; np.sign has none; a gather's adjoint is a scatter-add and a
  scatter-add's a gather (integer indexing, np.sort); a contraction (einsum) is
  linear in each input (contraction.py).

Cotangents take their primal's shape and dtype (ChainRules' ProjectTo):
broadcasting ops have reductions as adjoints (the unbroadcast), so an operand
broadcast from a scalar or a size-1 axis gets a cotangent of its own shape.

Elementwise arith/math ops on tensors use the scalar entries (scalar.py), except
those in TENSOR_FORMS, whose scalar rule does not carry over to tensors.
"""

from __future__ import annotations

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from irad.base.errors import DifferentiationError
from irad.ir import gather as G
from irad.ir import scan as S
from irad.ir import tensor as T
from irad.ir.locations import location
from irad.passes.ad.derivatives import batching, contraction
from irad.passes.ad.derivatives.registry import BatchRule, ForwardRule, OpDerivative, registrar

ENTRIES: dict[str, OpDerivative] = {}
derivative = registrar(ENTRIES)
# elementwise ops on tensors whose scalar rule does not carry over (absf: copysign)
TENSOR_FORMS: dict[str, OpDerivative] = {}
tensor_form = registrar(TENSOR_FORMS, elementwise=True, batch=batching.elementwise)


def _none(op: Operation, first: list) -> list:
    """Cotangents for the leading operands, None for the rest (inits, indices)."""
    return first + [None] * (len(op.operands) - len(first))


def _linear_in(operands: tuple[int, ...] | None) -> ForwardRule:
    """The op itself, applied to the tangents of `operands` (None: all of them)."""

    def forward(b, op: Operation) -> SSAValue:
        mapping = dict(b.values)
        for i in operands if operands is not None else range(len(op.operands)):
            v = op.operands[i]
            mapping[v] = b.tangent_or_zero(v)
        copy = op.clone(value_mapper=mapping)
        b.block.add_op(copy)
        return copy.results[0]

    return forward


def structural(*names: str, operands: tuple[int, ...] | None, batch: BatchRule):
    """An op linear in `operands` (None: all): its own tangent rule."""
    return derivative(*names, forward=_linear_in(operands), operands=operands, batch=batch)


# ---- broadcasting and reductions -------------------------------------------------
@structural("linalg.broadcast", operands=(0,), batch=batching.broadcast)
def _broadcast(b, op, dy):
    return _none(op, [T.reduce(b, dy, op.dimensions.get_values())])


@structural("tensor.splat", operands=(0,), batch=batching.splat)
def _splat(b, op, dy):
    return _none(op, [T.reduce_all(b, dy)])


def _others_product(b, x_value: SSAValue, y_value: SSAValue, dims) -> SSAValue:
    """d prod(x) / d x_i, per element of x: the product of the elements x_i is
    reduced with, never a division by zero (JAX's value where an x_i is 0),
    written so that its own derivative is right too (a Hessian). Where
    x_i != 0 it is prod / x_i, through the product itself (its derivative in
    a zero x_j is the product of the rest); where x_i == 0 it is the product
    q of the non-zero elements times 1 if x_i is the only zero, times the
    other zero x_j if there are two (0, of derivative q in x_j), else 0."""
    x, y = b.primal(x_value), b.primal(y_value)
    zeros, ones = T.dense(b, 0.0, x.type), T.dense(b, 1.0, x.type)
    is_zero = T.compare(b, "oeq", x, zeros)
    safe_x = T.select(b, is_zero, ones, x)
    divided = b.div(T.broadcast_back(b, y, x_value, dims), safe_x)

    def spread(v):
        return T.broadcast_back(b, T.reduce(b, v, dims), x_value, dims)

    nonzero = T.broadcast_back(b, T.reduce(b, safe_x, dims, arith.MulfOp), x_value, dims)
    count = spread(T.to_float(b, is_zero, T.element(x)))
    other_zero = b.sub(spread(T.select(b, is_zero, x, zeros)), x)  # 0, the other of two zeros
    two = T.select(b, T.compare(b, "oeq", count, T.dense(b, 2.0, x.type)), other_zero, zeros)
    factor = T.select(b, T.compare(b, "oeq", count, ones), ones, two)
    return T.select(b, is_zero, b.mul(nonzero, factor), divided)


def _reduce_tangent(b, op: Operation) -> SSAValue:
    dims = op.dimensions.get_values()
    combiner = next(iter(op.regions[0].block.ops))
    x_value = op.operands[0]
    t = b.tangent_or_zero(x_value)
    if isinstance(combiner, arith.AddfOp):
        return T.reduce(b, t, dims)
    x, y = b.primal(x_value), b.primal(op.results[0])
    y_spread = T.broadcast_back(b, y, x_value, dims)
    if isinstance(combiner, arith.MulfOp):
        return T.reduce(b, b.mul(t, _others_product(b, x_value, op.results[0], dims)), dims)
    if not isinstance(combiner, (arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)):
        raise DifferentiationError(f"forward mode: no tangent rule for a reduction by {combiner.name}")
    hits = T.to_float(b, T.compare(b, "oeq", x, y_spread), T.element(x))
    count = T.reduce(b, hits, dims)
    return b.div(T.reduce(b, b.mul(hits, t), dims), count)


@derivative("linalg.reduce", forward=_reduce_tangent, operands=(0,), batch=batching.reduce)
def _reduce(b, op, dy):
    dims = op.dimensions.get_values()
    combiner = next(iter(op.regions[0].block.ops))
    x_value = op.operands[0]
    if isinstance(combiner, arith.AddfOp):
        return _none(op, [T.broadcast_back(b, dy, x_value, dims)])
    x, y = b.primal(x_value), b.primal(op.results[0])
    spread = T.broadcast_back(b, dy, x_value, dims)
    if isinstance(combiner, arith.MulfOp):
        return _none(op, [b.mul(spread, _others_product(b, x_value, op.results[0], dims))])
    # max/min: the cotangent is shared equally by the elements that attain it
    hits = T.compare(b, "oeq", x, T.broadcast_back(b, y, x_value, dims))
    as_float = T.to_float(b, hits, T.element(x))
    count = T.broadcast_back(b, T.reduce(b, as_float, dims), x_value, dims)
    return _none(op, [b.mul(as_float, b.div(spread, count))])


@structural("tensor.reshape", operands=(0,), batch=batching.reshape)
def _reshape(b, op, dy):
    return _none(op, [T.reshape(b, dy, T.shape(op.operands[0]))])


@structural("linalg.transpose", operands=(0,), batch=batching.transpose)
def _transpose(b, op, dy):
    perm = op.permutation.get_values()
    inverse = [perm.index(i) for i in range(len(perm))]
    return _none(op, [T.transpose(b, dy, inverse)])


@structural("irad.cumsum", operands=(0,), batch=batching.cumsum)
def _cumsum(b, op, dy):
    # y = L x with L triangular of ones: x's cotangent is L^T dy, the cumsum the other way
    return [S.cumsum(b, dy, op.axis_value, reverse=op.reverse is None)]


def _linear_scan_tangent(b, op: Operation) -> SSAValue:
    # dh[k] = a[k] dh[k-1] + (da[k] h[k-1] + db[k]): the same recurrence
    axis, reverse = op.axis_value, op.reverse is not None
    drive = b.tangents.get(op.b)
    if op.a in b.tangents:
        before = S.shifted(b, b.primal(op.results[0]), axis, later=not reverse)
        moved = b.mul(b.tangents[op.a], before)
        drive = moved if drive is None else b.add(drive, moved)
    return S.linear_scan(b, b.primal(op.a), drive, axis, reverse)


@derivative("irad.linear_scan", forward=_linear_scan_tangent, operands=(0, 1), batch=batching.linear_scan)
def _linear_scan(b, op, dy):
    # h = M(a) x, M lower triangular with M[k, j] = a[j+1] ... a[k]: x's cotangent is
    # M^T dy, the recurrence the other way with each a one place back; a[k]'s is
    # that cotangent times h[k-1], the value a[k] multiplied
    axis, reverse = op.axis_value, op.reverse is not None
    a = b.primal(op.a)
    back = S.linear_scan(b, S.shifted(b, a, axis, later=reverse), dy, axis, not reverse)
    da = None
    if b.is_active(op.a):
        da = b.mul(back, S.shifted(b, b.primal(op.results[0]), axis, later=not reverse))
    return [da, back if b.is_active(op.b) else None]


def _matmul_tangent(b, op: Operation) -> SSAValue:
    lhs, rhs = op.operands[0], op.operands[1]
    parts = []
    if lhs in b.tangents:
        parts.append(T.matmul(b, b.tangents[lhs], b.primal(rhs)))
    if rhs in b.tangents:
        parts.append(T.matmul(b, b.primal(lhs), b.tangents[rhs]))
    return parts[0] if len(parts) == 1 else b.add(parts[0], parts[1])


@derivative("linalg.matmul", forward=_matmul_tangent, operands=(0, 1), batch=batching.matmul)
def _matmul(b, op, dy):
    # C = A B: dA = dC B^T, dB = A^T dC -- two matmuls
    lhs, rhs = op.operands[0], op.operands[1]
    da = T.matmul(b, dy, T.transpose(b, b.primal(rhs), [1, 0])) if b.is_active(lhs) else None
    db = T.matmul(b, T.transpose(b, b.primal(lhs), [1, 0]), dy) if b.is_active(rhs) else None
    return _none(op, [da, db])


# ---- elements and slices ---------------------------------------------------------
def _indices(b, op, operands) -> list[SSAValue]:
    return [b.primal(v) for v in operands]


@structural("tensor.extract", operands=(0,), batch=batching.extract)
def _extract(b, op, dy):
    source = op.operands[0]
    zero = b.zero(source.type)
    return _none(op, [b.op(tensor.InsertOp(dy, zero, _indices(b, op, op.indices)))])


@structural("tensor.insert", operands=(0, 1), batch=batching.insert)
def _insert(b, op, dy):
    scalar, dest = op.operands[0], op.operands[1]
    index = _indices(b, op, op.indices)
    d_scalar = b.op(tensor.ExtractOp(dy, index, scalar.type)) if b.is_active(scalar) else None
    d_dest = b.op(tensor.InsertOp(b.zero(scalar.type), dy, index)) if b.is_active(dest) else None
    return _none(op, [d_scalar, d_dest])


def _slice_parameters(b, op):
    offsets = _indices(b, op, op.offsets)
    return (
        _mixed(op.static_offsets.get_values(), offsets),
        list(op.static_sizes.get_values()),
        list(op.static_strides.get_values()),
    )


def _mixed(static: tuple[int, ...], dynamic: list[SSAValue]) -> list:
    values = iter(dynamic)
    return [next(values) if s == T.DYNAMIC else s for s in static]


def _insert_slice(b, source, dest, offsets, sizes, strides) -> SSAValue:
    static_offsets = [o if isinstance(o, int) else T.DYNAMIC for o in offsets]
    dynamic = [o for o in offsets if not isinstance(o, int)]
    return b.op(tensor.InsertSliceOp.get(source, dest, sizes, static_offsets, strides, dynamic))


@structural("tensor.extract_slice", operands=(0,), batch=batching.extract_slice)
def _extract_slice(b, op, dy):
    offsets, sizes, strides = _slice_parameters(b, op)
    zero = b.zero(op.operands[0].type)
    return _none(op, [_insert_slice(b, dy, zero, offsets, sizes, strides)])


@structural("tensor.insert_slice", operands=(0, 1), batch=batching.insert_slice)
def _insert_slice_adjoint(b, op, dy):
    source, dest = op.operands[0], op.operands[1]
    offsets, sizes, strides = _slice_parameters(b, op)
    d_source = d_dest = None
    if b.is_active(source):
        d_source = b.op(tensor.ExtractSliceOp(dy, offsets, sizes, strides, source.type))
    if b.is_active(dest):
        d_dest = _insert_slice(b, b.zero(source.type), dy, offsets, sizes, strides)
    return _none(op, [d_source, d_dest])


@structural("tensor.concat", operands=None, batch=batching.concat)
def _concat(b, op, dy):
    axis = op.dim.value.data
    start, cts = 0, []
    for v in op.operands:
        dims = T.shape(v)
        offsets = [start if d == axis else 0 for d in range(len(dims))]
        cts.append(b.op(tensor.ExtractSliceOp(dy, offsets, list(dims), [1] * len(dims), v.type))
                   if b.is_active(v) else None)
        start += dims[axis]
    return cts


@structural("tensor.from_elements", operands=None, batch=batching.from_elements)
def _from_elements(b, op, dy):
    return [
        b.op(tensor.ExtractOp(dy, [b.op(arith.ConstantOp.from_int_and_width(i, T.INDEX))], v.type))
        if b.is_active(v) else None
        for i, v in enumerate(op.operands)
    ]


# ---- linalg.generic: np.where, np.sign, gathers and scatters ----------------------------
# What a linalg.generic computes is recorded by its builder (irad.kind): each kind
# has its rules here. Gathers and scatters are linear in their data operands: the
# tangent is the same op on the tangents; a gather's cotangent is a scatter-add, a
# scatter-add's a gather (irad/ir/gather.py).
def _equal_ints(b, x: SSAValue, y: SSAValue) -> SSAValue:
    return T.elementwise(b, lambda e, a: e.op(arith.CmpiOp(a[0], a[1], "eq")), [x, y], T.I1,
                         "piecewise-constant")


def _scatter_adjoint(b, op, dy) -> list:
    """out = dest with values written at idx: the overwritten part of dest gets no
    cotangent; where idx repeats, only the value written last does."""
    idx, values, dest = op.operands
    axis = G.axis_of(op)
    index = b.primal(idx)
    d_values = d_dest = None
    if b.is_active(values):
        order = T.positions(b, T.shape(index), axis)
        last = G.scatter(b, T.dense(b, -1, TensorType(T.I64, T.shape(dest))), index, order, axis)
        wins = _equal_ints(b, G.gather(b, last, index, axis), order)
        d_values = T.select(b, wins, G.gather(b, dy, index, axis), b.zero(values.type))
    if b.is_active(dest):
        covered = G.scatter(b, T.dense(b, False, TensorType(T.I1, T.shape(dest))), index,
                            T.dense(b, True, TensorType(T.I1, T.shape(idx))), axis)
        d_dest = T.select(b, covered, b.zero(dy.type), dy)
    return [None, d_values, d_dest]


def _gather_adjoint(b, op, dy) -> list:
    idx, x, _ = op.operands
    zero = b.zero(x.type)
    return [None, G.scatter_add(b, zero, b.primal(idx), dy, G.axis_of(op)), None]


def _scatter_add_adjoint(b, op, dy) -> list:
    idx, values, dest = op.operands
    d_values = G.gather(b, dy, b.primal(idx), G.axis_of(op)) if b.is_active(values) else None
    return [None, d_values, dy if b.is_active(dest) else None]


def _select_adjoint(b, op, dy) -> list:
    cond = b.primal(op.operands[0])
    zero = b.zero(dy.type)
    return _none(op, [None, T.select(b, cond, dy, zero), T.select(b, cond, zero, dy)])


def _no_derivative(b, op, dy) -> list:
    return [None] * len(op.operands)


_GENERIC_ADJOINTS = {
    "select": _select_adjoint,  # np.where: the cotangent goes to the selected side
    "piecewise-constant": _no_derivative,  # comparisons, np.sign
    "rank": _no_derivative,  # ints
    "gather": _gather_adjoint,
    "scatter-add": _scatter_add_adjoint,
    "scatter": _scatter_adjoint,
    "contraction": contraction.reverse,  # einsum
}
_LINEAR_GENERICS = {"gather": (1,), "scatter-add": (1, 2), "scatter": (1, 2)}


def _generic_tangent(b, op: Operation) -> SSAValue | None:
    kind = T.generic_kind(op)
    if kind in ("piecewise-constant", "rank"):
        return None
    if kind == contraction.C.KIND:
        return contraction.forward(b, op)
    if kind in _LINEAR_GENERICS:
        return _linear_in(_LINEAR_GENERICS[kind])(b, op)
    if kind != "select":
        raise DifferentiationError(
            f"forward mode: no tangent rule for a linalg.generic of kind {kind!r} (irad "
            "differentiates the selects, gathers and scatters it emits)"
        )
    cond = b.primal(op.operands[0])
    return T.select(b, cond, b.tangent_or_zero(op.operands[1]), b.tangent_or_zero(op.operands[2]))


@derivative("linalg.generic", forward=_generic_tangent, operands=None, batch=batching.generic)
def _generic(b, op, dy):
    """By the kind its builder recorded (irad/ir/tensor.py GENERIC_KINDS)."""
    kind = T.generic_kind(op)
    if kind not in _GENERIC_ADJOINTS:
        raise DifferentiationError(
            f"{location(op)}: no adjoint for a linalg.generic of kind {kind!r} (irad "
            "differentiates the selects, gathers and scatters it emits)"
        )
    return _GENERIC_ADJOINTS[kind](b, op, dy)


# ---- elementwise ops whose scalar rule does not carry over -------------------------
@tensor_form("math.absf")
def _absf(b, op, dy):
    # the sign through comparisons (T.sign), not copysign
    return [b.mul(dy, T.sign(b, b.primal(op.operands[0])))]
