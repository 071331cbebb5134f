"""Gathers, scatters and ranks along one axis: the tensor ops behind integer
indexing (`x[idx]`, `y[idx] = v`), np.take, np.sort and np.argsort.

Each is a `linalg.generic` that names what it computes (`irad.kind`, see
tensor.py's GENERIC_KINDS) and its axis (`irad.axis`), so the derivative rules
(passes/ad/derivatives/tensor.py) and the Python backend (np.take_along_axis,
np.add.at, np.argsort) read their meaning instead of guessing it from the body.
All take numpy's take_along_axis form: the index tensor has the rank of the
data and its shape everywhere but on `axis`; the index values are in range
(the frontend wraps and checks them).

    gather(x, idx)            out[.., j, ..] = x[.., idx[.., j, ..], ..]    out: idx's shape
    scatter_add(d, idx, v)    out = d; out[.., idx[.., j, ..], ..] += v[.., j, ..]
    scatter(d, idx, v)        the same with `=`: where idx repeats, the last j wins
    rank(x)                   out[.., i, ..] = the stable rank of x[.., i, ..] along
                              the axis, NaN last (np.argsort(np.argsort(x)))

Upstream MLIR's tensor.gather/scatter do not bufferize, so each is written as
an iteration over the result and the axis being searched (a `reduction`
iterator), with `linalg.index` to compare positions: O(size * length) work
natively, one numpy call in the Python backend.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, IntegerType, StringAttr, TensorType, i64
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from irad.ir.builder import IRBuilder
from irad.ir.constants import zero_constant
from irad.ir.tensor import I64, KIND, element, shape

AXIS = "irad.axis"


def _map(num_dims: int, dims: Sequence[int]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(num_dims, 0, tuple(AffineExpr.dimension(d) for d in dims)))


def _generic(b, inputs, init, maps, iterators, body, kind: str, axis: int) -> SSAValue:
    op = GenericOp(list(inputs), [init], body, maps, iterators, [init.type])
    op.attributes[KIND] = StringAttr(kind)
    op.attributes[AXIS] = IntegerAttr(axis, i64)
    return b.op(op)


def _position(e, dim: int) -> SSAValue:
    """The loop index `dim` as an i64, to compare with index values."""
    return e.op(arith.IndexCastOp(e.op(IndexOp(dim)), I64))


def gather(b, x: SSAValue, idx: SSAValue, axis: int) -> SSAValue:
    """np.take_along_axis(x, idx, axis): idx holds i64 positions in range."""
    rank = len(shape(x))
    out_type = TensorType(element(x), shape(idx))
    r = rank  # the loop over x's axis
    block = Block(arg_types=[I64, element(x), element(x)])
    e = IRBuilder(block)
    i, value, acc = block.args
    hit = e.op(arith.CmpiOp(i, _position(e, r), "eq"))
    e.op(YieldOp(e.op(arith.SelectOp(hit, value, acc))))
    x_dims = [r if d == axis else d for d in range(rank)]
    maps = [_map(rank + 1, range(rank)), _map(rank + 1, x_dims), _map(rank + 1, range(rank))]
    iterators = [IteratorTypeAttr.parallel()] * rank + [IteratorTypeAttr.reduction()]
    init = b.op(zero_constant(out_type))
    return _generic(b, [idx, x], init, maps, iterators, Region(block), "gather", axis)


def _scatter(b, dest: SSAValue, idx: SSAValue, values: SSAValue, axis: int, kind: str) -> SSAValue:
    rank = len(shape(dest))
    j = rank  # the loop over idx's axis
    elem = element(dest)
    block = Block(arg_types=[I64, elem, elem])
    e = IRBuilder(block)
    i, value, acc = block.args
    hit = e.op(arith.CmpiOp(i, _position(e, axis), "eq"))
    if kind == "scatter-add":
        add = arith.AddiOp(acc, value) if isinstance(elem, IntegerType) else arith.AddfOp(acc, value)
        value = e.op(add)
    e.op(YieldOp(e.op(arith.SelectOp(hit, value, acc))))
    idx_dims = [j if d == axis else d for d in range(rank)]
    maps = [_map(rank + 1, idx_dims), _map(rank + 1, idx_dims), _map(rank + 1, range(rank))]
    iterators = [IteratorTypeAttr.parallel()] * rank + [IteratorTypeAttr.reduction()]
    return _generic(b, [idx, values], dest, maps, iterators, Region(block), kind, axis)


def scatter_add(b, dest: SSAValue, idx: SSAValue, values: SSAValue, axis: int) -> SSAValue:
    """dest with values added at idx along `axis` (repeated positions accumulate)."""
    return _scatter(b, dest, idx, values, axis, "scatter-add")


def scatter(b, dest: SSAValue, idx: SSAValue, values: SSAValue, axis: int) -> SSAValue:
    """dest with values written at idx along `axis` (a repeated position keeps the last)."""
    return _scatter(b, dest, idx, values, axis, "scatter")


def rank(b, x: SSAValue, axis: int) -> SSAValue:
    """The stable rank (i64) of each element of x along `axis`; NaN sorts last."""
    dims = len(shape(x))
    r = dims
    elem = element(x)
    block = Block(arg_types=[elem, elem, I64])
    e = IRBuilder(block)
    mine, other, count = block.args
    before = e.op(arith.CmpiOp(_position(e, r), _position(e, axis), "slt"))
    if isinstance(elem, IntegerType):
        less = e.op(arith.CmpiOp(other, mine, "slt"))
        same = e.op(arith.CmpiOp(other, mine, "eq"))
    else:  # NaN is greater than every number and equal to NaN
        less = e.op(arith.CmpfOp(other, mine, "olt"))
        other_number = e.op(arith.CmpfOp(other, other, "ord"))
        mine_nan = e.op(arith.CmpfOp(mine, mine, "uno"))
        less = e.op(arith.OrIOp(less, e.op(arith.AndIOp(mine_nan, other_number))))
        same = e.op(arith.OrIOp(e.op(arith.CmpfOp(other, mine, "oeq")),
                                e.op(arith.AndIOp(mine_nan, e.op(arith.CmpfOp(other, other, "uno"))))))
    precedes = e.op(arith.OrIOp(less, e.op(arith.AndIOp(same, before))))
    one = e.op(arith.ConstantOp(IntegerAttr(1, I64)))
    zero = e.op(arith.ConstantOp(IntegerAttr(0, I64)))
    e.op(YieldOp(e.op(arith.AddiOp(count, e.op(arith.SelectOp(precedes, one, zero))))))
    other_dims = [r if d == axis else d for d in range(dims)]
    maps = [_map(dims + 1, range(dims)), _map(dims + 1, other_dims), _map(dims + 1, range(dims))]
    iterators = [IteratorTypeAttr.parallel()] * dims + [IteratorTypeAttr.reduction()]
    out_type = TensorType(I64, shape(x))
    init = b.op(zero_constant(out_type))
    return _generic(b, [x, x], init, maps, iterators, Region(block), "rank", axis)


def axis_of(op: Operation) -> int:
    return op.attributes[AXIS].value.data


__all__ = ["AXIS", "axis_of", "gather", "rank", "scatter", "scatter_add"]
