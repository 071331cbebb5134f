"""Python's pure functions of known values, called while lowering:
`math.prod(x.shape[1:])`, `math.gcd(n, m)`, `divmod(n, 4)`, as Python computes
them. Shape arithmetic is written with them; their results are again known
while lowering (an int that can size an array, index a tuple or bound a
`range`). numpy's functions of known numbers are folding.py's (`np.prod(x.shape)`
stays numpy's np.int64), sorted() is iteration.sorted_items'.

Only functions without side effects are called, only when every argument is
a known number, str, None or tuple of them, and only results of those kinds
are kept; anything else goes to the call's usual lowering."""

from __future__ import annotations

import builtins
import math

import numpy as np

from xdsl.ir import SSAValue

from irad.frontend.arrays import known_value
from irad.frontend.values import Static, is_array

_PYTHON = (builtins.abs, builtins.pow, builtins.divmod, math.prod, math.gcd, math.lcm, math.comb,
           math.perm, math.factorial, math.isqrt, math.ceil, math.floor, math.trunc, math.log2, math.sqrt)
_KINDS = (bool, int, float, str, type(None))


def _known(obj) -> bool:
    if isinstance(obj, tuple):
        return all(_known(o) for o in obj)
    return isinstance(obj, _KINDS) and not isinstance(obj, np.ndarray)


_UNKNOWN = object()


def _python(value):
    """The Python value of an argument known while lowering (a Static, a constant,
    a tuple of them), or _UNKNOWN."""
    if isinstance(value, Static):
        return value.obj if _known(value.obj) else _UNKNOWN
    if isinstance(value, tuple):  # a tuple or list display: (3, 1, 2)
        items = [_python(v) for v in value]
        return _UNKNOWN if any(v is _UNKNOWN for v in items) else tuple(items)
    if isinstance(value, SSAValue) and not is_array(value):
        known, obj = known_value(value)
        return obj if known and _known(obj) else _UNKNOWN
    return _UNKNOWN


def _kept(result):
    """The result as a known value, or None when it is not of those kinds."""
    if isinstance(result, np.generic):
        result = result.item()
    elif isinstance(result, list):
        result = tuple(result)
    return Static(result) if result is not None and _known(result) else None


def call(src, obj, args: list, kwargs: dict, node) -> Static | None:
    """`obj(*args, **kwargs)` made now, when it is such a call; else None."""
    try:
        listed = any(obj is f for f in _PYTHON)
    except TypeError:
        return None
    if not listed:
        return None
    values = [_python(a) for a in args]
    keywords = {k: _python(v) for k, v in kwargs.items()}
    if any(v is _UNKNOWN for v in [*values, *keywords.values()]):
        return None
    try:
        result = obj(*values, **keywords)
    except Exception as exc:  # as Python raises it, at the call
        raise src.error(node, f"{getattr(obj, '__name__', obj)} raised {type(exc).__name__}: {exc}") from None
    return _kept(result)
