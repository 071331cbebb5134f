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
    "maximum_accumulate": lambda x: np.sum(np.maximum.accumulate(x) ** 2),
    "minimum_accumulate_axis": lambda x: np.sum(np.sin(np.minimum.accumulate(x, axis=1))),
    "logaddexp_accumulate": lambda x: np.sum(np.logaddexp.accumulate(x, axis=1) ** 2),
    "logaddexp_reduce": lambda x: np.sum(np.logaddexp.reduce(3.0 * x) ** 2),
    "logaddexp_reduce_keepdims": lambda x: np.sum(np.logaddexp.reduce(x, axis=1, keepdims=True) * x),
    "logaddexp_reduce_all": lambda x: np.logaddexp.reduce(x, axis=None) + np.logaddexp.reduce(x[0]),
}


@pytest.mark.parametrize("name", CASES)
def test_ufunc_methods_match_numpy(name):
    f = CASES[name]
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.native
def test_ufunc_methods_natively():
    for name in ("subtract_outer", "add_reduce_keepdims", "logaddexp_reduce_keepdims", "logaddexp_reduce_all"):
        f = CASES[name]
        value, g = irad.value_and_grad(f, backend="native")(X)
        assert value == pytest.approx(f(X), rel=1e-12)
        np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-8)


def running_max(x):
    return np.sum(np.maximum.accumulate(x))


def test_a_running_extreme_credits_the_first_element_that_attains_it():
    # numpy's argmax picks the first of equal elements: the running maximum of
    # [1, 3, 3, 2, 5] is the 3 at index 1 until the 5, never the later 3
    x = np.array([1.0, 3.0, 3.0, 2.0, 5.0])
    np.testing.assert_array_equal(irad.grad(running_max)(x), [1.0, 3.0, 0.0, 0.0, 1.0])
    x = np.array([1.0, np.nan, 2.0])  # NaN from the first NaN on, as numpy's
    assert np.isnan(irad.value_and_grad(running_max)(x)[0])
    np.testing.assert_allclose(irad.jvp(running_max, (X,), (np.ones_like(X),))[1],
                               np.sum(central_difference(running_max, (X,), 0)), rtol=1e-6)


def test_running_extremes_of_ints_are_ints():
    def f(x):
        k = np.maximum.accumulate(np.array([1, 3, 2, 5]))
        return np.sum(x[0] * k) + x[0, 0] * (k[1] // 2) + np.sum(np.minimum.accumulate(np.array([4, 2, 3])) * x[1, :3])
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X))
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-9)


def test_running_extremes_of_no_elements_are_empty():
    def f(x):
        return np.sum(x) + np.sum(np.maximum.accumulate(x[:0])) + np.sum(np.logaddexp.accumulate(x[:, :0], axis=1))
    assert irad.value_and_grad(f)(X)[0] == pytest.approx(f(X))


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=pytest.mark.native)])
def test_logaddexp_reduce_of_infinities_as_numpy(backend):
    def f(x):
        rows = np.stack([x, x - np.inf, x + np.inf, np.where(x > 0, np.inf, -np.inf)])
        return np.logaddexp.reduce(rows, axis=1)
    x = np.array([0.5, -1.0, 800.0])  # 800: exp overflows without the shift
    np.testing.assert_array_equal(irad.vjp(f, x, backend=backend)[0], f(x))
    assert f(x)[0] == pytest.approx(800.0) and f(x)[1] == -np.inf


def running_difference(x):
    return np.sum(np.subtract.accumulate(x))


def test_a_method_irad_lacks_is_named_with_its_rewrite():
    with pytest.raises(irad.UnsupportedError, match=r"np\.subtract\.accumulate is not supported") as info:
        irad.grad(running_difference)(X)
    assert "test_ufunc_methods.py:" in str(info.value) and "hint:" in str(info.value)
