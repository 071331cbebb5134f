"""Array methods that are numpy functions with the array first (arrays.py's
_METHODS): values against numpy's, gradients against central differences."""

import numpy as np
import pytest

import irad
from tests.reference import central_difference

X = np.random.default_rng(2).normal(size=(3, 3))

CASES = {
    "swapaxes": lambda x: np.sum(x.reshape(1, 3, 3).swapaxes(0, 2) * np.arange(9.0).reshape(3, 3, 1)),
    "cumsum_cumprod": lambda x: np.sum(x.cumsum(axis=1) ** 2) + np.sum(x.cumprod()),
    "argmax_take": lambda x: np.sum(x.take(x.argmax(axis=0)) + x.ravel().take(x.argmin())),
    "any_all": lambda x: np.sum(x) * (2.0 if (x > 0).any() and not (x > 5).all() else 1.0),
    "round": lambda x: np.sum(x.round(1) * x),
    "trace_diagonal": lambda x: x.trace() * np.sum(x.diagonal(1) ** 2),
    "repeat": lambda x: np.sum(x.repeat(2, axis=0) * np.arange(6.0).reshape(6, 1)),
}


@pytest.mark.parametrize("name", CASES)
def test_array_methods_match_numpy(name):
    f = CASES[name]
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-7)


def sorts_in_place(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * np.arange(9.0).reshape(3, 3))


def test_an_in_place_sort_method_is_refused_by_name():
    with pytest.raises(irad.UnsupportedError, match="sort"):
        irad.grad(sorts_in_place)(X)
