"""Python's pure functions of known values, called while lowering:
`math.prod(x.shape[1:])`, `math.gcd(n, m)`, `divmod(n, 4)`, `max(a.ndim, 2)`, `float("inf")`, as
Python computes them. Shape arithmetic is written with them; their results are again known
while lowering (an int that can size an array, index a tuple or bound a
`range`). numpy's functions of known numbers are folding.py's (`np.prod(x.shape)`
stays numpy's np.int64), sorted() is iteration.sorted_items'.

Only functions without side effects are called, only when every argument is
a known number, str, None or tuple of them, and only results of those kinds
are kept; anything else goes to the call's usual lowering."""

from __future__ import annotations

import builtins
import itertools
import math

import numpy as np

from irad.frontend.arrays import known_value
from irad.frontend.folding import known_numbers
from irad.frontend.values import Static

# itertools' iterators of known items (ranges with known bounds are their ints), kept as tuples
_ITERATORS = (itertools.product, itertools.combinations, itertools.combinations_with_replacement,
              itertools.permutations, itertools.accumulate)
_PYTHON = (builtins.abs, builtins.bool, builtins.pow, builtins.divmod, builtins.float, builtins.max, builtins.min,
           math.prod, math.gcd, math.lcm, math.comb,
           math.perm, math.factorial, math.isqrt, math.ceil, math.floor, math.trunc, math.log2, math.sqrt,
           *_ITERATORS)


def _kept(result):
    """The result as a known value (a numpy scalar as Python's number), or None
    when it is not a number, str, None or tuple of them."""
    if isinstance(result, np.generic):
        result = result.item()
    return Static(result) if result is not None and known_numbers(result) else None


def call(src, obj, args: list, kwargs: dict, node) -> Static | None:
    """`obj(*args, **kwargs)` made now, when it is such a call; else None."""
    if not any(obj is f for f in _PYTHON):
        return None
    if any(obj is f for f in _ITERATORS):
        args = [_range_items(a) for a in args]
    parts = [known_value(a) for a in args]  # (known, the Python value)
    named = {k: known_value(v) for k, v in kwargs.items()}
    if not all(known and known_numbers(v) for known, v in (*parts, *named.values())):
        return None
    try:
        result = obj(*(v for _, v in parts), **{k: v for k, (_, v) in named.items()})
    except Exception as exc:  # as Python raises it, at the call
        raise src.error(node, f"{getattr(obj, '__name__', obj)} raised {type(exc).__name__}: {exc}") from None
    if any(obj is f for f in _ITERATORS):
        result = tuple(result)
    return _kept(result)


def _range_items(value):
    """range(...) with bounds known while lowering as the tuple of its ints; anything else as it is."""
    from irad.frontend.iteration import RangeValue

    if not isinstance(value, RangeValue):
        return value
    bounds = [known_value(v) for v in (value.start, value.stop, value.step)]
    if not all(known for known, _ in bounds):
        return value
    return Static(tuple(range(*(int(v) for _, v in bounds))))
