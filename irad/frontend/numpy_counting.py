"""np.bincount in the numpy table: its length is max(x) + 1 (at least
minlength), so the values of x must be known while lowering (a literal list,
np.array of int literals); the counting is irad/numpy_python.py's
bincount_of_length. For x known only at run time numpy's result has no shape
irad could give it while lowering: the call is refused with the rewrite of a
fixed length (JAX's jnp.bincount asks for length= under jit for the same reason)."""

from __future__ import annotations

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.ir import SSAValue

from irad import numpy_python
from irad.frontend.arrays import known_value
from irad.frontend.numpy_table import numpy_function
from irad.frontend.values import Static

REWRITE = ("with n known: np.sum(x[:, None] == np.arange(n), axis=0) counts the values below n, and "
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
    if values is None:
        raise al.error(node, "np.bincount of an array whose values are known only at run time: its length, "
                       "max(x) + 1, is needed while lowering", REWRITE)
    if any(isinstance(v, float) or v < 0 for v in values):
        raise al.error(node, "np.bincount of negative or non-integer values (numpy raises)",
                       "give it non-negative ints")
    length = max([minlength, *(v + 1 for v in values)])
    return al.fl.calls.call_value(Static(numpy_python.bincount_of_length), [x, weights, Static(length)], {}, node)
