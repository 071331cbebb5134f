"""np.logaddexp and np.logaddexp2 near and at a tie (a == b): values as numpy's,
and first and second derivatives exact there (logistic regression's Hessian at
w = 0 ties every logit with 0: the curvature 1/4 must not be dropped), checked
against the closed forms, central differences and JAX."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference

POINTS = np.array([-800.0, -30.0, -1.5, -1.0, -0.999, -0.3, -1e-9, 0.0, 1e-9, 0.3, 0.999, 1.0, 1.5, 30.0, 800.0])


def sigmoid(t):
    return 0.5 * np.tanh(0.5 * t) + 0.5


def test_values_as_numpy():
    for f in (np.logaddexp, np.logaddexp2):
        value, _ = irad.value_and_grad(lambda a, b: np.sum(f(a, b)))(POINTS, 0.25 * POINTS)
        assert value == pytest.approx(np.sum(f(POINTS, 0.25 * POINTS)), rel=1e-15)
        for t in POINTS:
            assert irad.value_and_grad(lambda a: f(a, 0.5))(t + 0.5)[0] == pytest.approx(f(t + 0.5, 0.5), rel=1e-15)


@pytest.mark.parametrize("t", [0.0, 1e-9, -0.5, 0.999, 1.0, 3.0])
def test_first_and_second_derivatives(t):
    first = irad.grad(lambda a: np.logaddexp(a, 0.0))
    second = irad.grad(first)
    assert first(t) == pytest.approx(sigmoid(t), rel=1e-14)
    assert second(t) == pytest.approx(sigmoid(t) * (1 - sigmoid(t)), rel=1e-12)
    second2 = irad.grad(irad.grad(lambda a: np.logaddexp2(0.0, a)))  # d2/da2 log2(1 + 2^a) = ln2 s(1-s), s = sigmoid(a ln2)
    s = sigmoid(t * np.log(2.0))
    assert second2(t) == pytest.approx(np.log(2.0) * s * (1 - s), rel=1e-12)


def negative_log_likelihood(w, X, y):
    logits = X @ w
    return np.sum(np.logaddexp(0.0, logits) - y * logits)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_hessian_of_logistic_regression_at_zero(backend):
    r = np.random.default_rng(0)
    X, y = r.normal(size=(6, 3)), np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    H = irad.hessian(negative_log_likelihood, backend=backend)(np.zeros(3), X, y)
    np.testing.assert_allclose(H, 0.25 * X.T @ X, rtol=1e-13)
    by_differences = np.array([central_difference(lambda w: irad.grad(negative_log_likelihood)(w, X, y)[i],
                                                  (np.zeros(3),), 0) for i in range(3)])
    np.testing.assert_allclose(H, by_differences, rtol=1e-7)
