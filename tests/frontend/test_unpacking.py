"""Unpacking into names (docs/python-subset.md, "Unpacking"): the items of tuples
and lists, the rows of arrays (elements of a vector), what zip and enumerate
give, starred targets. Values against the programs run as numpy, gradients
against central differences in float64, on both backends; a length that does
not match is Python's ValueError at lowering, naming the line."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_against_numpy, check_refused

WEIGHTS = (np.array([[0.5, -0.2], [0.1, 0.3]]), np.array([0.2, -0.1]))


def gp_marginal_likelihood(log_params, X, y):
    """A GP's negative log marginal likelihood, hyper-parameters unpacked from
    np.exp of their logs (as JAX/autograd GP code writes it)."""
    ell, sf2, sn2 = np.exp(log_params)
    d = X[:, None, :] - X[None, :, :]
    K = sf2 * np.exp(-0.5 * np.sum(d * d, axis=2) / ell ** 2) + sn2 * np.eye(X.shape[0])
    alpha = np.linalg.solve(K, y)
    return 0.5 * y @ alpha + 0.5 * np.log(np.linalg.det(K))


def theta_of_three(theta, x):
    a, b, c = theta
    return np.sum(a * x ** 2 + b * x + c)


def weight_and_bias_rows(params, x):
    w, b = params  # a (2, n) array: its two rows
    return np.sum(np.tanh(w * x + b))


def matrix_rows_in_loop(X):
    s = 0.0
    for a, b in X:  # each row of an (n, 2) array unpacked
        s = s + a * b - b
    return s


def starred_vector(x):
    first, *rest = x
    return first * sum(rest)


def starred_middle(x):
    a, *middle, b = x[0], x[1] * 2.0, x[2], x[3]
    return a * b + sum(middle) * len(middle)


def starred_empty_rest(x):
    a, b, *rest = x
    return a * b + len(rest)


def nested_targets(X, y):
    (a, b), c = (X[0], X[1]), y
    return np.sum(a * b) * c


def global_tuple_of_arrays(x):
    W, b = WEIGHTS  # hidden arguments, read at each call
    return np.sum(np.tanh(W @ x + b))


def unzip_pairs(x):
    pairs = ((x[0], 1.0), (x[1], 2.0), (x[2], 3.0))
    values, weights = zip(*pairs)
    return sum(v * w for v, w in zip(values, weights))


def enumerate_unpacked(x):
    (i, a), (j, b) = enumerate(x[:2])
    return a * i + b * j


def swap(x, y):
    x, y = y, x * 2.0
    return x * 3.0 + y


def shape_unpacked(X):
    n, m = X.shape
    return np.sum(X) * n + m


PROGRAMS = [
    (gp_marginal_likelihood, lambda r: (np.log(np.array([0.8, 1.5, 0.1])), r.normal(size=(5, 2)), r.normal(size=5))),
    (theta_of_three, lambda r: (r.normal(size=3), r.normal(size=4))),
    (weight_and_bias_rows, lambda r: (r.normal(size=(2, 3)), r.normal(size=3))),
    (matrix_rows_in_loop, lambda r: (r.normal(size=(4, 2)),)),
    (starred_vector, lambda r: (r.normal(size=4),)),
    (starred_middle, lambda r: (r.normal(size=4),)),
    (starred_empty_rest, lambda r: (r.normal(size=2),)),
    (nested_targets, lambda r: (r.normal(size=(2, 3)), 1.5)),
    (global_tuple_of_arrays, lambda r: (r.normal(size=2),)),
    (unzip_pairs, lambda r: (r.normal(size=3),)),
    (enumerate_unpacked, lambda r: (r.normal(size=3),)),
    (swap, lambda r: (0.7, -1.3)),
    (shape_unpacked, lambda r: (r.normal(size=(3, 2)),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, make", PROGRAMS, ids=[f.__name__ for f, _ in PROGRAMS])
def test_unpacking_matches_numpy(f, make, backend):
    check_against_numpy(f, make(np.random.default_rng(3)), backend)


def test_rows_unpacked_are_views_of_the_array():
    """numpy's `a, b = X` gives views: writing into one writes X (a fresh X here)."""

    def write_through_a_row(x):
        X = np.outer(x, x)
        a, b = X
        a[0] = 3.0 * x[1]
        return np.sum(X * X) + b[1]

    check_against_numpy(write_through_a_row, (np.array([0.3, -1.2]),))


# ---- refused: Python's error, at lowering, naming the line -------------------------------------
def too_many_rows(x):
    a, b = x  # <- refused
    return a * b


def not_enough_items(x):
    a, b, c = (x, 2.0 * x)  # <- refused
    return a * b * c


def starred_needs_more(x):
    a, b, *rest = (x,)  # <- refused
    return a


def unpack_a_float(x):
    a, b = x  # <- refused
    return a


def unpack_an_element(x):
    a, b = x[0, 0]  # <- refused
    return a


def unpack_a_dict(x):
    a, b = {"a": x, "b": x}  # <- refused
    return a


REFUSED = [  # (program, arguments, irad's message, what Python raises: None where it does not)
    (too_many_rows, (np.ones(3),), r"too many values to unpack \(expected 2, got 3\): the array of shape \(3,\)",
     ValueError),
    (not_enough_items, (1.0,), r"not enough values to unpack \(expected 3, got 2\)", ValueError),
    (starred_needs_more, (1.0,), r"not enough values to unpack \(expected at least 2, got 1\)", ValueError),
    (unpack_a_float, (1.0,), r"cannot unpack a float \(f64\) value: it is not iterable", TypeError),
    (unpack_an_element, (np.ones((2, 2)),), r"cannot unpack a float \(f64\) value", TypeError),
    (unpack_a_dict, (1.0,), r"unpacking a dict \(Python gives its keys\) is not supported", None),
]


@pytest.mark.parametrize("f, args, message, python", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refused_unpacking_names_the_line(f, args, message, python):
    check_refused(f, args, message)
    if python is not None:
        with pytest.raises(python):
            f(*args)


def test_value_error_of_numpy_matches_irad_message():
    with pytest.raises(ValueError, match=r"too many values to unpack \(expected 2"):
        too_many_rows(np.ones(3))
    with pytest.raises(irad.UnsupportedError, match="too many values to unpack"):
        irad.grad(too_many_rows)(np.ones(3))
