"""Float `%` and `//` (irad/frontend/float_division.py): Python's values on
numbers, numpy's on arrays, with derivatives from arith.remf."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad.base.errors import RuntimeCheckError
from irad.testing import check_grad
from tests.reference import BACKENDS, central_difference, check_against_numpy


def mod(x, y):
    return x % y


def floordiv(x, y):
    return x // y


def mod_in_place(x):
    s = x
    s %= 0.75
    return s * x


def mixed(x, n):
    return x // n + x % n


def array_ops(x, y):
    return np.sum((x % y) * x + (x // y) * y)


def _same(got: float, want: float) -> bool:
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1.0, got) == math.copysign(1.0, want)


SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.1, 0.3, 7.5, -7.5, 1e300, -1e-300, math.inf, -math.inf, math.nan]


@pytest.mark.parametrize("fn", [mod, floordiv])
@settings(max_examples=60, deadline=None)
@given(x=st.one_of(st.floats(), st.sampled_from(SPECIAL)), y=st.one_of(st.floats(), st.sampled_from(SPECIAL)))
def test_numbers_give_pythons_value(fn, x, y):
    try:
        want = fn(x, y)
    except ZeroDivisionError:
        with pytest.raises(RuntimeCheckError, match="by zero"):
            irad.value_and_grad(fn)(x, y)
        return
    got, _ = irad.value_and_grad(fn)(x, y)
    assert _same(got, want), (x, y, got, want)


@pytest.mark.parametrize(("x", "y"), [(7.3, 2.1), (-7.3, 2.1), (7.3, -2.1), (-7.3, -2.1), (0.35, 0.1)])
def test_derivatives_match_finite_differences(x, y):
    check_grad(mod, x, y, argnums=(0, 1))
    assert irad.grad(mod, argnums=(0, 1))(x, y) == (1.0, -math.floor(x / y))
    assert irad.grad(floordiv, argnums=(0, 1))(x, y) == (0.0, 0.0)
    check_grad(mod_in_place, x)
    check_grad(mixed, x, 3)


def test_arrays_give_numpys_values_and_broadcast():
    x = np.array([[-7.5, -2.0, -0.0, 0.0, 0.25, 3.0, 1e300, np.inf, np.nan]])
    y = np.array([[2.0], [-0.3], [np.inf], [0.0]])
    out, pullback = irad.vjp(mod, x, y)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, np.mod(x, y))
        np.testing.assert_array_equal(np.signbit(out), np.signbit(np.mod(x, y)))
        np.testing.assert_array_equal(irad.vjp(floordiv, x, y)[0], np.floor_divide(x, y))
    dx, dy = pullback(np.ones(out.shape))
    assert dx.shape == x.shape and dy.shape == y.shape


def test_array_derivatives_match_finite_differences():
    rng = np.random.default_rng(3)
    x, y = rng.uniform(-3.0, 3.0, (3, 4)), rng.uniform(0.5, 2.0, 4)
    check_grad(array_ops, x, y, argnums=(0, 1))


# ---- numpy's int arrays: floor semantics, 0 for a zero divisor, wrapping at INT64_MIN // -1 --------
INTS = np.array([7, -7, 5, -5, 0, 3, np.iinfo(np.int64).min, 9, -8])
DIVISORS = np.array([2, 2, -3, -3, 4, 0, -1, -1, 3])


def int_divisions(w):
    q, r = INTS // DIVISORS, INTS % DIVISORS
    picked = w[(np.arange(9) * 5) % 9]  # an int array's remainder as indices
    steps = np.floor_divide(np.arange(9) - 4, 2) + np.remainder(np.arange(9), -4) + (w > 0.35) % 2
    return np.sum(w * (r + steps)) + np.sum(picked * picked) + np.sum(w[:6] * q[:6])


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_arrays_divide_as_numpy(backend):
    with np.errstate(all="ignore"):  # numpy warns of the zero divisor and of INT64_MIN // -1
        check_against_numpy(int_divisions, (np.linspace(0.1, 0.9, 9),), backend=backend)


# ---- an int array's sum, prod, max and min stay int64, as numpy's: divided by, a zero gives 0 ----
def divides_by_int_reductions(x, w):
    i = (3.0 * np.tanh(w)).astype(int)  # [2, -2, 2]
    lows = np.arange(9).reshape(3, 3).min(axis=0)  # [0, 1, 2] (the fuzzer's case_ba16d8bd9129)
    highs = np.arange(6).reshape(2, 3).max(axis=0) - 3  # [0, 1, 2]
    products = np.prod(np.arange(3).reshape(3, 1), axis=1)  # [0, 1, 2]
    counts = (np.abs(w) > 5.0).sum(keepdims=True)  # [0]: a bool array's sum is int too
    q = i // lows + i % highs + i // products + i % counts + i // np.sum(i * 0, axis=0, keepdims=True)
    return np.mean(q) * x + np.sum(w * q)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [-0.64, 0.0])
def test_int_reductions_stay_int_in_both_modes(x, backend):
    args = (x, np.array([1.02, -0.98, 0.99]))
    with np.errstate(all="ignore"):  # numpy warns of the zero divisors
        check_against_numpy(divides_by_int_reductions, args, backend=backend)
        for i, column in enumerate(irad.jacfwd(divides_by_int_reductions, argnums=(0, 1), backend=backend)(*args)):
            np.testing.assert_allclose(column, central_difference(divides_by_int_reductions, args, i), atol=1e-7)
