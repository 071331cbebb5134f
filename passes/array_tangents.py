"""Tangent rules of the tensor ops numpy arrays lower to (irad/ir/tensor.py).

Forward mode pushes tangents through elementwise ops with their adjoints (a
diagonal Jacobian is its own transpose), but not through ops that move,
combine or reduce elements: their adjoints are the transposed maps. Each rule
here takes the TangentBuilder and the primal op (already cloned) and returns
the tangent of its result:

- structural ops are linear in their data operands: the same op on the tangents
  (broadcast, splat, reshape, transpose, extract, slices, concat, inserts);
- a sum is linear too; max/min share the tangent among the elements that
  attain it, and a product gets sum(t * y / x);
- matmul is bilinear: tA B + A tB;
- np.where selects tangents as it selects values; np.sign has none.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.ir import Operation, SSAValue

from irad.errors import DifferentiationError
from irad.ir import tensor as T

TensorTangent = Callable[[object, Operation], SSAValue | None]

# op name -> the operand positions its result is linear in
LINEAR_IN: dict[str, Callable[[Operation], range | list[int]]] = {
    "linalg.broadcast": lambda op: [0],
    "tensor.splat": lambda op: [0],
    "tensor.reshape": lambda op: [0],
    "linalg.transpose": lambda op: [0],
    "tensor.extract": lambda op: [0],
    "tensor.extract_slice": lambda op: [0],
    "tensor.insert": lambda op: [0, 1],
    "tensor.insert_slice": lambda op: [0, 1],
    "tensor.concat": lambda op: range(len(op.operands)),
    "tensor.from_elements": lambda op: range(len(op.operands)),
}


def linear_tangent(b, op: Operation) -> SSAValue:
    """The op itself, applied to the tangents of the operands it is linear in."""
    mapping = dict(b.values)
    for i in LINEAR_IN[op.name](op):
        v = op.operands[i]
        mapping[v] = b.tangent_or_zero(v)
    copy = op.clone(value_mapper=mapping)
    b.block.add_op(copy)
    return copy.results[0]


def _reduce(b, op: Operation) -> SSAValue:
    dims = op.dimensions.get_values()
    combiner = next(iter(op.regions[0].block.ops))
    x_value = op.operands[0]
    t = b.tangent_or_zero(x_value)
    if isinstance(combiner, arith.AddfOp):
        return T.reduce(b, t, dims)
    x, y = b.primal(x_value), b.primal(op.results[0])
    y_spread = T.broadcast_back(b, y, x_value, dims)
    if isinstance(combiner, arith.MulfOp):
        return T.reduce(b, b.mul(t, b.div(y_spread, x)), dims)  # d prod = sum(t * prod / x)
    if not isinstance(combiner, (arith.MaximumfOp, arith.MinimumfOp, arith.MaxnumfOp, arith.MinnumfOp)):
        raise DifferentiationError(f"forward mode: no tangent rule for a reduction by {combiner.name}")
    hits = T.to_float(b, T.compare(b, "oeq", x, y_spread), T.element(x))
    count = T.reduce(b, hits, dims)
    return b.div(T.reduce(b, b.mul(hits, t), dims), count)


def _matmul(b, op: Operation) -> SSAValue:
    lhs, rhs = op.operands[0], op.operands[1]
    parts = []
    if lhs in b.tangents:
        parts.append(T.matmul(b, b.tangents[lhs], b.primal(rhs)))
    if rhs in b.tangents:
        parts.append(T.matmul(b, b.primal(lhs), b.tangents[rhs]))
    return parts[0] if len(parts) == 1 else b.add(parts[0], parts[1])


def _generic(b, op: Operation) -> SSAValue | None:
    kind = T.generic_kind(op)
    if kind == "piecewise-constant":
        return None  # np.sign
    if kind != "select":
        raise DifferentiationError(
            "forward mode: no tangent rule for this linalg.generic (irad differentiates "
            "the elementwise selects it emits for np.where)"
        )
    cond = b.primal(op.operands[0])
    return T.select(b, cond, b.tangent_or_zero(op.operands[1]), b.tangent_or_zero(op.operands[2]))


TENSOR_TANGENTS: dict[str, TensorTangent] = {
    **{name: linear_tangent for name in LINEAR_IN},
    "linalg.reduce": _reduce,
    "linalg.matmul": _matmul,
    "linalg.generic": _generic,
}
