"""Types that meet at control flow (irad/frontend/joins.py) and types that are
learned while lowering: loops, branches and recursion (issue 13, items 6, 12, 14).

Each program's value is checked against plain Python/numpy and its gradient
against central finite differences (irad.testing.check_grad), on the Python
backend and natively."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import UnsupportedError
from irad.testing import check_grad

NATIVE = pytest.param(
    "native",
    marks=[pytest.mark.native, pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))],
)
BACKENDS = ["python", NATIVE]


def scalar_accumulator_of_rows(X):
    acc = 0.0  # a float that the loop makes an array
    for i in range(X.shape[0]):
        acc = acc + X[i]
    return np.sum(acc * acc)


def int_accumulator_of_rows(X):
    acc = 0
    for i in range(X.shape[0]):
        acc = acc + X[i] * (i + 1)
    return np.sum(np.sin(acc))


def number_or_array(x, c):
    if c > 0:
        y = 1.0
    else:
        y = x * 2.0
    return np.sum(y * x)


def float32_or_float64(x, c):
    y = x  # float32 on one path, float64 on the other: float64 after
    if c > 0:
        y = x * np.ones(3)
    return np.sum(y * y)


def doubled(x, n):
    if n == 0:
        return x
    return doubled(x * 2.0, n - 1)


def recursion_returning_an_array(x):
    return np.sum(np.sin(doubled(x, 3)))


def powers(x, d):
    if d == 0:
        return x, 1.0
    a, b = powers(x, d - 1)  # unpacks its own tuple result
    return a * x, b + a


def recursion_returning_a_tuple(x):
    a, b = powers(x, 3)
    return a + b


def power_of(q, d):
    return q ** d


def int_start_made_float_by_a_call(x, n):
    s = 0  # an int until x joins; while it is an int, q ** d would be refused
    for i in range(n):
        s = s + x + power_of(s, n)
    return s


def shape_differs_after_a_return(x, c):
    r = x * 0.0
    if c > 5.0:
        return c
    else:
        r = x[1:]  # only this path goes on, so r's shape is that of x[1:]
    return np.sum(r)


def conditional_number_or_array(x, c):
    y = 1.5 if c > 0 else x * 2.0
    return np.sum(y * x)


def conditional_shapes_differ(x, c):
    y = x if c > 0 else x[1:]
    return np.sum(y)


# found by the fuzzer: len() and shapes are known while lowering (Static), and
# were refused where they met a run-time int ("holds different kinds of values")
def length_or_runtime_int(x, k):
    n = len(x) % 2
    if np.sum(x) > 0.0:
        n = k
    return np.sum(x) * n


def runtime_int_or_length(x, k):
    if np.sum(x) > 0.0:
        k = x.shape[0] + 1
    return np.sum(x) * k


def length_counted_down(x, k):
    n = len(x)
    for i in range(k):
        n = n - 1
    return np.sum(x[:2]) * n


def length_or_size_in_a_tuple(x, k):
    t = (len(x), x.size * 2)
    j = 0
    while j < k:
        j += 1
        t = (t[1], t[0] + j)
    return np.sum(x) * t[0] + t[1]


ARRAY = np.array([0.3, -1.2, 0.7])
MATRIX = np.array([[0.5, -0.2], [1.5, 0.1], [-0.7, 0.9]])
CASES = [
    (scalar_accumulator_of_rows, (MATRIX,)),
    (int_accumulator_of_rows, (MATRIX,)),
    (number_or_array, (ARRAY, 1.0)),
    (number_or_array, (ARRAY, -1.0)),
    (float32_or_float64, (ARRAY.astype(np.float32), 1.0)),
    (float32_or_float64, (ARRAY.astype(np.float32), -1.0)),
    (recursion_returning_an_array, (ARRAY,)),
    (recursion_returning_a_tuple, (0.7,)),
    (int_start_made_float_by_a_call, (0.7, 2)),
    (int_start_made_float_by_a_call, (-0.4, 3)),
    (shape_differs_after_a_return, (ARRAY, 1.0)),
    (shape_differs_after_a_return, (ARRAY, 7.0)),
    (conditional_number_or_array, (ARRAY, 1.0)),
    (conditional_number_or_array, (ARRAY, -1.0)),
    (length_or_runtime_int, (ARRAY, 3)),
    (length_or_runtime_int, (-ARRAY, 3)),
    (runtime_int_or_length, (ARRAY, 3)),
    (runtime_int_or_length, (-ARRAY, 3)),
    (length_counted_down, (ARRAY, 2)),
    (length_or_size_in_a_tuple, (ARRAY, 3)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f,args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(CASES)])
def test_joined_types_give_numpys_value_and_gradient(f, args, backend):
    value, _ = irad.value_and_grad(f, backend=backend)(*args)
    expected = f(*args)
    tol = 1e-5 if any(getattr(a, "dtype", None) == np.float32 for a in args) else 1e-12
    assert value == pytest.approx(float(expected), rel=tol, abs=tol)
    if all(getattr(a, "dtype", np.float64) == np.float64 for a in args):
        check_grad(f, *args)


def rows_of_different_shapes(x, c):
    if c > 0:
        y = x
    else:
        y = x[1:]
    return np.sum(y)


def loop_changes_the_shape(x, n):
    y = x
    for i in range(n):  # a known n: one copy of the body per iteration, each its shape
        y = y[1:]
    return np.sum(y)


@pytest.mark.parametrize(
    "f,message",
    [
        (rows_of_different_shapes, r"test_joins.py:\d+:\d+: 'y' has no common type after this branch: "
         r"float64 array of shape \(3,\).* on one path and float64 array of shape \(2,\).* on the other"),
        (conditional_shapes_differ, r"test_joins.py:\d+:\d+: the two values of this conditional expression "
         r"have no common type: float64 array of shape \(3,\).* on one path and float64 array of shape \(2,\)"),
        (loop_changes_the_shape, r"test_joins.py:\d+:\d+: 'y' has no common type across the iterations "
         r"of this loop: float64 array of shape \(3,\).* before an iteration, float64 array of shape \(2,\)"),
    ],
)
def test_arrays_of_different_shapes_do_not_join(f, message):
    args = (ARRAY, 2) if f is loop_changes_the_shape else (ARRAY, 1.0)
    with pytest.raises(UnsupportedError, match=message):
        irad.grad(f)(*args)


# ---- a number that a join holds as an array (irad/frontend/number_joins.py) --------------
# numpy keeps the number on its path; irad holds it as an array of the join's
# shape, which is exact only beside an array of that shape in elementwise arithmetic.
# Found by fuzzing the mission's edge area (a loop-carried float that becomes an
# array): silently wrong values and gradients (np.sum(full(3, x)) for np.sum(x))
# before the check.


def number_then_array_runtime_trips(x, w, k):
    s = x
    for i in range(k):  # k == 0 leaves s the number x
        s = s * w
    return np.sum(s)


def number_then_array_in_a_while(x, w, k):
    s = x
    j = 0
    while j < k:
        j += 1
        s = s + w
    return np.mean(s)


def number_then_array_assigned_in_an_if(x, w, k):
    s = x
    for i in range(3):  # runs, but may not make s an array
        if i < k:
            s = s * w
    return np.sum(s)


def number_reduced_in_the_first_iteration(x, w):
    s = x
    for i in range(3):
        s = np.sum(s) * w  # the first iteration sums the number x, not full(3, x)
    return np.sum(s)


def number_or_array_returned(x, w, k):
    s = x
    if k > 0:
        s = w * x
    return s * 1.0


def array_then_number(x, w, k):
    s = w
    for i in range(k):
        s = x * 2.0
    return np.sum(s)


def number_then_array_product(x, w, k):
    s = x
    if k > 1:
        s = w
    return np.sum(np.outer(s * 2.0, w))  # numpy: (1, 3) for the number, not (3, 3)


def number_then_array_unless_broken_first(x, w, k):
    s = x
    for i in range(2):
        if k > 0:
            break  # before s becomes an array: numpy's s is the number x
        s = s * w
    return np.sum(s)


NUMBER_JOINS = [
    (number_then_array_unless_broken_first, (0.7, ARRAY, 1), "into this loop"),
    (number_then_array_runtime_trips, (0.7, ARRAY, 0), "into this loop"),
    (number_then_array_in_a_while, (0.7, ARRAY, 0), "into this loop"),
    (number_then_array_assigned_in_an_if, (0.7, ARRAY, 0), "into this loop"),
    (number_reduced_in_the_first_iteration, (0.7, ARRAY), "into this loop"),
    (number_or_array_returned, (0.7, ARRAY, 0), "into this `if`"),
    (array_then_number, (0.7, ARRAY, 2), "into this loop"),
    (number_then_array_product, (0.7, ARRAY, 0), "into this `if`"),
]


@pytest.mark.parametrize("f,args,join", NUMBER_JOINS, ids=[f.__name__ for f, _, _ in NUMBER_JOINS])
def test_a_number_held_as_an_array_is_refused_where_its_shape_shows(f, args, join):
    """On the path where the variable is a number, numpy's value is not irad's:
    a clear error at the join, never a silently wrong value."""
    with pytest.raises(UnsupportedError, match=rf"test_joins.py:\d+:\d+: 's' is a number on one path {join} "
                       r"and an array on another: irad's types are static.*\n  hint: give it an array"):
        irad.value_and_grad(f, argnums=0)(*args)


def number_then_array_of_known_trips(x, w):
    s = x
    for i in range(2):  # runs at least once, and the first iteration's use is elementwise
        s = s * w + 1.0
    return np.sum(s)


def number_then_array_carried_on(x, w, k):
    s = x
    for i in range(k):
        s = s + w  # maybe the number x: exact in elementwise arithmetic beside w
    return np.sum(np.sin(s * 0.5) * w)


def number_then_array_then_broken(x, w, k):
    s = x
    for i in range(3):
        s = s * w  # an array from the first iteration on; later ones may be skipped
        if i >= k:
            break
    return np.sum(s)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f,args", [(number_then_array_of_known_trips, (0.7, ARRAY)),
                                    (number_then_array_then_broken, (0.7, ARRAY, 0)),
                                    (number_then_array_then_broken, (0.7, ARRAY, 2)),
                                    (number_then_array_carried_on, (0.7, ARRAY, 0)),
                                    (number_then_array_carried_on, (0.7, ARRAY, 2))])
def test_a_number_held_as_an_array_is_exact_beside_an_array(f, args, backend):
    value, _ = irad.value_and_grad(f, backend=backend)(*args)
    assert value == pytest.approx(float(f(*args)), rel=1e-12, abs=1e-12)
    check_grad(f, *args)


def int_number_sets_a_dtype(x, n):
    m = 1
    for i in range(n):
        m = m * 0.5  # an int if the loop does not run: np.full makes an int array then
    a = np.full(3, m)
    a[0] = x  # numpy casts x to int on that path
    return np.sum(a * x)


def int_number_in_an_array(x, c):
    n = 2
    if c > 0.0:
        n = max(n * 0.5, 0)
    b = np.array([n, 2 * n, 1])  # an int array where c <= 0
    b[1:] = x[:2]
    return np.sum(b * x)


@pytest.mark.parametrize("f,args", [(int_number_sets_a_dtype, (0.7, 0)), (int_number_in_an_array, (ARRAY, -1.0))])
def test_an_int_on_one_path_that_sets_an_arrays_dtype_is_not_written(f, args):
    """A number that is an int on one path and a float on another is a float in
    irad; an array made of it is an int array in numpy on the int's path, which
    casts what is written into it. Silently wrong before (np.full(3, m) written)."""
    with pytest.raises(UnsupportedError, match=r"test_joins.py:\d+:\d+: a write into an array that numpy holds as "
                       r"ints .*: \S*test_joins.py:\d+:\d+: '\w' is an int on one path into this (loop|`if`) and a "
                       r"float on another"):
        irad.value_and_grad(f)(*args)


def int_number_as_a_number(x, n):
    m = 1
    for i in range(n):
        m = m * 0.5
    a = np.full(3, 2.0) * m  # a float array either way
    a[0] = x
    return np.sum(a * x) + m * x


@pytest.mark.parametrize("n", [0, 2])
def test_an_int_on_one_path_is_exact_as_a_number(n):
    value, _ = irad.value_and_grad(int_number_as_a_number)(0.7, n)
    assert value == pytest.approx(int_number_as_a_number(0.7, n), rel=1e-12)
    check_grad(int_number_as_a_number, 0.7, n)


def int_power_of_an_int(x, n):
    s = 0
    for i in range(n):
        s = s + power_of(i, n)  # int ** int stays an int: the refusal is real
    return x * s


def test_widening_a_provisional_int_does_not_hide_a_real_error():
    with pytest.raises(UnsupportedError, match=r"int \*\* int with a runtime exponent"):
        irad.grad(int_power_of_an_int)(0.5, 3)


def test_recursion_learns_its_tuple_result_from_the_base_case():
    # d/dx (x^4 + 1 + x + x^2 + x^3)
    assert irad.grad(recursion_returning_a_tuple)(0.7) == pytest.approx(4 * 0.7**3 + 1 + 2 * 0.7 + 3 * 0.7**2)
    assert math.isclose(irad.value_and_grad(recursion_returning_a_tuple)(0.7)[0], recursion_returning_a_tuple(0.7))


# ---- float32 through a loop's tape (issue 13, item 10) ------------------------------------
# Natively these were silently wrong: two pushes of one value (CSE'd) went through
# one bufferization.to_buffer, whose buffer bufferization reused for another result.


def halves_around_exp(w):
    a = w
    for i in range(1):
        a = 0.5 * a + np.exp(w)
        a = 0.5 * a
    return np.sum(a)


def scalar_factor_in_a_loop(w, x):
    s = 0.5
    for i in range(1):
        s *= x
    return np.sum(np.sin(w) * (np.sin(w) * s))


def repeated_factor(w):
    a = w
    for i in range(3):
        a = 0.5 * np.tanh(a) + 0.5 * w
    return np.sum(a * a)


W32 = np.array([1.43, 0.85, 1.07], np.float32)
FLOAT32_CASES = [
    (halves_around_exp, (W32,), 0),
    (scalar_factor_in_a_loop, (W32, np.float32(0.7)), 0),
    (scalar_factor_in_a_loop, (W32, np.float32(0.7)), 1),
    (repeated_factor, (W32,), 0),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f,args,argnum", FLOAT32_CASES, ids=[f"{c[0].__name__}-{c[2]}" for c in FLOAT32_CASES])
def test_float32_through_a_tape_matches_float64_differences(f, args, argnum, backend):
    grads = irad.grad(f, argnums=(0, 1) if len(args) == 2 else 0, backend=backend)(*args)
    got = np.asarray(grads[argnum] if len(args) == 2 else grads, dtype=np.float64)
    wide = tuple(np.asarray(a, dtype=np.float64) for a in args)
    x = wide[argnum]
    expected = np.zeros_like(x)
    for k in np.ndindex(x.shape):
        h = 1e-6
        up, down = [a.copy() for a in wide], [a.copy() for a in wide]
        up[argnum][k] += h
        down[argnum][k] -= h
        expected[k] = (f(*up) - f(*down)) / (2 * h)
    np.testing.assert_allclose(got, expected, rtol=2e-5, atol=2e-5)


def numbered_names(w, x):
    w = w + x  # printed %w_1
    w = w * x  # printed %w_2
    w_2_4 = w * 2.0  # hint "w_2" once xDSL strips "_4": it printed as a second %w_2
    return np.sum(w * w_2_4)


def test_variables_with_numbered_names_print_as_valid_ir():
    # found by the fuzzer: the printed module redefined %w_2, and mlir-opt refused it
    from irad.backends.native.mlir_tools import mlir_opt_parses, find_tool

    check_grad(numbered_names, ARRAY, 0.5)
    if find_tool("mlir-opt") is not None:
        ok, diagnostics = mlir_opt_parses(str(irad.lower(numbered_names, ARRAY, 0.5)))
        assert ok, diagnostics


# ---- what a variable holds after a join: Python's scoping ------------------------------
# A variable is local to its function wherever it is assigned (Python's rule). Where irad
# gives it no value (one arm assigned it, the two paths' values cannot be joined, an
# scf.for loop created it), reading it is an error naming why; before, a read fell back
# on a global of the same name (silently wrong) and refused values never read.
Y = 10.0  # read by nothing below: each function has a local Y


def assigned_in_one_arm_read_after_a_return(x):
    if x > 0.0:
        return x * x
    else:
        Y = 2.0 * x  # the other arm returned: after the `if`, Y is this one
    return Y * x


def closure_reads_a_local_set_before_the_call(x):
    def g(t):
        return t * Y

    if x > 0.0:
        Y = 2.0 * x
    else:
        Y = 3.0
    return g(x)


def function_per_item_unused_after(x):
    total = 0.0
    for fn in (np.sin, np.cos):  # fn differs on the paths of the break's join, and is not read
        total = total + fn(x)
        if total > 1.2:
            break
    return total


def string_per_item_unused_after(x):
    for s in ("a", "b"):
        x = x * 2.0 if s == "a" else x + 1.0
        if x > 3.0:
            break
    return x


def array_shared_by_a_name_without_a_value(w, c):
    z = np.zeros(3)
    if c > 0:
        y = z  # y shares z on one path, holds a tuple on the other: no value after
    else:
        y = (z, z)
    z[1] = 2.0  # the write goes to z alone
    return np.sum(z * w) + np.sum(w * w)


BINDINGS = [
    (array_shared_by_a_name_without_a_value, (ARRAY, 1.0)),
    (array_shared_by_a_name_without_a_value, (ARRAY, -1.0)),
    (assigned_in_one_arm_read_after_a_return, (0.7,)),
    (assigned_in_one_arm_read_after_a_return, (-0.7,)),
    (closure_reads_a_local_set_before_the_call, (0.7,)),
    (closure_reads_a_local_set_before_the_call, (-0.7,)),
    (function_per_item_unused_after, (0.3,)),
    (function_per_item_unused_after, (1.0,)),
    (string_per_item_unused_after, (0.5,)),
    (string_per_item_unused_after, (2.0,)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f,args", BINDINGS, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(BINDINGS)])
def test_a_variable_after_a_join_holds_pythons_value(f, args, backend):
    value, _ = irad.value_and_grad(f, backend=backend)(*args)
    assert value == pytest.approx(f(*args), rel=1e-12, abs=1e-12)
    check_grad(f, *args)


def global_shadowed_in_one_arm(x):
    if x > 0.0:
        Y = 2.0 * x
    return x + Y  # was x + 10.0 (the global Y) on every path


def global_shadowed_in_a_closure(x):
    def g(t):
        return t * Y

    if x > 0.0:
        Y = 2.0
    return g(x)  # was x * 10.0


def global_shadowed_after_a_loop(x, n):
    for i in range(n):
        Y = x * i
    return Y


def global_shadowed_before_assignment(x):
    z = x * Y  # Python: UnboundLocalError
    Y = 1.0
    return z + Y


def closure_called_before_the_assignment(x):
    def g(t):
        return t * Y

    z = g(x)  # Python: NameError (free variable 'Y' referenced before assignment)
    Y = 1.0
    return z + Y


def two_defs_on_two_paths(x):
    if x > 0.0:
        g = lambda t: 2.0 * t  # noqa: E731
    else:
        g = lambda t: 3.0 * t  # noqa: E731
    return g(x)


def one_def_with_other_static_defaults(x):
    for s in ("a", "b"):
        def g(t, s=s):
            return t if s == "a" else 2.0 * t

        if x > 5.0:
            break
    return g(x)


@pytest.mark.parametrize(
    "f,args,message",
    [
        (global_shadowed_in_one_arm, (0.5,), r"'Y' has no value here: it is assigned on only one path of the "
         r"branch at \S+test_joins.py:\d+:5"),
        (global_shadowed_in_a_closure, (0.5,), r"global_shadowed_in_a_closure.g reads 'Y', which has no value "
         r"where it is called: it is assigned on only one path of the branch"),
        (global_shadowed_after_a_loop, (0.5, 2), r"'Y' has no value here: it is first assigned inside the loop "
         r"at \S+test_joins.py:\d+:5, and irad keeps no variable"),
        (global_shadowed_before_assignment, (0.5,), r"'Y' has no value here: global_shadowed_before_assignment "
         r"assigns it, but not before this line on every path \(Python would raise UnboundLocalError\)"),
        (closure_called_before_the_assignment, (0.5,), r"closure_called_before_the_assignment.g reads 'Y', "
         r"which has no value where it is called: it is not assigned before the call on every path"),
        (two_defs_on_two_paths, (0.5,), r"'g' has no value here: it holds different kinds of values on the two "
         r"paths of the branch at \S+:\d+:5 \(the function two_defs_on_two_paths.lambda \(defined at line (\d+)\) "
         r"and the function two_defs_on_two_paths.lambda \(defined at line (?!\1)\d+\)\)"),
        (one_def_with_other_static_defaults, (0.5,), r"'g' has no value here: it holds the function "
         r"one_def_with_other_static_defaults.g \(defined at line \d+\) on the two paths of the branch at \S+, "
         r"with default values that differ in what is known while lowering"),
    ],
    ids=lambda v: v.__name__ if callable(v) else "",
)
def test_a_variable_without_a_value_is_refused_where_it_is_read(f, args, message):
    with pytest.raises(UnsupportedError, match=message) as info:
        irad.grad(f)(*args)
    assert "\n  hint: " in str(info.value)


# ---- isinstance of a number that is an int on one path and a float on another ----------
def isinstance_after_a_branch(x, a=0.5):
    q = float(x[1]) - 2.0
    v = a if q else -3          # Python: -3, an int, where q is 0
    return np.sum(x) * (v + 0.25 if isinstance(v, float) else float(v))


def isinstance_after_a_loop(x):
    v = 1
    for i in range(3):
        if x[1] > i + 5.0:
            v = v * 0.5
    return np.sum(x) * (v + 0.25 if isinstance(v, float) else float(v))


def _use(v):
    return v + 0.25 if isinstance(v, float) else float(v)


def isinstance_in_a_helper(x, a=0.5):
    q = float(x[1]) - 2.0
    v = a if q else -3   # the static fuzzer's case: the helper's isinstance saw a float where Python's sees -3
    return np.sum(x) * _use(v)


@pytest.mark.parametrize("f, where", [(isinstance_after_a_branch, "into this conditional expression"),
                                      (isinstance_after_a_loop, "'v' is an int on one path into this loop"),
                                      (isinstance_in_a_helper, "into this conditional expression")])
def test_isinstance_of_an_int_held_as_a_float_is_refused(f, where):
    # irad holds the join as a float, so isinstance would answer float where Python answers int
    assert irad.grad(lambda x: np.sum(x) * _use(0.5 if x[0] > 0 else 1.5))(np.ones(2)).tolist() == [0.75, 0.75]
    with pytest.raises(UnsupportedError, match=f"isinstance of a value that is an int on one path.*{where}"):
        irad.grad(f)(np.array([0.5, 2.0]))


# ---- isinstance of a number whose Python class differs between paths (number_classes.py) -------
# Each gave a value other than Python's before the classes were followed (the
# brief's known hole first: a bool/int join answered int, so isinstance(v, bool) was False).
def bool_or_int_after_a_branch(x):
    v = True
    if x[0] > 0.0:
        v = 3
    return np.sum(x) * (2.0 if isinstance(v, bool) else 5.0)


def bool_or_int_after_a_loop(x):
    v = 1
    for i in range(int(np.argmax(x))):
        v = False
    return np.sum(x) * (7.0 if isinstance(v, bool) else 3.0)


def _returns_bool_or_int(c):
    if c > 0.0:
        return True
    return 3


def bool_or_int_returned_by_a_helper(x):
    v = _returns_bool_or_int(x[0])
    return np.sum(x) * (1.0 if isinstance(v, bool) else 3.0)


def _returns_int_or_float(c):
    if c > 0.0:
        return 2
    return 1.5


def int_or_float_returned_by_a_helper(x):
    v = _returns_int_or_float(x[0])
    return np.sum(x) * (1.0 if isinstance(v, float) else 3.0)


def _class_factor(v, x):
    return np.sum(x) * (1.0 if isinstance(v, bool) else 3.0)


def bool_or_int_passed_to_a_helper(x):
    v = 4
    if x[0] > 0.0:
        v = False
    return _class_factor(v, x)


def bool_or_float_asked_bool(x):
    v = True
    if x[0] > 0.0:
        v = 2.5
    return np.sum(x) * (1.0 if isinstance(v, bool) else 3.0)


def int_or_float_times_two(x):
    v = 2
    if x[0] > 0.0:
        v = 1.5
    w = v * 2                   # an int where v is: Python's int * int
    return np.sum(x) * (1.0 if isinstance(w, float) else 3.0)


def numpy_bool_or_int(x):
    v = x[0] > 0.0              # numpy's bool: not a bool, and not an int
    if x[1] > 0.0:
        v = 2
    return np.sum(x) * (1.0 if isinstance(v, int) else 3.0)


@pytest.mark.parametrize("f", [bool_or_int_after_a_branch, bool_or_int_after_a_loop, bool_or_int_returned_by_a_helper,
                               int_or_float_returned_by_a_helper, bool_or_int_passed_to_a_helper,
                               bool_or_float_asked_bool, int_or_float_times_two, numpy_bool_or_int])
def test_isinstance_of_a_number_of_two_classes_is_refused(f):
    with pytest.raises(UnsupportedError, match=r"isinstance of a value that is .* on one path and .* on another \(.*"
                                               r"on one path into") as info:
        irad.grad(f)(np.array([0.5, 2.0]))
    assert "\n  hint: " in str(info.value)


def int_or_bool_asked_int(x, k):
    v = k > 2                   # Python's bool: an int too
    if x[0] > 0.0:
        v = k
    u = 0.5
    if x[1] > 0.0:
        u = 2                   # an int or a float: a number either way
    return np.sum(x) * (1.0 if isinstance(v, int) else 3.0) * (2.0 if isinstance(u, (int, float)) else 5.0)


def int_argument_asked_int(x, k):
    return np.sum(x) * (1.0 if isinstance(k, int) else 3.0)


def _scaled_product(k, x):
    if k <= 0:
        return np.sum(x)
    return x[0] * _scaled_product(k - 1, x) * (1.0 if isinstance(k - 1, int) else 2.0)  # numpy's k - 1: np.int64


def int_argument_through_recursion(x, k):
    return _scaled_product(k, x)


@pytest.mark.parametrize("f, args", [(int_or_bool_asked_int, (np.array([0.5, 2.0]), 3)),
                                     (int_argument_through_recursion, (np.array([1.5, 2.0]), 3)),
                                     (int_argument_through_recursion, (np.array([1.5, 2.0]), np.int64(3))),
                                     (int_argument_asked_int, (np.array([0.5, 2.0]), 3)),
                                     (int_argument_asked_int, (np.array([0.5, 2.0]), np.int64(3)))])  # not an int
def test_isinstance_with_one_answer_on_every_path_is_python_s(f, args):
    assert irad.value_and_grad(f)(*args)[0] == pytest.approx(f(*args), rel=1e-15)
