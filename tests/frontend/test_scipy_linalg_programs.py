"""scipy.linalg in the programs that use it (irad/scipy_linalg.py): a Gaussian
process's cho_factor/cho_solve, triangular solves, general solves, and expm;
scipy's values, the triangle scipy reads (a derivative of 0 in the other one),
gradients against central differences in float64, on both backends.
test_scipy_linalg.py checks each function and parameter alone."""

import numpy as np
import pytest
import scipy.linalg

import irad
from tests.reference import BACKENDS, central_difference

R = np.random.default_rng(0)
A = R.normal(size=(4, 4))
SPD = A @ A.T + 4.0 * np.eye(4)
NONSYM = R.normal(size=(4, 4)) + 4.0 * np.eye(4)  # scipy reads one triangle of it
B = R.normal(size=(4, 2))
b = R.normal(size=4)


def gp_style(K, y):
    """The Gaussian-process idiom: cho_factor once, cho_solve, log-det from the diagonal."""
    c, low = scipy.linalg.cho_factor(K)
    alpha = scipy.linalg.cho_solve((c, low), y)
    return 0.5 * y @ alpha + np.sum(np.log(np.diag(c)))


def lower_factor(K, Y):
    L = scipy.linalg.cholesky(K, lower=True)
    X = scipy.linalg.solve_triangular(L, Y, lower=True)
    return np.sum(scipy.linalg.solve_triangular(L, X, trans="T", lower=True) * Y) + np.sum(scipy.linalg.cholesky(K))


def factor_entries(K, y):
    """c's other triangle holds K's own entries (as LAPACK leaves them)."""
    c, _ = scipy.linalg.cho_factor(K, lower=True, check_finite=False)
    cu, _ = scipy.linalg.cho_factor(K)
    return np.sum(c * K) + np.sum(cu ** 2) + np.sum(scipy.linalg.solve_triangular(K, y, unit_diagonal=True) ** 2)


def general_solves(M, y):
    return (np.sum(scipy.linalg.solve(M, y) ** 2) + np.sum(scipy.linalg.solve(M, y, assume_a="sym"))
            + np.sum(scipy.linalg.solve(M, y, assume_a="pos", lower=True) ** 2)
            + 1e-4 * scipy.linalg.det(M) + np.sum(scipy.linalg.inv(M)) + np.sum(scipy.linalg.solve_triangular(M, y, trans=1)))


PROGRAMS = {
    "gp_style": (gp_style, (SPD, b)),
    "lower_factor": (lower_factor, (SPD, B)),
    "factor_entries": (factor_entries, (SPD, b)),
    "general_solves": (general_solves, (NONSYM + NONSYM.T, b)),  # symmetric: 'pos' on an spd matrix
    "one_triangle_read": (lambda M, y: np.sum(scipy.linalg.solve(M, y, assume_a="sym") ** 2), (NONSYM, b)),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_values_and_gradients(name):
    f, args = PROGRAMS[name]
    value, grads = irad.value_and_grad(f, argnums=(0, 1))(*args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    for i in (0, 1):
        np.testing.assert_allclose(grads[i], central_difference(f, args, i), rtol=1e-6, atol=1e-7,
                                   err_msg=f"{name}: d/d arg {i}")


def test_the_triangle_scipy_does_not_read_gets_no_derivative():
    grad = irad.grad(lambda M: np.sum(scipy.linalg.solve_triangular(M, b, lower=True) ** 2))(NONSYM)
    assert np.all(np.triu(grad, 1) == 0.0) and np.any(np.tril(grad) != 0.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_both_backends(backend):
    value, grad = irad.value_and_grad(gp_style, backend=backend)(SPD, b)
    np.testing.assert_allclose(value, gp_style(SPD, b), rtol=1e-12)
    np.testing.assert_allclose(grad, central_difference(gp_style, (SPD, b), 0), rtol=1e-6, atol=1e-8)


def test_what_irad_lacks_is_named_as_scipys():
    with pytest.raises(irad.UnsupportedError, match="the scipy function scipy.linalg.sqrtm is not supported"):
        irad.grad(lambda M: np.sum(scipy.linalg.sqrtm(M)))(SPD)


# ---- expm: scaling and squaring by a run-time count --------------------------------------------
@pytest.mark.parametrize("scale", [0.0, 1e-3, 0.7, 6.0])
def test_expm_values_and_gradients(scale):
    M = np.random.default_rng(1).normal(size=(3, 3)) * scale
    W = np.random.default_rng(2).normal(size=(3, 3))

    def f(M):
        return np.sum(scipy.linalg.expm(M) * W)

    value, grad = irad.value_and_grad(f)(M)
    np.testing.assert_allclose(value, f(M), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(grad, central_difference(f, (M,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_expm_of_a_generator_forward_and_reverse(backend):
    Q = np.array([[-0.5, 0.3, 0.2], [0.1, -0.4, 0.3], [0.2, 0.2, -0.4]])
    rows = irad.jacfwd(lambda t: scipy.linalg.expm(Q * t).sum(axis=1), backend=backend)(2.0)
    np.testing.assert_allclose(rows, 0.0, atol=1e-13)  # a generator's exponential keeps rows summing to 1
    jac = irad.jacrev(lambda t: scipy.linalg.expm(Q * t), backend=backend)(1.5)
    np.testing.assert_allclose(jac, Q @ scipy.linalg.expm(1.5 * Q), rtol=1e-12, atol=1e-14)
