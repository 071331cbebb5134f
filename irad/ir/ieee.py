"""What each arith/math op computes on IEEE 754 floats, and the C semantics of the
integer ops Python's operators do not have.

The constant folds (passes/float_folds.py) and the Python backend
(irad/backends/python/translate.py) both compute ops with these functions and tables, keyed
by op name, so a fold gives the value the program computes at run time.

The float functions take Python floats or numpy scalars and follow IEEE 754 on
every input, NaN, infinities and signed zeros included. Those computed with numpy
compute in the precision of their operands (np.float32 gives one rounding to f32);
they do not warn only under `np.errstate(all="ignore")`, where callers run them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type

# numpy scalar type of each float type: computing in it rounds a result once, to
# that type, as the op does at run time.
NUMPY_FLOATS: dict[type, type[np.floating]] = {
    Float32Type: np.float32,
    Float64Type: np.float64,
}


def round_to_f32(x: Any) -> np.float64:
    """The f32 nearest x (ties to even; beyond the f32 range, inf), as an f64."""
    return np.float64(np.float32(x))


# ---- arith min/max ---------------------------------------------------------------
# They only compare and pick an operand, so they are exact in every precision and
# keep a NaN operand's sign and payload. -0.0 orders below +0.0 in all four.


def maximumf(a: Any, b: Any) -> Any:
    """arith.maximumf: NaN if either operand is NaN."""
    if a != a:
        return a
    if b != b:
        return b
    if a == b:
        return b if math.copysign(1.0, a) < 0 else a
    return a if a > b else b


def minimumf(a: Any, b: Any) -> Any:
    """arith.minimumf: NaN if either operand is NaN."""
    if a != a:
        return a
    if b != b:
        return b
    if a == b:
        return a if math.copysign(1.0, a) < 0 else b
    return a if a < b else b


def maxnumf(a: Any, b: Any) -> Any:
    """arith.maxnumf: a NaN operand is ignored. Of +0.0 and -0.0, IEEE lets it
    return either; this returns +0.0."""
    if a != a:
        return b
    if b != b:
        return a
    return maximumf(a, b)


def minnumf(a: Any, b: Any) -> Any:
    """arith.minnumf: a NaN operand is ignored. Of +0.0 and -0.0, IEEE lets it
    return either; this returns -0.0."""
    if a != a:
        return b
    if b != b:
        return a
    return minimumf(a, b)


def clampf(x: Any, lo: Any, hi: Any) -> Any:
    """math.clampf as MLIR 22.1 defines and lowers it: maximumf(minimumf(x, lo), hi)."""
    return maximumf(minimumf(x, lo), hi)


MIN_MAX: dict[str, Callable[[Any, Any], Any]] = {
    "arith.maximumf": maximumf,
    "arith.minimumf": minimumf,
    "arith.maxnumf": maxnumf,
    "arith.minnumf": minnumf,
}

# ---- arith.cmpf ------------------------------------------------------------------
# Python's comparisons are false on NaN, exactly like the ordered predicates; each
# unordered predicate is the negation of an ordered one. Written as expressions
# so the backend inlines them into generated code.
CMPF_EXPRESSIONS: dict[str, str] = {
    "false": "False",
    "oeq": "{a} == {b}",
    "ogt": "{a} > {b}",
    "oge": "{a} >= {b}",
    "olt": "{a} < {b}",
    "ole": "{a} <= {b}",
    "one": "({a} < {b} or {a} > {b})",
    "ord": "({a} == {a} and {b} == {b})",
    "ueq": "not ({a} < {b} or {a} > {b})",
    "ugt": "not ({a} <= {b})",
    "uge": "not ({a} < {b})",
    "ult": "not ({a} >= {b})",
    "ule": "not ({a} > {b})",
    "une": "{a} != {b}",
    "uno": "({a} != {a} or {b} != {b})",
    "true": "True",
}

# The same predicates as functions; built from the expressions so both say one thing.
CMPF: dict[str, Callable[[Any, Any], bool]] = {
    predicate: eval(f"lambda a, b: {expression.format(a='a', b='b')}")
    for predicate, expression in CMPF_EXPRESSIONS.items()
}

# ---- correctly rounded math ops --------------------------------------------------


def round_half_away(x: Any) -> Any:
    """math.round: to nearest, ties away from zero (C `round`); keeps the sign of
    zero, and infinities and NaN unchanged."""
    t = np.trunc(x)
    # x - t is the exact fractional part, so this test has no rounding error
    # (unlike floor(x + 0.5), which is wrong for 0.49999999999999994).
    if np.isfinite(x) and abs(x - t) >= 0.5:
        t += np.copysign(1, x)  # the int 1 keeps an np.float32 x in f32
    return t


CORRECTLY_ROUNDED: dict[str, Callable[..., Any]] = {
    "math.absf": np.abs,
    "math.ceil": np.ceil,
    "math.copysign": np.copysign,
    "math.floor": np.floor,
    "math.round": round_half_away,
    "math.roundeven": np.rint,
    "math.sqrt": np.sqrt,
    "math.trunc": np.trunc,
}
"""Math ops with one correct answer on every IEEE platform, f32 and f64, as the
numpy functions that give it."""

# ---- math ops computed by libm ---------------------------------------------------


def _is_odd_integer(y: float) -> bool:
    return math.isfinite(y) and abs(math.fmod(y, 2.0)) == 1.0


def powf(base: Any, exponent: Any) -> np.float64:
    """math.powf: C `pow` (np.power differs from it, e.g. at a base of -inf)."""
    try:
        return np.float64(math.pow(base, exponent))
    except OverflowError:
        negative = base < 0 and _is_odd_integer(exponent)
        return np.float64(-math.inf if negative else math.inf)
    except ValueError:
        if base == 0:  # zero to a negative power is a pole
            if _is_odd_integer(exponent):
                return np.float64(math.copysign(math.inf, base))
            return np.float64(math.inf)
        return np.float64(math.nan)  # negative base, non-integer exponent


def erf(x: Any) -> np.float64:
    """math.erf; numpy has none, and math.erf never raises (erf(inf) = 1)."""
    return np.float64(math.erf(x))


def erfc(x: Any) -> np.float64:
    """math.erfc; numpy has none, and math.erfc never raises (erfc(-inf) = 2)."""
    return np.float64(math.erfc(x))


LIBM: dict[str, tuple[Callable[..., float], Callable[..., Any]]] = {
    "math.acos": (math.acos, np.arccos),
    "math.acosh": (math.acosh, np.arccosh),
    "math.asin": (math.asin, np.arcsin),
    "math.asinh": (math.asinh, np.arcsinh),
    "math.atan": (math.atan, np.arctan),
    "math.atan2": (math.atan2, np.arctan2),
    "math.atanh": (math.atanh, np.arctanh),
    "math.cbrt": (math.cbrt, np.cbrt),
    "math.cos": (math.cos, np.cos),
    "math.cosh": (math.cosh, np.cosh),
    "math.erf": (math.erf, erf),
    "math.erfc": (math.erfc, erfc),
    "math.exp": (math.exp, np.exp),
    "math.exp2": (math.exp2, np.exp2),
    "math.expm1": (math.expm1, np.expm1),
    "math.log": (math.log, np.log),
    "math.log10": (math.log10, np.log10),
    "math.log1p": (math.log1p, np.log1p),
    "math.log2": (math.log2, np.log2),
    "math.powf": (math.pow, powf),
    "math.sin": (math.sin, np.sin),
    "math.sinh": (math.sinh, np.sinh),
    "math.tan": (math.tan, np.tan),
    "math.tanh": (math.tanh, np.tanh),
}
"""
Math ops the platform's f64 libm computes, each as (Python's math function, which
calls that libm but raises ValueError or OverflowError where IEEE 754 gives inf or
NaN; a function giving the IEEE value on every input, numpy's where it has one).
No Python function gives the f32 libm's (expf, sinf, ...) results, which are not
correctly rounded.
"""


def libm(op_name: str) -> Callable[..., float]:
    """The f64 value of libm op `op_name`: Python's math function, or the IEEE
    special value where it raises."""
    function, special = LIBM[op_name]

    def call(*args: float) -> float:
        try:
            return function(*args)
        except (ValueError, OverflowError):
            with np.errstate(all="ignore"):
                return float(special(*args))

    return call


# ---- other float math ------------------------------------------------------------


def fpowi(base: Any, exponent: int) -> np.float64:
    """math.fpowi: C `pow` with an integer exponent."""
    return powf(base, float(exponent))


def rsqrt(x: Any) -> Any:
    return 1.0 / np.sqrt(x)


def fma(a: Any, b: Any, c: Any) -> float:
    """math.fma: a * b + c with a single rounding (Python 3.11 has no math.fma)."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return a * b + c  # the product is exactly inf or nan
    if not math.isfinite(c):
        return c  # a finite product cannot cancel an infinite or nan c
    na, da = a.as_integer_ratio()
    nb, db = b.as_integer_ratio()
    nc, dc = c.as_integer_ratio()
    numerator = na * nb * dc + nc * da * db
    if numerator == 0:
        return a * b + c  # the unfused sum has the IEEE sign of zero
    try:
        return numerator / (da * db * dc)  # int / int is correctly rounded
    except OverflowError:
        return math.inf if numerator > 0 else -math.inf


# ---- C integer semantics -----------------------------------------------------------
# On Python ints without wraparound; a zero divisor raises ZeroDivisionError.


def divsi(a: int, b: int) -> int:
    """arith.divsi: division truncating toward zero (C `/`)."""
    q = a // b
    if q < 0 and q * b != a:  # Python floored a negative inexact quotient
        q += 1
    return q


def remsi(a: int, b: int) -> int:
    """arith.remsi: the remainder with the sign of the dividend (C `%`)."""
    r = a % b  # Python's has the sign of the divisor
    if r != 0 and (r < 0) != (a < 0):
        r -= b
    return r


def ceildivsi(a: int, b: int) -> int:
    """arith.ceildivsi: division rounding toward +inf."""
    return -(-a // b)


def ipowi(base: int, exponent: int) -> int:
    """math.ipowi: a negative power is 1 / base**-exponent truncated, so only
    +-1 survive it."""
    if exponent >= 0:
        return base**exponent
    if base == 1:
        return 1
    if base == -1:
        return -1 if exponent & 1 else 1
    if base == 0:
        raise ZeroDivisionError("math.ipowi: zero raised to a negative power")
    return 0
