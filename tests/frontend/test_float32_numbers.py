"""numpy's float32 numbers and NEP 50 (numpy 2): a Python float is weak, an
np.float64 (or np.int64) number is not, so `x32 * np.float64(1.1)` is float64
and `x32 * 1.1` float32; an np.float32 number is computed in float32 (irad
holds it as f64, rounded to float32 after each operation, where numpy's
overflows to inf); a float32 number's cotangent is an np.float32. Each value
against numpy's own, on the Python backend and natively."""

import numpy as np
import pytest

import irad
from tests.reference import NATIVE_MISSING

BACKENDS = ["python", pytest.param("native", marks=[
    pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]

X32 = np.array([0.25, 1.5, -3.0], dtype=np.float32)


def by_numpy_float64(x):
    return x * np.float64(1.1)


def by_python_float(x):
    return x * 1.1


def by_float64_element(x, y):
    return x * y[0]


def by_own_element(x):
    return x * (x[0] * 2.0)


def by_argument(x, s):
    return x * s


@pytest.mark.parametrize("f, args", [
    (by_numpy_float64, (X32,)), (by_python_float, (X32,)), (by_float64_element, (X32, np.ones(2))),
    (by_own_element, (X32,)), (by_argument, (X32, np.float64(1.1))), (by_argument, (X32, 1.1)),
    (by_argument, (X32, np.float32(1.1))), (by_argument, (X32, np.int64(3))),
], ids=["np.float64", "python float", "float64 element", "float32 element", "np.float64 argument",
        "float argument", "np.float32 argument", "np.int64 argument"])
def test_an_array_times_a_number_has_numpys_dtype(f, args):
    want = f(*args)
    got = irad.vjp(f, *args)[0]
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


def overflowing(s):
    return s * 1e20 * 1e20


def squared_then_less(s, x):
    t = (s * 3.0) ** 2 - s
    for v in x:
        t -= v  # np.float32 - np.float32, in float32
    return t


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_np_float32_number_is_computed_in_float32(backend):
    with np.errstate(over="ignore"):
        assert irad.value_and_grad(overflowing, backend=backend)(np.float32(3.0))[0] == np.inf
    s, x = np.float32(0.1), np.array([0.3, 1e-9, 0.7], dtype=np.float32)
    value, (ds, dx) = irad.value_and_grad(squared_then_less, argnums=(0, 1), backend=backend)(s, x)
    assert value == squared_then_less(s, x)  # the float32 roundings, not float64's value
    assert value != float(squared_then_less(np.float64(s), x.astype(np.float64)))
    assert type(ds) is np.float32  # 18 s - 1, from float32-rounded intermediates
    assert abs(float(ds) - (18 * float(s) - 1)) <= 4 * np.finfo(np.float32).eps
    assert dx.dtype == np.float32 and np.array_equal(dx, -np.ones(3, np.float32))


def tree_loss(t):
    return t["a"] * t["a"] + np.sum(t["b"] * 2.0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_float32_leafs_cotangent_is_an_np_float32(backend):
    g = irad.grad(tree_loss, backend=backend)
    for _ in range(2):  # the general path, then the call entry
        got = g({"a": np.float32(2.0), "b": X32})
        assert type(got["a"]) is np.float32 and got["a"] == 4.0
        assert got["b"].dtype == np.float32
