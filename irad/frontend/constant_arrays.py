"""The values of arrays computed from constants alone, found while lowering.

A boolean mask must be known while lowering to index an array (its count of
True sets the result's length). Masks people write are often computed from
constants: `~np.eye(n, dtype=bool)` (the off-diagonal of a similarity matrix),
`np.triu(np.ones((n, n), dtype=bool), 1)`, `np.arange(n) % 2 == 0`. Their ops
are elementwise arith ops on dense constants and `linalg.generic`s of such ops
with identity maps; `evaluate` computes them with numpy, op by op, exactly as
the compiled code would (int64 wraps, remsi truncates, the predicates are
MLIR's). Any other op, or a value reaching a function's argument, is unknown:
None, and the caller keeps its refusal.
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.dialects.builtin import AffineMapAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import BlockArgument, SSAValue
from xdsl.ir.affine import AffineMap

from irad.ir import tensor as T
from irad.ir.types import F64, I1, I64

_BUDGET = 200  # ops evaluated for one value: beyond, unknown

_DTYPES = {I1: np.bool_, I64: np.int64, F64: np.float64}


def _remsi(a, b):
    return np.fmod(a, b)  # C's remainder: the sign of the dividend, as arith.remsi


_BINARY = {
    arith.AddiOp: np.add, arith.SubiOp: np.subtract, arith.MuliOp: np.multiply, arith.RemSIOp: _remsi,
    arith.AndIOp: np.bitwise_and, arith.OrIOp: np.bitwise_or, arith.XOrIOp: np.bitwise_xor,
    arith.AddfOp: np.add, arith.SubfOp: np.subtract, arith.MulfOp: np.multiply, arith.DivfOp: np.divide,
}
_CMPI = {0: np.equal, 1: np.not_equal, 2: np.less, 3: np.less_equal, 4: np.greater, 5: np.greater_equal}
# cmpf's ordered predicates (false where a NaN is compared) and une (true there)
_CMPF = {1: np.equal, 2: np.greater, 3: np.greater_equal, 4: np.less, 5: np.less_equal,
         13: np.not_equal}
_ORDERED_NE = 6  # one: ordered and not equal


class _Unknown(Exception):
    pass


def evaluate(value: SSAValue) -> np.ndarray | None:
    """The numpy value of a tensor or number computed from constants alone, or None."""
    try:
        return _value(value, {}, [_BUDGET])
    except Exception:  # noqa: BLE001 - _Unknown, or an op this evaluator does not read right: unknown
        return None


def _dtype(t):
    elem = t.element_type if isinstance(t, TensorType) else t
    found = _DTYPES.get(elem)
    if found is None:
        raise _Unknown
    return found


def _value(v: SSAValue, scalars: dict, budget: list[int]):
    if v in scalars:  # a block argument of the generic being evaluated
        return scalars[v]
    budget[0] -= 1
    owner = v.owner
    if budget[0] < 0 or isinstance(v, BlockArgument):
        raise _Unknown
    dtype = _dtype(v.type)
    if isinstance(owner, arith.ConstantOp):
        if isinstance(owner.value, DenseIntOrFPElementsAttr):
            values = np.asarray(owner.value.get_values(), dtype=dtype)
            shape = T.shape(v)
            return np.broadcast_to(values, shape).copy() if values.size == 1 else values.reshape(shape)
        return np.asarray(owner.value.value.data, dtype=dtype)
    if isinstance(owner, tensor.SplatOp):
        return np.full(T.shape(v), _value(owner.input, scalars, budget), dtype=dtype)
    if isinstance(owner, GenericOp):
        return _generic(owner, budget)
    operands = [_value(o, scalars, budget) for o in owner.operands]
    return np.asarray(_op(owner, operands), dtype=dtype)


def _op(op, operands):
    fn = _BINARY.get(type(op))
    if fn is not None:
        with np.errstate(all="ignore"):
            return fn(*operands)
    if isinstance(op, arith.CmpiOp):
        predicate = _CMPI.get(op.predicate.value.data)
        if predicate is None:  # the unsigned comparisons
            raise _Unknown
        return predicate(*operands)
    if isinstance(op, arith.CmpfOp):
        code = op.predicate.value.data
        a, b = operands
        if code == _ORDERED_NE:
            return (a != b) & ~np.isnan(a) & ~np.isnan(b)
        if code not in _CMPF:
            raise _Unknown
        return _CMPF[code](a, b)
    if isinstance(op, arith.NegfOp):
        return np.negative(operands[0])
    if isinstance(op, arith.SelectOp):
        return np.where(*operands)
    if isinstance(op, (arith.SIToFPOp, arith.UIToFPOp, arith.ExtUIOp)):
        return operands[0]
    raise _Unknown


def _generic(op: GenericOp, budget: list[int]) -> np.ndarray:
    """An elementwise generic (identity maps, parallel) of known inputs, its
    body evaluated on whole arrays."""
    if len(op.res) != 1 or any(not isinstance(m, AffineMapAttr) or m.data != AffineMap.identity(m.data.num_dims)
                               for m in op.indexing_maps.data):
        raise _Unknown
    if any(str(it.data) != "parallel" for it in op.iterator_types.data):
        raise _Unknown
    block = op.body.block
    n_in = len(op.inputs)
    scalars = {arg: _value(x, {}, budget) for arg, x in zip(block.args[:n_in], op.inputs)}
    yielded = block.last_op
    if not isinstance(yielded, YieldOp) or len(yielded.operands) != 1:
        raise _Unknown
    for arg in block.args[n_in:]:
        scalars[arg] = _Poison()  # the output's old value: reading it is unknown
    result = _value(yielded.operands[0], scalars, budget)
    if isinstance(result, _Poison):
        raise _Unknown
    shape = T.shape(op.res[0])
    return np.broadcast_to(np.asarray(result, dtype=_dtype(op.res[0].type)), shape).copy()


class _Poison:
    """The value of a generic's output argument, which its body must not read."""

    def __array__(self, *args, **kwargs):
        raise _Unknown
