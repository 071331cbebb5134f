"""Adjoints of the tensor ops numpy arrays lower to (irad/ir/tensor.py), as a table.

Same interface as passes/adjoints.py: `adjoint(b, op, dy)` returns one
cotangent per operand (None for none). Elementwise arith/math ops on tensors
reuse the scalar adjoints, which build tensor constants through `b.const` and
compare and select through irad/ir/tensor.py (a linalg.generic on tensors); only
`math.absf` has a tensor version here (sign through comparisons, not copysign).

Cotangents take their primal's shape and dtype (ChainRules' ProjectTo):
broadcasting ops have reductions as adjoints (the unbroadcast), so an operand
broadcast from a scalar or a size-1 axis gets a cotangent of its own shape.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from irad.errors import DifferentiationError
from irad.ir.locations import location
from irad.ir import tensor as T

ArrayAdjoint = Callable[[object, Operation, SSAValue], list[SSAValue | None]]

# ops that only exist on tensors
TENSOR_ADJOINTS: dict[str, ArrayAdjoint] = {}
# elementwise ops whose scalar adjoint compares or selects: tensor versions
ELEMENTWISE_ADJOINTS: dict[str, ArrayAdjoint] = {}


def array_adjoint(op: Operation) -> ArrayAdjoint | None:
    """The adjoint for `op` if it is a tensor op; None defers to passes/adjoints.py."""
    return TENSOR_ADJOINTS.get(op.name) or elementwise_tensor_adjoint(op)


def elementwise_tensor_adjoint(op: Operation) -> ArrayAdjoint | None:
    """The tensor version of an elementwise op's adjoint, if it has one; such an
    adjoint is also the op's tangent rule (a diagonal Jacobian)."""
    if op.results and isinstance(op.results[0].type, TensorType):
        return ELEMENTWISE_ADJOINTS.get(op.name)
    return None


def _register(table, *names: str):
    def register(fn: ArrayAdjoint) -> ArrayAdjoint:
        for name in names:
            table[name] = fn
        return fn

    return register


def _none(op: Operation, first: list) -> list:
    """Cotangents for the leading operands, None for the rest (inits, indices)."""
    return first + [None] * (len(op.operands) - len(first))


# ---- broadcasting and reductions -------------------------------------------------
@_register(TENSOR_ADJOINTS, "linalg.broadcast")
def _broadcast(b, op, dy):
    return _none(op, [T.reduce(b, dy, op.dimensions.get_values())])


@_register(TENSOR_ADJOINTS, "tensor.splat")
def _splat(b, op, dy):
    return _none(op, [T.reduce_all(b, dy)])


@_register(TENSOR_ADJOINTS, "linalg.reduce")
def _reduce(b, op, dy):
    dims = op.dimensions.get_values()
    combiner = next(iter(op.regions[0].block.ops))
    x_value = op.operands[0]
    if isinstance(combiner, arith.AddfOp):
        return _none(op, [T.broadcast_back(b, dy, x_value, dims)])
    x, y = b.primal(x_value), b.primal(op.results[0])
    spread = T.broadcast_back(b, dy, x_value, dims)
    if isinstance(combiner, arith.MulfOp):
        # d prod / d x_i = prod / x_i (undefined where an x_i is 0)
        return _none(op, [b.mul(spread, b.div(T.broadcast_back(b, y, x_value, dims), x))])
    # max/min: the cotangent is shared equally by the elements that attain it
    hits = T.compare(b, "oeq", x, T.broadcast_back(b, y, x_value, dims))
    as_float = T.to_float(b, hits, T.element(x))
    count = T.broadcast_back(b, T.reduce(b, as_float, dims), x_value, dims)
    return _none(op, [b.mul(as_float, b.div(spread, count))])


@_register(TENSOR_ADJOINTS, "tensor.reshape")
def _reshape(b, op, dy):
    return _none(op, [T.reshape(b, dy, T.shape(op.operands[0]))])


@_register(TENSOR_ADJOINTS, "linalg.transpose")
def _transpose(b, op, dy):
    perm = op.permutation.get_values()
    inverse = [perm.index(i) for i in range(len(perm))]
    return _none(op, [T.transpose(b, dy, inverse)])


@_register(TENSOR_ADJOINTS, "linalg.matmul")
def _matmul(b, op, dy):
    # C = A B: dA = dC B^T, dB = A^T dC -- two matmuls
    lhs, rhs = op.operands[0], op.operands[1]
    da = T.matmul(b, dy, T.transpose(b, b.primal(rhs), [1, 0])) if b.is_active(lhs) else None
    db = T.matmul(b, T.transpose(b, b.primal(lhs), [1, 0]), dy) if b.is_active(rhs) else None
    return _none(op, [da, db])


# ---- elements and slices ---------------------------------------------------------
def _indices(b, op, operands) -> list[SSAValue]:
    return [b.primal(v) for v in operands]


@_register(TENSOR_ADJOINTS, "tensor.extract")
def _extract(b, op, dy):
    source = op.operands[0]
    zero = b.zero(source.type)
    return _none(op, [b.op(tensor.InsertOp(dy, zero, _indices(b, op, op.indices)))])


@_register(TENSOR_ADJOINTS, "tensor.insert")
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


@_register(TENSOR_ADJOINTS, "tensor.extract_slice")
def _extract_slice(b, op, dy):
    offsets, sizes, strides = _slice_parameters(b, op)
    zero = b.zero(op.operands[0].type)
    return _none(op, [_insert_slice(b, dy, zero, offsets, sizes, strides)])


@_register(TENSOR_ADJOINTS, "tensor.insert_slice")
def _insert_slice_adjoint(b, op, dy):
    source, dest = op.operands[0], op.operands[1]
    offsets, sizes, strides = _slice_parameters(b, op)
    d_source = d_dest = None
    if b.is_active(source):
        d_source = b.op(tensor.ExtractSliceOp(dy, offsets, sizes, strides, source.type))
    if b.is_active(dest):
        d_dest = _insert_slice(b, b.zero(source.type), dy, offsets, sizes, strides)
    return _none(op, [d_source, d_dest])


@_register(TENSOR_ADJOINTS, "tensor.concat")
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


@_register(TENSOR_ADJOINTS, "tensor.from_elements")
def _from_elements(b, op, dy):
    return [
        b.op(tensor.ExtractOp(dy, [b.op(arith.ConstantOp.from_int_and_width(i, T.INDEX))], v.type))
        if b.is_active(v) else None
        for i, v in enumerate(op.operands)
    ]


@_register(TENSOR_ADJOINTS, "linalg.generic")
def _generic(b, op, dy):
    """np.where: the cotangent goes to the selected side; np.sign: none."""
    kind = T.generic_kind(op)
    if kind == "piecewise-constant":
        return [None] * len(op.operands)
    if kind != "select":
        raise DifferentiationError(
            f"{location(op)}: no adjoint for this linalg.generic (irad differentiates the "
            "elementwise selects it emits for np.where)"
        )
    cond = b.primal(op.operands[0])
    zero = b.zero(dy.type)
    return _none(op, [None, T.select(b, cond, dy, zero), T.select(b, cond, zero, dy)])


# ---- elementwise ops that compare or select ---------------------------------------
@_register(ELEMENTWISE_ADJOINTS, "math.absf")
def _absf(b, op, dy):
    return [b.mul(dy, T.sign(b, b.primal(op.operands[0])))]
