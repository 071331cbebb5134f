"""Reductions of a tensor made of one number fold into their closed form
(passes/splat_reductions.py): the values against numpy, the gradients against
central differences, and the reduction gone from the module.

Tolerances: a folded float64 sum is c·k rounded once, the correctly rounded
exact sum; numpy's pairwise sum of k copies is within about (log2 k + 8) ulps
of it, so 1e-12 relative holds for every k here with room to spare. A float32
sum is the float32 nearest c·k, exactly (`np.float32(float64(c) * k)`), and
numpy's pairwise float32 sum is within 2e-5 relative of it for k ≤ 10^6 (its
error bound, ~(log2 k + 128)·2^-24, is 8e-6). Integer sums are exact and wrap
as numpy's int64 sum wraps. Max and min are exact.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from tests.frontend.test_joins import BACKENDS
from tests.reference import five_point_difference


def sum_all(x, shape):
    return np.sum(np.full(shape, x))


def sum_rows(x, shape):
    return np.sum(np.sum(np.full(shape, x), axis=0) * np.arange(shape[1]))


def mean_all(x, shape):
    return np.mean(np.ones(shape) * x)


def mean_cols(x, shape):
    return np.sum(np.mean(np.zeros(shape) + x, axis=1) ** 2)


def max_all(x, shape):
    return np.max(np.full(shape, x))


def min_cols(x, shape):
    return np.sum(np.min(np.full(shape, x), axis=-1))


def sum_of_broadcast(x, shape):
    return np.sum(np.broadcast_to(x * 2.0, shape))


PROGRAMS = [sum_all, sum_rows, mean_all, mean_cols, max_all, min_cols, sum_of_broadcast]
SHAPES = [(1, 1), (3, 7), (33, 100), (128, 257), (1000, 999)]


def reductions(f, shape, combiner: str = r"\w+") -> int:
    """The linalg.reduce ops combining with `combiner` left in the optimised
    module of f's value and gradient."""
    module = str(irad.value_and_grad(f, backend="python", static_argnums=(1,)).lower(1.5, shape))
    return len(re.findall(rf"linalg\.reduce .*\n.*\n\s*%\S+ = arith\.{combiner} ", module))


@pytest.mark.parametrize("f", [sum_all, mean_all, max_all, min_cols, sum_of_broadcast], ids=lambda f: f.__name__)
def test_the_reduction_and_its_gradient_are_folded_away(f):
    # a maximum's gradient divides the cotangent among the elements equal to the
    # maximum: of a splat, that mask is one boolean (GenericOfSplats) and its count folds
    assert reductions(f, (40, 50)) == 0
    assert "linalg.generic" not in str(irad.value_and_grad(f, backend="python", static_argnums=(1,)).lower(1.5, (40, 50)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
@settings(max_examples=8, deadline=None)
@given(x=st.floats(-1e6, 1e6, allow_nan=False, allow_subnormal=False), shape=st.sampled_from(SHAPES))
def test_values_match_numpy_and_gradients_central_differences(backend, f, x, shape):
    value, grad = irad.value_and_grad(f, backend=backend, static_argnums=(1,))(x, shape)
    expected = f(x, shape)
    np.testing.assert_allclose(value, expected, rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(grad, five_point_difference(lambda v: f(v, shape), (x,), 0), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_gradient_through_the_fold_is_the_count(backend):
    # d/dx sum(np.full(n, x)) = n, and the folded sum of the seed's broadcast gives it exactly
    n = (2000, 1500)
    value, grad = irad.value_and_grad(sum_all, backend=backend, static_argnums=(1,))(0.1, n)
    assert grad == 3_000_000.0
    assert value == 0.1 * 3_000_000  # c·k rounded once
    assert five_point_difference(lambda v: sum_all(v, n), (0.1,), 0) == pytest.approx(3e6, rel=1e-9)


def sum_float32(x, n):
    return np.sum(np.full(n, x, dtype=np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [0.1, 1.0 / 3.0, -7.3e-5, 12345.678])
@pytest.mark.parametrize("n", [10, 4097, 1_000_000])
def test_a_float32_sum_is_the_correctly_rounded_product(backend, x, n):
    value = irad.value_and_grad(sum_float32, backend=backend, static_argnums=(1,))(x, n)[0]
    exact = np.float32(np.float64(np.float32(x)) * n)  # c·k in float64 is exact for k < 2^29
    assert np.float32(value) == exact
    # numpy's pairwise float32 sum drifts: 100000.01 for 10^6 copies of 0.1f, where the fold says 100000.0
    np.testing.assert_allclose(np.float32(value), np.sum(np.full(n, x, dtype=np.float32)), rtol=2e-5)


def int_sum(x, c, n):
    return x * np.sum(np.full(n, c))


def int_sum_constant(x, n):
    return x * np.sum(np.full(n, 2**62 + 3))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("c", [3, -11, 2**62, -(2**63)])
@pytest.mark.parametrize("n", [1, 5, 1000])
def test_an_int64_sum_is_exact_and_wraps_as_numpy_does(backend, c, n):
    with np.errstate(over="ignore"):
        expected = float(np.sum(np.full(n, c, dtype=np.int64)))
    value, grad = irad.value_and_grad(int_sum, backend=backend, static_argnums=(2,))(1.0, c, n)
    assert value == expected and grad == expected
    value = irad.value_and_grad(int_sum_constant, backend=backend, static_argnums=(1,))(1.0, n)[0]
    with np.errstate(over="ignore"):
        assert value == float(np.sum(np.full(n, 2**62 + 3, dtype=np.int64)))


def any_of_trues(x, n):
    return x * np.sum(np.full(n, x > 0.0)) + np.max(np.full((n, 2), 3))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bools_and_int_maxima(backend):
    value = irad.value_and_grad(any_of_trues, backend=backend, static_argnums=(1,))(2.0, 7)[0]
    assert value == any_of_trues(2.0, 7)


def sum_of_empty(x, n):
    return np.sum(np.full((n, 0), x)) + np.sum(np.full((n, 0), x), axis=1)[0]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [1.5, np.inf, -np.inf])
def test_an_empty_sum_is_its_start_whatever_the_number(backend, x):
    value, grad = irad.value_and_grad(sum_of_empty, backend=backend, static_argnums=(1,))(x, 3)
    assert value == 0.0 and grad == 0.0  # not inf * 0 = NaN
