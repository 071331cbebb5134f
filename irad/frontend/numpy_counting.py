"""np.bincount in the numpy table. Its length is max(x) + 1 (at least
minlength), so either the values of x are known while lowering (a literal
list, np.array of int literals) and give it, or minlength does: then a
run-time check that every value is in [0, minlength) stands for numpy's
longer result (and its ValueError for a negative value), so the values are
numpy's wherever the program runs on. With neither, the call is refused with
the rewrite (JAX's jnp.bincount asks for length= under jit for the same
reason). The counting is irad/numpy_python.py's bincount_of_length."""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.ir import SSAValue

from irad import numpy_python
from irad.frontend.arrays import known_value
from irad.frontend.numpy_table import numpy_function
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T

REWRITE = ("give minlength= the number of bins (then checked at run time to hold every value), or, "
           "with n known: np.sum(x[:, None] == np.arange(n), axis=0) counts the values below n, and "
           "np.sum(np.where(x[:, None] == np.arange(n), weights[:, None], 0.0), axis=0) sums their weights")


def _known_ints(x) -> list | None:
    """The elements of x when they are known while lowering, else None."""
    if isinstance(x, Static):
        return None  # an array read from a global is read at each call (globals.py)
    if isinstance(x, tuple):
        parts = [known_value(v) for v in x]
        return [v for _, v in parts] if all(k for k, _ in parts) else None
    if not isinstance(x, SSAValue):
        return None
    owner = x.owner
    if isinstance(owner, arith.ConstantOp) and hasattr(owner.value, "get_values"):
        return list(owner.value.get_values())
    if isinstance(owner, tensor.FromElementsOp):
        parts = [known_value(v) for v in owner.operands]
        return [v for _, v in parts] if all(k for k, _ in parts) else None
    return None


@numpy_function(np.bincount, params=("x", "?weights", "?minlength=0"))
def _bincount(al, node, x, weights, minlength):
    minlength = al.static(minlength, node, "minlength")
    values = _known_ints(x)
    if values is None and minlength > 0:
        array = al.array(x, node)
        if is_array(array) and math.prod(T.shape(array)) > 0:
            fits = al.fl.calls.call_value(Static(numpy_python.bincount_fits), [x, Static(minlength)], {}, node)
            al.fl.check(fits, node, f"np.bincount: a value of x is negative or at least minlength={minlength} "
                        "(numpy raises for a negative one, and its result would be longer than minlength)")
        return al.fl.calls.call_value(Static(numpy_python.bincount_of_length), [x, weights, Static(minlength)],
                                      {}, node)
    if values is None:
        raise al.error(node, "np.bincount of an array whose values are known only at run time, without "
                       "minlength=: its length, max(x) + 1, is needed while lowering", REWRITE)
    if any(isinstance(v, float) or v < 0 for v in values):
        raise al.error(node, "np.bincount of negative or non-integer values (numpy raises)",
                       "give it non-negative ints")
    length = max([minlength, *(v + 1 for v in values)])
    return al.fl.calls.call_value(Static(numpy_python.bincount_of_length), [x, weights, Static(length)], {}, node)
