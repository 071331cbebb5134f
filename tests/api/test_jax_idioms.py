"""JAX idioms irad refuses, each with the rewrite its hint gives, and that rewrite
checked against a closed form."""

import numpy as np

import irad
from tests.reference import check_refused

X = np.array([0.3, -0.2, 0.5])


def functional_update(x):
    return np.sum(x.at[0].set(1.0) * x)  # <- refused


def in_place_update(x):
    y = x.copy()
    y[0] = 1.0
    y[1] += 2.0
    return np.sum(y * x)


def test_x_at_is_refused_with_numpy_s_in_place_writes():
    check_refused(functional_update, (X,), r"`x.at\[...\]` is JAX's; irad's arrays are numpy's")
    np.testing.assert_allclose(irad.grad(in_place_update)(X), [1.0, 2 * X[1] + 2.0, 2 * X[2]], rtol=1e-15)
