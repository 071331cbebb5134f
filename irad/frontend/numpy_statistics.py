"""numpy's statistics beyond the reductions of arrays.py: one table entry each
(numpy_table.py).

- var/std: numpy's own formula, sum((x - mean)^2) / (n - ddof), from the ops;
- cumsum: the op irad.cumsum, one pass natively, np.cumsum in the Python
  backend; its adjoint is the reversed cumulative sum (one pass too);
- cumprod: the op irad.linear_scan, h[k] = x[k] h[k-1] (+ x[0] at the
  start), one pass natively; its derivatives are the recurrence again,
  products only, exact where an element is 0 (y / x would not be);
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

from irad.frontend.arrays import ArrayLowering
from irad.frontend.values import is_array
from irad.frontend.numpy_table import numpy_function
from irad.ir import gather as G
from irad.ir import scan as S
from irad.ir import tensor as T
from irad.ir.types import F64, I64, is_bool, is_float


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
    """The inclusive scan along the axis; int arrays scan in int64, as numpy.
    A sum is one irad.cumsum (its adjoint the reversed cumsum), a product
    one irad.linear_scan (its adjoint the recurrence run backwards, exact
    where an element is 0; irad/ir/scan.py)."""
    x, axis = _array_axis(al, a, axis, node)
    x = al.accumulated(x, node)  # int8 ... int32 in int64, as numpy
    axis = 0 if axis is None else axis
    scanned = S.cumprod(al.em, x, axis) if multiply else S.cumsum(al.em, x, axis)
    return al.new(scanned if scanned is not x else al.copy(x))


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
    if not is_bool(T.element(x)):  # numpy's diff of bools is `!=` (bools again)
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
        elem = T.element(x)
        x = al.em.op((arith.SubfOp if is_float(elem) else arith.XOrIOp if is_bool(elem) else arith.SubiOp)(
            later, earlier))
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


# ---- more reductions: truth, counts, averages, spreads, NaN-ignoring ones ----------------
def _truth_reduction(al: ArrayLowering, a, axis, keepdims, node, every: bool) -> SSAValue:
    """np.any / np.all: the max (min) of x != 0 as 0.0/1.0, compared with 1/2."""
    x = al.array(a, node)
    truth = x if T.element(x) == T.I1 else al.compare("une", x, al.em.const(0.0, F64), node)
    as_float = T.pointwise(al.em, lambda e, v: e.op(arith.UIToFPOp(v[0], F64)), [truth], F64)
    combiner = arith.MinimumfOp if every else arith.MaximumfOp
    extreme = al.reduction(as_float, axis, keepdims, node, combiner)
    return al.new(T.compare(al.em, "ogt", extreme, T.dense(al.em, 0.5, extreme.type) if is_array(extreme)
                            else al.em.const(0.5, F64)))


@numpy_function(np.any, params=("a", "?axis", "?out", "?keepdims"))
def _any(al, node, a, axis, out, keepdims):
    _unsupported(al, node, "any", out=out)
    return _truth_reduction(al, a, axis, keepdims, node, every=False)


@numpy_function(np.all, params=("a", "?axis", "?out", "?keepdims"))
def _all(al, node, a, axis, out, keepdims):
    _unsupported(al, node, "all", out=out)
    return _truth_reduction(al, a, axis, keepdims, node, every=True)


@numpy_function(np.count_nonzero, params=("a", "?axis", "?keepdims"))
def _count_nonzero(al, node, a, axis, keepdims):
    x = al.array(a, node)
    truth = x if T.element(x) == T.I1 else al.compare("une", x, al.em.const(0.0, F64), node)
    ones = T.pointwise(al.em, lambda e, v: e.op(arith.UIToFPOp(v[0], F64)), [truth], F64)
    count = al.reduction(ones, axis, keepdims, node, arith.AddfOp)
    return al.new(T.pointwise(al.em, lambda e, v: e.op(arith.FPToSIOp(v[0], I64)), [count], I64))


@numpy_function(np.average, params=("a", "?axis", "?weights", "?returned=False", "?keepdims=False"))
def _average(al, node, a, axis, weights, returned, keepdims):
    if not al.given(weights):
        result = al.mean(a, axis, keepdims, node)
        if not al.static(returned, node, "returned"):
            return result
        x = al.array(a, node)
        axes = al.static_axes(axis, len(T.shape(x)), node) if is_array(x) else ()
        count = float(math.prod(T.shape(x)[i] for i in axes))
        return result, al.em.const(count, T.element(result)) if not is_array(result) else T.dense(al.em, count, result.type)
    (x,) = al.floats(node, al.array(a, node))
    (w,) = al.floats(node, al.array(weights, node))
    given_axis = al.static(axis, node, "the axis")
    if is_array(w) and is_array(x) and T.shape(w) != T.shape(x):
        if given_axis is None or isinstance(given_axis, tuple) or len(T.shape(w)) != 1:
            raise al.error(node, "np.average: weights of another shape need one axis, along which they lie")
        ax = al.static_axes(given_axis, len(T.shape(x)), node)[0]
        w = T.reshape(al.em, w, [T.shape(w)[0] if d == ax else 1 for d in range(len(T.shape(x)))])
    x, w = al.floats(node, x, w)
    total = al.reduction(al.em.mul(x, w), axis, keepdims, node, arith.AddfOp)
    weight = al.reduction(w, axis, keepdims, node, arith.AddfOp)
    nonzero = al.compare("une", weight, al.em.const(0.0, F64), node)
    if is_array(nonzero):
        nonzero = _truth_reduction(al, nonzero, None, False, node, every=True)
    al.check(nonzero, node, "ZeroDivisionError: Weights sum to zero, can't be normalized")  # as numpy raises
    result = al.new(al.binary(ast.Div(), total, weight, node))
    return (result, weight) if al.static(returned, node, "returned") else result


@numpy_function(np.ptp, params=("a", "?axis", "?out", "?keepdims"))
def _ptp(al, node, a, axis, out, keepdims):
    _unsupported(al, node, "ptp", out=out)
    top = al.reduction(a, axis, keepdims, node, arith.MaximumfOp)
    bottom = al.reduction(a, axis, keepdims, node, arith.MinimumfOp)
    return al.new(al.binary(ast.Sub(), top, bottom, node))


@numpy_function(np.median, params=("a", "?axis", "?out", "?overwrite_input", "?keepdims=False"))
def _median(al, node, a, axis, out, overwrite_input, keepdims):
    """The middle of the sorted values (the mean of the two middle ones for an even
    count): its gradient goes to those elements through the sort. NaN anywhere
    along the axis gives NaN, as in numpy."""
    _unsupported(al, node, "median", out=out)
    (x,) = al.floats(node, al.array(a, node))
    if not is_array(x):
        return x
    given = al.static(axis, node, "the axis")
    dims = T.shape(x)
    axes = al.static_axes(given, len(dims), node)
    rest = [d for d in range(len(dims)) if d not in axes]
    moved = T.transpose(al.em, x, [*rest, *axes])  # the reduced axes last, merged
    n = math.prod(dims[d] for d in axes)
    flat = T.reshape(al.em, moved, [*(dims[d] for d in rest), n])
    last = len(rest)
    rank = G.rank(al.em, flat, last)
    ordered = G.scatter_add(al.em, T.dense(al.em, -0.0, flat.type), rank, flat, last)
    middle = T.slice_along(al.em, ordered, last, (n - 1) // 2, 2 - n % 2)
    half = al.em.mul(T.reduce(al.em, middle, [last]), T.dense(al.em, 1 / (2 - n % 2), TensorType(T.element(x), T.shape(middle)[:last])))
    nans = T.pointwise(al.em, lambda e, v: e.op(arith.UIToFPOp(e.op(arith.CmpfOp(v[0], v[0], "uno")), F64)),
                       [flat], F64, "piecewise-constant")
    has_nan = T.reduce(al.em, nans, [last], arith.MaximumfOp)
    nan = T.dense(al.em, math.nan, half.type)
    result = T.select(al.em, T.compare(al.em, "ogt", has_nan, T.dense(al.em, 0.5, has_nan.type)), nan, half)
    if al.static(keepdims, node, "keepdims"):
        return al.new(T.reshape(al.em, result, [1 if d in axes else m for d, m in enumerate(dims)]))
    return al.new(result) if T.shape(result) else T.extract_scalar(al.em, result)


def _nan_reduction(combiner, fill: float, name: str):
    """np.nansum/nanmax/nanmin: NaN replaced by the combiner's neutral element
    (a NaN element gets no derivative); an all-NaN max or min is NaN, as numpy."""

    def handler(al, node, a, axis, out, keepdims):
        _unsupported(al, node, name, out=out)
        (x,) = al.floats(node, al.array(a, node))
        nan = T.compare(al.em, "uno", x, x)
        clean = T.select(al.em, nan, al.em.const(fill, x.type), x)
        result = al.reduction(clean, axis, keepdims, node, combiner)
        if combiner is arith.AddfOp:
            return al.new(result)
        present = _truth_reduction(al, al.em.op(arith.XOrIOp(nan, al.em.const(True, nan.type))), axis, keepdims,
                                   node, every=False)
        return al.new(T.select(al.em, present, result, al.em.const(math.nan, result.type)))

    return handler


numpy_function(np.nansum, params=("a", "?axis", "?out", "?keepdims"))(_nan_reduction(arith.AddfOp, 0.0, "nansum"))
numpy_function(np.nanmax, params=("a", "?axis", "?out", "?keepdims"))(_nan_reduction(arith.MaximumfOp, -math.inf, "nanmax"))
numpy_function(np.nanmin, params=("a", "?axis", "?out", "?keepdims"))(_nan_reduction(arith.MinimumfOp, math.inf, "nanmin"))


@numpy_function(np.nanmean, params=("a", "?axis", "?out", "?keepdims"))
def _nanmean(al, node, a, axis, out, keepdims):
    _unsupported(al, node, "nanmean", out=out)
    (x,) = al.floats(node, al.array(a, node))
    nan = T.compare(al.em, "uno", x, x)
    total = al.reduction(T.select(al.em, nan, al.em.const(0.0, x.type), x), axis, keepdims, node, arith.AddfOp)
    present = T.pointwise(al.em, lambda e, v: e.op(arith.UIToFPOp(e.op(arith.CmpfOp(v[0], v[0], "ord")), T.element(x))),
                          [x], T.element(x), "piecewise-constant")
    count = al.reduction(present, axis, keepdims, node, arith.AddfOp)
    return al.new(al.binary(ast.Div(), total, count, node))


@numpy_function(np.trapezoid, params=("y", "?x", "?dx=1.0", "?axis=-1"))
def _trapezoid(al, node, y, x, dx, axis):
    """sum((y[1:] + y[:-1]) * d / 2) along the axis, d the spacing (or np.diff(x))."""
    al.refuse_bools(node, "np.trapezoid", al.array(y, node))
    (values,) = al.floats(node, al.array(y, node))
    axis = al.static_axes(axis, len(T.shape(values)), node)[0]
    n = T.shape(values)[axis]
    em = al.em
    pairs = em.add(T.slice_along(em, values, axis, 1, n - 1), T.slice_along(em, values, axis, 0, n - 1))
    if al.given(x):
        (points,) = al.floats(node, al.array(x, node))
        if len(T.shape(points)) == 1:
            points = T.reshape(em, points, [n if d == axis else 1 for d in range(len(T.shape(values)))])
        m = T.shape(points)[axis]
        step = em.sub(T.slice_along(em, points, axis, 1, m - 1), T.slice_along(em, points, axis, 0, m - 1))
        (pairs, step) = al.floats(node, pairs, step)
        areas = em.mul(pairs, step)
    else:
        areas = al.binary(ast.Mult(), pairs, al.value(dx, node), node)
    return al.reduction(al.binary(ast.Mult(), areas, em.const(0.5, F64), node), axis, False, node, arith.AddfOp)
