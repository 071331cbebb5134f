"""Array methods that are numpy functions with the array first (arrays.py's
_METHODS), x.tolist(), sum/prod(where=), ravel/flatten in Fortran order and np.take's modes: values against
numpy's, gradients against central differences."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_against_numpy, check_refused

X = np.random.default_rng(2).normal(size=(3, 3))

CASES = {
    "swapaxes": lambda x: np.sum(x.reshape(1, 3, 3).swapaxes(0, 2) * np.arange(9.0).reshape(3, 3, 1)),
    "cumsum_cumprod": lambda x: np.sum(x.cumsum(axis=1) ** 2) + np.sum(x.cumprod()),
    "argmax_take": lambda x: np.sum(x.take(x.argmax(axis=0)) + x.ravel().take(x.argmin())),
    "any_all": lambda x: np.sum(x) * (2.0 if (x > 0).any() and not (x > 5).all() else 1.0),
    "round": lambda x: np.sum(x.round(1) * x),
    "trace_diagonal": lambda x: x.trace() * np.sum(x.diagonal(1) ** 2),
    "repeat": lambda x: np.sum(x.repeat(2, axis=0) * np.arange(6.0).reshape(6, 1)),
}


@pytest.mark.parametrize("name", CASES)
def test_array_methods_match_numpy(name):
    f = CASES[name]
    value, g = irad.value_and_grad(f)(X)
    assert value == pytest.approx(f(X), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (X,), 0), rtol=1e-6, atol=1e-7)


def sorts_in_place(x):
    y = x * 1.0
    y.sort()
    return np.sum(y * np.arange(9.0).reshape(3, 3))


def test_an_in_place_sort_method_is_refused_by_name():
    with pytest.raises(irad.UnsupportedError, match="sort"):
        irad.grad(sorts_in_place)(X)


# ---- ravel/flatten in Fortran order, np.take's modes (both backends) ---------------------------------
W12 = np.arange(12.0)


def ravel_fortran(x):
    m = x.reshape(3, 4)
    return (m.ravel(order="F") * W12).sum() + (np.ravel(m, "F") * W12).sum() ** 2


def flatten_fortran(x):
    m = x.reshape(2, 2, 3)
    return (m.flatten("F") * W12).sum() + (m.flatten(order="C") * W12).sum() ** 2


def ravel_fortran_view(x):
    m = (x * 1.0).reshape(4, 3)
    r = m.T.ravel("F")  # m's memory in order: a view of m, as in numpy
    r[0] = 5.0
    return (m * m).sum()


def ravel_fortran_copy(x):
    m = (x * 1.0).reshape(4, 3)
    r = m.ravel("F")  # a copy, as in numpy
    r[0] = 5.0
    return (m * m).sum() + r.sum()


W5 = np.array([1.0, 2.0, 3.0, 4.0, 5.0])


def take_wrap(x):
    return (np.take(x, [0, 15, -1, -13, 11], mode="wrap") * W5).sum()


def take_clip(x):
    return (np.take(x, np.array([0, 15, -1, -13, 11]), mode="clip") * W5).sum()


def take_modes_along_an_axis(x):
    m = x.reshape(3, 4)
    return (np.take(m, [5, -1], axis=1, mode="wrap") ** 2).sum() + (m.take([7], axis=0, mode="clip") ** 3).sum()


def take_a_number(x):
    return np.take(x, 14, mode="wrap") * np.take(x, -3, mode="clip")


def tolist_items(x):
    rows = x.reshape(3, 4).tolist()  # lists of Python floats
    flat = x[:3].tolist()
    flat.append(2.0)
    ints = np.arange(4).tolist()
    return sum(r[0] * r[3] for r in rows) + len(rows[0]) + sum(v * v for v in flat) + x[0] * sum(ints) + sum(
        (x > 0).tolist()) * x[1] + np.sum(x).reshape(()).tolist()


def removed_ptp(x):
    return x.ptp()  # <- refused


def sum_where(x):
    return x.sum(where=x > 0) + (np.sum(x.reshape(3, 4), axis=0, where=np.array([True, False, True, True])) ** 2).sum()


def prod_where(x):
    m = x.reshape(3, 4)
    return np.prod(x[:5], where=x[:5] < 1.0) + m.prod(axis=1, where=m > -0.5, keepdims=True).sum()


def int_sum_where(x):
    return x[0] * np.sum(np.arange(6), where=np.arange(6) % 2 == 0)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [tolist_items, sum_where, prod_where, int_sum_where, ravel_fortran, flatten_fortran, ravel_fortran_view, ravel_fortran_copy, take_wrap,
                               take_clip, take_modes_along_an_axis, take_a_number], ids=lambda f: f.__name__)
def test_orders_and_modes_match_numpy(f, backend):
    check_against_numpy(f, (np.linspace(-1.0, 1.3, 12),), backend)


def ravel_in_memory_order(x):
    return np.sum(x.ravel(order="K"))  # <- refused


def take_a_bad_mode(x):
    return np.sum(np.take(x, [1], mode="wrapped"))  # <- refused


@pytest.mark.parametrize("f, message", [
    (ravel_in_memory_order, "np.ravel\\(..., order='K'\\) is not supported: 'A' and 'K' follow the memory layout"),
    (take_a_bad_mode, "np.take: mode='wrapped' is not one of numpy's modes"),
    (removed_ptp, "numpy 2 removed the array method `.ptp`"),
])
def test_other_orders_and_modes_are_refused(f, message):
    check_refused(f, (np.linspace(-1.0, 1.3, 12),), message)
