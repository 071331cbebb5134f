"""Python's and numpy's `%` and `//`: floats on numbers and arrays alike, and
numpy's int arrays (`int_remainder`, `int_floor_divide`).

Both are defined through C's fmod (`arith.remf`, exact), as CPython and numpy
compute them, not as `x - floor(x / y) * y`, which loses digits and can even
give a result on the wrong side of zero (1.0 // 0.1 is 9.0, not 10.0). The
remainder takes the divisor's sign; a zero remainder is a zero of the
divisor's sign. The derivatives come from the ops: d(x % y) = dx - floor(x / y)
dy away from the jumps; `//` is piecewise constant (it ends in math.floor).

numpy's int `//` and `%` floor as Python's do (the remainder takes the
divisor's sign), give 0 for a zero divisor (with a warning numpy prints), and
wrap for INT64_MIN // -1. MLIR's divisions leave those two undefined (x86
traps), so they divide by 1 there and select numpy's answer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import SSAValue

from irad.ir import tensor as T
from irad.ir.arith import RemFOp
from irad.ir.builder import constant
from irad.ir.constants import float_constant
from irad.ir.types import I1, I64, is_uint


def _signs_differ(e, args: Sequence[SSAValue]) -> SSAValue:
    """r != 0 and r, y of opposite signs: fmod's remainder needs y added."""
    r, y = args
    zero = e.op(float_constant(0.0, r.type))
    nonzero = e.op(arith.CmpfOp(r, zero, "une"))
    differ = e.op(arith.XOrIOp(e.op(arith.CmpfOp(r, zero, "olt")), e.op(arith.CmpfOp(y, zero, "olt"))))
    return e.op(arith.AndIOp(nonzero, differ))


def _is(predicate: str, value: float):
    def body(e, args: Sequence[SSAValue]) -> SSAValue:
        return e.op(arith.CmpfOp(args[0], e.op(float_constant(value, args[0].type)), predicate))

    return body


def _mask(b, body, inputs: Sequence[SSAValue]) -> SSAValue:
    return T.pointwise(b, body, inputs, I1, "piecewise-constant")


def _signed_zero(b, like: SSAValue) -> SSAValue:
    """0.0 with the sign of `like` (constant: no derivative reaches `like`)."""
    return b.op(mathd.CopySignOp(b.const(0.0, like.type), like))


def remainder(b, x: SSAValue, y: SSAValue) -> SSAValue:
    """x % y (np.remainder, np.mod, Python's float %): x, y of one float type and shape."""
    r = b.op(RemFOp(x, y))
    shifted = T.select(b, _mask(b, _signs_differ, [r, y]), b.add(r, y), r)
    return T.select(b, _mask(b, _is("oeq", 0.0), [r]), _signed_zero(b, y), shifted)


def floor_divide(b, x: SSAValue, y: SSAValue) -> SSAValue:
    """x // y (np.floor_divide, Python's float //), as numpy's npy_divmod computes it."""
    r = b.op(RemFOp(x, y))
    div = b.div(b.sub(x, r), y)  # an integer up to rounding
    one = b.const(1.0, x.type)
    div = T.select(b, _mask(b, _signs_differ, [r, y]), b.sub(div, one), div)
    whole = b.op(mathd.FloorOp(div))
    rounded_up = _mask(b, _is("ogt", 0.5), [b.sub(div, whole)])
    whole = T.select(b, rounded_up, b.add(whole, one), whole)
    whole = T.select(b, _mask(b, _is("oeq", 0.0), [div]), _signed_zero(b, b.div(x, y)), whole)
    # y == 0: x / y (inf or nan), through floor so that it stays constant
    by_zero = b.op(mathd.FloorOp(b.div(x, y)))
    return T.select(b, _mask(b, _is("oeq", 0.0), [y]), by_zero, whole)


def int_remainder(b, x: SSAValue, y: SSAValue) -> SSAValue:
    """x % y of int arrays of one dtype (np.remainder), x, y of one shape."""
    return T.pointwise(b, _int_division(floor=False), [x, y], T.element(x), "piecewise-constant")


def int_floor_divide(b, x: SSAValue, y: SSAValue) -> SSAValue:
    """x // y of int arrays of one dtype (np.floor_divide), x, y of one shape."""
    return T.pointwise(b, _int_division(floor=True), [x, y], T.element(x), "piecewise-constant")


def _int_division(floor: bool):
    def body(e, args: Sequence[SSAValue]) -> SSAValue:
        x, y = args
        t = x.type
        zero, one = (e.op(constant(IntegerAttr(v, t), t)) for v in (0, 1))
        by_zero = e.op(arith.CmpiOp(y, zero, "eq"))
        if is_uint(t):  # a uint's carrier: no negative values, C's division is numpy's
            result = e.op((arith.FloorDivSIOp if floor else arith.RemSIOp)(x, e.op(arith.SelectOp(by_zero, one, y))))
            return e.op(arith.SelectOp(by_zero, zero, result))
        by_minus_one = e.op(arith.CmpiOp(y, e.op(constant(IntegerAttr(-1, t), t)), "eq"))
        safe = e.op(arith.SelectOp(e.op(arith.OrIOp(by_zero, by_minus_one)), one, y))
        if floor:  # x // -1 is -x, wrapping at the dtype's minimum (INT64_MIN) as numpy's does
            result = e.op(arith.SelectOp(by_minus_one, e.op(arith.SubiOp(zero, x)),
                                         e.op(arith.FloorDivSIOp(x, safe))))
        else:  # remsi takes x's sign: add y where a nonzero remainder's sign differs from y's
            r = e.op(arith.RemSIOp(x, safe))
            differ = e.op(arith.CmpiOp(e.op(arith.XOrIOp(r, safe)), zero, "slt"))
            fix = e.op(arith.AndIOp(e.op(arith.CmpiOp(r, zero, "ne")), differ))
            result = e.op(arith.SelectOp(fix, e.op(arith.AddiOp(r, safe)), r))
        return e.op(arith.SelectOp(by_zero, zero, result))

    return body
