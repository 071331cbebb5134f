"""Python's int on irad's i64 (irad/frontend/integers.py): exact folding of what
is known while lowering, a clear error for a constant beyond 64 bits, and a
run-time check instead of wrap-around (issue 13, item 3).

The reference is Python's own unbounded int arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import irad
from irad.base.errors import RuntimeCheckError, UnsupportedError
from tests.frontend.test_joins import BACKENDS

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def wraps_past_64_bits(x, n):
    return x * ((n + 2**64) % 1000)


def mod_by_2_to_the_64(x, n):
    return x * (n % 2**64)


def exact_intermediates(x, n):
    # every intermediate beyond 64 bits, every result inside: Python's value
    return x * ((n + 2**62) % 1000) + (2**62 + 2**62 - 1) % 7 + (-(2**63)) % 5 + (3**50) // 3**48


def test_constant_arithmetic_is_exact_even_past_64_bits():
    value, grad = irad.value_and_grad(exact_intermediates)(1.5, 7)
    assert value == exact_intermediates(1.5, 7)
    assert grad == (7 + 2**62) % 1000


@pytest.mark.parametrize("f", [wraps_past_64_bits, mod_by_2_to_the_64])
def test_a_constant_that_does_not_fit_is_an_error_at_lowering(f):
    with pytest.raises(UnsupportedError, match=r"test_integers.py:\d+:\d+: the integer 18446744073709551616 does not fit in 64 bits"):
        irad.grad(f)(1.0, 7)


def mul(x, a, b):
    return x * (a * b)


def add(x, a, b):
    return x * (a + b)


def sub(x, a, b):
    return x * (a - b)


def neg(x, a, b):
    return x * -(a + b * 0)


def times_minus_three(x, a, b):
    return x * (a * -3 + b * 0)


def three_minus(x, a, b):
    return x * (3 - a + b * 0)


def cube(x, a, b):
    return x * (a**3 + b * 0)


def floordiv(x, a, b):
    return x * (a // b)


def mod(x, a, b):
    return x * (a % b)


def absolute(x, a, b):
    return x * (abs(a) + b * 0)


EXACT = {
    floordiv: lambda a, b: a // b,  # INT64_MIN // -1 is 2**63: an overflow error, never SIGFPE
    mod: lambda a, b: a % b,  # INT64_MIN % -1 is 0 (remsi would trap)
    absolute: lambda a, b: abs(a),  # abs(INT64_MIN) is 2**63
    mul: lambda a, b: a * b,
    add: lambda a, b: a + b,
    sub: lambda a, b: a - b,
    neg: lambda a, b: -a,
    times_minus_three: lambda a, b: a * -3,
    three_minus: lambda a, b: 3 - a,
    cube: lambda a, b: a**3,
}

EDGES = [0, 1, -1, 2, -2, 3, 3037000499, 3037000500, -3037000500, 2**31, -(2**32), 2**62,
         -(2**62), INT64_MAX, INT64_MIN, INT64_MAX - 1, INT64_MIN + 1, 2097151, 2097152,
         -2097152, 3074457345618258602, -3074457345618258603]
i64 = st.one_of(st.sampled_from(EDGES), st.integers(INT64_MIN, INT64_MAX))


def check_like_python(f, a, b, backend="python"):
    try:
        exact = EXACT[f](a, b)
    except ZeroDivisionError:
        with pytest.raises(RuntimeCheckError, match=r"test_integers.py:\d+:\d+: integer division or modulo by zero"):
            irad.value_and_grad(f, backend=backend)(1.0, a, b)
        return
    # the intermediates that the program computes (b * 0, a + b * 0) fit whenever a, b do
    fits = INT64_MIN <= exact <= INT64_MAX
    try:
        value, _ = irad.value_and_grad(f, backend=backend)(1.0, a, b)
    except RuntimeCheckError as e:
        assert not fits, f"{f.__name__}({a}, {b}) = {exact} fits, but irad raised {e}"
        assert "integer overflow" in str(e) and "test_integers.py:" in str(e)
        return
    assert fits, f"{f.__name__}({a}, {b}) = {exact} does not fit in i64, irad gave {value}"
    assert value == float(exact)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", list(EXACT), ids=lambda f: f.__name__)
@settings(max_examples=60, deadline=None)
@given(a=i64, b=i64)
@example(a=INT64_MAX, b=1)
@example(a=INT64_MIN, b=-1)
@example(a=-1, b=INT64_MIN)
@example(a=INT64_MIN, b=1)
@example(a=7, b=0)
def test_int_arithmetic_never_wraps(f, a, b, backend):
    check_like_python(f, a, b, backend)


# ---- an int compared with a float: exactly, as Python does (issue 33, item 6) ----
def less(a, b):
    return 1.0 if a < b else 0.0


def less_equal(a, b):
    return 1.0 if a <= b else 0.0


def greater(a, b):
    return 1.0 if a > b else 0.0


def greater_equal(a, b):
    return 1.0 if a >= b else 0.0


def equal(a, b):
    return 1.0 if a == b else 0.0


def not_equal(a, b):
    return 1.0 if a != b else 0.0


COMPARISONS = [less, less_equal, greater, greater_equal, equal, not_equal]
near_2_53 = st.sampled_from([2**53, 2**53 + 1, 2**53 - 1, 2**60 + 1, INT64_MAX, INT64_MIN, INT64_MIN + 1, 0, 5])
ints_beyond_floats = st.one_of(near_2_53, near_2_53.map(lambda n: -n if n != INT64_MIN else n), i64)
floats_near = st.one_of(
    st.sampled_from([2.0**53, -(2.0**53), 2.0**63, -(2.0**63), 2.0**64, 0.5, -0.5, 5.5, math.inf, -math.inf, math.nan]),
    st.floats(allow_nan=True, allow_infinity=True),
)


@settings(max_examples=150, deadline=None)
@given(n=ints_beyond_floats, x=floats_near, swap=st.booleans())
@example(n=2**53 + 1, x=2.0**53, swap=False)
@example(n=INT64_MAX, x=2.0**63, swap=True)
def test_int_float_comparison_is_exact(n, x, swap):
    for f in COMPARISONS:
        args = (x, n) if swap else (n, x)
        assert irad.vjp(f, *args)[0] == f(*args), (f.__name__, args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_float_comparison_is_exact_on_every_backend(backend):
    cases = [(2**53 + 1, 2.0**53), (2.0**53, 2**53 + 1), (INT64_MAX, 2.0**63), (INT64_MIN, -(2.0**63)),
             (-(2**53) - 1, -(2.0**53)), (5, math.nan), (3, 3.0), (-5, -5.5)]
    for a, b in cases:
        assert irad.vjp(greater, a, b, backend=backend)[0] == greater(a, b), (a, b)
        assert irad.vjp(equal, a, b, backend=backend)[0] == equal(a, b), (a, b)


def test_numpys_int_compares_with_a_float_after_rounding_as_numpy_does():
    n, x = np.int64(2**53 + 1), 2.0**53
    assert irad.vjp(greater, n, x)[0] == greater(n, x) == 0.0
    assert irad.vjp(equal, 2**53 + 1, np.float64(x))[0] == equal(2**53 + 1, np.float64(x)) == 1.0


def compare_in_a_helper(n, x):
    return greater(n, x)


def test_an_int_irad_cannot_tell_is_checked_where_python_and_numpy_differ():
    assert irad.vjp(compare_in_a_helper, 7, 6.5)[0] == 1.0
    with pytest.raises(RuntimeCheckError, match=r"test_integers.py:\d+:\d+: an int beyond 2\*\*53 compared with a float"):
        irad.vjp(compare_in_a_helper, 2**53 + 1, 2.0**53)
