"""scipy.linalg's solvers and factorisations (irad/scipy_linalg.py): values
against scipy's own, gradients against central differences of scipy's
functions, each reading only the triangle scipy reads."""

import numpy as np
import pytest
import scipy.linalg as sla

import irad
rng = np.random.default_rng(5)
A = rng.normal(size=(4, 4))
SPD = A @ A.T + 4 * np.eye(4)
B = rng.normal(size=(4, 2))
b = rng.normal(size=4)
SKEWED = SPD + np.triu(rng.normal(size=(4, 4)), 1)   # not symmetric: which triangle is read matters


def central(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


CASES = {
    "cholesky upper": (lambda a: np.sum(sla.cholesky(a) * A), SKEWED),
    "cholesky lower": (lambda a: np.sum(sla.cholesky(a, lower=True) * A), SKEWED),
    "cho_factor and cho_solve": (lambda a: np.sum(sla.cho_solve(sla.cho_factor(a), B) * B), SKEWED),
    "cho_factor lower": (lambda a: np.sum(sla.cho_factor(a, lower=True)[0] * A)
                         + np.sum(sla.cho_solve(sla.cho_factor(a, lower=True), b) * b), SKEWED),
    "solve_triangular lower": (lambda a: np.sum(sla.solve_triangular(a, b, lower=True) ** 2), SPD),
    "solve_triangular upper, transposed": (lambda a: np.sum(sla.solve_triangular(a, B, trans="T") * B), SPD),
    "solve_triangular unit diagonal": (lambda a: np.sum(sla.solve_triangular(a, b, lower=True, unit_diagonal=True)), A),
    "solve": (lambda a: np.sum(sla.solve(a, B) ** 2), A),
    "solve transposed": (lambda a: np.sum(sla.solve(a, b, transposed=True) ** 2), A),
    "solve sym": (lambda a: np.sum(sla.solve(a, b, assume_a="sym") ** 2), SKEWED),
    "solve pos lower": (lambda a: np.sum(sla.solve(a, B, assume_a="pos", lower=True) ** 2), SKEWED),
    "solve diagonal": (lambda a: np.sum(sla.solve(a, B, assume_a="diagonal") ** 2), SPD),
    "solve tridiagonal": (lambda a: np.sum(sla.solve(a, b, assume_a="tridiagonal") ** 2), SPD),
    "inv": (lambda a: np.sum(sla.inv(a) * A), A),
    "det": (lambda a: sla.det(a), A),
    "eigh values": (lambda a: np.sum(sla.eigh(a, eigvals_only=True) * np.arange(4.0)), SKEWED),
    "eigh upper": (lambda a: np.sum(sla.eigh(a, lower=False)[0] ** 2), SKEWED),
    "block_diag": (lambda a: np.sum(sla.block_diag(a[:2, :2], a[2:, 3], 2.0) * np.arange(20.0).reshape(4, 5)), A),
}


@pytest.mark.parametrize("name", CASES)
def test_values_and_gradients_against_scipy(name):
    f, a = CASES[name]
    value, g = irad.value_and_grad(f)(a)
    assert np.isclose(value, f(a), rtol=1e-10)
    assert np.allclose(g, central(f, a), rtol=1e-5, atol=1e-7)


def test_scipy_errors_are_scipy_errors():
    bad = SPD.copy()
    bad[0, 0] = np.nan
    f = irad.grad(lambda a: np.sum(sla.solve(a, b)))
    with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
        sla.solve(bad, b)
    with pytest.raises(ValueError, match="array must not contain infs or NaNs"):
        f(bad)
    # check_finite=False: no check, as in scipy (NaN propagates)
    assert np.isnan(irad.grad(lambda a: np.sum(sla.solve(a, b, check_finite=False)))(bad)).any()
    with pytest.raises(ValueError, match="assume_a='banded'"):
        irad.grad(lambda a: np.sum(sla.solve(a, b, assume_a="banded")))(SPD)
