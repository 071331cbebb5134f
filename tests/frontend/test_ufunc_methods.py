"""numpy's ufunc methods (irad/frontend/ufunc_methods.py): outer, reduce and
accumulate, against numpy's values and central differences; the others refused
by name with a rewrite."""

import numpy as np
import pytest

import irad
from tests.reference import central_difference

X = np.random.default_rng(1).normal(size=(3, 4))

CASES = {
    "subtract_outer": lambda x: np.sum(np.subtract.outer(x[0], x[1]) ** 2),
    "multiply_outer_2d": lambda x: np.sum(np.sin(np.multiply.outer(x, x[0]))),
    "hypot_outer": lambda x: np.sum(np.hypot.outer(x[0], x[2])),
    "add_reduce": lambda x: np.sum(np.add.reduce(x) ** 2),
    "add_reduce_keepdims": lambda x: np.sum(np.add.reduce(x, axis=1, keepdims=True) * x),
    "maximum_reduce": lambda x: np.sum(np.maximum.reduce(x, axis=1)),
    "multiply_accumulate": lambda x: np.sum(np.multiply.accumulate(x) ** 2),
    "add_accumulate_axis": lambda x: np.sum(np.add.accumulate(x, axis=1) ** 2),
}


@pytest.mark.parametrize("name", CASES)
def test_ufunc_methods_match_numpy(name):
    f = CASES[name]
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.native
def test_ufunc_methods_natively():
    for name in ("subtract_outer", "add_reduce_keepdims"):
        f = CASES[name]
        value, g = irad.value_and_grad(f, backend="native")(X)
        assert value == pytest.approx(f(X), rel=1e-12)
        np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-8)


def running_max(x):
    return np.sum(np.maximum.accumulate(x))


def test_a_method_irad_lacks_is_named_with_its_rewrite():
    with pytest.raises(irad.UnsupportedError, match=r"np\.maximum\.accumulate is not supported") as info:
        irad.grad(running_max)(X)
    assert "test_ufunc_methods.py:" in str(info.value) and "hint:" in str(info.value)
