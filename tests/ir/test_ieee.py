"""irad/ir/ieee.py against references that do not use it: numpy, Python's math,
exact rational arithmetic, and the special cases IEEE 754 and C99 Annex F fix."""

import itertools
import math
import struct
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import Float32Type, Float64Type

from irad.ir import ieee

INF, NAN = math.inf, math.nan
SPECIALS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e308, -5e-324, INF, -INF, NAN]
PAIRS = list(itertools.product(SPECIALS, repeat=2))


def same(a, b) -> bool:
    """Equal bit for bit, except that all NaNs are equal (IEEE leaves their sign)."""
    a, b = float(a), float(b)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


# ---- min/max -----------------------------------------------------------------------


@pytest.mark.parametrize("a, b", PAIRS)
def test_maximumf_and_minimumf_are_numpy_maximum_and_minimum(a, b):
    if a == b == 0.0:
        return  # numpy does not order the zeros: below
    assert same(ieee.maximumf(a, b), np.maximum(a, b))
    assert same(ieee.minimumf(a, b), np.minimum(a, b))


@pytest.mark.parametrize("a, b", PAIRS)
def test_maxnumf_and_minnumf_are_numpy_fmax_and_fmin(a, b):
    if a == b == 0.0:
        return
    assert same(ieee.maxnumf(a, b), np.fmax(a, b))
    assert same(ieee.minnumf(a, b), np.fmin(a, b))


@pytest.mark.parametrize("name", sorted(ieee.MIN_MAX))
@pytest.mark.parametrize("a, b", [(0.0, -0.0), (-0.0, 0.0)])
def test_minus_zero_orders_below_plus_zero(name, a, b):
    expected = 0.0 if "max" in name else -0.0
    assert same(ieee.MIN_MAX[name](a, b), expected)


def test_min_max_return_a_nan_operand_itself():
    negative_nan = -NAN
    assert math.copysign(1.0, ieee.maximumf(negative_nan, 1.0)) < 0
    assert math.copysign(1.0, ieee.minimumf(1.0, negative_nan)) < 0


def test_min_max_keep_f32():
    assert type(ieee.maximumf(np.float32(1), np.float32(2))) is np.float32


# ---- cmpf --------------------------------------------------------------------------

UNORDERED = np.isnan
REFERENCE_CMPF = {
    "false": lambda a, b: False,
    "oeq": lambda a, b: not UNORDERED(a) and not UNORDERED(b) and a == b,
    "ogt": lambda a, b: not UNORDERED(a) and not UNORDERED(b) and a > b,
    "oge": lambda a, b: not UNORDERED(a) and not UNORDERED(b) and a >= b,
    "olt": lambda a, b: not UNORDERED(a) and not UNORDERED(b) and a < b,
    "ole": lambda a, b: not UNORDERED(a) and not UNORDERED(b) and a <= b,
    "one": lambda a, b: not UNORDERED(a) and not UNORDERED(b) and a != b,
    "ord": lambda a, b: not UNORDERED(a) and not UNORDERED(b),
    "ueq": lambda a, b: UNORDERED(a) or UNORDERED(b) or a == b,
    "ugt": lambda a, b: UNORDERED(a) or UNORDERED(b) or a > b,
    "uge": lambda a, b: UNORDERED(a) or UNORDERED(b) or a >= b,
    "ult": lambda a, b: UNORDERED(a) or UNORDERED(b) or a < b,
    "ule": lambda a, b: UNORDERED(a) or UNORDERED(b) or a <= b,
    "une": lambda a, b: UNORDERED(a) or UNORDERED(b) or a != b,
    "uno": lambda a, b: UNORDERED(a) or UNORDERED(b),
    "true": lambda a, b: True,
}


def test_every_cmpf_predicate_is_covered():
    assert ieee.CMPF.keys() == ieee.CMPF_EXPRESSIONS.keys() == REFERENCE_CMPF.keys()


@pytest.mark.parametrize("predicate", sorted(REFERENCE_CMPF))
def test_cmpf_predicates(predicate):
    for a, b in PAIRS:
        expected = bool(REFERENCE_CMPF[predicate](a, b))
        assert ieee.CMPF[predicate](a, b) is expected, (a, b)
        assert ieee.CMPF[predicate](np.float64(a), np.float64(b)) == expected, (a, b)
        expression = ieee.CMPF_EXPRESSIONS[predicate].format(a="a", b="b")
        assert eval(expression, {}, {"a": a, "b": b}) == expected, (a, b)


# ---- correctly rounded ops -----------------------------------------------------------


def _round_half_away(x: float) -> float:
    if not math.isfinite(x):
        return x
    return math.copysign(float(math.floor(abs(Fraction(x)) + Fraction(1, 2))), x)


@pytest.mark.parametrize(
    "x", SPECIALS + [0.49999999999999994, -0.5, 0.5, 1.5, 2.5, -2.5, 4503599627370495.5, -0.3]
)
def test_round_half_away(x):
    assert same(ieee.round_half_away(x), _round_half_away(x))


@settings(max_examples=200, deadline=None)
@given(st.floats(allow_nan=False, width=32))
def test_round_half_away_in_f32(x):
    result = ieee.round_half_away(np.float32(x))
    assert type(result) is np.float32
    assert same(result, _round_half_away(x))


@np.errstate(all="ignore")  # as callers run them
def test_correctly_rounded_signed_zeros():
    ops = ieee.CORRECTLY_ROUNDED
    assert same(ops["math.ceil"](-0.5), -0.0)
    assert same(ops["math.trunc"](-0.5), -0.0)
    assert same(ops["math.floor"](0.5), 0.0)
    assert same(ops["math.roundeven"](-0.5), -0.0)
    assert same(ops["math.roundeven"](2.5), 2.0)
    assert same(ops["math.sqrt"](-0.0), -0.0)
    assert same(ops["math.sqrt"](-1.0), NAN)
    assert same(ops["math.absf"](-0.0), 0.0)
    assert same(ops["math.copysign"](1.0, -0.0), -1.0)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=0, allow_infinity=False, width=32))
def test_f32_sqrt_rounds_once_to_f32(x):
    """sqrt in f32 is the f32 nearest the exact root; rounding the f64 root to
    f32 gives it too (53 >= 2 * 24 + 2 bits, so no double rounding)."""
    result = ieee.CORRECTLY_ROUNDED["math.sqrt"](np.float32(x))
    assert type(result) is np.float32
    assert result == np.float32(math.sqrt(x))


@np.errstate(all="ignore")
def test_f32_rounding():
    assert ieee.NUMPY_FLOATS == {Float32Type: np.float32, Float64Type: np.float64}
    assert ieee.round_to_f32(1 + 2**-24) == 1.0  # a tie goes to even
    assert ieee.round_to_f32(1 + 3 * 2**-24) == 1 + 2**-22
    assert ieee.round_to_f32(1e300) == INF
    assert same(ieee.round_to_f32(-1e-50), -0.0)
    for x in (0.1, -1 / 3, 3.4028235e38, 1.4e-45):
        assert ieee.round_to_f32(x) == struct.unpack("f", struct.pack("f", x))[0]


# ---- libm ------------------------------------------------------------------------------

# C99 Annex F: pow's special cases, and values where Python's math.pow raises.
POWF_CASES = [
    (2.0, 10.0, 1024.0), (-8.0, 1 / 3, NAN), (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0),
    (0.0, -1.0, INF), (-0.0, -1.0, -INF), (-0.0, -2.0, INF), (0.0, -0.5, INF),
    (-0.0, 3.0, -0.0), (10.0, 400.0, INF), (-10.0, 401.0, -INF), (-10.0, 400.0, INF),
    (-INF, 0.5, INF), (-INF, 3.0, -INF), (-INF, -3.0, -0.0), (1.0, NAN, 1.0),
    (NAN, 0.0, 1.0), (NAN, -0.0, 1.0), (-1.0, INF, 1.0), (0.5, -INF, INF), (2.0, -2000.0, 0.0),
]


@pytest.mark.parametrize("base, exponent, expected", POWF_CASES)
def test_powf_is_c_pow(base, exponent, expected):
    assert same(ieee.powf(base, exponent), expected)
    assert same(ieee.libm("math.powf")(base, exponent), expected)


def test_fpowi():
    assert same(ieee.fpowi(-2.0, 3), -8.0)
    assert same(ieee.fpowi(-0.0, -1), -INF)
    assert same(ieee.fpowi(2.0, -2), 0.25)


@pytest.mark.parametrize(
    "name, args, expected",
    [
        ("math.log", (0.0,), -INF), ("math.log", (-1.0,), NAN), ("math.exp", (1000.0,), INF),
        ("math.exp", (-INF,), 0.0), ("math.atanh", (1.0,), INF), ("math.log1p", (-1.0,), -INF),
        ("math.acos", (2.0,), NAN), ("math.cosh", (1000.0,), INF), ("math.erf", (-INF,), -1.0),
        ("math.sin", (INF,), NAN), ("math.atan2", (-0.0, -1.0), -math.pi),
        ("math.cbrt", (-8.0,), -2.0),
    ],
)
def test_libm_gives_ieee_special_values(name, args, expected):
    assert same(ieee.libm(name)(*args), expected)
    with np.errstate(all="ignore"):
        assert same(ieee.LIBM[name][1](*map(np.float64, args)), expected)


@pytest.mark.parametrize("name", sorted(ieee.LIBM))
def test_libm_is_math_where_math_succeeds(name):
    function, special = ieee.LIBM[name]
    arity = 2 if name in ("math.atan2", "math.powf") else 1
    for args in itertools.product(SPECIALS + [0.7, -3.25, 20.0], repeat=arity):
        try:
            expected = function(*args)
        except (ValueError, OverflowError):
            continue
        assert same(ieee.libm(name)(*args), expected), args
        with np.errstate(all="ignore"):
            value = float(special(*map(np.float64, args)))
        # numpy's SIMD functions may differ from libm in the last bit
        assert same(value, expected) or math.isclose(value, expected, rel_tol=1e-15), args


def test_erf_is_numpy_scalar():
    assert type(ieee.erf(np.float64(0.5))) is np.float64
    assert ieee.erf(0.5) == math.erf(0.5)


# ---- fma ---------------------------------------------------------------------------------


def _exact_fma(a: float, b: float, c: float) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c  # the IEEE sign of an exact zero
    return math.copysign(float(exact), exact)


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e100, 1e100), st.floats(-1e100, 1e100), st.floats(-1e100, 1e100))
def test_fma_rounds_once(a, b, c):
    assert same(ieee.fma(a, b, c), _exact_fma(a, b, c))


def test_fma_special_cases():
    assert same(ieee.fma(INF, 0.0, 1.0), NAN)
    assert same(ieee.fma(INF, 2.0, -INF), NAN)
    assert same(ieee.fma(1.0, 2.0, -INF), -INF)
    assert same(ieee.fma(-1.0, 0.0, 0.0), 0.0)
    assert same(ieee.fma(-1.0, 0.0, -0.0), -0.0)
    assert same(ieee.fma(1e308, 10.0, 0.0), INF)
    assert ieee.fma(1.0 + 2**-30, 1.0 - 2**-30, -1.0) == -(2**-60)  # unfused: 0.0


# ---- C integer semantics -------------------------------------------------------------------

INTS = [-7, -6, -1, 0, 1, 2, 3, 7, 2**70 + 1, -(2**70) - 1]


@pytest.mark.parametrize("a, b", [(a, b) for a in INTS for b in INTS if b != 0])
def test_c_division(a, b):
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)  # toward zero
    assert ieee.divsi(a, b) == quotient
    assert ieee.remsi(a, b) == a - b * quotient
    assert ieee.ceildivsi(a, b) == math.ceil(Fraction(a, b))


def test_integer_division_by_zero_raises():
    for op in (ieee.divsi, ieee.remsi, ieee.ceildivsi):
        with pytest.raises(ZeroDivisionError):
            op(1, 0)
    with pytest.raises(ZeroDivisionError):
        ieee.ipowi(0, -1)


@pytest.mark.parametrize("base", [-3, -2, -1, 0, 1, 2, 5])
@pytest.mark.parametrize("exponent", [-3, -2, -1, 0, 1, 2, 3])
def test_ipowi_truncates_negative_powers(base, exponent):
    if base == 0 and exponent < 0:
        return
    exact = Fraction(base) ** exponent
    assert ieee.ipowi(base, exponent) == math.trunc(exact)
