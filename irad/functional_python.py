"""Python's higher-order builtins and math's sequence functions, written in irad's
subset (rules/keys.py's IMPLEMENTED_IN_PYTHON maps each to its version here).
They take what Python's take and give Python's values, checked against CPython
in tests/frontend/test_sequence_functions.py. A sequence walked here has a length
known while lowering (a tuple, a list, an array's rows): map's result is a
tuple, which `sum`, `list`, `zip` and `for` consume as they would Python's
iterator.
"""

import itertools
import math


def reduce(function, iterable, *initial):
    """functools.reduce: function(function(initial, a), b)...; without initial, from the first item."""
    if len(initial) > 1:
        raise TypeError("reduce expected at most 3 arguments")
    if initial:
        acc, rest = initial[0], iterable
    else:
        if len(iterable) == 0:
            raise TypeError("reduce() of empty iterable with no initial value")
        acc, rest = iterable[0], iterable[1:]
    for item in rest:
        acc = function(acc, item)
    return acc


def map_(function, *iterables):
    """map: function of the items of the iterables taken together, up to the shortest."""
    if not iterables:
        raise TypeError("map() must have at least two arguments.")
    return tuple(function(*items) for items in zip(*iterables))


def prod(iterable, *, start=1):
    """math.prod: start times the items, from the left (ints stay ints)."""
    acc = start
    for item in iterable:
        acc = acc * item
    return acc


def dist(p, q):
    """math.dist: the Euclidean distance of two points of the same dimension."""
    if len(p) != len(q):
        raise ValueError("both points must have the same number of dimensions")
    squares = 0.0
    for a, b in zip(p, q):
        squares = squares + (a - b) * (a - b)
    return math.sqrt(squares)


def hypot(*coordinates):
    """math.hypot of any number of coordinates (two: numerics.hypot, which has a rule):
    the Euclidean norm, scaled by the largest magnitude so no square overflows."""
    m = 0.0
    for c in coordinates:
        m = max(m, abs(c))
    if math.isinf(m):
        return m  # Python's: inf whatever else (a NaN too)
    if m == 0.0:  # all zero (a NaN where max passed over one): the subgradient 0 at the kink, as for two
        total = 0.0
        for c in coordinates:
            total = total + c
        return 0.0 * total
    squares = 0.0
    for c in coordinates:
        squares = squares + (c / m) * (c / m)
    return m * math.sqrt(squares)


def accumulate(iterable, func=None, *, initial=None):
    """itertools.accumulate: the running sums (or func's running values), as a tuple."""
    if func is None:
        func = _add
    items = tuple(iterable)
    out = () if initial is None else (initial,)
    if len(items) == 0:
        return out
    acc = items[0] if initial is None else func(initial, items[0])
    out = out + (acc,)
    for item in items[1:]:
        acc = func(acc, item)
        out = out + (acc,)
    return out


def _add(a, b):
    return a + b


def _indexed(pool, index_tuples):
    """The items of `pool` at each tuple of indices (known while lowering)."""
    items = tuple(pool)
    return tuple(tuple(items[i] for i in indices) for indices in index_tuples)


def product(*iterables, repeat=1):
    """itertools.product: the tuples of one item of each iterable, the last varying fastest."""
    pools = tuple(tuple(p) for p in iterables) * repeat
    flat = tuple(item for pool in pools for item in pool)
    starts = tuple(sum(len(q) for q in pools[:k]) for k in range(len(pools)))
    index_tuples = itertools.product(*(range(s, s + len(p)) for s, p in zip(starts, pools)))
    return _indexed(flat, index_tuples)


def combinations(iterable, r):
    """itertools.combinations: the r-tuples of items in increasing positions."""
    items = tuple(iterable)
    return _indexed(items, itertools.combinations(range(len(items)), r))


def combinations_with_replacement(iterable, r):
    items = tuple(iterable)
    return _indexed(items, itertools.combinations_with_replacement(range(len(items)), r))


def permutations(iterable, r=None):
    items = tuple(iterable)
    return _indexed(items, itertools.permutations(range(len(items)), r))
