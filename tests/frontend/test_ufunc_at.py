"""np.add.at and np.subtract.at (irad/frontend/ufunc_at.py): repeated indices
add up, unlike `a[idx] += b`; values and gradients against numpy and central
differences, the write reaching views, and in-place rules kept."""

import numpy as np
import pytest

import irad
from irad.base.errors import UnsupportedError
from tests.reference import central_difference

W = np.array([0.7, -1.3, 2.1])
IDX = np.array([0, 2, 0, 0])


def repeated(w, idx):
    x = np.zeros(3)
    np.add.at(x, idx, w[[0, 1, 2, 1]] ** 2)
    return np.sum(x ** 2)


def two_axes_subtract(w, idx):
    a = np.outer(w, w)
    np.subtract.at(a, (idx, idx[::-1]), w[0] * np.arange(4.0))
    return np.sum(np.sin(a))


def basic_index(w, idx):
    x = w * 1.0
    np.add.at(x, 1, w[0] ** 3)
    return np.sum(x ** 2) + idx[0]


def rows_in_a_dict(w, idx):
    p = {"h": np.zeros((3, 2))}
    np.add.at(p["h"], idx, np.outer(w[[0, 1, 2, 0]], w[:2]))
    return np.sum(p["h"] ** 2)


def int_counts(w, idx):
    counts = np.zeros(3, dtype=np.int64)
    np.add.at(counts, idx, 1)
    return np.sum(counts * w)


def seen_through_a_view(w, idx):
    y = w * 1.0
    v = y[1:]
    np.add.at(y, idx, w[:1] * 2.0)
    return np.sum(v * w[1:]) + np.sum(y)


CASES = [repeated, two_axes_subtract, basic_index, rows_in_a_dict, int_counts, seen_through_a_view]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_repeated_indices_add_up_as_in_numpy(f):
    value, g = irad.value_and_grad(f)(W, IDX)
    assert np.isclose(value, f(W.copy(), IDX), rtol=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (W.copy(), IDX), 0), rtol=1e-6, atol=1e-8)


def test_the_difference_from_plus_equals_is_kept():
    def buffered(w, idx):
        x = np.zeros(3)
        x[idx] += w[0]
        return np.sum(x)
    # numpy: x[idx] += v adds once per distinct index; np.add.at once per occurrence
    assert irad.grad(buffered)(W, IDX)[0] == pytest.approx(2.0)
    assert irad.grad(repeated)(W, IDX)[0] == pytest.approx(central_difference(repeated, (W, IDX), 0)[0], rel=1e-6)


@pytest.mark.native
def test_np_add_at_natively():
    for f in (repeated, two_axes_subtract):
        value, g = irad.value_and_grad(f, backend="native")(W, IDX)
        assert np.isclose(value, f(W.copy(), IDX), rtol=1e-12)
        np.testing.assert_allclose(g, central_difference(f, (W.copy(), IDX), 0), rtol=1e-6, atol=1e-8)


def into_the_argument(w, idx):
    np.add.at(w, idx, 1.0)
    return np.sum(w)


def test_np_add_at_into_an_argument_is_refused():
    with pytest.raises(UnsupportedError, match="argument array 'w'") as info:
        irad.grad(into_the_argument)(W, IDX)
    assert "test_ufunc_at.py:" in str(info.value) and "np.copy" in str(info.value)
