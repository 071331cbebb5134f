"""numpy's dtypes at irad's value boundary (issue 33, items 1 and 2).

irad's ints are int64 and its bools bool, with numpy's value semantics on
arrays: int64 wraps, `+` of bools is `or`. numpy's other integer dtypes wrap
in their own width and promote by NEP 50, and ndarray subclasses give their
operators other meanings: irad refuses both where they enter (an argument, a
global it reads) with the rewrite, rather than compute other values than
numpy. The references are numpy's own results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irad
from irad.base.errors import UnsupportedError
from irad.ir.types import refusal, type_of_value
from tests.frontend.test_joins import BACKENDS

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

NARROW = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.uint64]


def weighted_centred_sum(w, im):
    return np.sum(w * (im - 128))


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
def test_a_narrow_int_array_argument_is_refused_with_the_rewrite(dtype):
    im = np.array([10, 20, 30], dtype=dtype)
    name = np.dtype(dtype).name
    with pytest.raises(UnsupportedError, match=rf"test_int_dtypes.py:\d+: .*argument 1 \('im'\): im is an array of "
                       rf"dtype {name}: numpy's {name} arithmetic wraps around in \d+ bits(.|\n)*hint: convert it "
                       r"where it enters: x.astype\(np.int64\)"):
        irad.grad(weighted_centred_sum)(np.ones(3), im)
    # the rewrite the hint names gives numpy's value of the int64 program
    value, _ = irad.value_and_grad(weighted_centred_sum)(np.ones(3), im.astype(np.int64))
    assert value == weighted_centred_sum(np.ones(3), im.astype(np.int64))


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
def test_a_narrow_int_scalar_is_refused(dtype):
    with pytest.raises(UnsupportedError, match=rf"n is a scalar of dtype {np.dtype(dtype).name}"):
        irad.grad(lambda x, n: x * n)(1.0, dtype(3))


def test_the_dtypes_irad_takes():
    assert refusal(np.zeros(3)) is None and refusal(np.zeros(3, np.float32)) is None
    assert refusal(np.arange(3)) is None and refusal(np.zeros(3, bool)) is None
    assert refusal(np.int64(3)) is None and refusal(3) is None and refusal(np.bool_(True)) is None
    assert type_of_value(np.uint64(2**63 + 1)) is None  # it would read negative as i64
    assert type_of_value(np.zeros(3, np.uint8)) is None


def scaled_square(x, m):
    return x * np.sum(m * m)


def masked_sum(x, m):
    return x * np.sum(m)


def test_an_ndarray_subclass_argument_is_refused_by_name():
    matrix = np.matrix([[1.0, 2.0], [3.0, 4.0]])  # numpy: m * m is the matrix product
    with pytest.raises(UnsupportedError, match=r"m is a numpy.matrix, an ndarray subclass whose `\*` and `\*\*` are "
                       r"matrix products(.|\n)*hint: pass np.asarray\(x\) and write `@`"):
        irad.grad(scaled_square)(1.0, matrix)
    masked = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])  # numpy's sum skips the 2
    with pytest.raises(UnsupportedError, match=r"m is a masked array \(numpy.ma.MaskedArray\)(.|\n)*hint: pass "
                       r"x.filled\(value\)"):
        irad.grad(masked_sum)(1.0, masked)
    # the rewrites give numpy's values
    assert irad.grad(masked_sum)(1.0, masked.filled(0.0)) == masked_sum(1.0, masked) == 4.0
    assert irad.grad(scaled_square)(1.0, np.asarray(matrix)) == np.sum(np.asarray(matrix) ** 2)


def test_a_subclass_inside_a_pytree_is_refused():
    with pytest.raises(UnsupportedError, match=r"p\['m'\] is a numpy.matrix"):
        irad.grad(lambda x, p: x * np.sum(p["m"]))(1.0, {"m": np.matrix([[1.0]])})


with warnings.catch_warnings(category=PendingDeprecationWarning, action="ignore"):
    GLOBAL_MATRIX = np.matrix([[1.0, 2.0], [3.0, 4.0]])
G = np.arange(3)


def reads_a_global_matrix(x):
    return x * np.sum(GLOBAL_MATRIX * GLOBAL_MATRIX)


def reads_g(x):
    return x * np.sum(G - 1)


def test_a_global_subclass_or_narrow_int_array_is_refused():
    global G
    with pytest.raises(UnsupportedError, match=r"test_int_dtypes.py:\d+:\d+: the value here is a numpy.matrix"):
        irad.grad(reads_a_global_matrix)(1.0)
    assert irad.grad(reads_g)(1.0) == 0.0
    saved, G = G, np.arange(3, dtype=np.uint8)
    try:
        with pytest.raises(UnsupportedError, match=r"the global 'G', an array when .* was compiled, is now an array "
                           r"of dtype uint8(.|\n)*hint: convert it"):
            irad.grad(reads_g)(1.0)
    finally:
        G = saved


# ---- int64 and bool arrays: numpy's semantics ----
def in_place_int(x, a):
    a = a.copy()
    a *= 3
    a //= 2
    a -= 7
    a %= 5
    a += a
    return x * np.sum(a), a


def bools(x, m, n):
    both = m.copy()
    both *= n
    either = m.copy()
    either += n
    return x, m + n, m * n, both, either, m + True


MASKS = (np.array([True, False, False, True]), np.array([True, True, False, False]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_in_place_int_and_bool_arithmetic_is_numpys(backend):
    a = np.array([-9, 0, 4, 2**62, -(2**62)])
    value, int_result = irad.vjp(in_place_int, 1.5, a, backend=backend)[0]
    expected_value, expected = in_place_int(1.5, a)
    assert value == expected_value and int_result.dtype == np.int64 and np.array_equal(int_result, expected)
    got = irad.vjp(bools, 1.0, *MASKS, backend=backend)[0]
    for mine, numpys in zip(got[1:], bools(1.0, *MASKS)[1:]):
        assert mine.dtype == numpys.dtype == np.bool_ and np.array_equal(mine, numpys)


def bool_difference(x, m, n):
    return x, m - n


def int_plus_float_in_place(x, a):
    a = a.copy()
    a += 0.5
    return x * np.sum(a)


def test_what_numpy_refuses_in_int_and_bool_arithmetic_is_refused():
    with pytest.raises(TypeError):
        bool_difference(1.0, *MASKS)
    with pytest.raises(UnsupportedError, match=r"`-` of two bool arrays is not supported \(numpy: TypeError\)"):
        irad.vjp(bool_difference, 1.0, *MASKS)
    with pytest.raises(TypeError):  # numpy's UFuncTypeError
        int_plus_float_in_place(1.0, np.arange(3))
    with pytest.raises(UnsupportedError, match=r"in-place arithmetic on the int64 array 'a' gives float64 here"):
        irad.grad(int_plus_float_in_place)(1.0, np.arange(3))


def int64_beyond_floats(x, a, c, m, n):
    return (x, np.sum(a), np.prod(a[:2]), np.max(a), np.min(a.reshape(2, 2), axis=0), np.sum(m), a < c, a == c,
            np.where(m, a, c), np.where(m, m, n), np.maximum(a, c), np.minimum(a, 2), np.maximum(m, n),
            np.abs(a), np.square(a), np.clip(a, -3, 2**62 + 1), np.add(a, c), np.multiply(m, n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_int64_functions_are_exact_beyond_2_to_the_53(backend):
    # each of these would round if computed in float64 (2**62 + 1 is 2**62 there)
    a = np.array([2**62 + 1, -(2**63), 5, -7])
    c = np.array([2**62, 2**53 + 1, -9, -7])
    m, n = np.array([True, False, True, False]), np.array([True, True, False, False])
    with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
        expected = int64_beyond_floats(1.0, a, c, m, n)
    got = irad.vjp(int64_beyond_floats, 1.0, a, c, m, n, backend=backend)[0]
    for i, (mine, numpys) in enumerate(zip(got, expected)):
        assert np.asarray(mine).dtype == np.asarray(numpys).dtype and np.array_equal(mine, numpys), (i, mine, numpys)


def bool_square(x, m):
    return x, np.square(m)


def test_the_square_of_a_bool_array_is_refused():
    assert bool_square(1.0, MASKS[0])[1].dtype == np.int8  # numpy's
    with pytest.raises(UnsupportedError, match=r"np.square of a bool array is an int8 array in numpy"):
        irad.vjp(bool_square, 1.0, MASKS[0])
