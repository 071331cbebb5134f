"""np.linalg.lstsq (irad/numpy_python.py): its 4-tuple against numpy's, the
solution's gradient against central differences, its forward mode against
JAX's lstsq."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import irad
from tests.reference import central_difference

jax.config.update("jax_enable_x64", True)
RNG = np.random.default_rng(11)
A = RNG.normal(size=(6, 3))
B = RNG.normal(size=(6, 2))
b = RNG.normal(size=6)


def solution_energy(a, b):
    x = np.linalg.lstsq(a, b, rcond=None)[0]
    return np.sum(x ** 2) + np.sum(np.sin(x))


def whole_tuple(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x * x) + np.sum(residuals) * rank + np.sum(s ** 2)


@pytest.mark.parametrize("rhs", [b, B], ids=["vector", "matrix"])
def test_the_tuple_is_numpys(rhs):
    def parts(a, r):
        x, residuals, rank, s = np.linalg.lstsq(a, r)
        return np.sum(x * np.arange(1.0, x.size + 1).reshape(x.shape)) + 3.0 * np.sum(residuals) + 7.0 * rank \
            + np.sum(s * np.arange(1.0, 4.0))
    value, (ga, gb) = irad.value_and_grad(parts, argnums=(0, 1))(A, rhs)
    assert value == pytest.approx(parts(A, rhs), rel=1e-11)
    np.testing.assert_allclose(ga, central_difference(parts, (A, rhs), 0), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gb, central_difference(parts, (A, rhs), 1), rtol=1e-6, atol=1e-7)


def test_gradient_of_the_solution():
    for a in (A, A @ np.diag([1.0, 1e-2, 3.0])):  # tall, well and less well conditioned
        value, (ga, gb) = irad.value_and_grad(solution_energy, argnums=(0, 1))(a, b)
        assert value == pytest.approx(solution_energy(a, b), rel=1e-11)
        np.testing.assert_allclose(ga, central_difference(solution_energy, (a, b), 0), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(gb, central_difference(solution_energy, (a, b), 1), rtol=1e-6, atol=1e-8)


def test_a_wide_system_gives_the_minimum_norm_solution_and_no_residuals():
    wide = A.T  # 3 x 6
    def f(a, r):
        x, residuals, rank, s = np.linalg.lstsq(a, r)
        return np.sum(x ** 2) + residuals.shape[0] + rank
    assert irad.value_and_grad(f)(wide, b[:3])[0] == pytest.approx(f(wide, b[:3]), rel=1e-11)
    np.testing.assert_allclose(irad.grad(f)(wide, b[:3]), central_difference(f, (wide, b[:3]), 0), rtol=1e-6)


def test_rank_deficient_residuals_are_nan_where_numpy_gives_none():
    a = np.column_stack([A[:, 0], A[:, 0], A[:, 1]])  # rank 2
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    assert rank == 2 and residuals.shape == (0,)
    def solution(a, r):
        return np.sum(np.linalg.lstsq(a, r)[0] * np.arange(1.0, 4.0))
    assert irad.value_and_grad(solution)(a, b)[0] == pytest.approx(solution(a, b), rel=1e-10)
    def rank_of(a, r):
        x, residuals, rank, s = np.linalg.lstsq(a, r)
        return float(rank) + np.sum(np.isnan(residuals)) * 10.0
    assert irad.value_and_grad(rank_of)(a, b)[0] == 12.0


@pytest.mark.parametrize("rcond", [-1.0, 1e-3, 0.5])
def test_rcond_drops_the_small_singular_values_as_numpy(rcond):
    a = A @ np.diag([1.0, 1e-2, 3.0])
    def f(a, r):
        x, residuals, rank, s = np.linalg.lstsq(a, r, rcond=rcond)
        return np.sum(x * np.arange(1.0, 4.0)) + 10.0 * rank + np.sum(np.nan_to_num(residuals, nan=-7.0))
    assert irad.value_and_grad(f)(a, b)[0] == pytest.approx(
        f(a, b) if rcond != 0.5 else f(a, b) - 7.0, rel=1e-10)  # rank 2 at 0.5: irad's residuals are NaN


def test_forward_mode_against_jax():
    ta, tb = RNG.normal(size=A.shape), RNG.normal(size=b.shape)
    value, tangent = irad.jvp(solution_energy, (A, b), (ta, tb))
    jf = lambda a, r: jnp.sum(jnp.linalg.lstsq(a, r)[0] ** 2) + jnp.sum(jnp.sin(jnp.linalg.lstsq(a, r)[0]))
    expected_value, expected_tangent = jax.jvp(jf, (A, b), (ta, tb))
    assert value == pytest.approx(float(expected_value), rel=1e-11)
    assert tangent == pytest.approx(float(expected_tangent), rel=1e-8)


@pytest.mark.native
def test_natively():
    value, g = irad.value_and_grad(whole_tuple, backend="native")(A, B)
    assert value == pytest.approx(whole_tuple(A, B), rel=1e-11)
    np.testing.assert_allclose(g, central_difference(whole_tuple, (A, B), 0), rtol=1e-6, atol=1e-7)
