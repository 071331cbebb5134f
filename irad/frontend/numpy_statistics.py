"""numpy's statistics beyond the reductions of arrays.py: one table entry each
(numpy_table.py).

- var/std: numpy's own formula, sum((x - mean)^2) / (n - ddof), from the ops;
- cumsum/cumprod: a Hillis-Steele scan, log2(n) shifted adds (or multiplies)
  along the axis. Differentiating the ops gives the reverse scan for cumsum,
  and for cumprod the product rule, which stays exact where an element is 0
  (y / x would not);
- diff: differences of slices;
- sort: each element scattered to its stable rank (irad/ir/gather.py), so the
  gradient is the cotangent gathered back through the same permutation;
  partition returns the sorted array, which is one valid partition;
- argmax/argmin/argsort: int results, no derivative.
"""

from __future__ import annotations

import ast
import math

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irad.frontend.arrays import ArrayLowering, is_array
from irad.frontend.numpy_table import numpy_function
from irad.ir import gather as G
from irad.ir import tensor as T
from irad.ir.types import I64, is_float


def _unsupported(al: ArrayLowering, node, name: str, **given) -> None:
    """numpy parameters irad does not take (dtype=, out=, ...): only their default."""
    for param, value in given.items():
        if al.static(value, node, param) is not None:
            raise al.error(node, f"np.{name}: the argument '{param}' is not supported",
                           f"call np.{name} without {param}= (irad's arrays are values of one dtype)")


def _array_axis(al: ArrayLowering, a, axis, node) -> tuple[SSAValue, int | None]:
    """The array (floats stay floats, ints and bools become int64) and the one axis
    (normalised) an axis-wise function works on; axis=None flattens first, as numpy does."""
    x = al.array(a, node)
    (x,) = al.floats(node, x) if is_float(T.element(x)) else al.integers(node, x)
    x = al.as_tensor(x) if not is_array(x) else x
    axis = al.static(axis, node, "the axis")
    if axis is None:
        return T.reshape(al.em, x, (math.prod(T.shape(x)),)), None
    return x, al.static_axes(axis, len(T.shape(x)), node)[0]


# ---- variance --------------------------------------------------------------------
def _variance(al: ArrayLowering, a, axis, ddof, keepdims, node, root: bool = False) -> SSAValue:
    """The variance, or its square root: where each variance is over one element,
    it is identically 0 (NaN for ddof >= 1), and so is its square root, with
    derivative 0 (not sqrt's infinite slope at 0)."""
    (x,) = al.floats(node, al.array(a, node))
    em = al.em
    ddof = al.static(ddof, node, "ddof") or 0
    if not is_array(x):
        count = 1
        spread = em.sub(x, x)
        total = em.mul(spread, spread)
    else:
        axes = al.static_axes(axis, len(T.shape(x)), node)
        count = math.prod(T.shape(x)[i] for i in axes)
        centre = al.mean(x, axis, True, node)
        spread = em.sub(x, T.broadcast_to(em, centre, T.shape(x)))
        total = al.reduction(em.mul(spread, spread), axis, keepdims, node, arith.AddfOp)
    divisor = em.const(float(max(count - ddof, 0)), T.element(total))
    variance = al.binary(ast.Div(), total, divisor, node)
    return al.new(em.op(mathd.SqrtOp(variance)) if root and count > 1 else variance)


@numpy_function(np.var, params=("a", "?axis", "?dtype", "?out", "?ddof", "?keepdims"))
def _var(al, node, a, axis, dtype, out, ddof, keepdims):
    _unsupported(al, node, "var", dtype=dtype, out=out)
    return _variance(al, a, axis, ddof, keepdims, node)


@numpy_function(np.std, params=("a", "?axis", "?dtype", "?out", "?ddof", "?keepdims"))
def _std(al, node, a, axis, dtype, out, ddof, keepdims):
    _unsupported(al, node, "std", dtype=dtype, out=out)
    return _variance(al, a, axis, ddof, keepdims, node, root=True)


# ---- scans -------------------------------------------------------------------------
def _scan(al: ArrayLowering, a, axis, node, multiply: bool) -> SSAValue:
    """Hillis-Steele: after the step with shift s, each element combines the 2s
    elements up to it; the neutral element fills in before the start (-0.0 for
    float sums keeps the sign of a zero). Int arrays scan in int64, as numpy."""
    x, axis = _array_axis(al, a, axis, node)
    axis = 0 if axis is None else axis
    dims = T.shape(x)
    floating = is_float(T.element(x))
    combiner = {(True, True): arith.MulfOp, (True, False): arith.AddfOp,
                (False, True): arith.MuliOp, (False, False): arith.AddiOp}[floating, multiply]
    neutral = 1 if multiply else -0.0 if floating else 0
    n, shift = dims[axis], 1
    while shift < n:
        fill = T.dense(al.em, neutral, TensorType(T.element(x), [shift if d == axis else m for d, m in enumerate(dims)]))
        shifted = T.concat(al.em, [fill, T.slice_along(al.em, x, axis, 0, n - shift)], axis)
        x = al.em.op(combiner(x, shifted))
        shift *= 2
    return al.new(x if shift > 1 else al.copy(x))


@numpy_function(np.cumsum, params=("a", "?axis", "?dtype", "?out"))
def _cumsum(al, node, a, axis, dtype, out):
    _unsupported(al, node, "cumsum", dtype=dtype, out=out)
    return _scan(al, a, axis, node, multiply=False)


@numpy_function(np.cumprod, params=("a", "?axis", "?dtype", "?out"))
def _cumprod(al, node, a, axis, dtype, out):
    _unsupported(al, node, "cumprod", dtype=dtype, out=out)
    return _scan(al, a, axis, node, multiply=True)


@numpy_function(np.diff, params=("a", "?n=1", "?axis=-1", "?prepend", "?append"))
def _diff(al, node, a, n, axis, prepend, append):
    x = al.array(a, node)
    if not is_array(x):
        raise al.error(node, "np.diff needs an array of at least one dimension")
    (x,) = al.floats(node, x) if is_float(T.element(x)) else al.integers(node, x)
    n = al.static(n, node, "n")
    axis = al.static_axes(axis, len(T.shape(x)), node)[0]
    pieces = [x]
    for at_end, value in ((False, prepend), (True, append)):
        if not al.given(value):
            continue
        v = al.array(value, node)
        dims = list(T.shape(x))
        dims[axis] = T.shape(v)[axis] if is_array(v) and len(T.shape(v)) == len(dims) else 1
        v = T.broadcast_to(al.em, v, dims)
        pieces = [al.convert(p, al.common_element([*pieces, v])) for p in pieces]
        v = al.convert(v, T.element(pieces[0]))
        pieces = pieces + [v] if at_end else [v] + pieces
    x = T.concat(al.em, pieces, axis)
    for _ in range(n):
        length = T.shape(x)[axis]
        if length == 0:
            break
        later, earlier = T.slice_along(al.em, x, axis, 1, length - 1), T.slice_along(al.em, x, axis, 0, length - 1)
        x = al.em.op((arith.SubfOp if is_float(T.element(x)) else arith.SubiOp)(later, earlier))
    return al.new(x if n else al.copy(x))


# ---- positions of extremes, sorting ---------------------------------------------------
def _arg_extreme(al: ArrayLowering, a, axis, keepdims, node, combiner) -> SSAValue:
    """The first position of the max (min) along the axis, NaN first as in numpy."""
    x, axis = _array_axis(al, a, axis, node)
    (x,) = al.floats(node, x)  # ints compare exactly as floats below 2**53
    em = al.em
    flat = axis is None
    axis = 0 if flat else axis
    dims = T.shape(x)
    extreme = T.broadcast_back(em, T.reduce(em, x, [axis], combiner), x, [axis])
    hits = em.op(arith.OrIOp(T.compare(em, "oeq", x, extreme), T.compare(em, "uno", x, x)))
    where = T.positions(em, dims, axis, T.element(x))
    beyond = T.dense(em, float(dims[axis]), where.type)
    first = T.reduce(em, T.select(em, hits, where, beyond), [axis], arith.MinimumfOp)
    if not T.shape(first):
        return em.op(arith.FPToSIOp(T.extract_scalar(em, first), I64))
    result = T.elementwise(em, lambda e, v: e.op(arith.FPToSIOp(v[0], I64)), [first], I64)
    if al.static(keepdims, node, "keepdims") and not flat:
        result = T.reshape(em, result, [1 if d == axis else m for d, m in enumerate(dims)])
    return al.new(result)


@numpy_function(np.argmax, params=("a", "?axis", "?out", "?keepdims"))
def _argmax(al, node, a, axis, out, keepdims):
    _unsupported(al, node, "argmax", out=out)
    return _arg_extreme(al, a, axis, keepdims, node, arith.MaximumfOp)


@numpy_function(np.argmin, params=("a", "?axis", "?out", "?keepdims"))
def _argmin(al, node, a, axis, out, keepdims):
    _unsupported(al, node, "argmin", out=out)
    return _arg_extreme(al, a, axis, keepdims, node, arith.MinimumfOp)


def _sorting(al: ArrayLowering, a, axis, node, order) -> tuple[SSAValue, int]:
    """The array and axis to sort along (kind= is a speed hint: every sort here is stable)."""
    _unsupported(al, node, "sort", order=order)
    x, axis = _array_axis(al, a, axis, node)
    return x, 0 if axis is None else axis


@numpy_function(np.sort, params=("a", "?axis=-1", "?kind", "?order"))
def _sort(al, node, a, axis, kind, order):
    x, axis = _sorting(al, a, axis, node, order)
    rank = G.rank(al.em, x, axis)
    start = T.dense(al.em, -0.0 if is_float(T.element(x)) else 0, x.type)  # -0.0 + v is v, signed zeros too
    return al.new(G.scatter_add(al.em, start, rank, x, axis))


@numpy_function(np.argsort, params=("a", "?axis=-1", "?kind", "?order"))
def _argsort(al, node, a, axis, kind, order):
    x, axis = _sorting(al, a, axis, node, order)
    rank = G.rank(al.em, x, axis)
    zeros = T.dense(al.em, 0, TensorType(I64, T.shape(x)))
    return al.new(G.scatter_add(al.em, zeros, rank, T.positions(al.em, T.shape(x), axis), axis))


@numpy_function(np.partition, params=("a", "kth", "?axis=-1", "?kind", "?order"))
def _partition(al, node, a, kth, axis, kind, order):
    """The sorted array: every element is where np.sort puts it, which is a valid
    partition for every kth (numpy leaves the order within the parts open)."""
    x, axis_value = _sorting(al, a, axis, node, order)
    length = T.shape(x)[axis_value]
    kths = al.static(kth, node, "kth")
    for k in kths if isinstance(kths, tuple) else (kths,):
        if not isinstance(k, int) or not -length <= k < length:
            raise al.error(node, f"kth {k} is out of bounds for an axis of length {length}")
    return _sort(al, node, a, axis, kind, order)
