"""An augmented assignment to an item, `y[i] += v`, evaluates its container and
index once, as Python does (irad/frontend/statements.py: `_indices_evaluated`):
irad reads the item and writes it back, and evaluated an index that calls
something (`y[order.pop()] += v`) once for the read and again for the write,
so it read one item and wrote another, a silently wrong value (found by the
realistic-programs probes of issue 32)."""

import numpy as np
import pytest

import irad
from tests.reference import central_difference

X = np.array([0.5, 1.0, 2.0, 4.0])
WEIGHTS = np.arange(1.0, 5.0)


def popped_index(x):
    y = x.copy()
    order = [0, 1, 2, 3]
    y[order.pop()] += 1.0          # y[3] += 1; the index read twice wrote y[2]
    y[order.pop(0)] *= 3.0
    return np.sum(y * WEIGHTS) + len(order)


def popped_key(x):
    d = {"a": x[0], "b": x[1]}
    keys = ["a", "b"]
    d[keys.pop()] += 3.0 * x[2]
    return d["a"] * 2.0 + d["b"] * 5.0 + len(keys)


def popped_list_item(x):
    ys = [x[0], x[1], x[2]]
    order = [0, 1, 2]
    ys[order.pop()] -= x[3]
    return ys[0] + 2.0 * ys[1] + 3.0 * ys[2] + len(order)


def popped_nested(x):
    p = {"a": x.copy(), "b": x * 2.0}
    names = ["a", "b"]
    order = [0, 1, 2, 3]
    p[names.pop()][order.pop()] += 5.0 * x[1]    # p["b"][3]: the container's index, then the item's
    return np.sum(p["a"] * WEIGHTS) + np.sum(p["b"] * WEIGHTS ** 2) + len(order) + len(names)


def popped_slice_bounds(x):
    y = x.copy()
    bounds = [1, 3]
    y[bounds.pop(0):bounds.pop(0)] /= 2.0 + x[0]
    return np.sum(y * WEIGHTS) + len(bounds)


def called_in_a_tuple_index(x):
    y = np.outer(x, x)
    y[int(np.argmax(x)), len(x) - 1:] **= 2     # a pure call: evaluated once all the same
    return np.sum(y * WEIGHTS)


PROGRAMS = [popped_index, popped_key, popped_list_item, popped_nested, popped_slice_bounds, called_in_a_tuple_index]


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=pytest.mark.native)])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_an_augmented_items_index_is_evaluated_once(f, backend):
    value, grad = irad.value_and_grad(f, backend=backend)(X)
    assert value == pytest.approx(f(X.copy()), rel=1e-14)
    np.testing.assert_allclose(grad, central_difference(f, (X,), 0), rtol=1e-7, atol=1e-9)
