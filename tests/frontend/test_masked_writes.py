"""Writes through a boolean mask of data (irad/frontend/masked_writes.py):
`y[m] = v`, `y[m] op= v`, `y[m] = z[m]`, as numpy writes them, in place,
through views, containers and globals; checked against the program run as
numpy and central differences on both backends. Each was refused before
("indexing with a boolean mask computed at run time"). A value numpy would
broadcast to the run-time count of True entries is refused with the rewrite."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

from tests.reference import BACKENDS, check_against_numpy, check_refused

rng = np.random.default_rng(7)
X, Z, A = rng.standard_normal(5), rng.standard_normal(5), rng.standard_normal((5, 3))
MASK = np.array([True, False, True, False, True])


def relu_in_place(x, z):
    y = x.copy()
    y[y < 0] = 0.0
    return np.sum(y ** 2) + np.sum(z)


def masked_updates(x, z):
    y = x * 1.0
    y[x > 0.5] *= 3.0
    y[np.abs(x) < 0.3] += z[0]
    y[(x < 0) & (z > 0)] -= z[1] * z[1]
    y[~(z > -0.5)] /= 2.0
    return np.sum(y * x)


def same_mask_both_sides(x, z):
    y = x.copy()
    y[z > x] = z[z > x]
    return np.sum(y ** 3)


def rows_through_a_vector_mask(a, x):
    b = a.copy()
    b[x > 0] = x[:3] * 2.0       # one row, broadcast to every selected row
    b[b[:, 0] < 0] += 1.0
    b[x < -0.5] = a[x < -0.5]    # rows copied from another array
    return np.sum(b ** 2)


def through_a_view_and_a_dict(a, x):
    b = a.copy()
    r = b[0]
    r[r > 0] = 0.0               # b's first row changes too
    p = {"w": x * 2.0}
    p["w"][x < 0] = 0.5
    return np.sum(b * a) + np.sum(p["w"] * x)


def global_mask(x, z):
    y = x + 0.0
    y[MASK] = -y[0]
    return np.sum(y * y * z)


def int_array_written(x, z):
    k = np.arange(5)
    k[x > 0] = 7
    k[z > 0] += 2
    return np.sum(k * x)


def in_a_loop(x, z):
    y = x.copy()
    for i in range(3):
        y[y > z] = z[i]
        z = z * 0.5
    return np.sum(y * x)


PROGRAMS = [relu_in_place, masked_updates, same_mask_both_sides, global_mask, int_array_written, in_a_loop]
ARRAY_PROGRAMS = [rows_through_a_vector_mask, through_a_view_and_a_dict]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", PROGRAMS, ids=[f.__name__ for f in PROGRAMS])
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_masked_writes_follow_numpy(f, sign, backend):
    check_against_numpy(f, (sign * X, Z), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", ARRAY_PROGRAMS, ids=[f.__name__ for f in ARRAY_PROGRAMS])
def test_masked_row_writes_follow_numpy(f, backend):
    check_against_numpy(f, (A, X), backend=backend)


def count_sized_value(x):
    y = x.copy()
    y[x > 0] = x[:2]  # <- refused
    return np.sum(y)


def masked_read_on_the_right(x):
    y = x.copy()
    y[x > 0] = np.sqrt(y[x > 0])  # <- refused
    return np.sum(y)


def float_into_int_array(x):
    k = np.arange(5)
    k[x > 0] += 0.5  # <- refused
    return np.sum(k * x)


def wrong_mask_shape(x):
    y = x.copy()
    y[x[:3] > 0] = 0.0  # <- refused
    return np.sum(y)


@pytest.mark.parametrize("f, message", [
    (count_sized_value, r"assigning a value of shape \(2,\) through a boolean mask computed at run time"),
    (masked_read_on_the_right, "indexing with a boolean mask computed at run time"),
    (float_into_int_array, "in-place arithmetic on the int64 array"),
    (wrong_mask_shape, r"a boolean mask of shape \(3,\) does not match"),
])
def test_refused_where_numpy_needs_the_count(f, message):
    check_refused(f, (X,), message)


def items_with_calls_in_their_indices(x, z):
    """Looking for a mask must not evaluate an index or a source twice: each pop runs once."""
    y = x.copy()
    order = [0, 1, 2, 3]
    rows = [x * 2.0, x * 3.0, z * 4.0]
    y[order.pop()] = rows.pop()[order.pop()]  # the same index text on both sides, not a mask
    c = {"k": x * 1.0}
    c["k"][order.pop()] = 7.0
    return np.sum(y * x) + np.sum(c["k"])


def masked_writes_through_calls(x, z):
    """A container's item chosen by a call, written through a mask: each pop runs once
    (`c[order.pop()][m] = z[m]` read the item and wrote it back through a second pop)."""
    order = [0, 1, 0, 1]
    c = [x * 1.0, x * 2.0]
    c[order.pop()][z > 0] = z[z > 0]
    c[order.pop()][z < 0] += 3.0
    c[order.pop()][x > 0] = 0.5
    return np.sum(c[0] * x) + np.sum(c[1] * z) + len(order)


class Holder(NamedTuple):
    w: np.ndarray


def attribute_in_the_chain(x, z):
    """`ps[k()].w[j()] += v`: the call inside the chain's attribute step runs once too."""
    order = [0, 1, 2]
    ps = [Holder(x * 1.0), Holder(z * 2.0)]
    ps[order.pop(0)].w[order.pop()] += 3.0
    ps[order.pop()].w[x > 0] *= 2.0
    return np.sum(ps[0].w * x) + np.sum(ps[1].w * z) + len(order)


def mask_of_the_item_itself(x, z):
    """The mask reads the container's item that the write takes apart."""
    c = {"k": x * 1.0}
    c["k"][c["k"] > 0] = 0.5
    c["k"][c["k"] < z] *= 2.0
    c["k"][c["k"] > z] = z[c["k"] > z]
    return np.sum(c["k"] * x)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f", [items_with_calls_in_their_indices, masked_writes_through_calls,
                               attribute_in_the_chain, mask_of_the_item_itself])
def test_indices_with_calls_are_evaluated_once(f, backend):
    check_against_numpy(f, (X, Z), backend=backend)
