"""numpy's dtypes at irad's value boundary (issue 33, items 1 and 2).

Int and bool arrays keep numpy's value semantics: int64 wraps, `+` of bools
is `or`, and the narrow dtypes (int8 ... uint64) wrap in their own width and
promote by NEP 50. Numbers of a narrow dtype, and what irad does not compute
as numpy, are refused at the line; ndarray subclasses, whose operators mean
other things, where they enter. The references are numpy's own results."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irad
from irad.base.errors import RuntimeCheckError, UnsupportedError
from irad.ir.types import refusal, type_of_value
from tests.frontend.test_joins import BACKENDS

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

NARROW = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


def weighted_centred_sum(w, im):
    return np.sum(w * (im - 128))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_uint8_image_wraps_as_numpys(backend):
    im = np.array([10, 200, 128], dtype=np.uint8)  # im - 128 stays uint8: [138, 72, 0]
    value, grad = irad.value_and_grad(weighted_centred_sum, backend=backend)(np.ones(3), im)
    assert value == weighted_centred_sum(np.ones(3), im) == 210.0
    assert np.array_equal(grad, [138.0, 72.0, 0.0])  # the conversion to float64 is exact


def narrow_arithmetic(x, a, b, k):
    c = a.copy()
    c *= 3
    c //= 2
    c += b
    c -= k
    return (x * 1.0, c, a - b, a * b, a // b, a % b, -a, a & b, a | 6, a ^ b, a < b, a >= 3, a == b,
            np.where(a > b, a, 7), np.maximum(a, b), np.minimum(a, 5), np.abs(a), np.clip(a, 1, 100),
            np.max(a, axis=0), np.min(a, axis=1), np.mean(a), a / 3, a + True, a.astype(np.int64) * 1000,
            a.astype(np.float64) * 0.5, a * 2.5, a * np.float32(2), a + a.astype(np.int16), a - np.int64(3),
            np.arange(5.0)[b % 3], np.full_like(a, 7), np.zeros(2, dtype=np.uint16) + 1)


def narrow_sums(x, a):
    return x * 1.0, np.sum(a, axis=0), np.prod(a, axis=1), np.sum(a), x * np.sum(a), np.cumsum(a), np.cumprod(a, axis=1)


def narrow_arguments(dtype):
    info = np.iinfo(dtype)
    a = np.array([[info.max, info.min, 3], [info.max - 1, 7, 0]], dtype)
    b = np.array([[1, 2, 3], [info.max, 0, info.min + 1]], dtype)
    return 1.5, a, b, 5


def assert_numpys(got, expected):
    for i, (mine, numpys) in enumerate(zip(got, expected)):
        mine, numpys = np.asarray(mine), np.asarray(numpys)
        assert mine.dtype == numpys.dtype and np.array_equal(mine, numpys), (i, mine, numpys)


@pytest.mark.parametrize("dtype", NARROW, ids=lambda d: np.dtype(d).name)
def test_narrow_int_arrays_compute_as_numpy(dtype):
    """numpy's values and dtypes, wrapping in the dtype's width, by NEP 50
    (a Python int takes the array's dtype), 64-bit sums and products."""
    args = narrow_arguments(dtype)
    with warnings.catch_warnings(action="ignore", category=RuntimeWarning):  # numpy warns of // 0
        expected = narrow_arithmetic(*args)
    assert_numpys(irad.vjp(narrow_arithmetic, *args)[0], expected)
    if np.dtype(dtype).kind == "i":  # int64 sums and products, wrapping
        assert_numpys(irad.vjp(narrow_sums, *args[:2])[0], narrow_sums(*args[:2]))
    else:  # numpy's are uint64
        with pytest.raises(UnsupportedError, match=rf"the sum or product of a {np.dtype(dtype).name} array is uint64"):
            irad.vjp(narrow_sums, *args[:2])


@pytest.mark.native
@pytest.mark.parametrize("dtype", [np.int16, np.uint8], ids=lambda d: np.dtype(d).name)
def test_narrow_int_arrays_compute_as_numpy_natively(dtype):
    args = narrow_arguments(dtype)
    with warnings.catch_warnings(action="ignore", category=RuntimeWarning):
        expected = narrow_arithmetic(*args)
    assert_numpys(irad.vjp(narrow_arithmetic, *args, backend="native")[0], expected)


def test_uint64_is_refused_with_the_rewrite():
    a = np.array([2**64 - 1, 2**63 + 5, 3], np.uint64)  # above 2**63: no int64 holds them
    with pytest.raises(UnsupportedError, match=r"a is an array of dtype uint64(.|\n)*hint: convert it where it enters"):
        irad.vjp(lambda x, a: (x, a + 1), 1.0, a)


def plus(x, a, k):
    return x * 1.0, a + k


def element_plus_one(x, a):
    return x * 1.0, a[0] + 1


def full_max(x, a):
    return x * np.max(a)


def square_root(x, a):
    return x * np.sum(np.sqrt(a))


def test_what_irad_does_not_compute_as_numpy_is_refused_at_the_line():
    a = np.array([200, 3], np.uint8)
    with pytest.raises(OverflowError):  # numpy 2: a Python int must fit the array's dtype
        plus(1.0, a, 300)
    with pytest.raises(RuntimeCheckError, match=r"test_int_dtypes.py:\d+:\d+: Python integer out of bounds for uint8"):
        irad.vjp(plus, 1.0, a, 300)
    assert np.array_equal(irad.vjp(plus, 1.0, a, 100)[0][1], plus(1.0, a, 100)[1])  # 44: wraps
    with pytest.raises(UnsupportedError, match=r"test_int_dtypes.py:\d+:\d+: Python integer 300 out of bounds for "
                       r"uint8(.|\n)*hint: write a value in \[0, 255\]"):
        irad.vjp(lambda x, a: (x, a + 300), 1.0, a)
    for f, what in ((element_plus_one, "a number of dtype uint8"), (full_max, "a number of dtype uint8"),
                    (square_root, "an array of dtype uint8 computed in floating point"),
                    (lambda x, a: x * np.sum(a @ a), "an array of dtype uint8 computed in floating point"),
                    (lambda x, a: (x, np.cumsum(a)), "the sum or product of a uint8 array is uint64")):
        with pytest.raises(UnsupportedError, match=rf"test_int_dtypes.py:\d+:\d+: {what}(.|\n)*hint: "):
            irad.vjp(f, 1.0, a)
    with pytest.raises(UnsupportedError, match=r"uint8 array is uint64"):
        irad.vjp(lambda x, a: x * np.sum(a, axis=0), 1.0, a)


@pytest.mark.parametrize("dtype", [*NARROW, np.uint64], ids=lambda d: np.dtype(d).name)
def test_a_narrow_int_scalar_is_refused(dtype):
    with pytest.raises(UnsupportedError, match=rf"n is a number of dtype {np.dtype(dtype).name}"):
        irad.grad(lambda x, n: x * n)(1.0, dtype(3))


def test_the_dtypes_irad_takes():
    assert refusal(np.zeros(3)) is None and refusal(np.zeros(3, np.float32)) is None
    assert refusal(np.arange(3)) is None and refusal(np.zeros(3, bool)) is None
    assert refusal(np.int64(3)) is None and refusal(3) is None and refusal(np.bool_(True)) is None
    assert type_of_value(np.uint64(2**63 + 1)) is None  # a number: it would read negative as i64
    assert str(type_of_value(np.zeros(3, np.uint8))) == "tensor<3xi9>"  # uint8's carrier (irad/ir/types.py)
    assert str(type_of_value(np.zeros(3, np.int16))) == "tensor<3xi16>"


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


def reads_g_in_floats(x):
    return x * np.sum((G - 1) * 1.0)


def test_a_global_subclass_is_refused_and_a_narrow_int_global_computed_as_numpy():
    global G
    with pytest.raises(UnsupportedError, match=r"test_int_dtypes.py:\d+:\d+: the value here is a numpy.matrix"):
        irad.grad(reads_a_global_matrix)(1.0)
    assert irad.grad(reads_g)(1.0) == 0.0
    saved, G = G, np.arange(3, dtype=np.uint8)
    try:  # G - 1 is uint8 ([255, 0, 1]), read at each call; its np.sum is uint64, which irad refuses
        assert irad.grad(reads_g_in_floats)(1.0) == reads_g_in_floats(1.0) == 256.0
        with pytest.raises(UnsupportedError, match=r"the sum or product of a uint8 array is uint64"):
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


def shifted(c, k):
    return c * 3 + k


def looped_uint8(w, im, n):
    s = 0.0
    c = im.copy()
    for _ in range(n):
        c = shifted(c, 7)  # uint8 through a helper, carried by the loop, wrapping
        s = s + np.sum(w * np.tanh(c * 0.01))
        if np.max(c.astype(np.int64)) > 100:
            c = c - 50
    return s


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_uint8_array_through_a_loop_a_helper_and_a_branch(backend):
    w, im = np.array([0.5, -1.0, 2.0]), np.array([10, 200, 128], np.uint8)
    value, grad = irad.value_and_grad(looped_uint8, backend=backend)(w, im, 4)
    assert value == pytest.approx(looped_uint8(w, im, 4), rel=1e-15)
    eps = 1e-6  # central differences in float64
    differences = [(looped_uint8(w + eps * e, im, 4) - looped_uint8(w - eps * e, im, 4)) / (2 * eps) for e in np.eye(3)]
    assert np.allclose(grad, differences, atol=1e-6)


# ---- int ** int: numpy's ints (irad made them floats: 3 ** 64 is 0 mod 2**64 in numpy) ----------
def int_powers(k, small):
    return (k ** 3, np.power(k, 2), k ** 64, k ** 0, 2 ** np.arange(5), np.power(3, np.arange(4)),
            small ** 5, (k ** 2) % 7, k ** 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_int_powers_are_numpys_ints(backend):
    args = (np.arange(-3, 5), np.array([3, -2, 100], dtype=np.int8))
    assert_numpys(irad.vjp(int_powers, *args, backend=backend)[0], int_powers(*args))


def negative_int_power(k):
    return k ** -1


def runtime_int_exponent(k):
    return k ** k[0]


def runtime_exponent_array(k):
    return 2 ** k


@pytest.mark.parametrize("f, message", [
    (negative_int_power, "integers to negative integer powers are not allowed"),
    (runtime_int_exponent, "an int array \\*\\* an int known only at run time"),
    (runtime_exponent_array, "an int \\*\\* an int array known only at run time"),
])
def test_int_powers_numpy_refuses_or_irad_cannot_compute_are_refused(f, message):
    with pytest.raises(UnsupportedError, match=message):
        irad.vjp(f, np.arange(1, 4))


# ---- numpy functions of masks keep numpy's bools ----------------------------------------------
# Each was silently different before: np.diff of bools subtracted (numpy: `!=`), np.pad of a
# mask padded with an int64 fill (an ill-typed tensor.insert_slice: ints on the python backend,
# a BackendError natively), and the python backend held a bool splat as the int 0, so
# np.diag / np.triu / np.where(m, mask, False) of masks gave ints.
def mask_functions(m, n):
    return (np.diff(m), np.diff(m, n=2), np.diff(m, prepend=True), np.pad(m, 1), np.pad(m, (0, 2), constant_values=True),
            np.diag(m), np.triu(np.outer(m, n)), np.where(m, n, False), np.sum(np.diff(m)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_functions_keep_numpys_bools(backend):
    args = (np.array([True, False, False, True, True]), np.array([False, True, True, True, False]))
    assert_numpys(irad.vjp(mask_functions, *args, backend=backend)[0], mask_functions(*args))


def bool_changes_weight(x):
    m = x > 0
    return np.sum(x * np.diff(m, prepend=False))  # numpy: True where the sign changes


@pytest.mark.parametrize("backend", BACKENDS)
def test_diff_of_a_mask_in_a_gradient(backend):
    x = np.array([0.5, -1.0, 2.0, 1.5])
    value, grad = irad.value_and_grad(bool_changes_weight, backend=backend)(x)
    assert value == bool_changes_weight(x) and np.array_equal(grad, np.diff(x > 0, prepend=False) * 1.0)


def uint8_padded(a):
    return np.pad(a, 1, constant_values=7)


def test_a_narrow_int_array_padded_with_a_number():
    a = np.array([1, 250], dtype=np.uint8)
    assert_numpys([irad.vjp(uint8_padded, a)[0]], [uint8_padded(a)])


def masks_counted(m, n):
    return (np.convolve(m, n), np.sort(m), np.dot(m, n), m @ n, np.outer(m, n) @ m, np.max(np.outer(m, n), axis=0),
            np.polyval(m, n), np.kron(m[:2], n[:3]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bools_numpy_computes_of_masks_irad_counts_and_compares_with_0(backend):
    """numpy's bools of bools (`+` is `or`, `*` `and`) are True where irad's sums of products of
    0s and 1s are not 0 (held_ints.py); each was refused, np.sort of a mask too."""
    args = (np.array([True, False, False, True, True]), np.array([False, True, True, True, False]))
    assert_numpys(irad.vjp(masks_counted, *args, backend=backend)[0], masks_counted(*args))


def ptp_of_a_mask(m):
    return np.ptp(m)


def cross_of_masks(m):
    return np.cross(m[:3], m[1:4])


def trapezoid_of_a_mask(m):
    return np.trapezoid(m)


@pytest.mark.parametrize("f, message", [
    (ptp_of_a_mask, r"numpy.ptp of these dtypes raises in numpy \(numpy boolean subtract"),
    (cross_of_masks, r"numpy.cross of these dtypes raises in numpy \(numpy boolean subtract"),
    (trapezoid_of_a_mask, "np.trapezoid of bool values is not supported"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_numpy_functions_of_masks_irad_would_count_are_refused(f, message, backend):
    with pytest.raises(UnsupportedError, match=message) as refused:
        irad.vjp(f, np.array([True, False, True, True]), backend=backend)
    assert f":{f.__code__.co_firstlineno + 1}:" in str(refused.value)  # at the line of the call
