"""np.shape, np.ndim and np.size in the numpy table: numbers read off a value's
static shape while lowering (a number's is ()), known like `x.shape`, so they
can size arrays and bound loops; `np.size(x, axis)` is one dimension."""

from __future__ import annotations

import math

import numpy as np

from irad.frontend.numpy_table import numpy_function
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T


def _dims(al, a, node) -> tuple[int, ...]:
    x = al.array(a, node)
    return T.shape(x) if is_array(x) else ()


@numpy_function(np.shape, params=("a",))
def _shape(al, node, a):
    return Static(_dims(al, a, node))


@numpy_function(np.ndim, params=("a",))
def _ndim(al, node, a):
    return Static(len(_dims(al, a, node)))


@numpy_function(np.size, params=("a", "?axis"))
def _size(al, node, a, axis):
    dims = _dims(al, a, node)
    axis = al.static(axis, node, "axis")
    if axis is None:
        return Static(math.prod(dims))
    if not -len(dims) <= axis < len(dims):
        raise al.error(node, f"np.size: axis {axis} is out of bounds for an array of {len(dims)} dimensions",
                       "give an axis of the array")
    return Static(dims[axis])
