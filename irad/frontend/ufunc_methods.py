"""The methods of numpy's ufuncs, as the numpy functions they are:
`np.subtract.outer(x, y)` (pairwise differences) is the ufunc of `x` given
trailing axes for `y`'s; `np.add.reduce(x, axis=0)` is `np.sum`,
`np.multiply.reduce` `np.prod`, `np.maximum.reduce` `np.max` and
`np.minimum.reduce` `np.min` (numpy's default axis for `reduce` is 0, not
None), `np.logaddexp.reduce` irad/numpy_python.py's; `np.add.accumulate` is `np.cumsum` and `np.multiply.accumulate`
`np.cumprod`, along axis 0; `np.maximum.accumulate`, `np.minimum.accumulate`
and `np.logaddexp.accumulate` are irad/numpy_python.py's. Other ufunc methods are refused by name
(`np.add.at` is a statement: ufunc_at.py)."""

from __future__ import annotations

import numpy as np

from irad import numpy_python
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T

_REDUCE = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min,
           np.logaddexp: numpy_python.logaddexp_reduce}
_ACCUMULATE = {np.add: np.cumsum, np.multiply: np.cumprod, np.maximum: numpy_python.maximum_accumulate,
               np.minimum: numpy_python.minimum_accumulate, np.logaddexp: numpy_python.logaddexp_accumulate}


def is_ufunc_method(obj) -> bool:
    return isinstance(getattr(obj, "__self__", None), np.ufunc) and obj.__name__ in ("outer", "reduce", "accumulate",
                                                                                      "at", "reduceat")


def call(fl, obj, args: list, kwargs: dict, node):
    """`ufunc.method(*args, **kwargs)` (is_ufunc_method)."""
    ufunc, method = obj.__self__, obj.__name__
    name = f"np.{ufunc.__name__}.{method}"
    if method == "outer":
        if len(args) != 2 or kwargs:
            raise fl.src.error(node, f"{name} takes two arrays", f"{name}(a, b)")
        a, b = args
        rank = len(T.shape(b)) if is_array(b) else 0
        shape = (T.shape(a) if is_array(a) else ()) + (1,) * rank
        a = fl.calls.call_value(Static(np.reshape), [a, Static(shape)], {}, node)
        return fl.calls.call_value(Static(ufunc), [a, b], {}, node)
    table = _REDUCE if method == "reduce" else _ACCUMULATE if method == "accumulate" else {}
    function = table.get(ufunc)
    if function is None:
        rewrite = ("np.add.at(a, indices, b) as a statement" if method == "at"
                   else "np.sum/np.prod/np.max/np.min, np.logaddexp.reduce, np.cumsum/np.cumprod, "
                   "np.maximum/minimum/logaddexp.accumulate, or np.<ufunc>(a[:, None], b)")
        raise fl.src.error(node, f"{name} is not supported", f"write it with {rewrite}")
    if len(args) != 1 or set(kwargs) - {"axis", "keepdims"} or (method == "accumulate" and "keepdims" in kwargs):
        raise fl.src.error(node, f"{name} takes one array and axis={'' if method == 'accumulate' else ', keepdims='}",
                           f"write {name}(a, axis=...)" if function.__module__ == numpy_python.__name__
                           else f"{function.__name__} of numpy takes the rest")
    return fl.calls.call_value(Static(function), args, {"axis": kwargs.get("axis", Static(0)), **{
        k: v for k, v in kwargs.items() if k != "axis"}}, node)
