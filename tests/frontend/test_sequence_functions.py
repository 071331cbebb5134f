"""Python's higher-order builtins and math's and itertools' sequence functions in a
program (irad/functional_python.py): functools.reduce, map, math.prod, math.dist,
math.hypot of any number of coordinates, itertools.accumulate, product,
combinations, combinations_with_replacement and permutations, of items known
at run time, and of known ranges (folded while lowering: known_calls.py).

Values against CPython's run of the same program, gradients against central
differences, on both backends; Python's errors (reduce of nothing, points of
two dimensions) are raised as Python raises them."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad import functional_python
from tests.reference import BACKENDS, check_against_numpy

def f_reduce_mul(x): return functools.reduce(lambda a, b: a * b, [x[0], x[1], x[2]])


def f_reduce_init_array(x): return functools.reduce(lambda a, b: a + b * b, x, 0.0)


def f_reduce_np(x): return functools.reduce(np.maximum, [x, x[::-1], 2.0 * x]).sum()


def f_reduce_arrays(x): return functools.reduce(np.add, (x, x * x, np.sin(x))).sum()


def f_reduce_one(x): return functools.reduce(lambda a, b: a * b * 100.0, [x[1]])


def f_reduce_pairs(x):
    s, q = functools.reduce(lambda acc, v: (acc[0] + v, acc[1] + v * v), x, (0.0, 0.0))
    return q - s * s


def f_map_sum(x): return sum(map(lambda v: v * v, x))


def f_map_two(x): return sum(map(lambda a, b: a * b, x, x[1:]))


def f_map_list(x): return np.array(list(map(np.exp, [x[0], x[1]]))).sum()


def f_map_for(x):
    t = 0.0
    for i, v in enumerate(map(math.sin, x)):
        t = t + i * v
    return t


def f_map_zip(x):
    t = 0.0
    for a, b in zip(map(abs, x), x):
        t = t + a * b
    return t


def f_prod(x): return math.prod([x[0], x[1], x[2]])


def f_prod_start(x): return math.prod(x, start=2.0)


def f_prod_shape(x): return x.sum() * math.prod(x.shape) * math.prod((2, 3))


def f_dist(x): return math.dist([x[0], x[1]], [x[2], x[3]])


def f_dist_arrays(x): return math.dist(x[:2], x[2:])


def i_product(x):
    t = 0.0
    for i, j in itertools.product(range(2), range(3)):
        t = t + x[i] * x[j]
    return t


def i_product_values(x):
    t = 0.0
    for a, b in itertools.product([x[0], x[1]], x[2:]):
        t = t + a * b
    return t


def i_product_repeat(x):
    return sum(a * b for a, b in itertools.product((x[0], x[1]), repeat=2))


def i_combinations(x):
    t = 0.0
    for i, j in itertools.combinations(range(4), 2):
        t = t + x[i] * x[j]
    return t


def i_combinations_values(x):
    return sum(a * b * c for a, b, c in itertools.combinations(x, 3))


def i_cwr(x):
    return sum(a * b for a, b in itertools.combinations_with_replacement([x[0], x[1], x[3]], 2))


def i_permutations(x):
    return sum(a * (b - 2.0 * c) for a, b, c in itertools.permutations([x[0], x[1], x[2]])) + sum(p[0] - 2.0 * p[1] for p in itertools.permutations(x[:3], 2))


def i_accumulate(x):
    return sum(itertools.accumulate([x[0], x[1], x[2]]))


def i_accumulate_func(x):
    return np.array(list(itertools.accumulate(x, max))).sum() + sum(itertools.accumulate(x, lambda a, b: a * b, initial=2.0))


def i_accumulate_known(x):
    return x[0] * sum(itertools.accumulate(range(5)))


def i_hypot3(x): return math.hypot(x[0], x[1], x[2])


def i_hypot1(x): return math.hypot(x[1]) + math.hypot()


def i_hypot_big(x): return math.hypot(x[0] * 1e200, x[1] * 1e200, x[2])


X = np.array([0.3, -1.2, 2.0, 0.7])
PROGRAMS = [f for name, f in sorted(globals().items()) if name.startswith(("f_", "i_"))]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_sequence_functions_match_python(f, backend):
    check_against_numpy(f, (X,), backend)


def reduce_of_nothing(x):
    return x[0] + functools.reduce(lambda a, b: a * b, x[:0])


def dist_of_two_dimensions(x):
    return math.dist(x[:2], x[1:])


@pytest.mark.parametrize("f, error, message", [
    (reduce_of_nothing, TypeError, "reduce\\(\\) of empty iterable with no initial value"),
    (dist_of_two_dimensions, ValueError, "both points must have the same number of dimensions"),
])


def test_pythons_errors_are_raised(f, error, message):
    with pytest.raises(error, match=message):
        f(X)
    with pytest.raises(error, match=message):
        irad.grad(f)(X)


def hypot3(x):
    return math.hypot(x[0], x[1], x[2])


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("c", [(math.inf, math.nan, 1.0), (math.nan, 1.0, 2.0), (-math.inf, 0.0, 1.0),
                               (1e-310, 1e-310, 0.0), (1e300, 1e300, 1.0), (0.0, 0.0, 0.0)])


def test_hypot_of_three_at_the_edges(c, backend):
    value, grad = irad.value_and_grad(hypot3, backend=backend)(np.array(c))
    np.testing.assert_equal(value, math.hypot(*c))
    if c == (0.0, 0.0, 0.0):
        np.testing.assert_equal(grad, 0.0)  # the subgradient at the kink, as for two


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300), max_size=6))
def test_hypot_is_pythons_within_an_ulp(c):
    """The implementation irad lowers, run as Python, against CPython's math.hypot."""
    assert functional_python.hypot(*c) == pytest.approx(math.hypot(*c), rel=5e-16, abs=1e-320)
