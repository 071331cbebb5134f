"""Writes through a boolean mask known only at run time (irad/frontend/indexing.py:
masked_write): `y[y < 0] = 0.0`, `Y[rows] = row`, `y[m] *= 0.5`. They keep y's
shape, so they are selects; a read `y[m]` (a run-time length) stays refused.
Values against numpy's, gradients against central differences."""

import numpy as np
import pytest

import irad
from tests.reference import central_difference

X = np.array([[0.5, -1.2, 2.0], [-0.3, 1.5, -2.2], [0.8, 0.1, -0.7], [-1.1, 0.4, 0.9]])
BACKENDS = ["python", pytest.param("native", marks=pytest.mark.native)]


def clipped_in_place(x):
    y = x.copy()
    y[y < 0] = 0.0
    y[y > 1.0] = 1.0 + 0.1 * x[0, 0]
    return np.sum(y ** 2)


def rows_replaced(x):
    y = 2.0 * x
    y[x[:, 0] > 0] = np.sin(x[1])           # one row's value for every selected row
    return np.sum(y ** 2 * np.arange(1.0, 4.0))


def augmented(x):
    y = x * 1.0
    y[y < 0] *= 0.5                          # a leaky ReLU written in place
    y[np.abs(x) > 1.0] += x[0, 1]
    y[x[:, 2] > 0] -= np.array([1.0, 2.0, 3.0]) * x[3, 0]
    counts = np.zeros(3, dtype=int)
    counts[x[0] > 0] += 2                    # an int array: stays int
    return np.sum(y ** 2) + np.sum(counts * x[1])


def masked_vector(x):
    v = x[:, 1].copy()
    m = v > 0.2
    v[m] /= 2.0 + x[0, 0]
    v[~m] = -1.0 * x[2, 2]
    return np.sum(v * np.arange(1.0, 5.0))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [clipped_in_place, rows_replaced, augmented, masked_vector], ids=lambda f: f.__name__)
def test_a_write_through_a_runtime_mask_is_a_select(f, backend):
    value, grad = irad.value_and_grad(f, backend=backend)(X)
    assert value == pytest.approx(f(X.copy()), rel=1e-14)
    np.testing.assert_allclose(grad, central_difference(f, (X,), 0), rtol=1e-7, atol=1e-9)


def one_per_selected(x):
    y = x[0].copy()
    y[y > 0] = np.array([1.0, 2.0, 3.0])     # numpy: as many values as selected elements
    return np.sum(y)


def mask_of_other_shape(x):
    y = x.copy()
    y[x[:2, 0] > 0] = 0.0
    return np.sum(y)


def mask_and_slice(x):
    y = x.copy()
    y[x[:, 0] > 0, 1:] = 0.0
    return np.sum(y)


def masked_read(x):
    return np.sum(np.sort(x[x > 0]))  # a reduction takes x[m] (test_masked_reads.py), np.sort does not


@pytest.mark.parametrize(("f", "message"), [
    (one_per_selected, r"one item per selected element, a count known only at run time"),
    (mask_of_other_shape, r"a boolean mask of shape \(2,\) does not match the array's leading axes \(4,\)"),
    (mask_and_slice, r"a boolean mask computed at run time with other indices is not supported"),
    (masked_read, r"indexing with a boolean mask computed at run time gives an array whose length"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_what_a_runtime_mask_cannot_do_is_named(f, message):
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.grad(f)(X)
    assert "test_mask_writes.py:" in str(info.value)
    assert f is mask_of_other_shape or "np.where" in str(info.value)  # the other: numpy's own IndexError
