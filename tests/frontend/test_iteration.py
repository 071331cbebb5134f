"""Iteration over what has a static length: zip, enumerate, reversed, rows of an
array, tuple and list items, comprehensions and sum(...). Values against the
programs run as numpy, gradients against central differences in float64, on
both backends; the lowered IR is an scf.for or unrolled as documented."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from tests.frontend import iteration_programs as ip
from tests.reference import BACKENDS, check_against_numpy, check_refused, lowered_text



@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ip.PROGRAMS, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(ip.PROGRAMS)])
def test_iteration_matches_numpy(case, backend):
    f, make = case
    check_against_numpy(f, make(np.random.default_rng(1)), backend)


@pytest.mark.parametrize("f, args", [
    (ip.rows_of_matrix, (np.ones((500, 3)),)),
    (ip.enumerate_array, (np.ones(1000),)),
    (ip.zip_arrays, (np.ones(700), np.ones(700))),
    (ip.sum_generator, (np.ones(2000),)),
    (ip.reversed_range_step, (np.ones(9), 7)),
])
def test_walks_without_tuples_are_one_scf_for(f, args):
    text = lowered_text(f, *args)
    assert text.count("scf.for") == 1, text
    assert len(text.splitlines()) < 80  # the body once, however many rows


@pytest.mark.parametrize("f, args, copies", [
    (ip.tuple_of_values, (1.0,), 3),
    (ip.tuple_of_functions, (np.ones(2),), 3),
    (ip.zip_tuple_and_array, (np.ones(5),), 3),
])
def test_tuple_items_are_unrolled(f, args, copies):
    text = lowered_text(f, *args)
    assert "scf.for" not in text
    if f is ip.tuple_of_functions:
        assert all(op in text for op in ("math.sin", "math.cos", "math.tanh"))


def test_list_comprehension_is_a_tuple_of_static_length():
    text = lowered_text(ip.list_comprehension_of_rows, np.ones((3, 2)))
    assert "scf.for" not in text and text.count("math.sqrt") == 3


def test_large_static_range_stays_a_loop():
    def big(x):
        s = 0.0
        for i, v in enumerate(range(100000)):
            s += x * v
        return s

    assert lowered_text(big, 1.0).count("scf.for") == 1
    assert irad.grad(big)(1.0) == float(sum(range(100000)))


# ---- refused: a clear error at the line ------------------------------------------------------
def comprehension_over_runtime_range(x, n):
    return [x for i in range(n)][0]  # <- refused


def comprehension_with_runtime_condition(x):
    return [v for v in (x, 2.0 * x) if v > 0.0][0]  # <- refused


def iterate_a_float(x):
    s = 0.0
    for v in x:  # <- refused
        s += v
    return s


def reversed_zip(x, y):
    s = 0.0
    for a, b in reversed(zip(x, y)):  # <- refused
        s += a * b
    return s


def zip_strict_unequal(x, y):
    s = 0.0
    for a, b in zip(x, y, strict=True):  # <- refused
        s += a * b
    return s


def tuple_zipped_with_runtime_range(x, n):
    s = 0.0
    for a, i in zip((x, x), range(n)):  # <- refused
        s += a * i
    return s


def set_comprehension(x):
    return len({v for v in (x, x)})  # <- refused


def iterate_0d(x):
    s = 0.0
    for v in x[0, 0]:  # <- refused
        s += v
    return s


def created_after_a_continue(x):
    for i in range(3):
        if x[i] < 0:
            continue
        last = x[i]
    return last  # <- refused


def created_in_a_loop_that_may_not_run(x, n):
    for i in range(n):
        last = x * i
    return last  # <- refused


def created_after_a_read(x):
    for i in range(3):
        x = x * 2.0
        y = x + 1.0
    return np.sum(x + y * y)


def created_by_an_inner_loop(x):
    for i in range(3):
        for j in range(2):
            inner = x * (i + j)
        x = x + inner
    return x + inner  # <- refused


REFUSED = [
    (created_after_a_continue, (np.array([0.5, -1.0, 2.0]),), "'last' has no value here: it is first assigned "
     "inside the loop at .*, and irad keeps no variable the body of a `while` or of a `for` over a range"),
    (created_in_a_loop_that_may_not_run, (np.ones(2), 3), "'last' has no value here: it is first assigned inside"),
    (created_by_an_inner_loop, (np.ones(2),), "'inner' has no value here: it is first assigned inside"),
    (comprehension_over_runtime_range, (1.0, 3), "a comprehension over a range whose length is only known at run time"),
    (comprehension_with_runtime_condition, (1.0,), "must be known while lowering"),
    (iterate_a_float, (1.0,), r"iteration over a float \(f64\) value is not supported"),
    (reversed_zip, (np.ones(2), np.ones(2)), r"reversed\(\) of zip or enumerate is not supported"),
    (zip_strict_unequal, (np.ones(2), np.ones(3)), r"zip\(strict=True\) of sequences of different lengths"),
    (tuple_zipped_with_runtime_range, (1.0, 2), "a range whose length is only known at run time"),
    (set_comprehension, (1.0,), "a set comprehension is not supported"),
    (iterate_0d, (np.ones((2, 2)),), r"iteration over a float \(f64\) value"),
]


@pytest.mark.parametrize("f, args, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_iteration_names_the_line(f, args, message):
    check_refused(f, args, message)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_variable_created_after_other_statements_is_kept(backend):
    check_against_numpy(created_after_a_read, (np.array([0.5, -1.0]),), backend)


# ---- any shape: the same loop code walks every length ------------------------------------------
@settings(max_examples=8, deadline=None)
@given(rows=st.integers(1, 6), cols=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_loops_over_any_shape_match_numpy(rows, cols, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(rows, cols))
    for f in (ip.rows_of_matrix, ip.reversed_array, ip.sum_nested_generator, ip.sum_of_matrix):
        check_against_numpy(f, (X,))
    check_against_numpy(ip.sum_generator_if, (X[0],))
    check_against_numpy(ip.zip_three_with_range, (X[0], X[:, 0]))
