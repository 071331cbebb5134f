"""numpy's elementwise functions beyond the arithmetic of arrays.py: one table
entry each (numpy_table.py), lowered to arith/math ops on numbers or tensors.

Most are an op or two. Where the textbook formula has a kink or a 0/0 that the
true function does not, the IR is arranged so that differentiating the ops
gives the true derivative, and no NaN reaches a cotangent from a branch that
np.where discards (each branch gets a safe input):

- logaddexp(a, b) near a == b is (a + b)/2 + log(2 cosh((a - b)/2)), so its
  derivatives of every order are exact at a tie (max + log1p(exp(-|a - b|))
  would split the gradient 1 : 0 and drop the curvature);
- sinc near 0 is its Taylor polynomial, exact in value, derivative and second
  derivative; hypot is scaled by max(|x|, |y|), so it neither overflows nor
  underflows, and differentiating the scaling is exact;
- comparisons, rounding, np.sign, np.angle and the conversions to int are
  piecewise constant: their ops carry no derivative.

Complex numbers are out of scope: real, imag, conj and angle take real inputs.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import SSAValue

from irad.frontend import integers, numpy_scalars
from irad.frontend.arrays import ArrayLowering
from irad.frontend.values import is_array
from irad.frontend.numpy_table import numpy_function
from irad.ir import tensor as T
from irad.ir.arith import RemFOp
from irad.ir.constants import float_constant
from irad.ir.types import F32, F64, I1, I64, is_bool, is_float

# ---- helpers ---------------------------------------------------------------------


def _floats(al: ArrayLowering, node, *values) -> list[SSAValue]:
    return al.floats(node, *(al.array(v, node) for v in values))


def _mask(al: ArrayLowering, body, inputs: Sequence[SSAValue]) -> SSAValue:
    """A bool (number or array) computed by the scalar ops `body` builds."""
    return T.pointwise(al.em, body, inputs, I1, "piecewise-constant")


def _cmp(predicate: str, value: float | None = None):
    """x <predicate> value (or x <predicate> x when value is None: NaN tests)."""

    def body(e, args: Sequence[SSAValue]) -> SSAValue:
        x = args[0]
        other = x if value is None else e.op(float_constant(value, x.type))
        return e.op(arith.CmpfOp(x, other, predicate))

    return body


def _abs_cmp(predicate: str, value: float):
    def body(e, args: Sequence[SSAValue]) -> SSAValue:
        x = e.op(mathd.AbsFOp(args[0]))
        return e.op(arith.CmpfOp(x, e.op(float_constant(value, x.type)), predicate))

    return body


def _signbit(e, args: Sequence[SSAValue]) -> SSAValue:
    x = args[0]
    one = e.op(mathd.CopySignOp(e.op(float_constant(1.0, x.type)), x))
    return e.op(arith.CmpfOp(one, e.op(float_constant(0.0, x.type)), "olt"))


def _where(al: ArrayLowering, cond: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
    return T.select(al.em, cond, x, y)


def _const(al: ArrayLowering, value: float, like: SSAValue) -> SSAValue:
    return al.em.const(value, like.type)


def _unary(*fns, op_class):
    def handler(al, node, x):
        (x,) = _floats(al, node, x)
        return al.new(al.em.op(op_class(x)))

    numpy_function(*fns, params=("x",))(handler)


def _binary(*fns, op_class):
    def handler(al, node, a, b):
        x, y = _floats(al, node, a, b)
        return al.new(al.em.op(op_class(x, y)))

    numpy_function(*fns, params=("x1", "x2"))(handler)


# ---- one math op -----------------------------------------------------------------
_unary(np.arcsin, op_class=mathd.AsinOp)
_unary(np.arccos, op_class=mathd.AcosOp)
_unary(np.arcsinh, op_class=mathd.AsinhOp)
_unary(np.arccosh, op_class=mathd.AcoshOp)
_unary(np.arctanh, op_class=mathd.AtanhOp)
_unary(np.exp2, op_class=mathd.Exp2Op)
_unary(np.cbrt, op_class=mathd.CbrtOp)
_unary(np.fabs, op_class=mathd.AbsFOp)
# rounding: piecewise constant, the ops have no derivative
_unary(np.floor, op_class=mathd.FloorOp)
_unary(np.ceil, op_class=mathd.CeilOp)
_unary(np.trunc, np.fix, op_class=mathd.TruncOp)
_unary(np.rint, op_class=mathd.RoundEvenOp)
_binary(np.fmax, op_class=arith.MaxnumfOp)  # NaN-ignoring, like maxnumf
_binary(np.fmin, op_class=arith.MinnumfOp)


@numpy_function(np.fmod, params=("x1", "x2"))
def _fmod(al, node, a, b):
    if not any(is_float(T.element(al.array(v, node))) for v in (a, b)):
        raise al.error(node, "np.fmod of ints or bools is numpy's integer remainder (0 for a zero divisor), "
                       "which irad computes in floats", "convert first: np.fmod(x.astype(float), y)")
    x, y = _floats(al, node, a, b)
    return al.new(al.em.op(RemFOp(x, y)))


_binary(np.copysign, op_class=mathd.CopySignOp)


@numpy_function(np.round, np.around, params=("a", "?decimals"))
def _round(al, node, a, decimals):
    """Half to even, at `decimals` digits: rint(x * 10**d) / 10**d, as numpy computes it."""
    (x,) = _floats(al, node, a)
    d = al.static(decimals, node, "decimals") or 0
    if d == 0:
        return al.new(al.em.op(mathd.RoundEvenOp(x)))
    scale = _const(al, 10.0 ** abs(d), x)
    inward, outward = (al.em.mul, al.em.div) if d > 0 else (al.em.div, al.em.mul)
    return al.new(outward(al.em.op(mathd.RoundEvenOp(inward(x, scale))), scale))


@numpy_function(np.reciprocal, params=("x",))
def _reciprocal(al, node, x):
    if not is_float(T.element(al.array(x, node))):
        raise al.error(node, "np.reciprocal of ints or bools is numpy's integer reciprocal (0 for |x| > 1), "
                       "not 1 / x", "write 1.0 / x")
    (x,) = _floats(al, node, x)
    return al.new(al.em.div(_const(al, 1.0, x), x))


def _scaled(factor: float):
    def handler(al, node, x):
        (x,) = _floats(al, node, x)
        return al.new(al.em.mul(x, _const(al, factor, x)))

    return handler


numpy_function(np.deg2rad, np.radians, params=("x",))(_scaled(math.pi / 180.0))
numpy_function(np.rad2deg, np.degrees, params=("x",))(_scaled(180.0 / math.pi))


@numpy_function(np.positive, params=("x",))
def _positive(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(al.copy(x)) if is_array(x) else x


# ---- remainders ------------------------------------------------------------------
@numpy_function(np.remainder, np.mod, params=("x1", "x2"))
def _remainder(al, node, a, b):
    return al.division(True, *(al.array(v, node) for v in (a, b)), node)


@numpy_function(np.floor_divide, params=("x1", "x2"))
def _floor_divide(al, node, a, b):
    return al.division(False, *(al.array(v, node) for v in (a, b)), node)


# ---- smooth functions with a kink in the textbook formula -------------------------
def _logaddexp(base_two: bool):
    """log(e^a + e^b) = max + log1p(e^-|a - b|) apart; near a tie (|a - b| < 1)
    (a + b)/2 + log(2 cosh((a - b)/2)), the same function written without a kink,
    so every derivative order is exact there: 1/2 : 1/2 at a tie and 1/4 for the
    second (max and |a - b| would drop the curvature their kinks cancel). Base
    two: log2(2^a + 2^b), the same with the gap scaled by log 2."""

    def handler(al, node, a, b):
        x, y = _floats(al, node, a, b)
        em = al.em
        scale = math.log(2.0) if base_two else 1.0
        difference = em.sub(x, y)
        gap = em.neg(em.op(mathd.AbsFOp(difference)))
        if base_two:
            tail = em.mul(em.op(mathd.Log1pOp(em.op(mathd.Exp2Op(gap)))), _const(al, 1 / scale, x))
        else:
            tail = em.op(mathd.Log1pOp(em.op(mathd.ExpOp(gap))))
        apart = em.add(em.op(arith.MaximumfOp(x, y)), tail)
        near = T.compare(em, "ogt", gap, _const(al, -1.0, x))  # |a - b| < 1
        safe = _where(al, near, difference, _const(al, 0.0, x))  # no overflow in the branch np.where discards
        cosh = em.op(mathd.CoshOp(em.mul(safe, _const(al, 0.5 * scale, x))))
        log_cosh = em.op(mathd.LogOp(em.mul(cosh, _const(al, 2.0, x))))
        centre = em.add(em.mul(_const(al, 0.5, x), x), em.mul(_const(al, 0.5, x), y))
        close = em.add(centre, em.mul(log_cosh, _const(al, 1 / scale, x)) if base_two else log_cosh)
        # numpy's x + log(2) where x == y: -inf and inf stay themselves (inf - inf is NaN above)
        infinite = T.compare(em, "oeq", em.op(mathd.AbsFOp(x)), _const(al, math.inf, x))
        both = em.op(arith.AndIOp(T.compare(em, "oeq", x, y), infinite))
        return al.new(_where(al, both, x, _where(al, near, close, apart)))

    return handler


numpy_function(np.logaddexp, params=("x1", "x2"))(_logaddexp(base_two=False))
numpy_function(np.logaddexp2, params=("x1", "x2"))(_logaddexp(base_two=True))


@numpy_function(np.hypot, params=("x1", "x2"))
def _hypot(al, node, a, b):
    """m sqrt((x/m)^2 + (y/m)^2) with m = max(|x|, |y|): no overflow or underflow;
    the result does not depend on m, so its derivative through m is exactly 0
    (except at (0, 0), where the derivative is 0, the subgradient math.hypot's
    rule also gives)."""
    x, y = _floats(al, node, a, b)
    em = al.em
    m = em.op(arith.MaximumfOp(em.op(mathd.AbsFOp(x)), em.op(mathd.AbsFOp(y))))
    infinite = em.op(arith.OrIOp(_mask(al, _abs_cmp("oeq", math.inf), [x]), _mask(al, _abs_cmp("oeq", math.inf), [y])))
    degenerate = em.op(arith.OrIOp(infinite, _mask(al, _cmp("oeq", 0.0), [m])))
    scale = _where(al, degenerate, _const(al, 1.0, m), m)
    u, v = em.div(x, scale), em.div(y, scale)
    # sqrt's derivative at 0 is infinite; at (0, 0) it would meet a zero tangent
    # and give NaN, so there sqrt reads 1 (h = m = 0 all the same), and the
    # derivative is m's, 0, as math.hypot's rule gives
    squares = _where(al, degenerate, _const(al, 1.0, m), em.add(em.mul(u, u), em.mul(v, v)))
    h = em.mul(m, em.op(mathd.SqrtOp(squares)))
    return al.new(_where(al, infinite, _const(al, math.inf, h), h))


@numpy_function(np.sinc, params=("x",))
def _sinc(al, node, x):
    """sin(pi x) / (pi x); for |pi x| < 0.01 its Taylor polynomial (through t^6,
    exact to rounding there), so the value and derivatives at 0 are exact."""
    (x,) = _floats(al, node, x)
    em = al.em
    t = em.mul(x, _const(al, math.pi, x))
    small = _mask(al, _abs_cmp("olt", 0.01), [t])
    near = _where(al, small, t, _const(al, 0.0, t))  # each branch sees safe inputs
    far = _where(al, small, _const(al, 1.0, t), t)
    t2 = em.mul(near, near)
    series = _const(al, -1 / 5040, t)
    for c in (1 / 120, -1 / 6, 1.0):
        series = em.add(em.mul(series, t2), _const(al, c, t))
    ratio = em.div(em.op(mathd.SinOp(far)), far)
    return al.new(_where(al, small, series, ratio))


# ---- NaN and infinity ---------------------------------------------------------------
@numpy_function(np.isnan, params=("x",))
def _isnan(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(_mask(al, _cmp("uno"), [x]))


@numpy_function(np.isinf, params=("x",))
def _isinf(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(_mask(al, _abs_cmp("oeq", math.inf), [x]))


@numpy_function(np.isfinite, params=("x",))
def _isfinite(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(_mask(al, _abs_cmp("olt", math.inf), [x]))


@numpy_function(np.signbit, params=("x",))
def _signbit_handler(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(_mask(al, _signbit, [x]))


@numpy_function(np.nan_to_num, params=("x", "?copy", "?nan", "?posinf", "?neginf"))
def _nan_to_num(al, node, x, copy, nan, posinf, neginf):
    """NaN -> `nan` (0.0), +-inf -> `posinf`/`neginf` (the dtype's largest finite
    values); the derivative is 1 at finite elements, 0 at the replaced ones."""
    if al.static(copy, node, "copy") is False:
        raise al.error(node, "np.nan_to_num(..., copy=False) writes into its argument; irad's arrays are values",
                       "use the result of np.nan_to_num(x)")
    (x,) = _floats(al, node, x)
    largest = float(np.finfo(np.float32 if T.element(x) == F32 else np.float64).max)
    replacements = [
        (_cmp("uno"), nan, 0.0, "nan"),
        (_cmp("oeq", math.inf), posinf, largest, "posinf"),
        (_cmp("oeq", -math.inf), neginf, -largest, "neginf"),
    ]
    y = x
    for test, given, default, what in replacements:
        value = al.static(given, node, what)
        fill = _const(al, default if value is None else value, x)
        y = _where(al, _mask(al, test, [x]), fill, y)
    return al.new(y)


# ---- complex parts of real numbers -----------------------------------------------------
@numpy_function(np.real, np.real_if_close, params=("val",))
def _real(al, node, x):
    return al.array(x, node)  # the array itself (numpy: a view)


@numpy_function(np.imag, params=("val",))
def _imag(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(_const(al, 0.0, x))


@numpy_function(np.conj, np.conjugate, params=("x",))
def _conj(al, node, x):
    (x,) = _floats(al, node, x)
    return al.new(al.copy(x)) if is_array(x) else x


@numpy_function(np.angle, params=("z", "?deg"))
def _angle(al, node, z, deg):
    """0 or pi (180 with deg=True) by the sign bit, as atan2(0, x): piecewise constant."""
    (x,) = _floats(al, node, z)
    half_turn = 180.0 if al.static(deg, node, "deg") else math.pi
    negative = _mask(al, _signbit, [x])
    angle = _where(al, negative, _const(al, half_turn, x), _const(al, 0.0, x))
    return al.new(_where(al, _mask(al, _cmp("uno"), [x]), x, angle))


# ---- numpy scalar types as conversions --------------------------------------------------
def _to_float(elem):
    def handler(al, node, x):
        x = al.array(x, node)
        if not is_array(x):  # a numpy float of that width, whatever it was made of (NEP 50)
            return numpy_scalars.mark_width(al.em.explicit_float(al.to_element(x, elem), elem), elem)
        converted = al.to_element(x, elem)
        return al.new(converted if converted is not x else al.copy(x))

    return handler


numpy_function(np.float64, params=("x",))(_to_float(F64))
numpy_function(np.float32, params=("x",))(_to_float(F32))


@numpy_function(np.int64, params=("x",))
def _int64(al, node, x):
    """Toward zero, as numpy converts floats; arrays are not checked (numpy would
    give an arbitrary value for NaN or an overflow, with a warning)."""
    x = al.array(x, node)
    elem = T.element(x)
    if not is_array(x):
        if is_float(elem):
            al.check(integers.float_fits_int64(al.em, x), node, integers.FLOAT_TO_INT_MESSAGE)
            return al.em.op(arith.FPToSIOp(x, I64))
        # a new value numpy's: an np.int64 is not weak beside a narrow int array (NEP 50)
        return numpy_scalars.mark(al.em.op(arith.AddiOp(al.em.to_int(x), al.em.const(0, I64))), numpy_scalars.NUMPY)
    if is_float(elem):
        return al.new(T.elementwise(al.em, lambda e, a: e.op(arith.FPToSIOp(a[0], I64)), [x], I64))
    if is_bool(elem):
        (x,) = al.integers(node, x)
        return al.new(x)
    return al.new(al.copy(x))


@numpy_function(np.bool_, params=("x",))
def _bool(al, node, x):
    """numpy's bool: `x != 0` (NaN is True), elementwise for an array. A number
    becomes a numpy bool, whose `+` is `or` and `*` is `and` (numpy_scalars.py):
    always a new value, so that it is marked numpy's even where `x` is a bool."""
    x = al.array(x, node)
    if is_array(x):
        return al.new(al.cast(x, I1) if not is_bool(T.element(x)) else al.copy(x))
    b = al.em.to_bool(x)
    return al.em.op(arith.XOrIOp(b, al.em.const(0, I1))) if b is x else b


# ---- comparisons and logic as functions ---------------------------------------------------
def _comparison(predicate: str):
    def handler(al, node, a, b):
        return al.compare(predicate, al.array(a, node), al.array(b, node), node)

    return handler


for _fn, _predicate in {
    np.equal: "oeq", np.not_equal: "une", np.less: "olt", np.less_equal: "ole",
    np.greater: "ogt", np.greater_equal: "oge",
}.items():
    numpy_function(_fn, params=("x1", "x2"))(_comparison(_predicate))


def _truth(al: ArrayLowering, v, node) -> SSAValue:
    v = al.array(v, node)
    if is_bool(T.element(v)):
        return v
    return al.compare("une", v, al.em.const(0.0, F64), node)


def _logical(op_class):
    def handler(al, node, a, b):
        x, y = al.broadcast(node, _truth(al, a, node), _truth(al, b, node))
        return al.new(al.em.op(op_class(x, y)))

    return handler


numpy_function(np.logical_and, params=("x1", "x2"))(_logical(arith.AndIOp))
numpy_function(np.logical_or, params=("x1", "x2"))(_logical(arith.OrIOp))
numpy_function(np.logical_xor, params=("x1", "x2"))(_logical(arith.XOrIOp))


@numpy_function(np.logical_not, params=("x",))
def _logical_not(al, node, x):
    x = _truth(al, x, node)
    if is_array(x):
        return al.invert(x, node)
    return al.em.op(arith.XOrIOp(x, al.em.const(1, I1)))


@numpy_function(np.heaviside, params=("x1", "x2"))
def _heaviside(al, node, a, b):
    """0 below 0, 1 above, x2 at 0 (NaN stays NaN): the derivative reaches x2 only at 0."""
    x, h = _floats(al, node, a, b)
    step = _where(al, _mask(al, _cmp("ogt", 0.0), [x]), _const(al, 1.0, x), _const(al, 0.0, x))
    step = _where(al, _mask(al, _cmp("uno"), [x]), _const(al, math.nan, x), step)
    return al.new(_where(al, _mask(al, _cmp("oeq", 0.0), [x]), h, step))


@numpy_function(np.polyval, params=("p", "x"))
def _polyval(al, node, p, x):
    """Horner's rule over the coefficients (highest power first)."""
    c = al.array(p, node)  # a list is an array, as numpy makes it: float64 even with float32 x
    if not is_array(c) or len(T.shape(c)) != 1:
        raise al.error(node, "np.polyval takes a vector (or a list) of coefficients")
    coefficients = [T.reshape(al.em, T.slice_along(al.em, c, 0, i, 1), ()) for i in range(T.shape(c)[0])]
    value = al.array(x, node)
    result = None
    for c in coefficients:  # from numpy's 0, so that x = inf gives its NaN (0 * inf)
        product = al.binary(ast.Mult(), _const(al, 0.0, _floats(al, node, value)[0]) if result is None else result,
                            value, node)
        result = al.binary(ast.Add(), product, c, node)
    if result is None:
        return al.new(_const(al, 0.0, _floats(al, node, value)[0]))
    (result, _) = al.floats(node, result, value)
    return al.new(result)
