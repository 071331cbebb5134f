"""Python's round(): half to even, and round(x, ndigits) as CPython computes it.

`round(x)` of a float is the nearest int, ties to the even one (math.roundeven,
then the checked conversion to int: inf and NaN raise, as in Python).

`round(x, n)` of a Python float is the double nearest to x rounded to n decimal
digits, where x's exact binary value decides ties: `round(2.675, 2)` is 2.67,
since 2.675 is 2.67499999999999982236431605997495353221893310546875. CPython
gets it by printing x to n digits and reading that back. irad computes the
exact product y + e = x * 10**n (e = fma(x, 10**n, -y), exact) and rounds it
to an int R: rint(y), moved by one where y is a tie that e breaks; then R / 10**n
is correctly rounded, as reading the digits back is. For n < 0 the exact
quotient y + e / 10**-n comes from e = fma(-y, 10**-n, x) and R * 10**-n is the
result. This is exact while |y| < 2**53; from 10**16 on, x has fewer digits
than kept, and CPython returns x. Between them R is y or y +- 1, which a double
may not hold: R / 10**n is y / 10**n corrected by its exact remainder (an FMA),
one rounding from CPython's in principle, and equal to it on every value
tests/frontend/test_constructs.py tried. Only |n| <= 22 is taken (10**n is exact).

numpy's scalars round as np.round does (x * 10**n rounded, then divided:
`round(np.float64(2.675), 2)` is 2.68), so irad needs to know which a number
is (irad/frontend/numpy_scalars.py); where it cannot tell (a helper's
parameter), round(x, n) is an error that asks for `round(float(x), n)` or
`np.round(x, n)`. Arrays round as np.round.

round of an int is that int; with n < 0 it rounds to a multiple of 10**-n,
ties to even, as Python does.
"""

from __future__ import annotations

import ast

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import SSAValue

from irad.frontend import integers, numpy_scalars
from irad.frontend.arrays import is_array, known_value
from irad.ir.arith import RemFOp
from irad.ir.types import F64, I64, is_float

MAX_DIGITS = 22  # 10**22 is the largest power of ten a double holds exactly
EXACT = 2.0**53  # below it, every int is a double
ALL_DIGITS = 1e16  # from here, 17 significant digits are kept: reading them back gives x


def lower_round(fl, args: list, kwargs: dict, node: ast.AST):
    number, ndigits = _bind(fl, args, kwargs, node)
    x = fl.as_number(number, node)
    n = None
    if not (ndigits is None or (hasattr(ndigits, "obj") and ndigits.obj is None)):
        known, n = known_value(ndigits)
        if not known or type(n) is not int:
            raise fl.src.error(node, "round(x, ndigits) needs ndigits known while lowering (an int literal "
                               "or a shape)", "write the number of digits as a constant")
    if is_array(x):  # ndarray.__round__ is np.round
        return fl.arrays.call_values(np.round, [x, n or 0], {}, node)
    kind = numpy_scalars.kind(x)
    if not is_float(x.type):
        result = _round_int(fl, fl.em.to_int(x), n, node)
        return numpy_scalars.mark(result, numpy_scalars.NUMPY if kind == numpy_scalars.NUMPY else numpy_scalars.PYTHON)
    if n is None:  # the nearest int, ties to even: Python's and numpy's (numpy >= 2) alike
        rounded = fl.em.op(mathd.RoundEvenOp(x))
        fl.check_int_conversion(rounded, node)
        return numpy_scalars.mark(fl.em.op(arith.FPToSIOp(rounded, I64)), numpy_scalars.PYTHON)
    if kind == numpy_scalars.NUMPY or x.type != F64:  # a numpy scalar's __round__ is np.round
        return fl.arrays.call_values(np.round, [x, n], {}, node)
    if kind != numpy_scalars.PYTHON:
        raise fl.src.error(
            node, "round(x, ndigits) of a number irad cannot tell a Python float from a numpy float64 "
            "(a helper's parameter, or a join of both): they round differently "
            "(round(2.675, 2) is 2.67, round(np.float64(2.675), 2) is 2.68)",
            "write round(float(x), ndigits) for Python's rounding, or np.round(x, ndigits) for numpy's",
        )
    if abs(n) > MAX_DIGITS:
        raise fl.src.error(node, f"round(x, {n}): irad takes |ndigits| <= {MAX_DIGITS} (10**ndigits must be "
                           "exact in a double)", f"round to at most {MAX_DIGITS} digits")
    return numpy_scalars.mark(_round_float(fl.em, x, n), numpy_scalars.PYTHON)


def _bind(fl, args: list, kwargs: dict, node):
    names = ("number", "ndigits")
    if len(args) > 2 or kwargs.keys() - set(names):
        extra = sorted(kwargs.keys() - set(names))
        raise fl.src.error(node, f"round() got an unexpected keyword argument '{extra[0]}'" if extra
                           else f"round() takes at most 2 arguments ({len(args)} given)",
                           "round(number) or round(number, ndigits)")
    values = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in values:
            raise fl.src.error(node, f"round() got multiple values for the argument '{k}'")
        values[k] = v
    if "number" not in values:
        raise fl.src.error(node, "round() needs the argument 'number'")
    return values["number"], values.get("ndigits")


def _round_float(em, x: SSAValue, n: int) -> SSAValue:
    """CPython's round(x, n) for a double x (see the module doc)."""
    scale = em.const(10.0 ** abs(n), F64)
    one, half, zero = em.const(1.0, F64), em.const(0.5, F64), em.const(0.0, F64)

    def cmp(a, predicate, b):
        return em.op(arith.CmpfOp(a, b, predicate))

    def both(a, b):
        return em.op(arith.AndIOp(a, b))

    def either(a, b):
        return em.op(arith.OrIOp(a, b))

    def select(c, a, b):
        return em.op(arith.SelectOp(c, a, b))

    if n >= 0:  # exact: x * scale = y + e
        y = em.mul(x, scale)
        e = em.op(mathd.FmaOp(x, scale, em.neg(y)))
        tie = half  # |e| at a tie of an integer y (2**52 <= |y| < 2**53)
    else:  # exact: x / scale = y + e / scale
        y = em.div(x, scale)
        e = em.op(mathd.FmaOp(em.neg(y), scale, x))
        tie = em.const(10.0 ** -n / 2, F64)
    r = em.op(mathd.RoundEvenOp(y))
    frac = em.sub(y, r)  # exact
    # a tie of y broken by e; or y an odd int whose exact value is a tie (|y| >= 2**52)
    odd = cmp(em.op(RemFOp(y, em.const(2.0, F64))), "une", zero)
    whole_tie = lambda sign: both(both(cmp(frac, "oeq", zero), cmp(e, "oeq", sign(tie))), odd)  # noqa: E731
    up = either(both(cmp(frac, "oeq", half), cmp(e, "ogt", zero)), whole_tie(lambda t: t))
    down = either(both(cmp(frac, "oeq", em.neg(half)), cmp(e, "olt", zero)), whole_tie(em.neg))
    rounded = select(up, em.add(r, one), select(down, em.sub(r, one), r))
    if n >= 0:
        near = em.div(rounded, scale)
        # 2**53 <= |y| < 1e16: R = y + s (s = +-1 where |e| > 1/2); R / scale from y / scale
        # and its exact remainder
        s = select(cmp(e, "ogt", half), one, select(cmp(e, "olt", em.neg(half)), em.neg(one), zero))
        q = em.div(y, scale)
        remainder = em.op(mathd.FmaOp(em.neg(q), scale, y))
        far = em.add(q, em.div(em.add(remainder, s), scale))
    else:
        near = em.mul(rounded, scale)
        s = select(cmp(e, "ogt", tie), one, select(cmp(e, "olt", em.neg(tie)), em.neg(one), zero))
        far = em.op(mathd.FmaOp(y, scale, em.mul(s, scale)))  # (y + s) * scale, one rounding
    size = em.op(mathd.AbsFOp(y))
    result = select(cmp(size, "olt", em.const(EXACT, F64)), near, far)
    # x has fewer digits than kept (or is inf: its product is), and NaN rounds to itself
    return select(either(cmp(size, "oge", em.const(ALL_DIGITS, F64)), cmp(x, "uno", x)), x, result)


def _round_int(fl, x: SSAValue, n: int | None, node) -> SSAValue:
    """round(i, n) of an int: i itself for n >= 0, else the nearest multiple of
    10**-n, ties to the even multiple."""
    em = fl.em
    if n is None or n >= 0:
        return em.op(arith.AddiOp(x, em.const(0, I64)))  # a new value: round() gives a Python int
    if -n > 18:  # 10**19 is past i64: 0 unless |x| > 5 * 10**18 (a tie goes to 0), which does not fit
        limit = 10 ** -n // 2
        if limit < 2**63:
            inside = em.op(arith.AndIOp(em.op(arith.CmpiOp(x, em.const(limit, I64), "sle")),
                                        em.op(arith.CmpiOp(x, em.const(-limit, I64), "sge"))))
            fl.check(inside, node, "the result of round() does not fit in 64 bits (irad's int is i64)")
        return em.const(0, I64)
    p = em.const(10 ** -n, I64)
    q = em.op(arith.FloorDivSIOp(x, p))  # p > 0: no overflow
    rest = em.op(arith.SubiOp(x, em.op(arith.MuliOp(q, p))))  # in [0, p)
    twice = em.op(arith.MuliOp(rest, em.const(2, I64)))
    q_odd = em.op(arith.CmpiOp(em.op(arith.AndIOp(q, em.const(1, I64))), em.const(0, I64), "ne"))
    above = em.op(arith.CmpiOp(twice, p, "sgt"))
    tie = em.op(arith.AndIOp(em.op(arith.CmpiOp(twice, p, "eq")), q_odd))
    q = em.op(arith.SelectOp(em.op(arith.OrIOp(above, tie)), em.op(arith.AddiOp(q, em.const(1, I64))), q))
    return integers.CheckedIntegers(em, fl.src.location(node)).mul(q, p)
