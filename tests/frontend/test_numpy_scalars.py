"""numpy's scalars and Python's numbers (irad/frontend/numpy_scalars.py).

An element of an array, a full reduction, a numpy function of numbers and
arithmetic or comparisons with them are numpy scalars, whose bools add as `or`
and multiply as `and` (`m[0] + m[1]` is True in numpy); Python's bools count.
irad gives numpy's result where the program meets numpy's scalars and
Python's where it meets Python's, checked against the program run as numpy and
central differences on both backends; where numpy raises, or irad cannot tell
which the number is, it refuses, naming the line. Each program below was
silently wrong before (irad added every bool as Python does)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_against_numpy, check_refused, refused_line

W = np.array([0.5, 1.5, -1.0])


# ---- numpy's bools: `+` is `or`, `*` is `and`, abs/max/min keep them ----------------------
def numpy_bools_added(w):
    m = w > 0.0
    return (m[0] + m[1]) * np.sum(w)  # numpy: np.True_ + np.True_ is np.True_ (`or`)


def elements_compared(w):
    return ((w[0] > 0) + (w[1] > 0) + (np.sum(w) > 0)) * np.sum(w * w)


def multiplied_then_added(w):
    m = w > 0
    return (m[0] * m[1] + m[0] * m[1]) * np.sum(w)  # (and) or (and)


def kept_by_abs_max_min(w):
    m = w > 0
    return (abs(m[0]) + max(m[0], m[2]) + min(m[1], m[0])) * np.sum(w)


def max_of_numpy_and_python_bools(w):
    m = w > 0
    return (max(m[0], True) + m[1] + min(False, m[2])) * np.sum(w)  # one of them, then numpy's `+`


def with_a_python_bool(w):
    m = w > 0
    return (m[0] + True) * np.sum(w)  # np.True_ + True is np.True_


def with_ints_and_floats(w):
    m = w > 0
    return (m[0] + 1 + m[1] * 2.5) * np.sum(w)  # a bool beside a number counts, in numpy too


def bitwise_and_logic(w):
    m = w > 0
    return ((m[0] | m[2]) + (m[0] & m[1]) + (m[0] ^ m[1]) + (not m[2]) + (m[0] and m[1])) * np.sum(w)


def numpy_functions_of_numbers(w):
    return ((np.sin(1.0) > 0) + (np.cos(0.0) > 0)) * np.sum(w)


def through_an_if(w):
    m = w > 0
    b = m[0] if w[2] > 0 else m[1]
    return (b + b) * np.sum(w)


def through_a_loop(w):
    m = w > 0
    any_positive = m[2]
    for i in range(3):
        any_positive = any_positive + m[i]  # or
    return any_positive * np.sum(w)


def over_the_elements(w):
    count = 0
    for v in w:
        count = count + (v > 0)  # an int beside a bool: counts
    return count * np.sum(w)


def made_by_np_bool(w):
    # np.bool_ of a Python bool, of a float (!= 0) and of a literal is numpy's bool (refused before)
    a, b, t = np.bool_(float(w[0]) > 0.0), np.bool_(float(w[1])), np.bool_(True)
    return (a + b + (a * t) + np.bool_(w[2] > 0.0) * a) * np.sum(w) + np.sum(np.bool_(w) * w)


def np_bool_of_an_array(w):
    return np.sum(np.bool_(w > 0.0) * w) + np.sum(np.bool_(w - w[0]) * w * w)


# ---- Python's numbers: they count -----------------------------------------------------------
G = np.float64(1.0)  # a global numpy scalar: comparing it while lowering gives numpy's bool


def global_numpy_scalar_compared(x):
    return x * ((x > 0.0) + (G > 0.0)) + x * ((G > 0.5 > -1.0) + (x > 0.0))  # silently counted before


def python_bools_added(w):
    a = 1.0 > 0
    return (a + a) * np.sum(w)


def python_numbers_of_elements(w):
    return ((math.sin(w[0]) > 0) + (float(w[1]) > 0) + (w[0:1].item() > 0) + int(w[1] > 0)) * np.sum(w)


def int_pow_non_negative(w):
    a = np.arange(1, 4)
    return (pow(a[1], 2) + pow(a[2], 0) + pow(2, -1)) * np.sum(w)


PROGRAMS = [numpy_bools_added, elements_compared, multiplied_then_added, kept_by_abs_max_min,
            max_of_numpy_and_python_bools, with_a_python_bool,
            with_ints_and_floats, bitwise_and_logic, numpy_functions_of_numbers, through_an_if, through_a_loop,
            over_the_elements, made_by_np_bool, np_bool_of_an_array, python_bools_added, python_numbers_of_elements, int_pow_non_negative]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
@pytest.mark.parametrize("w", [W, -W], ids=["w", "-w"])
def test_scalars_follow_numpy(f, w, backend):
    check_against_numpy(f, (w,), backend=backend)


# ---- a number as a 0-d array: np.asarray(v) has the array methods ---------------------------
# `np.asarray(x).reshape(1)` of a Python float was "'float' object has no attribute 'reshape'",
# and np.reshape / np.ravel / np.squeeze of a number reached mlir-opt as a tensor.reshape of
# an f64 (a BackendError natively, an AttributeError on the python backend).
def number_reshaped(x, k, m):
    return (np.sum(np.reshape(x, (1, 1)) * 2.0) + np.sum(np.ravel(x * x)) + np.squeeze(x) * x
            + np.sum(np.reshape(x * x, -1)))


def number_as_array(x, k, m):
    return (np.asarray(x).reshape(1).sum() * x + np.array(x).T.item() + np.asarray(k).item() * x
            + np.asarray(m).sum() * x + np.asarray(x * x).sum())


def numbers_and_matrices_in_meshgrid(x, k, m):
    g = np.meshgrid(np.ones((2, 2)) * x, np.arange(3.0) * x)  # numpy flattens each input
    return np.sum(g[0] * g[1]) + np.sum(np.meshgrid(x, x * x)[1])


NUMBERS_AS_ARRAYS = [number_reshaped, number_as_array, numbers_and_matrices_in_meshgrid]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", NUMBERS_AS_ARRAYS, ids=[f.__name__ for f in NUMBERS_AS_ARRAYS])
def test_numbers_are_0d_arrays_to_numpy(f, backend):
    check_against_numpy(f, (1.5, 3, True), backend=backend)


def python_float_method(x):
    return (x * x).sum()  # <- refused


def test_a_python_number_still_has_no_array_methods():
    check_refused(python_float_method, (1.5,), "'float' object has no attribute 'sum'")


# ---- the entry's parameters: a Python float and an np.float64 compile apart ---------------
# A comparison of a float parameter is a Python bool (they count) or numpy's (`or`) by the
# argument: the signature holds each number's kind (pytrees.Arguments), so each compiles
# with its own. Refused before ("irad cannot tell ... a function's parameter").
def parameter_compared_twice(x):
    return x * ((x > 0.0) + (x > 1.0))  # float 2.0: 2 * 2; np.float64(2.0): 2 * True


def bool_parameters_added(x, b, c):
    return x * (b + c + (x > 0.5)) + x * (b * c)


def counted_recursively(x, n):
    if n == 0:
        return x * ((x > 0.0) + (x > 1.0))
    return counted_recursively(x * 1.0, n - 1)  # numbers of the entry's kinds: the entry itself


PARAMETER_KINDS = [
    (global_numpy_scalar_compared, (2.0,)),
    (global_numpy_scalar_compared, (-2.0,)),
    (counted_recursively, (2.0, 2)),
    (counted_recursively, (np.float64(2.0), np.int64(2))),
    (parameter_compared_twice, (2.0,)),
    (parameter_compared_twice, (np.float64(2.0),)),
    (parameter_compared_twice, (0.5,)),
    (parameter_compared_twice, (np.float64(0.5),)),
    (bool_parameters_added, (0.7, True, True)),
    (bool_parameters_added, (np.float64(0.7), np.bool_(True), np.bool_(True))),
    (bool_parameters_added, (0.7, np.bool_(True), True)),
    (bool_parameters_added, (np.float64(0.7), False, np.bool_(False))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", PARAMETER_KINDS,
                         ids=[f"{f.__name__}-{'-'.join(type(a).__name__ for a in args)}-{i}"
                              for i, (f, args) in enumerate(PARAMETER_KINDS)])
def test_parameters_have_their_arguments_kinds(f, args, backend):
    check_against_numpy(f, args, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_gradient_compiles_once_per_kind(backend):
    g = irad.value_and_grad(parameter_compared_twice, backend=backend)
    for x, value, grad in [(2.0, 4.0, 2.0), (np.float64(2.0), 2.0, 1.0), (2.0, 4.0, 2.0), (np.array(2.0), 2.0, 1.0)]:
        assert g(x) == (value, grad), type(x)
    assert parameter_compared_twice(np.array(2.0)) == 2.0  # a 0-d array's comparison is numpy's


def test_the_entry_calling_itself_with_its_kinds_is_one_function():
    text = str(irad.lower(counted_recursively, 2.0, 2))
    assert text.count("func.func") == 1 and "func.call @counted_recursively(" in text, text


# ---- refused: numpy raises, or irad cannot tell --------------------------------------------
def bools_subtracted(w):
    m = w > 0
    return (m[0] - m[1]) * np.sum(w)  # <- refused


def numpy_bool_minus_python_bool(w):
    return ((w[0] > 0) - True) * np.sum(w)  # <- refused


def bool_negated(w):
    m = w > 0
    return -m[0] * np.sum(w)  # <- refused


def int_to_a_negative_power(w):
    a = np.arange(1, 4)
    return a[1] ** -1 * np.sum(w)  # <- refused


def int_pow_negative(w):
    a = np.arange(1, 4)
    return pow(a[1], -2) * np.sum(w)  # <- refused


def added(a, b):
    return a + b  # <- refused


def through_a_helper(w):
    m = w > 0
    return added(m[0], m[1]) * np.sum(w)


def numpy_or_python_by_path(w):
    b = w[0] > 0 if w[2] > 0 else True
    return (b + True) * np.sum(w)  # <- refused


def max_of_both_then_a_python_bool(w):
    b = max(w[0] > 0, True)  # np.True_ or True, by the values
    return (b + True) * np.sum(w)  # <- refused


def bool_or_int_by_path(w):
    m = w > 0
    b = m[0] if w[2] < 0 else 2
    return (b + m[1]) * np.sum(w)  # <- refused


def np_bools_subtracted(w):
    return (np.bool_(float(w[0]) > 0.0) - np.bool_(True)) * np.sum(w)  # <- refused


REFUSED = [
    (bools_subtracted, "numpy's `-` of numpy bools raises"),
    (bool_negated, "numpy's `-` of numpy bools raises"),
    (numpy_bool_minus_python_bool, "numpy's `-` of numpy bools raises"),  # was "cannot tell"
    (np_bools_subtracted, "numpy's `-` of numpy bools raises"),
    (int_to_a_negative_power, "numpy's int \\*\\* negative int raises"),
    (int_pow_negative, "pow\\(\\) of a numpy int and an int that may be negative: numpy raises"),
    (numpy_or_python_by_path, "irad cannot tell whether these bools are a numpy bool"),
    (max_of_both_then_a_python_bool, "irad cannot tell whether these bools are a numpy bool"),
    (bool_or_int_by_path, "a numpy bool on one path into an `if` or loop is an int or float on another"),
]


@pytest.mark.parametrize("f, message", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_refused_where_numpy_raises_or_irad_cannot_tell(f, message):
    for w in (W, -W):  # numpy's own answer: an error, or a result that depends on the path
        try:
            f(w)
        except (TypeError, ValueError):
            pass
    check_refused(f, (W,), message)


def test_a_helper_cannot_tell_its_parameters():
    """A function's parameters may be either (it is lowered once per signature):
    the refusal names the helper's line."""
    with pytest.raises(irad.UnsupportedError, match="irad cannot tell whether these bools") as info:
        irad.lower(through_a_helper, W)
    assert f"test_numpy_scalars.py:{refused_line(added)}:" in str(info.value)
