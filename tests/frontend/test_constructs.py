"""Statements, builtins and methods numpy programs use (issue 32, item 4): `+=` on
what a helper returned, `with np.errstate(...)`, x.var()/x.std()/x.transpose(...),
np.triu_indices and friends as indices, dict(...) and iterating dicts, a tuple
indexed by a run-time int, round() and math.isnan/isinf/copysign/fmod, dtype
strings, np.column_stack of vectors, and keyword errors that name the keyword.

Each program runs as plain Python/numpy too: irad's value against it and its
gradient against central differences in float64, on both backends; what stays
refused is checked for its message, its file:line and its hint."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad.base.errors import RuntimeCheckError
from tests.reference import BACKENDS, central_difference, check_against_numpy, check_refused


# ---- += on what a helper returned -------------------------------------------------------------
def _double(x):
    return 2.0 * x


def _smooth(x):
    return 0.5 * (x[1:] + x[:-1])  # a new array


def _pair(x):
    return np.cos(x), np.sin(x)


def _outer(x):
    return _smooth(x * x)  # a new array, through two calls


def _either(x, c):
    if c > 0.0:
        return np.exp(x)
    return np.zeros(x.shape) + c


def _count(x):
    return len(x) + 0


def aug_scalar(x):
    acc = _double(x)
    acc += x * x
    acc *= 3.0
    acc -= 1.0
    acc /= 2.0
    acc **= 2
    return acc


def aug_scalar_by_array(x, y):
    acc = _double(x)
    acc += y  # a float plus an array: a new array, bound to acc
    acc *= y
    return np.sum(acc)


def aug_int(x):
    k = _count(x)
    k += 2
    k *= 3
    return np.sum(x) * k


def _total(x):
    return np.sum(x)  # numpy's float64


def aug_numpy_scalar(x):
    s = _total(x)
    s += 1.0
    s *= x[0]
    s -= x[1]
    s /= 2.0
    s %= 0.7
    acc = _total(x)
    acc += x  # a number plus an array: a new array
    acc **= 2
    return s + np.sum(acc)


def aug_array(x, y):
    acc = _smooth(x)
    acc += y
    acc *= 2.0
    acc[0] = 5.0 * x[1]
    acc[1:] -= y[:1]
    return np.sum(acc * acc)


def aug_pair(x):
    a, b = _pair(x)
    a += b
    b *= 3.0
    return np.sum(a * b)


def aug_nested(x):
    acc = _outer(x)
    acc /= 1.0 + x[:-1] ** 2
    view = acc[::2]
    view += 1.0  # through a view of it, as numpy
    return np.sum(acc * acc)


def aug_branches(x, c):
    acc = _either(x, c)
    acc += x
    return np.sum(acc ** 2)


# ---- with np.errstate --------------------------------------------------------------------------
def errstate_divide(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = x / y
        s = np.log(np.abs(y))
    return np.sum(np.where(np.isfinite(r), r, 0.0)) + np.sum(np.where(np.isfinite(s), s, 0.0))


def errstate_nested(x):
    with np.errstate(all="ignore"):
        with np.errstate(over="warn"), np.errstate(under="ignore"):
            y = np.exp(x)
        if x[0] > 0.0:
            return np.sum(y)
    return np.sum(y * 2.0)


# ---- methods ----------------------------------------------------------------------------------
def var_std_methods(X):
    return (X.var() + X.std() + np.sum(X.var(axis=0, ddof=1)) + np.sum(X.std(axis=1, keepdims=True) * X)
            + np.sum(X.var(1, None, None, 1, True)) + X.std(axis=(0, 1), ddof=0))


def transpose_methods(T3):
    W = np.arange(24.0).reshape(3, 2, 4)
    Y = np.copy(T3)
    v = Y.transpose(2, 1, 0)
    v[0] *= 2.0  # a view: writes Y[:, :, 0]
    return (np.sum(T3.transpose(1, 0, 2) * W) + np.sum(T3.transpose((2, 0, 1))[0] ** 2)
            + np.sum(T3.transpose()[1] * 3.0) + np.sum(T3.transpose(None)[2]) + np.sum(Y * Y))


# ---- np.triu_indices and friends -----------------------------------------------------------------
def triangle_reads(A):
    return (np.sum(A[np.triu_indices(3)]) + np.sum(A[np.tril_indices(3, -1)] ** 2) + np.sum(A[np.diag_indices(3)] ** 3)
            + np.sum(A[np.triu_indices_from(A, 1)]) * 2.0 + np.sum(A[np.tril_indices(3, 0, 3)] * A[np.triu_indices(3)]))


def triangle_writes(A, v):
    B = np.zeros((3, 3))
    B[np.triu_indices(3, 1)] = v
    B[np.diag_indices(3)] = v * v
    C = np.copy(A)
    C[np.tril_indices(3, -1)] += v
    rows, cols = np.triu_indices(3)
    return np.sum(B @ A) + np.sum(C * C) + np.sum(A[rows, cols] * np.arange(6.0))


def triangle_from_shapes(A):
    idx = np.triu_indices(A.shape[0], 1, A.shape[1])
    return np.sum(A[idx] ** 2) + np.sum(A[np.tril_indices_from(A)])


def diagonal_of_a_cube(T):
    return np.sum(T[np.diag_indices(2, 3)] * 3.0) + np.sum(T[np.diag_indices_from(T)] ** 2)


# ---- dicts -----------------------------------------------------------------------------------------
def dict_built(a, b):
    d = dict(z=a, a=b)
    d2 = dict(d, m=a * b)
    d3 = dict(zip(("q", "c"), (a, b)))
    d4 = dict([("u", a), ("t", 2.0)])
    s, w = 0.0, 1.0
    for k in d2:
        s = s + w * d2[k]
        w = w + 1.0
    for k, v in d3.items():
        s = s + w * v * len(k)
        w = w + 1.0
    for v in d4.values():
        s = s + w * v
        w = w + 1.0
    for k in d.keys():
        s = s + w * d[k]
        w = w + 1.0
    first, second = tuple(d2.values())[:2]
    return (s + ("z" in d) * 100.0 + ("y" not in d) * 1000.0 + d.get("y", 7.0) + d.get("a") * 3.0
            + len(d2) + d.copy()["z"] + first * 10.0 + second * 20.0)


def _first_value(p):
    for v in p.values():
        return v


def dict_argument_order(p):
    w, b = p.values()  # the caller's order, {"w": ..., "b": ...}: not sorted
    total, scale = 0.0, 1.0
    for k, v in p.items():
        total = total + scale * v
        scale = scale * 10.0
    return w * 2.0 + b + total + _first_value(p) * 100.0


def _made_in_order(a):
    return {"z": a, "b": 2.0 * a}


def dict_from_a_helper(a):
    x, y = _made_in_order(a).values()
    return x + 10.0 * y


def dict_branch_orders(x):
    if x > 0.0:
        d = {"u": x, "v": 2.0 * x}
    else:
        d = {"v": x * x, "u": -x}
    return d["u"] * d["v"]  # reading by key needs no order


# ---- a tuple indexed at run time -----------------------------------------------------------------
def tuple_numbers(a, b, i):
    return (a, b, a * b)[i] + [b, a][-1 - i % 2] * 3.0


def tuple_arrays(x, i):
    return np.sum((x, 2.0 * x, x * x)[i] * x)


def tuple_containers(x, y, i):
    a, b = ((x, y), (y, x), (x * 2.0, y))[i]
    return np.sum(a) * 2.0 + np.sum(b)


def tuple_ints_and_shapes(X, i):
    k = (3, 1, 2)[i]
    return np.sum(X) * k + X.shape[i] * X[0, 0]


# ---- round and math ---------------------------------------------------------------------------
def python_rounding(x):
    return (round(x) + round(x, 2) * 10.0 + round(x, -1) + round(-x, 1) + round(x * 1e-3, 4) * 1e3
            + math.copysign(x * x, -x) + math.fmod(x, 0.7) + math.fmod(-x, 0.3) + math.isnan(x)
            + math.isinf(x) * 2 + math.isfinite(x) * 4 + round(x, None))


def python_divmod(x, n):
    q, r = divmod(-n, 3)  # ints: floor quotient, remainder with the divisor's sign
    fq, fr = divmod(x * -3.0, 2.0)
    return x * q + r + fq * fr * x


def shape_arithmetic(x):
    """Known-while-lowering calls (known_calls.py) and all/any loops (iteration.truth_call)."""
    flat = x.reshape(int(np.prod(x.shape)))
    rows = x.reshape(x.shape[0], math.prod(x.shape[1:]))
    order = sorted((2, 0, 1))
    big = all(d > 1 for d in x.shape) and not any(d > 100 for d in x.shape)
    scale = 2.0 if big else 3.0
    positive = any(v > 0.0 for v in flat)  # run-time items: a run-time bool
    every = all(flat > -10.0)
    return (np.sum(flat ** 2) * scale + np.sum(rows[:, order[0]]) + (1.0 if positive else -1.0) * np.sum(x)
            + every * 0.5)


def rounding_kinds(x):
    # an element of an array is numpy's float64, whose round() is np.round's (2.68);
    # float(...) of it is Python's, whose round() is CPython's (2.67)
    tie = x[0] * 0.0 + 2.675
    return round(tie, 2) * 100.0 + round(float(tie), 2) * 1e4 + round(x[1], 1) + round(x[1] * 3.0) + x[0]


ROUNDINGS = (0, 1, 2, 3, 5, 15, 16, 17, 22, -1, -3, -15, -16, -22)


def many_roundings(x):
    return tuple(round(x, n) for n in ROUNDINGS)


def int_roundings(k):
    return round(k), round(k, 2), round(k, -1), round(k, -2), round(-k, -1), round(k, -18), round(k, -19)


# ---- dtype strings ------------------------------------------------------------------------------
def astype_strings(x):
    ints = (x * 3.0).astype("int64") + (x * 3.0).astype("i8")
    masks = x.astype("?") & x.astype("bool")
    return (np.sum(x.astype("f8") ** 2 + x.astype("float64") + x.astype("float") * x.astype("d"))
            + np.sum(ints) + np.sum(masks) + np.sum(np.zeros(3, dtype="float64") + x) + np.sum(np.ones(3, "f8") * x))


def astype_float32(x):
    return x.astype("float32") * 2.0, x.astype("f4"), x.astype("single"), np.ones(2, dtype="float32")


# ---- stacking vectors ------------------------------------------------------------------------------
def stacks_of_vectors(x, y):
    W = np.arange(6.0).reshape(3, 2)
    return (np.sum(np.column_stack((x, y)) * W) + np.sum(np.column_stack(x) * np.arange(3.0))
            + np.sum(np.column_stack((x[0], y[1])) ** 2) + np.sum(np.row_stack((x, y)) * W.T)
            + np.sum(np.vstack((x, y)) ** 2) + np.sum(np.hstack((x, y)) * np.arange(6.0))
            + np.sum(np.dstack((x, y)) ** 3) + np.sum(np.vstack(x) * np.arange(3.0)[:, None]))


def stacks_of_matrices(A, B, x):
    return (np.sum(np.column_stack((A, B)) * np.arange(12.0).reshape(3, 4))
            + np.sum(np.column_stack((A, x, B)) ** 2) + np.sum(np.column_stack([A]) * A))


# ---- numpy's defaults are accepted ------------------------------------------------------------
def numpy_defaults(x):
    return (np.sum(x, axis=0, out=None, dtype=None) + np.sum(x, 0, None) + np.sum(x.reshape(3, order="C"))
            + np.sum(x.astype("f8", copy=True)) + np.sum(np.sum(x.reshape(1, 3), 0, None, None, True)))


x3 = np.array([0.3, -1.2, 2.5])
y3 = np.array([0.7, 0.4, -1.1])
y2 = np.array([0.25, -0.5])
X23 = np.array([[0.3, -1.2, 2.5], [1.1, 0.2, -0.4]])
T234 = np.linspace(-1.0, 1.5, 24).reshape(2, 3, 4)
A33 = np.array([[1.2, -0.3, 0.5], [0.4, 2.0, -1.1], [0.7, 0.1, 1.5]])

PROGRAMS = [
    (aug_scalar, (0.7,)), (aug_scalar_by_array, (0.7, y3)), (aug_int, (x3,)), (aug_numpy_scalar, (np.array([0.3, 0.9]),)),
    (aug_array, (x3, y2)),
    (aug_pair, (x3,)), (aug_nested, (np.array([0.3, -1.2, 2.5, 0.9]),)), (aug_branches, (x3, 1.0)),
    (aug_branches, (x3, -0.5)),
    (errstate_divide, (x3, y3)), (errstate_nested, (x3,)), (errstate_nested, (-x3,)),
    (var_std_methods, (X23,)), (transpose_methods, (T234,)),
    (triangle_reads, (A33,)), (triangle_writes, (A33, y3)), (triangle_from_shapes, (X23.T @ X23[:, :2],)),
    (triangle_from_shapes, (np.arange(8.0).reshape(2, 4) / 7.0,)), (diagonal_of_a_cube, (T234[:, :2, :2] * 1.0,)),
    (dict_built, (0.5, 1.5)), (dict_from_a_helper, (0.5,)), (dict_branch_orders, (0.5,)), (dict_branch_orders, (-0.5,)),
    *((tuple_numbers, (0.5, 1.5, i)) for i in (0, 1, 2, -1, -3)),
    *((tuple_arrays, (x3, i)) for i in (0, 2, -2)), *((tuple_containers, (x3, y3, i)) for i in (0, 1, 2, -1)),
    *((tuple_ints_and_shapes, (X23, i)) for i in (0, 1, -2)),
    (python_rounding, (2.3456,)), (python_rounding, (-13.872,)), (python_rounding, (0.5501,)),
    (python_divmod, (1.3, 5)), (python_divmod, (-0.7, -4)),
    (shape_arithmetic, (X23,)), (shape_arithmetic, (-X23 - 5.0,)),
    (rounding_kinds, (np.array([0.3, 0.33]),)),
    (astype_strings, (x3,)), (stacks_of_vectors, (x3, y3)), (stacks_of_matrices, (X23.T, X23.T * 2.0, y3)),
    (numpy_defaults, (x3,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", PROGRAMS, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(PROGRAMS)])
def test_constructs_match_numpy(case, backend):
    f, args = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # np.row_stack, when numpy runs it
        check_against_numpy(f, args, backend)


# ---- dicts passed in: the caller's insertion order -------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_dict_argument_is_iterated_in_its_insertion_order(backend):
    p = {"w": 1.5, "b": 0.25}  # not sorted: a sorted walk would give other values
    value, grad = irad.value_and_grad(dict_argument_order, backend=backend)(p)
    assert value == dict_argument_order(p)
    for key in p:
        def along(v, key=key):
            return dict_argument_order({**p, key: v})
        assert np.isclose(grad[key], central_difference(along, (p[key],), 0), rtol=1e-7)
    assert irad.value_and_grad(dict_argument_order, backend=backend)({"b": 0.25, "w": 1.5})[0] == \
        dict_argument_order({"b": 0.25, "w": 1.5})  # the other order: compiled apart


# ---- with np.errstate: irad computes what numpy does, and never warns ------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_errstate_body_gives_ieee_values_without_warnings(backend):
    x, y = np.array([1.0, 0.0, -2.0]), np.array([0.0, 0.0, 4.0])  # 1/0, 0/0, log(0)
    with np.errstate(all="raise"):
        expected = None
        with np.errstate(divide="ignore", invalid="ignore"):
            expected = errstate_divide(x, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # numpy's divide-by-zero warning would fail the test
        got = irad.value_and_grad(errstate_divide, backend=backend)(x, y)[0]
    assert got == expected


# ---- run-time checks -------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tuple_index_out_of_range_is_a_run_time_error(backend):
    g = irad.grad(tuple_numbers, backend=backend)
    with pytest.raises(RuntimeCheckError, match=r"test_constructs.py:\d+:\d+: tuple index out of range"):
        g(0.5, 1.5, 3)
    with pytest.raises(RuntimeCheckError, match="tuple index out of range"):
        g(0.5, 1.5, -4)


def fmod_of(x, y):
    return math.fmod(x, y)


def round_to_int(x):
    return float(round(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_math_domain_errors_are_run_time_errors(backend):
    for x, y in ((1.0, 0.0), (math.inf, 2.0), (-math.inf, -0.0)):
        with pytest.raises(ValueError):
            math.fmod(x, y)
        with pytest.raises(RuntimeCheckError, match="math domain error"):
            irad.grad(fmod_of, backend=backend)(x, y)
    assert irad.value_and_grad(fmod_of, backend=backend)(2.5, math.inf)[0] == 2.5  # Python gives x
    assert math.isnan(irad.value_and_grad(fmod_of, backend=backend)(math.nan, 0.0)[0])  # NaN in, NaN out
    for bad in (math.inf, math.nan):
        with pytest.raises(RuntimeCheckError, match="cannot convert float infinity or NaN to integer"):
            irad.grad(round_to_int, backend=backend)(bad)


# ---- round() is CPython's, bit for bit ---------------------------------------------------------------
TRICKY = [2.675, 0.125, 0.375, 2.5, -2.5, 0.5, 1.5, -0.4, 0.0, -0.0, 1.005, 1234.5, 1250.0, 4.35, 1e-30, 1e300,
          5.000000000000001, 0.1, 123456789012345.67, 9007199254740.993, 4503599627370497.5, 1e16, 1e22, -7.45e15,
          math.inf, -math.inf, math.nan, 2.0 ** -1074, 1.7976931348623157e308]


def _same_float(a, b) -> bool:
    if isinstance(a, float) and math.isnan(a):
        return math.isnan(b)
    return a == b and type(a) is type(b) and (math.copysign(1.0, a) == math.copysign(1.0, b) if a == 0 else True)


def _rounded(f, x, backend):
    return irad.vjp(f, x, backend=backend)[0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_matches_cpython_on_ties_and_edges(backend):
    for x in TRICKY:
        got, want = _rounded(many_roundings, x, backend), many_roundings(x)
        assert all(_same_float(g, w) for g, w in zip(got, want)), (x, got, want)
    for x in (2.5, -3.5, 0.49999999999999994, 4503599627370497.0, -0.5, 1e18):
        assert _rounded(round_to_int, x, backend) == float(round(x))


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64)
       | st.decimals(-10**6, 10**6, places=6).map(float)
       | st.integers(-10**17, 10**17).map(lambda n: n / 2**st_shift(n)))
def test_round_matches_cpython_for_any_float(x):
    got = _rounded(many_roundings, x, "python")
    assert all(_same_float(g, w) for g, w in zip(got, many_roundings(x))), (x, got, many_roundings(x))


def st_shift(n: int) -> int:
    return abs(n) % 7  # halves, quarters...: exact ties at the digits round() keeps


@pytest.mark.parametrize("backend", BACKENDS)
def test_round_of_ints_is_pythons(backend):
    for k in (0, 5, 15, 25, -25, 1250, -1350, 2 ** 62, -(2 ** 62), 4999999999999999999, 5 * 10 ** 18, -5 * 10 ** 18):
        assert _rounded(int_roundings, k, backend) == int_roundings(k), k
    for k in (2 ** 63 - 1, 7 * 10 ** 18):  # round(k, -1) is 2**63 + 3, round(k, -19) 10**19: not i64s
        with pytest.raises(RuntimeCheckError, match="does not fit in 64 bits"):
            _rounded(int_roundings, k, backend)


def test_round_of_a_float_is_an_int():
    assert irad.vjp(lambda_round, 2.5)[0] == (2, 2.0, 1)
    assert [type(v) for v in irad.vjp(lambda_round, 2.5)[0]] == [int, float, int]


def lambda_round(x):
    return round(x), round(x, 0), round(True)


def _round_two(v):
    return round(v, 2)  # a parameter: Python's float or numpy's float64?


def rounds_in_a_helper(x):
    return _round_two(x) + _round_two(float(x))


def test_round_with_digits_of_a_number_of_unknown_kind_is_refused():
    with pytest.raises(irad.UnsupportedError, match=r"round\(x, ndigits\) of a number irad cannot tell") as info:
        irad.lower(rounds_in_a_helper, 0.5)
    message = str(info.value)
    line = _round_two.__code__.co_firstlineno + 1
    assert f"test_constructs.py:{line}:" in message and "hint: write round(float(x), ndigits)" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_dtype_strings_float32(backend):
    x = np.array([0.1, -2.7])
    got = irad.vjp(astype_float32, x, backend=backend)[0]
    for g, w in zip(got, astype_float32(x)):
        assert g.dtype == np.float32 and np.array_equal(g, w)
    grad = irad.grad(lambda_sum32, backend=backend)(x)
    assert grad.dtype == np.float64 and np.array_equal(grad, [1.0, 1.0])


def lambda_sum32(x):
    return np.sum(x.astype("float32").astype("float64"))


# ---- refused, with the line and a hint ------------------------------------------------------------
def _first_row(X):
    return X[0]


def _same(x):
    return x


def _twice(x):
    y = np.cos(x)
    return y, y


def _and_a_view(x):
    y = np.cos(x)
    return y, y[1:]


def _with_a_written_view(x):
    y = np.zeros(3) + x
    v = y[1:]
    v += 1.0  # v stays a view of y after the write
    return y, v


def write_first_row(X):
    r = _first_row(X * 1.0)
    r += 1.0  # <- refused
    return np.sum(r)


def write_the_argument_back(x):
    y = x * 1.0
    z = _same(y)
    z += 1.0  # <- refused
    return np.sum(y + z)


def write_one_of_two(x):
    a, b = _twice(x)
    a += 1.0  # <- refused
    return np.sum(a + b)


def write_beside_a_view(x):
    a, b = _and_a_view(x)
    a *= 2.0  # <- refused
    return np.sum(a) + np.sum(b)


def write_beside_a_written_view(x):
    a, b = _with_a_written_view(x)
    a += 10.0  # <- refused
    return np.sum(a) + np.sum(b)


def write_a_runtime_item(x, y, i):
    t = (x * 1.0, y * 1.0)[i]
    t += 1.0  # <- refused
    return np.sum(t)


def errstate_raise(x):
    with np.errstate(divide="raise"):  # <- refused
        y = 1.0 / x
    return np.sum(y)


def with_open(x):
    with open("f") as fh:  # <- refused
        pass
    return x


def errstate_as(x):
    with np.errstate(all="ignore") as state:  # <- refused
        y = x
    return y


def errstate_positional(x):
    with np.errstate("ignore"):  # <- refused
        y = x
    return y


def triangle_of_a_runtime_size(x, n):
    return np.sum(x[np.triu_indices(n)])  # <- refused


def dict_branch_iterated(x):
    if x > 0.0:
        d = {"u": x, "v": 2.0 * x}
    else:
        d = {"v": x * x, "u": -x}
    u, v = d.values()  # <- refused
    return u * v


def dict_loop_reordered(x, n):
    d = {"u": x, "v": x}
    # a known n: one copy of the body per iteration (tests/frontend/test_known_loops.py)
    for i in range(n):  # <- refused
        d = {"v": d["u"], "u": d["v"] * x}
    return d["u"]


def dict_update(x):
    d = dict(a=x)
    d.update(b=x)  # <- refused
    return d["a"]


def dict_int_keys(x):
    d = dict([(1, x)])  # <- refused
    return d[1]


def tuple_mixed_types(x, i):
    return (x, 2)[i]  # <- refused


def tuple_of_functions(x, i):
    return (np.sin, np.cos)[i](x)  # <- refused


def round_runtime_digits(x, n):
    return round(x, n)  # <- refused


def astype_float16(x):
    return np.sum(x.astype("float16"))  # <- refused


def astype_not_a_dtype(x):
    return np.sum(x.astype("floatish"))  # <- refused


def sum_axes(x):
    return np.sum(x, axes=0)  # <- refused


def method_sum_axes(x):
    return x.sum(axes=0)  # <- refused


def mean_dtype(x):
    return np.mean(x, dtype=np.float32)  # <- refused


def sum_positional_dtype(x):
    return np.sum(x, 0, np.float32)  # <- refused


def sum_repeated(x):
    return np.sum(x, 0, axis=0)  # <- refused


def reshape_order(x):
    return np.sum(x.reshape(3, order="F"))  # <- refused


def transpose_keyword(x):
    return np.sum(x.transpose(axes=(1, 0)))  # <- refused


def sin_keyword(x):
    return math.sin(x=x)  # <- refused


def round_keyword(x):
    return round(x, digits=2)  # <- refused


def too_many_positional(x):
    return np.sum(x, 0, None, None, False, 0.0, True, 1)  # <- refused


REFUSED = [
    (write_first_row, (X23,), "in-place write to 'r', which may be a view of another array"),
    (write_the_argument_back, (x3,), "in-place write to 'z', which may be a view of another array"),
    (write_one_of_two, (x3,), "in-place write to 'a', which may be a view of another array"),
    (write_beside_a_view, (x3,), "in-place write to 'a', which may be a view of another array"),
    (write_beside_a_written_view, (0.5,), "in-place write to 'a', which may be a view of another array"),
    (write_a_runtime_item, (x3, y3, 0), "in-place write to 't', which may be a view of another array"),
    (errstate_raise, (x3,), r"np.errstate\(divide='raise'\): irad's floating-point arithmetic follows IEEE 754"),
    (with_open, (1.0,), r"a `with` statement is supported only for np.errstate\(...\)"),
    (errstate_as, (1.0,), r"`with np.errstate\(...\) as name`"),
    (errstate_positional, (1.0,), "np.errstate takes its settings by keyword"),
    (triangle_of_a_runtime_size, (x3, 2), "n must be known while lowering"),
    (dict_branch_iterated, (1.0,), "this dict had its keys inserted in different orders"),
    (dict_loop_reordered, (1.0, 3), "inserts the keys of the dict 'd' in another order"),
    (dict_update, (1.0,), r"dict.update\(\) changes the dict"),
    (dict_int_keys, (1.0,), "a dict key must be a str known while lowering"),
    (tuple_mixed_types, (1.0, 0), r"the items of this tuple have different types \(float \(f64\) and int \(i64\)\)"),
    (tuple_of_functions, (1.0, 0), "irad must know which item while lowering"),
    (round_runtime_digits, (1.0, 2), "round\\(x, ndigits\\) needs ndigits known while lowering"),
    (astype_float16, (x3,), "dtype 'float16' is not supported"),
    (astype_not_a_dtype, (x3,), "'floatish' is not a numpy dtype"),
    (sum_axes, (x3,), r"np.sum got an unexpected keyword argument 'axes' \(did you mean 'axis'\?\)"),
    (method_sum_axes, (x3,), "np.sum got an unexpected keyword argument 'axes'"),
    (mean_dtype, (x3,), "np.mean: irad does not support its argument 'dtype'"),
    (sum_positional_dtype, (x3,), "np.sum: irad does not support its argument 'dtype'"),
    (sum_repeated, (x3,), "np.sum got multiple values for the argument 'axis'"),
    (reshape_order, (x3,), "x.reshape: irad does not support its argument 'order'"),
    (transpose_keyword, (X23,), "x.transpose got an unexpected keyword argument 'axes'"),
    (sin_keyword, (1.0,), "the keyword argument 'x' of math.sin is not supported"),
    (round_keyword, (1.0,), "round\\(\\) got an unexpected keyword argument 'digits'"),
    (too_many_positional, (x3,), r"np.sum takes at most 7 positional arguments \(8 given\)"),
]


@pytest.mark.parametrize("f, args, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_constructs_name_the_line(f, args, message):
    check_refused(f, args, message)


def test_python_raises_for_what_irad_refuses():
    """The refusals above that are errors in Python/numpy too are refused the same way."""
    with pytest.raises(TypeError, match="unexpected keyword argument 'axes'"):
        sum_axes(x3)
    with pytest.raises(TypeError):
        sum_repeated(x3)
    with pytest.raises(FloatingPointError):
        errstate_raise(np.zeros(3))


def _squeezed_max(a):
    m = np.max(a, axis=(0, 1), keepdims=True)
    return np.log(np.sum(np.exp(a - m), axis=(0, 1))) + np.squeeze(m, axis=(0, 1))


def _reshaped_corner(a):
    return np.reshape(a[:1, :1], ()) * 2.0 + np.sum(a)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [_squeezed_max, _reshaped_corner], ids=lambda f: f.__name__)
def test_a_0d_array_with_a_number_is_a_number(f, backend):
    """numpy: a 0-d array (np.squeeze of a (1, 1) array) combined with a number
    gives a number; irad once built an addf of a tensor<f64> and an f64."""
    x = np.arange(12.0).reshape(3, 4) / 10
    value, g = irad.value_and_grad(f, backend=backend)(x)
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (x,), 0), rtol=1e-6, atol=1e-8)
