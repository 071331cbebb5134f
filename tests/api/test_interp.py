"""np.interp: values against numpy's, derivatives in x, xp and fp against
central differences (points off the knots) and, at the knots, JAX's
one-sided convention; forward mode through its frule; period= as numpy wraps;
the refusals."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_refused

XP = np.array([0.0, 0.2, 0.45, 0.7, 1.0])
FP = np.sin(3 * XP)
X = np.array([-0.1, 0.05, 0.33, 0.6, 0.95, 1.3])  # off the knots, both sides outside


def squared(x, xp, fp):
    return np.sum(np.interp(x, xp, fp) ** 2)


def at_number(x, fp):
    return np.interp(x, XP, fp) * x


def with_ends(x, fp, lo):
    return np.sum(np.interp(x, XP, fp, left=lo, right=2.0) * x)


def curve(x, fp):
    return np.interp(x, XP, fp)


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_and_gradients_match_numpy_and_central_differences(backend):
    args = (X, XP, FP)
    value, grads = irad.value_and_grad(squared, argnums=(0, 1, 2), backend=backend)(*args)
    np.testing.assert_allclose(value, squared(*args), rtol=1e-14)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(squared, args, i), atol=1e-7, err_msg=f"d/d arg {i}")


def test_a_number_x_gives_a_number_and_its_derivatives():
    value, (gx, gfp) = irad.value_and_grad(at_number, argnums=(0, 1))(0.3, FP)
    assert isinstance(value, float)
    np.testing.assert_allclose(value, np.interp(0.3, XP, FP) * 0.3, rtol=1e-14)
    np.testing.assert_allclose(gx, central_difference(at_number, (0.3, FP), 0), rtol=1e-7)
    np.testing.assert_allclose(gfp, central_difference(at_number, (0.3, FP), 1), atol=1e-9)


def test_left_and_right():
    args = (X, FP, -3.0)
    value, grads = irad.value_and_grad(with_ends, argnums=(0, 1, 2))(*args)
    np.testing.assert_allclose(value, with_ends(*args), rtol=1e-14)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(with_ends, args, i), atol=1e-7, err_msg=f"d/d arg {i}")


def test_slopes_at_the_knots_are_jax_s():
    """At an inner knot the slope of the interval to its right, at xp[-1] the
    last interval's, at xp[0] the first's, 0 outside (jax.numpy.interp's)."""
    slopes = np.diff(FP) / np.diff(XP)
    x = np.array([0.0, 0.2, 0.45, 1.0, -0.5, 1.5])
    np.testing.assert_allclose(np.diag(irad.jacrev(curve)(x, FP)), [*slopes[[0, 1, 2, 3]], 0.0, 0.0], rtol=1e-13)
    np.testing.assert_allclose(np.diag(irad.jacfwd(curve)(x, FP)), [*slopes[[0, 1, 2, 3]], 0.0, 0.0], rtol=1e-13)


@pytest.mark.parametrize("backend", BACKENDS)
def test_forward_mode(backend):
    """jacfwd goes through the frule: the Jacobian in fp is the knots' weights."""
    jac = irad.jacfwd(curve, argnums=1, backend=backend)(X, FP)
    expected = np.stack([np.interp(X, XP, e) for e in np.eye(len(XP))], axis=1)
    np.testing.assert_allclose(jac, expected, atol=1e-15)


def with_period(x, fp):
    return np.sum(np.interp(x, XP, fp, period=1.0) ** 2)


def with_unsorted_knots(x, fp):
    """numpy sorts xp (and fp with it) modulo the period, a negative one too."""
    return np.sum(np.interp(x, np.array([3.0, -1.5, 1.0, 6.7, 0.2]), fp, period=-4.0) * x)


def with_period_at_number(x, fp):
    return np.interp(370.0 + x, np.array([0.0, 90.0, 180.0, 270.0, 300.0]), fp, period=360.0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, x", [(with_period, X), (with_period, X + 7.31), (with_unsorted_knots, X * 5.0 + 0.013),
                                  (with_period_at_number, 12.5), (with_period_at_number, -300.0)])
def test_period_wraps_as_numpy_does(f, x, backend):
    """period=: x and xp modulo the period, xp sorted, one knot added each side (numpy's algorithm)."""
    value, grads = irad.value_and_grad(f, argnums=(0, 1), backend=backend)(x, FP)
    assert value == pytest.approx(f(x, FP), rel=1e-13)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(f, (x, FP), i), rtol=1e-6, atol=1e-8)


def zero_period(x):
    return np.interp(x, XP, FP, period=0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_zero_period_raises_as_numpy(backend):
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        zero_period(X)
    with pytest.raises(ValueError, match="period must be a non-zero value"):
        irad.grad(zero_period, backend=backend)(X)


def with_one_point(x):
    return np.interp(x, np.array([0.0]), np.array([1.0]))  # <- refused


def with_a_matrix(x):
    return np.interp(x, XP, np.ones((5, 2)))  # <- refused


@pytest.mark.parametrize("f, message", [
    (with_one_point, "fewer than 2 points"),
    (with_a_matrix, r"vectors of one length, got shapes \(5,\) and \(5, 2\)"),
])
def test_refusals(f, message):
    check_refused(f, (X,), message)
