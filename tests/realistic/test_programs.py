"""The realistic programs on the python backend: every transformation of each
program (tests/realistic/cases.py) against its JAX or central-difference reference,
and two training loops driven by irad's gradients as a user drives them."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.optimize

import irad
from tests.realistic import learning as ml
from tests.realistic.cases import CASES, logistic_args, marked, mlp_args
from tests.realistic.check import check
from tests.reference import central_difference, tree_central_difference


@pytest.mark.parametrize("case", [marked(case, case.refused) for case in CASES])
def test_program(case):
    check(case, "python")


def test_mlp_trained_by_sgd():
    """A few SGD steps on a params dict, each step's gradient from irad."""
    params, x, y = mlp_args()
    loss_and_grad = irad.value_and_grad(ml.mlp_loss)
    first, grads = loss_and_grad(params, x, y)
    by_differences = tree_central_difference(ml.mlp_loss, (params, x, y), 0)
    for name in params:
        np.testing.assert_allclose(grads[name], by_differences[name], rtol=1e-6, atol=1e-8)
    for _ in range(30):
        value, grads = loss_and_grad(params, x, y)
        params = {name: params[name] - 0.1 * grads[name] for name in params}
    assert ml.mlp_loss(params, x, y) < 0.6 * first
    _, grads = loss_and_grad(params, x, y)
    np.testing.assert_allclose(grads["W1"], tree_central_difference(ml.mlp_loss, (params, x, y), 0)["W1"],
                               rtol=1e-6, atol=1e-8)


def test_logistic_regression_by_lbfgsb():
    """scipy.optimize.minimize(L-BFGS-B, jac=irad.grad(loss)) finds the optimum
    that scipy's own finite differences find."""
    w0, X, y, l2 = logistic_args()
    fitted = scipy.optimize.minimize(ml.logistic_loss, w0, args=(X, y, l2), method="L-BFGS-B",
                                     jac=irad.grad(ml.logistic_loss), options={"gtol": 1e-10})
    assert fitted.success
    assert np.max(np.abs(central_difference(ml.logistic_loss, (fitted.x, X, y, l2), 0))) < 1e-6
    by_scipy = scipy.optimize.minimize(ml.logistic_loss, w0, args=(X, y, l2), method="L-BFGS-B",
                                       options={"gtol": 1e-10})
    np.testing.assert_allclose(fitted.x, by_scipy.x, rtol=1e-4, atol=1e-5)
