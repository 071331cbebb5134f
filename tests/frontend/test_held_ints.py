"""Ints that irad holds as floats (irad/frontend/held_ints.py): numpy keeps the
int (an int array on one path into a join and a float array on another, ...)
where irad computes a float, so a float written into an array made of it is
cast to int by numpy (value and gradient change) and not by irad: every such
write is refused, naming the write and where the int came from. Everything
else about those values (arithmetic with floats, reductions, results) is exact
and checked against numpy and central differences, on both backends; writes
into real int arrays truncate as in numpy, also into the results of numpy
functions of ints irad computes in float (np.sign, `@`: converted to numpy's
int64); `//` and `%` of two such ints by zero give numpy's int 0, not inf or
nan.

Each refused program was silently wrong before (its value and gradient those
of a float array)."""

from __future__ import annotations

import numpy as np
import pytest

import irad
from tests import generated_programs as programs
from irad.base.errors import UnsupportedError
from tests.reference import BACKENDS, check_against_numpy, check_refused, lowered_text

I = np.array([2, -1, 3])  # noqa: E741 - an int array the programs close over as a constant


# ---- made by a numpy function or operator of ints: an int array in numpy ------------------
def maximum_written(x):
    a = np.maximum(np.arange(3), np.array([2, -1, 1]))  # int64 in irad too (arrays.py)
    a[0] = x  # an int array: numpy and irad store 0
    return np.sum(a * x)


def abs_written(x):
    a = np.abs(np.array([2, -1, 3]))
    a[1:] = np.array([x, 2.5 * x])  # an int array in irad too
    return np.sum(a * x)


def builtin_abs_written(x):
    a = abs(np.array([2, -1, 3]))  # numpy's np.absolute
    a[0] = x  # an int array in irad too
    return np.sum(a * x)


def where_written(x):
    a = np.where(np.arange(3) > 0, np.arange(3), 5)
    a[0] += x  # an int array in irad too
    return np.sum(a * x)


def clip_written(x):
    a = np.clip(np.array([5, -3, 7]), 0, 4)
    a[2] = x  # an int array in irad too
    return np.sum(a * x)


def sum_axis_written(x):
    a = np.sum(np.arange(6).reshape(2, 3), axis=0)
    a[0] = x  # an int array: numpy and irad store 0
    return np.sum(a * x)


def square_written(x):
    a = np.arange(3) ** 2  # numpy's int array (irad held it as floats, and refused the write)
    a[0] = x  # cast into the int array: 0
    return np.sum(a * x)


def sign_written(x):
    a = np.sign(np.array([2, -1, 0]))
    a[2] = x  # an int array in irad too: the write truncates
    return np.sum(a * x)


def matmul_written(x):
    a = np.arange(9).reshape(3, 3) @ np.arange(3)
    a[0] = x  # an int array in irad too: the write truncates
    return np.sum(a * x)


def einsum_written(x):
    a = np.einsum("ij,j->i", np.arange(9).reshape(3, 3), np.arange(3))
    a[0] = x  # an int array in irad too: the write truncates
    return np.sum(a * x)


def int_sum_fills(x):
    b = np.full(2, np.sum(np.arange(3)))  # np.sum of ints is an int: b is an int array
    b[0] = x  # numpy and irad store 0
    return np.sum(b) * x


def int_min_in_an_array(x):
    b = np.array([np.min(np.arange(3)), 2, 3])
    b[1] = x  # numpy and irad store 0
    return np.sum(b * x)


def element_of_maximum_fills(x):
    s = np.maximum(I, 0)
    b = np.full(2, s[0] + s[2])  # an int in numpy and irad
    b[0] = x
    return np.sum(b) * x


# ---- an int array on one path into a join, then through elementwise ops ---------------------
def joined_then_maximum(x, n):
    s = np.arange(3)
    for i in range(n):
        s = s * 0.5  # an int array if the loop does not run
    a = np.maximum(s, np.arange(3))  # int64 in numpy on that path
    a[0] = x  # <- refused
    return np.sum(a * x)


def joined_then_sliced(x, c):
    s = np.arange(3)
    if c > 0.0:
        s = s * x
    a = np.concatenate([s[1:], -s[:1]]) * 2
    a[0] = x[1]  # <- refused
    return np.sum(a * x)


def joined_int_then_floor_divided(x, n):
    m = 5
    for i in range(n):
        m = m * 0.5
    b = np.full(3, m // 2)  # int // int is an int
    b[0] = x  # <- refused
    return np.sum(b) * x


# ---- through calls: a helper's result, a helper's float parameter ------------------------------
def _sign_of(a):
    return np.sign(a)


def helper_returns_an_int(x):
    b = np.copy(_sign_of(np.arange(3)))
    b[0] = x  # an int array in irad too
    return np.sum(b * x)


def _filled_with(t):
    return np.full(3, t)


def helper_fills_with_a_joined_int(x, n):
    m = 1
    for i in range(n):
        m = m * 0.5
    b = np.copy(_filled_with(m))  # an int array in numpy where n == 0
    b[0] = x  # <- refused
    return np.sum(b * x)


def _twice(t):
    return t * 2


def recursive_fill_of_a_joined_int(t, k):
    """Lowered twice (its result is not the float first assumed): the second round's
    recursive call follows the first round's summary, whose callee `_twice` the
    frontend erased in between (held_ints.Summary.settle)."""
    if k <= 0:
        return np.full(3, _twice(t))
    m = 1
    for i in range(k):
        m = m * 0.5
    b = recursive_fill_of_a_joined_int(m, k - 1) + np.zeros(3, dtype=int)
    b[0] = t  # <- refused
    return b


REFUSED = [
    (joined_then_maximum, (0.7, 0)), (joined_then_sliced, (np.ones(3), -1.0)), (joined_int_then_floor_divided, (0.7, 0)),
    (helper_fills_with_a_joined_int, (0.7, 0)), (recursive_fill_of_a_joined_int, (0.7, 2)),
]


def test_a_write_into_an_int_power_casts_as_numpy():
    check_against_numpy(square_written, (0.7,))


@pytest.mark.parametrize("f, args", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_a_write_into_an_int_irad_holds_as_a_float_is_refused(f, args):
    check_refused(f, args, "a write into an array that numpy holds as ints")


def test_an_int_through_a_long_call_chain_is_followed(tmp_path):
    """A summary's flow from the parameters is followed when a caller first passes a
    maybe-int, its callees' first, in a loop: here 1,500 of them at once."""
    n = 1500
    helpers = "".join(f"def h{k}(t):\n    return h{k - 1}(t * 1)\n\n" for k in range(1, n))
    source = f"""import numpy as np

def h0(t):
    return np.full(3, t)

{helpers}def f(x, n):
    m = 1
    for i in range(n):
        m = m * 0.5
    b = np.copy(h{n - 1}(m))
    b[0] = x  # <- refused
    return np.sum(b * x)
"""
    f = programs.load(source, "long_int_chain", tmp_path).f
    check_refused(f, (0.7, 0), "a write into an array that numpy holds as ints")


# ---- what stays exact: the same values used as numbers, or made floats first --------------
def int_ops_as_numbers(x):
    a = np.maximum(np.arange(3), 1) + np.abs(I) * 2 - np.clip(I, 0, 2)
    b = np.sum(np.arange(6).reshape(2, 3), axis=0) @ np.sign(I)
    return np.sum(np.sin(a * x)) + b * x + float(np.sum(I)) * x ** 2


def made_float_then_written(x):
    a = np.maximum(np.arange(3), 1).astype(float)
    b = np.full(2, float(np.sum(I)))
    c = np.abs(I) * 1.0
    d = np.array([np.mean(I), 1.0])
    a[0], b[1], c[2], d[0] = x, 2.0 * x, x * x, 3.0 * x
    return np.sum(a * x) + np.sum(b * x) + np.sum(c) + np.sum(d * x)


def written_into_int_arrays(x):
    a = np.arange(3)
    a[0] = x  # numpy: int(x), no gradient through this write
    a[1] += 2.5 * x
    b = np.zeros(3, dtype=int)
    b[1:] = np.array([x, -3.5 * x])
    return np.sum(a * x) + np.sum(b * x)


def astype_int(x):
    a = (x * np.array([1.5, -2.7, 3.2])).astype(int)  # toward zero, as numpy
    b = np.array([x, 2.0 * x]).astype(np.int64)
    return np.sum(a * x) + np.sum(b) * x


# ---- `//` and `%` by zero: numpy's int answer, 0, not the float's inf or nan ----------------
# (fuzz case_fb84131f8e92: the minimum down an axis of an int array is an int, and
# floor_divide of ints by it gave nan where numpy gives 0)
def floor_divided_by_an_axis_minimum(x):
    d = np.arange(9).reshape(3, 3).min(axis=0)  # [0 1 2], int64 in numpy
    q = np.floor_divide((3.0 * np.tanh(x * np.ones(3))).astype(int), d)
    return np.mean(q) * x + np.sum(np.maximum(I, 0) % np.maximum(np.arange(3), 0)) * x


def float_divided_by_a_held_int(x):
    d = np.arange(3).reshape(1, 3).min(axis=0)  # an int, but x * ... a float: inf and nan stay
    return np.sum(np.where(d == 0, 0.0, (np.ones(3) * x) // d + (np.ones(3) * x) % d))


def maximum_of_masks(x):
    m = np.maximum(x > 0.5, x < -0.5)  # a bool array (or), in irad too
    return np.sum(m * x)


def matmul_of_masks(x):
    m = (x > 0.5) @ np.ones((3, 3), dtype=bool)  # bools in numpy: `+` is `or`
    return np.sum(m * x)


EXACT = [(floor_divided_by_an_axis_minimum, (0.7,)), (float_divided_by_a_held_int, (1.3,)),
         (int_ops_as_numbers, (0.7,)), (made_float_then_written, (0.7,)), (written_into_int_arrays, (1.3,)),
         (written_into_int_arrays, (-1.3,)), (astype_int, (1.3,)), (astype_int, (-0.9,)),
         # np.sum/min of ints are int64 in irad too: the write truncates as in numpy
         (sum_axis_written, (0.7,)), (int_sum_fills, (0.7,)), (int_min_in_an_array, (0.7,)),
         # so are np.maximum, np.abs, np.where, np.clip of ints, and np.maximum of masks a bool
         (maximum_written, (0.7,)), (abs_written, (0.7,)), (builtin_abs_written, (0.7,)), (where_written, (0.7,)),
         (clip_written, (0.7,)), (element_of_maximum_fills, (0.7,)), (maximum_of_masks, (np.array([0.7, 0.1, -0.9]),)),
         # np.sign, @, np.einsum of ints irad computes in float, and converts to numpy's int64 (a helper's
         # result too); `@` of masks, to numpy's bools (where the count is not 0)
         (sign_written, (0.7,)), (matmul_written, (0.7,)), (einsum_written, (0.7,)), (helper_returns_an_int, (0.7,)),
         (matmul_of_masks, (np.array([0.7, 0.1, -0.9]),)), (matmul_of_masks, (np.array([0.2, 0.1, -0.9]),))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", EXACT, ids=[f"{f.__name__}-{args[0]}" for f, args in EXACT])
def test_ints_as_numpy_computes_them(f, args, backend):
    with np.errstate(divide="ignore", invalid="ignore"):  # numpy warns of its division by zero
        check_against_numpy(f, args, backend=backend)


def test_the_refusal_names_the_write_and_the_int():
    with pytest.raises(UnsupportedError) as info:
        irad.grad(joined_then_maximum)(0.7, 0)
    text = str(info.value)
    assert "test_held_ints.py" in text and "'s' is an int array on one path" in text, text


def int_times_float32(w):
    return np.arange(3) * w + np.ones(3, dtype=bool) * w


def test_an_int64_array_with_a_float32_array_is_float64_as_in_numpy():
    w = np.ones(3, dtype=np.float32)
    assert int_times_float32(w).dtype == np.float64
    signature = next(line for line in lowered_text(int_times_float32, w).splitlines() if "func.func" in line)
    assert "(%w: tensor<3xf32>) -> tensor<3xf64>" in signature, signature  # float32 before
