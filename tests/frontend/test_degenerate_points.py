"""Reductions at degenerate points: np.prod's derivatives where elements are
zero (against JAX, which multiplies the others), and max/min over no
elements (one irad error at lowering on every backend)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import irad
from irad.base.errors import UnsupportedError
from tests.reference import NATIVE_MISSING

jax.config.update("jax_enable_x64", True)

BACKENDS = ["python", pytest.param("native", marks=[
    pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]

WEIGHTS = np.array([1.0, -2.0])


def row_products(x):
    return np.sum(np.prod(x, axis=1) * WEIGHTS) + np.prod(x)


def row_products_jax(x):
    return jnp.sum(jnp.prod(x, axis=1) * WEIGHTS) + jnp.prod(x)


POINTS = [
    np.array([[2.0, 0.0, 3.0], [1.5, -4.0, 0.5]]),  # one zero
    np.array([[0.0, 0.0, 3.0], [1.5, -4.0, 0.5]]),  # two in a row
    np.array([[0.0, 0.0, 0.0], [0.0, -4.0, 0.5]]),  # three, and one more in all
    np.array([[2.0, 0.7, 3.0], [1.5, -4.0, 0.5]]),  # none
]


@pytest.mark.parametrize("backend", BACKENDS)
def test_product_gradient_with_zero_elements_is_the_product_of_the_others(backend):
    g = irad.grad(row_products, backend=backend)
    for x in POINTS:
        np.testing.assert_allclose(g(x), jax.grad(row_products_jax)(x), rtol=1e-13, atol=0)


def test_product_second_derivatives_and_tangents_with_zero_elements():
    """The Hessian (forward over reverse) is JAX's too, cross terms between
    two zeros included, and so are the forward rule's tangents."""
    for x in POINTS:
        np.testing.assert_allclose(irad.hessian(row_products)(x), jax.hessian(row_products_jax)(x), rtol=1e-13,
                                   atol=1e-12)
        t = np.arange(6.0).reshape(2, 3) - 2.5
        (_, tangent) = irad.jvp(row_products, (x,), (t,))
        np.testing.assert_allclose(tangent, jax.jvp(row_products_jax, (x,), (t,))[1], rtol=1e-13, atol=0)


def largest(x):
    return np.max(x)


def smallest_by_row(x):
    return np.sum(x.min(axis=1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_max_and_min_over_no_elements_is_one_irad_error(backend):
    with pytest.raises(UnsupportedError, match=r"test_degenerate_points.py:\d+:\d+: np.max over no elements "
                                               r"\(an array of shape \(0,\), axes \(0,\)\)"):
        irad.grad(largest, backend=backend)(np.zeros(0))
    with pytest.raises(UnsupportedError, match=r"np.min over no elements"):
        irad.grad(smallest_by_row, backend=backend)(np.zeros((2, 0)))


def test_max_over_a_non_empty_axis_of_an_empty_array_is_empty():
    """numpy: np.max(np.zeros((0, 3)), axis=1) is an empty array, no error."""
    assert irad.grad(smallest_by_row)(np.zeros((0, 3))).shape == (0, 3)
