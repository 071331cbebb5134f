"""A function whose result is a float array of shape () (np.polyval at a
scalar x, np.squeeze of a (1, 1) array, x @ x of vectors) is differentiated by
grad, value_and_grad, the Jacobians and hessian as JAX does; checked against
closed forms and central differences on both backends (issue 32)."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, central_jacobian


def polynomial_at_half(coef):
    return np.polyval(coef, 0.5)


def polynomial_in_x(x):
    return np.polyval(np.array([0.5, -1.0, 2.0, 0.3]), x)


def squeezed(x):
    return np.squeeze(np.sin(x).reshape(1, 1)) * np.squeeze(x.reshape(1, 1))


def dot_of_vectors(x):
    return x @ x


def kron_of_scalars(a, b):
    return np.kron(a, b) * a


COEF = np.array([0.5, -1.0, 2.0, 0.3])


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradients_of_a_zero_d_result(backend):
    value, grad = irad.value_and_grad(polynomial_at_half, backend=backend)(COEF)
    np.testing.assert_allclose(value, np.polyval(COEF, 0.5), rtol=1e-14)
    np.testing.assert_allclose(grad, 0.5 ** np.arange(3, -1, -1), rtol=1e-14)  # d/dc_k = x**(3-k)
    x = np.array([0.7])
    np.testing.assert_allclose(irad.grad(squeezed, backend=backend)(x), np.cos(0.7) * 0.7 + np.sin(0.7), rtol=1e-13)


def test_jacobians_and_hessians_of_a_zero_d_result():
    x = np.array([0.7])
    np.testing.assert_allclose(irad.jacrev(squeezed)(x), central_jacobian(squeezed, (x,), 0), rtol=1e-7)
    np.testing.assert_allclose(irad.jacfwd(polynomial_at_half)(COEF), 0.5 ** np.arange(3, -1, -1), rtol=1e-14)
    np.testing.assert_allclose(irad.hessian(squeezed)(x), [[-np.sin(0.7) * 0.7 + 2 * np.cos(0.7)]], rtol=1e-13)
    # p(x) = 0.5 x^3 - x^2 + 2x + 0.3: p'' = 3x - 2
    np.testing.assert_allclose(irad.grad(polynomial_in_x)(0.3), central_difference(polynomial_in_x, (0.3,), 0), rtol=1e-8)
    np.testing.assert_allclose(irad.hessian(polynomial_in_x)(0.3), 3 * 0.3 - 2, rtol=1e-12)


def test_products_that_numpy_makes_zero_d():
    x = np.array([0.3, -1.2, 2.0])
    np.testing.assert_allclose(irad.grad(dot_of_vectors)(x), 2 * x, rtol=1e-15)
    ga, gb = irad.grad(kron_of_scalars, argnums=(0, 1))(3.0, 2.0)  # a**2 b
    assert (ga, gb) == (12.0, 9.0)


def test_an_array_result_is_still_refused_with_its_shape():
    with pytest.raises(irad.IradError, match=r"must return one float.*shape \(3,\)"):
        irad.grad(dot_like_vector)(np.ones(3))


def dot_like_vector(x):
    return x * 2.0


def outer_with_knots(x, knots):
    return np.sum(np.expand_dims(x, -1) * knots)


def calls_outer(x):
    return outer_with_knots(x, np.array([1.0, 2.0])) * x


def test_expand_dims_of_a_number_in_a_helper():
    """np.expand_dims of a run-time number: an array of shape (1,) (it built a tensor.reshape of an f64)."""
    assert irad.grad(calls_outer)(1.5) == pytest.approx(2 * 3.0 * 1.5, rel=1e-15)
