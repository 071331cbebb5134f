"""What numpy functions, array methods and operators return has numpy's dtype
(held_ints.record converts irad's value where irad computes in another dtype;
docs/python-subset.md#dtypes-of-results-numpys), or the call is refused. The
sweep of the whole numpy table is test_numpy_sweep_masks.py; here methods,
operators with Python numbers (NEP 50) and the exactness check.

Each of these returned float64 before where numpy's is int64 (np.trace,
np.sign, np.round, np.polyval, `@` of ints, x.round(), x.trace()), or int64
where numpy's is int8 (`//` and `%` of bools)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irad
from irad.base.errors import RuntimeCheckError, UnsupportedError
from tests.reference import BACKENDS


def methods(x):
    return (x.clip(0, 2), x.round(), x.trace(), x.cumsum(), x.mean(), x.max(axis=0), x.prod(axis=1), x.sum(),
            np.trace(x), np.sign(x), np.round(x), np.around(x), np.clip(x, -1, 1), np.polyval(x[0], x[1]), x @ x)


def with_python_numbers(x):
    return x + 1, x * 2, x - True, x // 2, x % 3, x + 1.5, x * np.float32(2), -x, x ** 2, x / 2


def of_masks(m):
    return (m // True, m % True, np.floor_divide(m, m | True), np.mod(m, True), np.sort(m, axis=0), m @ m,
            np.max(m, axis=1), np.clip(m, 0, 1), np.trace(m))


ARRAYS = {"int64": np.array([[2, -1, 0], [3, 1, -2], [0, 4, 1]]),
          "int32": np.array([[2, -1, 0], [3, 1, -2], [0, 4, 1]], np.int32),
          "int8": np.array([[100, -1, 0], [3, 127, -2], [0, 4, -128]], np.int8),
          "uint8": np.array([[255, 1, 0], [3, 127, 2], [0, 4, 200]], np.uint8),
          "bool": np.array([[True, False, True], [False, False, True], [True, True, False]])}


def _same_or_refused(f, x, backend):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            want = f(x)
    except TypeError:  # np.sign of bools: irad raises too
        with pytest.raises(UnsupportedError):
            irad.vjp(f, x, backend=backend)
        return 0
    try:
        got = irad.vjp(f, x, backend=backend)[0]
    except UnsupportedError:
        return 0
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and np.allclose(g, w, rtol=1e-6), (f.__name__, k, g, w)
    return 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", list(ARRAYS))
def test_methods_and_operators_give_numpys_dtypes(dtype, backend):
    """Each program's results, all of them, have numpy's values and dtypes, or it is refused
    (the narrow ints' float results in float16, their numbers: irad does not have them), or
    raises where numpy does."""
    x = ARRAYS[dtype]
    values = sum(_same_or_refused(f, x, backend) for f in (methods, with_python_numbers, of_masks))
    assert values >= (3 if dtype == "int64" else 1)


def narrow_plus_big_python_int(x):
    return x + 300


def test_a_python_int_beyond_a_narrow_dtype_is_refused_as_numpy_raises():
    x = ARRAYS["int8"]
    with pytest.raises(OverflowError):
        narrow_plus_big_python_int(x)
    with pytest.raises(UnsupportedError, match="Python integer 300 out of bounds for int8"):
        irad.vjp(narrow_plus_big_python_int, x)


def uint8_wraps(x):
    return x + 1, x * 2, x - 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_uint8_arithmetic_with_python_ints_wraps_as_numpy(backend):
    x = ARRAYS["uint8"]
    for g, w in zip(irad.vjp(uint8_wraps, x, backend=backend)[0], uint8_wraps(x)):
        assert g.dtype == w.dtype == np.uint8 and np.array_equal(g, w)


def int_results_computed_in_float(x):
    return np.trace(x), x @ x


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_int_computed_in_float_beyond_2_53_raises(backend):
    """irad's float would have rounded (numpy's int64 is exact): a RuntimeCheckError
    naming the line, not a rounded int; within 2**53 numpy's values."""
    small = np.array([[2**26, 1], [3, -2**26]])
    for g, w in zip(irad.vjp(int_results_computed_in_float, small, backend=backend)[0],
                    int_results_computed_in_float(small)):
        assert np.asarray(g).dtype == np.int64 and np.array_equal(g, w)
    with pytest.raises(RuntimeCheckError, match="exact up to 2\\*\\*53"):
        irad.vjp(int_results_computed_in_float, np.array([[2**62, 1], [3, 2**62]]), backend=backend)


def sine_of_a_mask(m):
    return np.sin(m)


def test_a_float16_result_is_refused():
    with pytest.raises(UnsupportedError, match="float16 in numpy, a dtype irad does not have"):
        irad.vjp(sine_of_a_mask, ARRAYS["bool"])
