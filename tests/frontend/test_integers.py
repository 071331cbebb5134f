"""Python's int on irad's i64 (irad/frontend/integers.py): exact folding of what
is known while lowering, a clear error for a constant beyond 64 bits, and a
run-time check instead of wrap-around (issue 13, item 3).

The reference is Python's own unbounded int arithmetic."""

from __future__ import annotations

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


EXACT = {
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
    exact = EXACT[f](a, b)
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
def test_int_arithmetic_never_wraps(f, a, b, backend):
    check_like_python(f, a, b, backend)
