"""Fewer numpy calls and Python statements per gradient on the numpy backend:

* sums over leading or trailing axes as a product with a vector of ones
  (`python_arrays.sum_expression`);
* a slot written into zeros and added to an array only generated code holds is
  accumulated in place, `acc[slot] += value` (`python_temporaries._accumulation`);
* a tensor made of one number (a gradient's seed, a scalar's cotangent, a splat
  constant) is held as the number (`python_arrays.as_number`), and `x * 1.0`
  on tensors of ones folds away (passes/float_folds.py);
* a scalar op's expression written into its one user's line (`python.py`,
  `FunctionTranslator._forwarded`).

Gradients are checked against central finite differences in float64, values
against numpy itself, special values (inf, nan, division by zero) against numpy
under IEEE 754; the generated source for where each rewrite applies.
"""

import re
import runpy
from pathlib import Path

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import irad
from irad.backends.python import translate as python_backend
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference, copies


def source(f, *args, argnums=0) -> str:
    return python_backend.compile_module(irad.grad(f, argnums).lower(*args)).source


def check_gradient(f, args, argnums, rtol=1e-6, atol=1e-7):
    before = copies(args)
    grads = irad.grad(f, argnums)(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)  # the caller's arrays are never written
    for i, g in zip(argnums, grads):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=rtol, atol=atol, err_msg=f"arg {i}")
    return grads


# ---- sums over leading or trailing axes ------------------------------------------------


@st.composite
def reductions(draw):
    rank = draw(st.integers(2, 3))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=rank, max_size=rank)))
    k = draw(st.integers(1, rank - 1))
    leading = draw(st.booleans())
    axes = tuple(range(k)) if leading else tuple(range(rank - k, rank))
    return shape, axes, leading


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(reductions(), st.integers(0, 2**16))
def test_sums_over_leading_or_trailing_axes_match_finite_differences(case, seed):
    shape, axes, leading = case
    rng = np.random.default_rng(seed)
    x = rng.normal(size=shape)
    # b broadcasts against x over the summed axes, so the gradient for b sums
    # over them as well (a leading sum in the backward sweep for leading axes)
    kept = tuple(n for d, n in enumerate(shape) if d not in axes)
    b = rng.normal(size=kept if leading else kept + (1,) * len(axes))

    def f(x, b):
        return np.sum(np.sin(np.sum(np.cos(x), axis=axes))) + np.sum(np.tanh(x * b))

    value, _ = irad.value_and_grad(f, (0, 1))(x, b)
    np.testing.assert_allclose(value, f(x, b), rtol=1e-12)
    check_gradient(f, (x, b), (0, 1))
    assert "_dot(" in source(f, x, b, argnums=(0, 1))


def column_sums(x):
    return np.sum(x, axis=0)


def row_sums(x):
    return np.sum(x, axis=1)


@pytest.mark.parametrize("f", [column_sums, row_sums])
def test_a_sum_by_a_product_with_ones_keeps_inf_and_nan(f):
    x = np.array([[1.0, np.inf, np.nan], [2.0, 3.0, 4.0], [-np.inf, -1.0, 0.5], [np.inf, 2.0, 1.0]])
    compiled = python_backend.compile_module(irad.lower(f, x))
    assert "_dot(" in compiled.source
    (got,) = compiled.function(f.__name__)(x)
    with np.errstate(invalid="ignore"):
        expected = f(x)
    np.testing.assert_array_equal(got, expected)  # inf - inf and nan give nan, as numpy's sum


def test_a_float32_sum_stays_float32():
    def f(x, b):
        return np.sum(np.tanh(x + b))

    x = np.linspace(-1.0, 1.0, 12, dtype=np.float32).reshape(4, 3)
    b = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    (gb,) = irad.grad(f, (1,))(x, b)
    assert gb.dtype == np.float32
    np.testing.assert_allclose(gb, central_difference(f, (x, b), 1), rtol=1e-4, atol=1e-5)


def mean_of_squares(x):
    return np.mean(x * x)


def test_long_float32_sums_are_numpys_pairwise_sums():
    """The Python backend's sums are numpy's (pairwise): the mean of 10^6
    float32 squares is numpy's, within 1e-6 of the exact value, where one
    in-order float32 chain is off by about 1e-5 (the native backend blocks
    its sums to the same end, tests/backends/test_blocked_sums.py)."""
    x = np.random.default_rng(2).random(10**6).astype(np.float32)
    value, g = irad.value_and_grad(mean_of_squares)(x)
    exact = math.fsum((x.astype(np.float64) ** 2).tolist()) / x.size
    assert value == mean_of_squares(x) and abs(value - exact) <= 1e-6 * exact
    assert g.dtype == np.float32


# ---- slots accumulated in place ----------------------------------------------------------


def slots(v, w):
    # every read of an element or a slice of v gives its cotangent a slot in zeros
    return v[0] * np.sin(v[1]) + v[2] ** 2 + np.sum(v[3:6] * w) + v[0] * v[2] + np.sum(np.exp(v[1:4]))


def columns(p, q):
    # columns 0 and 2 of 3: slices that tile p would be joined instead (passes/join_slice_sums.py)
    x, z = p[:, 0], p[:, 2]
    return np.sum(x * q + np.sin(z) * q + z * x)


@pytest.mark.parametrize("f, args", [
    (slots, (np.array([0.3, -0.7, 1.1, 0.2, 0.4, -0.5]), np.array([1.5, -2.0, 0.5]))),
    (columns, (np.arange(12.0).reshape(4, 3) / 7.0, np.linspace(0.0, 1.0, 4))),
])
def test_slots_accumulate_in_place(f, args):
    check_gradient(f, args, (0, 1))
    assert "] += " in source(f, *args, argnums=(0, 1))


def test_an_accumulated_slot_never_writes_a_constant_or_an_argument():
    # constants are read-only arrays: a write would raise, not pass silently
    def f(v):
        return v[0] * v[1] + v[1] * v[2]

    v = np.array([1.0, 2.0, 3.0])
    for _ in range(3):  # the same result each call: no state kept between calls
        (g,) = irad.grad(f, (0,))(v)
        np.testing.assert_array_equal(g, [2.0, 4.0, 2.0])
    np.testing.assert_array_equal(v, [1.0, 2.0, 3.0])


# ---- tensors of one number ---------------------------------------------------------------


def tanh_layer(w, b, x):
    return np.sum(np.tanh(x @ w + b))


def scaled(s, x):
    return np.sum(np.exp(s * x)) / x.size


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_seed_is_a_number_and_a_product_with_it_folds(dtype):
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(6, 3)).astype(dtype), np.zeros(3, dtype=dtype), rng.normal(size=(4, 6)).astype(dtype))
    text = source(tanh_layer, *args, argnums=(0, 1))
    assert "np.array(" not in text and ".repeat(" not in text and "np.multiply(1.0" not in text
    grads = irad.grad(tanh_layer, (0, 1))(*args)
    tolerance = dict(rtol=1e-6, atol=1e-7) if dtype == np.float64 else dict(rtol=2e-3, atol=1e-4)
    for i, g in zip((0, 1), grads):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, central_difference(tanh_layer, args, i), **tolerance)


def test_a_scalar_broadcast_is_held_as_the_number():
    x = np.linspace(-1.0, 1.0, 5)
    check_gradient(scaled, (0.7, x), (0, 1))


# ---- scalar expressions written into their user ------------------------------------------


def chain(x, y):
    # a sum of 30 terms is a chain of 30 single-use additions: nesting stays bounded
    return (x * 1.1 + y * 0.9 - x * y + np.sin(x) * 1.01 - y * 0.99 + x * 1.2 + y * y - x * 0.8 + y * 1.3
            - np.cos(y) * x + x * 1.4 + y * 0.7 - x * x + y * 1.5 - x * 0.6 + np.sin(y) * y + x * 1.6
            - y * 0.5 + x * y * y + y * 1.7 - x * 0.4 + y * 1.8 + np.cos(x) * y - x * 0.3 + y * 1.9
            - x * 0.2 + y * 2.1 + x * x * x - y * 0.1 + x * 2.2)


def fibonacci_like(x, n):
    a, b = 1.0, x
    for _ in range(n):
        a, b = b, a + b * x  # the carried values swap: the yield assigns all at once
    return b


def ratio(x, y):
    return x / (y - 1.0) * 2.0


def test_forwarded_expressions_give_the_same_gradients():
    check_gradient(chain, (0.3, -0.2), (0, 1))
    check_gradient(fibonacci_like, (0.7, 6), (0,))
    lines = source(chain, 0.3, -0.2, argnums=(0, 1)).count("\n")
    assert lines < 60  # about 120 ops (value and gradient): most are written into their user


def test_a_forwarded_division_by_zero_still_gives_ieee_results():
    value, (gx, gy) = irad.value_and_grad(ratio, (0, 1))(3.0, 1.0)
    with np.errstate(all="ignore"):
        d = np.float64(1.0) - np.float64(1.0)
        assert value == np.float64(3.0) / d * 2.0 == np.inf
        assert gx == np.float64(2.0) / d
        assert gy == -np.float64(3.0) * 2.0 / (d * d)


# ---- elementwise ops before broadcasts (passes/sink_broadcasts.py) ---------------------

BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]


def softmax_xent(z, y):
    # the adjoint of the max divides one broadcast (the cotangent) by another (the ties)
    m = np.max(z, axis=1, keepdims=True)
    e = np.exp(z - m)
    return np.sum(np.log(np.sum(e, axis=1)) + m[:, 0] - np.sum(z * y, axis=1))


def exp_of_broadcast(a, x):
    return np.sum(np.exp(np.sin(a) + np.zeros((3, 4))) * x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", [
    (softmax_xent, (np.array([[0.3, -1.2, 2.0], [1.5, 0.2, -0.7], [0.0, 0.4, 0.1]]), np.eye(3))),
    (exp_of_broadcast, (np.array([0.1, -0.4, 0.9, 1.3]), np.arange(12.0).reshape(3, 4) / 11.0)),
])
def test_elementwise_ops_before_broadcasts_match_finite_differences(backend, f, args):
    grads = irad.grad(f, (0, 1), backend=backend)(*args)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-7, err_msg=f"arg {i}")


def test_no_broadcast_is_expanded_in_the_mlp_gradient():
    # make bench's small MLP: the cotangent / ties quotient of its softmax's max
    # is taken on the rows, then broadcast by numpy in the product that reads it
    make_mlp = runpy.run_path(str(Path(__file__).resolve().parents[2] / "bench" / "arrays.py"))["make_mlp"]
    rng = np.random.default_rng(1)
    args = (0.2 * rng.normal(size=(4, 16)), np.zeros(16), 0.2 * rng.normal(size=(16, 3)), np.zeros(3),
            rng.normal(size=(8, 4)), np.eye(3)[rng.integers(0, 3, size=8)])
    text = source(make_mlp(np), *args, argnums=(0, 1, 2, 3))
    assert ".repeat(" not in text and "broadcast_to" not in text


# ---- records of carried arrays pushed without a copy ---------------------------------


def carried(w, xs):
    """h is carried round the loop and recorded each step: an array generated
    code made (its initial value, and what each step yields), so the tape takes
    it as it is. xs[t] is an argument's: the tape copies it."""
    h = np.zeros((1, w.shape[0]))
    c = np.ones((1, w.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ w + h * c)
        c = c * h + 1.0
    return np.sum(h * c)


def test_carried_arrays_are_recorded_without_a_copy():
    rng = np.random.default_rng(3)
    args = (0.5 * rng.normal(size=(3, 3)), rng.normal(size=(4, 1, 3)))
    check_gradient(carried, args, (0, 1))
    text = source(carried, *args, argnums=(0, 1))
    copies = re.findall(r"= np\.array\(\w+, dtype=np\.float64\)", text)
    assert len(copies) == 2, copies  # xs[t] in the loop, w after it; not h or c
