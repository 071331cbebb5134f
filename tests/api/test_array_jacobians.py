"""Array Jacobians built in IR (irad/jacobians.py): one sweep per element,
assembled with tensor ops, so they compose (jacrev(jacrev(f)), jacfwd(jacrev(f)),
a Jacobian inside a program) and run natively.

Checked against closed forms and central finite differences in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import irad
from tests.reference import central_jacobian

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.native)]

A = np.array([[0.5, -1.0, 0.3], [0.2, 0.4, -0.7]])
X = np.array([0.3, -0.2, 0.5])


def tanh_sum(x):
    return np.sum(np.tanh(A @ x))


def tanh_map(x):
    return np.tanh(A @ x)


def tanh_sum_hessian(x):
    t = np.tanh(A @ x)
    return A.T @ np.diag(-2 * t * (1 - t**2)) @ A


def tanh_map_jacobian(x):
    return np.diag(1 - np.tanh(A @ x) ** 2) @ A


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("jac", [irad.jacrev, irad.jacfwd], ids=["jacrev", "jacfwd"])
def test_jacobian_of_an_array_map(jac, backend):
    got = jac(tanh_map, backend=backend)(X)
    assert got.shape == (2, 3)
    np.testing.assert_allclose(got, tanh_map_jacobian(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, central_jacobian(tanh_map, (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "second",
    [
        lambda f, b: irad.jacrev(irad.jacrev(f), backend=b),
        lambda f, b: irad.jacfwd(irad.jacrev(f), backend=b),
        lambda f, b: irad.jacrev(irad.grad(f), backend=b),
        lambda f, b: irad.jacrev(irad.jacfwd(f), backend=b),
        lambda f, b: irad.hessian(f, backend=b),
    ],
    ids=["jacrev-jacrev", "jacfwd-jacrev", "jacrev-grad", "jacrev-jacfwd", "hessian"],
)
def test_hessian_of_sum_tanh_closed_form(second, backend):
    got = second(tanh_sum, backend)(X)
    np.testing.assert_allclose(got, tanh_sum_hessian(X), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, central_jacobian(irad.grad(tanh_sum), (X,), 0), rtol=1e-6, atol=1e-8)


def sin_weighted(w):
    return np.sum(np.sin(w) * w)


W = np.array([[0.1, 0.2], [0.3, -0.4]])


def test_hessian_of_a_function_of_a_matrix():
    """Shape (2, 2, 2, 2): d2/dW_ij dW_kl of sum(sin(W) W), diagonal in (ij, kl)."""
    want = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            w = W[i, j]
            want[i, j, i, j] = 2 * np.cos(w) - w * np.sin(w)
    for second in (irad.hessian(sin_weighted), irad.jacrev(irad.jacrev(sin_weighted))):
        got = second(W)
        assert got.shape == (2, 2, 2, 2)
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def looped_map(x, n):
    v = x
    for _ in range(n):
        v = np.tanh(A.T @ (A @ v) * 0.5 + v)
    return v


def test_jacobian_of_a_jacobian_through_a_loop():
    """The tape of the inner jacrev's loop, differentiated again (shadow tapes)."""
    got = irad.jacrev(irad.jacrev(looped_map))(X, 2)
    assert got.shape == (3, 3, 3)
    inner = irad.jacrev(looped_map)
    np.testing.assert_allclose(got, central_jacobian(lambda x: inner(x, 2), (X,), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(got, irad.jacfwd(irad.jacrev(looped_map))(X, 2), rtol=1e-10, atol=1e-12)


def jacobian_trace(x):
    return np.sum(irad.jacrev(tanh_map)(x) * A)


def test_an_array_jacobian_inside_a_program():
    got = irad.grad(jacobian_trace)(X)
    np.testing.assert_allclose(got, central_jacobian(jacobian_trace, (X,), 0), rtol=1e-6, atol=1e-8)
    assert jacobian_trace(X) == pytest.approx(np.sum(tanh_map_jacobian(X) * A), rel=1e-12)
