"""JAX's functional updates, `x.at[index].set(v)` and its kin, as one expression.

`x.at[i].set(v)` is a new array, `x` with `v` written at `i`; `x` itself is
unchanged (JAX's arrays are immutable). irad lowers it as the write numpy's
`y = x.copy(); y[i] = v` makes, without the copy: its arrays are values, and
the write gives a new one. `.add(v)` adds at every occurrence of a repeated
position, as `np.add.at` does (numpy's `y[i] += v` keeps only the last);
`.multiply`, `.divide`, `.power`, `.min` and `.max` combine with what is
there, on an index without arrays, where no position repeats. `.get()` reads.
JAX's out-of-range handling (dropped writes, clamped reads) is not numpy's:
irad checks indices as numpy does, so `mode=` is refused.
"""

from __future__ import annotations

import ast

import numpy as np

from irad.frontend import indexing
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T

# .at[...]'s methods that combine the value with the array's entries there
_COMBINE = {"multiply": np.multiply, "divide": np.divide, "power": np.power, "min": np.minimum, "max": np.maximum}
METHODS = frozenset({"set", "add", "get", *_COMBINE})


def is_at_update(node: ast.Call) -> bool:
    """Is `node` the call `<x>.at[<index>].<method>(...)`?"""
    func = node.func
    return (isinstance(func, ast.Attribute) and func.attr in METHODS and isinstance(func.value, ast.Subscript)
            and isinstance(func.value.value, ast.Attribute) and func.value.value.attr == "at")


def lower(fl, node: ast.Call):
    """The value of `x.at[index].method(...)` (is_at_update): a new array."""
    result = _lowered(fl, node)
    return fl.arrays.new(result) if is_array(result) else result


def _lowered(fl, node: ast.Call):
    method = node.func.attr
    subscript = node.func.value
    x = fl.expr(subscript.value.value)
    if not is_array(x):
        raise fl.src.error(node, f"`.at[...].{method}(...)` is JAX's update of an array; here it is on "
                           f"{fl.kind_of(x)}", "call it on an array")
    call = f"x.at[...].{method}"
    if node.keywords:
        raise fl.src.error(node, f"{call}: its keyword '{node.keywords[0].arg}' is not supported (irad checks "
                           "indices as numpy does: an index out of range is a run-time error)",
                           f"leave the keywords out: {call}({'' if method == 'get' else 'v'})")
    if method == "get":
        if node.args:
            raise fl.src.error(node, f"{call}() takes no arguments")
        got = fl.arrays.subscript(x, subscript.slice, node)
        return fl.arrays.copy(got) if is_array(got) else got  # not a view of x
    if len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
        raise fl.src.error(node, f"{call} takes one value", f"{call}(v)")
    al = fl.arrays
    parts = indexing.parse(al, x, subscript.slice, node, runtime_masks=True)
    value = fl.expr(node.args[0])
    if method == "set":
        return al.written(x, parts, value, node)
    mask = any(part.kind == "mask" for part in parts)
    if method == "add" and indexing.has_arrays(parts) and not mask:  # repeated positions add up
        v = al.cast(al.value(value, node), T.element(x))
        return indexing.write(al, x, parts, v, node, accumulate=True)
    if mask or indexing.has_arrays(parts):
        ufunc = "np.add" if method == "add" else f"np.{_COMBINE[method].__name__}"
        raise fl.src.error(
            node, f"{call} at {'a boolean mask' if mask else 'an index with arrays'} is not supported",
            f"write x = np.where(mask, {ufunc}(x, v), x)" if mask else
            f"combine with a basic index (ints and slices), or write the update with {ufunc} and np.add.at",
        )
    ufunc = np.add if method == "add" else _COMBINE[method]
    current = al.read(x, parts, node)
    combined = fl.calls.call_value(Static(ufunc), [current, value], {}, node)
    return al.written(x, parts, combined, node)
