"""The value of a number the IR computes from constants alone, found by
evaluating its ops in Python, for where a value must be known while lowering
(a shape, an axis, an f-string): `n = int(np.sqrt(a.size))`, `max(3, k)`,
`round(n ** 0.5)`, `int(np.ceil(n / 4))` compute their numbers as scalar ops
on constants, which are as known as the constants.

Only ops whose Python counterpart is what numpy computes are followed (i64 and
i1 integer arithmetic within 64 bits, f64 IEEE arithmetic, the conversions,
comparisons and selects, and math's functions as Python's `math` computes
them); anything else, an f32, a NaN converted to an int or an overflow is
not known."""

from __future__ import annotations

import math as pymath
import operator

import numpy as np

from xdsl.dialects import arith, math
from xdsl.ir import Operation, SSAValue

from irad.frontend.values import Static
from irad.ir.types import F64, I1, I64

_DEPTH = 64  # ops followed from a value (a shape's arithmetic is short)
_I64 = (-(2 ** 63), 2 ** 63)


def _trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


_BINARY = {
    arith.AddiOp: operator.add, arith.SubiOp: operator.sub, arith.MuliOp: operator.mul,
    arith.DivSIOp: _trunc_div, arith.FloorDivSIOp: operator.floordiv,
    arith.RemSIOp: lambda a, b: a - _trunc_div(a, b) * b,
    arith.MaxSIOp: max, arith.MinSIOp: min, arith.AndIOp: operator.and_, arith.OrIOp: operator.or_,
    arith.XOrIOp: operator.xor,
    arith.AddfOp: operator.add, arith.SubfOp: operator.sub, arith.MulfOp: operator.mul,
    arith.DivfOp: operator.truediv, arith.MaximumfOp: max, arith.MinimumfOp: min,
    math.PowFOp: pow, math.CopySignOp: pymath.copysign,
}
_UNARY = {
    arith.NegfOp: operator.neg, arith.SIToFPOp: float, arith.UIToFPOp: float, arith.ExtUIOp: int,
    arith.FPToSIOp: int, math.SqrtOp: pymath.sqrt, math.FloorOp: lambda x: float(pymath.floor(x)),
    math.CeilOp: lambda x: float(pymath.ceil(x)), math.TruncOp: lambda x: float(pymath.trunc(x)),
    math.RoundEvenOp: lambda x: float(round(x)), math.AbsFOp: abs, math.AbsIOp: abs,
    math.LogOp: pymath.log, math.Log2Op: pymath.log2, math.Log10Op: pymath.log10, math.ExpOp: pymath.exp,
}
_CMPI = [operator.eq, operator.ne, operator.lt, operator.le, operator.gt, operator.ge]
_CMPF_ORDERED = {1: operator.eq, 2: operator.gt, 3: operator.ge, 4: operator.lt, 5: operator.le, 6: operator.ne,
                 8: operator.eq, 9: operator.gt, 10: operator.ge, 11: operator.lt, 12: operator.le, 13: operator.ne}


def folded(value: SSAValue) -> tuple[bool, object]:
    """(True, its Python value: an int, a float or a bool) where `value` is a
    scalar computed from constants by the ops above; (False, None) otherwise."""
    try:
        return True, _evaluate(value, [_DEPTH])
    except _Unknown:
        return False, None


def known_call(fn, args: list[tuple[bool, object]], kwargs: dict[str, tuple[bool, object]]) -> Static | None:
    """numpy's result of a call whose arguments are all known while lowering
    (`(known, value)` pairs) when it is a number: `np.prod(x.shape)`,
    `np.sqrt(n)`, `np.max((m, n))`, `np.allclose(tol, 1e-3)`, computed by numpy itself (an np.float64 stays
    one, with numpy's semantics in what follows). Arrays stay run-time values."""
    if not callable(fn) or not all(known for known, _ in (*args, *kwargs.values())) or not (args or kwargs):
        return None
    if not all(known_numbers(v) for _, v in (*args, *kwargs.values())):
        return None
    try:
        with np.errstate(all="ignore"):
            result = fn(*(v for _, v in args), **{k: v for k, (_, v) in kwargs.items()})
    except Exception:  # noqa: BLE001 - numpy refuses the call: the lowering says why, as for run-time values
        return None
    kept = (np.integer, np.floating, np.bool_, bool, int)  # np.allclose gives a Python bool, np.size an int
    return Static(result) if isinstance(result, kept) else None


def known_numbers(obj) -> bool:
    """A number, None, a str (an axis, a mode) or a tuple of them: a shape, an axis."""
    if isinstance(obj, tuple):
        return all(known_numbers(v) for v in obj)
    return obj is None or isinstance(obj, (int, float, bool, str, np.integer, np.floating, np.bool_))


class _Unknown(Exception):
    pass


def _evaluate(value: SSAValue, budget: list[int]):
    if value.type not in (F64, I64, I1):
        raise _Unknown
    budget[0] -= 1
    owner = value.owner
    if budget[0] < 0 or not isinstance(owner, Operation):
        raise _Unknown
    if isinstance(owner, arith.ConstantOp):
        raw = owner.value.value.data
        return raw != 0 if value.type == I1 else raw
    args = [_evaluate(v, budget) for v in owner.operands]
    if isinstance(owner, (arith.MaximumfOp, arith.MinimumfOp)) and any(a != a for a in args):
        raise _Unknown  # NaN: Python's max and min answer by the order of their arguments
    try:
        if type(owner) in _BINARY:
            result = _BINARY[type(owner)](*args)
        elif type(owner) in _UNARY:
            result = _UNARY[type(owner)](*args)
        elif isinstance(owner, arith.SelectOp):
            result = args[1] if args[0] else args[2]
        elif isinstance(owner, arith.CmpiOp) and owner.predicate.value.data < len(_CMPI):
            result = _CMPI[owner.predicate.value.data](*args)
        elif isinstance(owner, arith.CmpfOp) and owner.predicate.value.data in _CMPF_ORDERED:
            if any(pymath.isnan(a) for a in args):  # ordered predicates are false on NaN, unordered true
                result = owner.predicate.value.data > 7
            else:
                result = _CMPF_ORDERED[owner.predicate.value.data](*args)
        else:
            raise _Unknown
    except (ArithmeticError, ValueError, TypeError):  # a NaN or inf to int, a domain error: a run-time matter
        raise _Unknown from None
    if value.type == I1:
        return bool(result)
    if value.type == I64:
        if isinstance(result, float) or not _I64[0] <= int(result) < _I64[1]:
            raise _Unknown
        return int(result)
    if isinstance(result, complex):
        raise _Unknown
    return float(result)
