"""Reads through a boolean mask computed at run time, reduced: `x[labels == k].mean(axis=0)`,
`per_example[valid].mean()`, `np.sum(x[x > 0] ** 2)`, `x[m].max()`.

numpy's `x[m]` is an array whose length (the mask's count) is known only at run
time, and irad's shapes are known while lowering. So `x[m]` is a *selection*: a
value of its own kind (values.Kind.SELECTION) that holds the whole array and the
mask, and that only elementwise operations and reductions take:

* the mask's axes (the leading axes of `x` it covers) are merged into one, so a
  selection is an array of shape (P, *rest) and a mask of shape (P,): the
  compacted array's axis 0 is the merged axis, its other axes are `rest`;
* elementwise operations (operators, ufuncs, np.clip, np.round, astype) apply to
  the whole array and keep the selection: their other operands are numbers, arrays
  that broadcast against `rest` alone, or selections through the same mask;
* a reduction over the compacted axis 0 is a reduction of the whole array where
  the unselected elements are its identity: sum (0), prod (1), max (-inf or the
  dtype's least), min, any, all, count_nonzero; mean and var divide by the
  mask's count; len(), .shape[0] and .size are the count, a run-time int.

A variable or a list may hold it until then. Anything else (returning it,
passing it to a function, indexing it, np.sort, a reduction leaving the
compacted axis) is refused where it happens, naming the line of the `x[m]`.

Gradients: an unselected element takes no part in the result, but the
elementwise operations still run on it, and its cotangent is 0 only if their
derivatives there are finite (0 * inf is NaN). So the selection replaces the
unselected elements by the first selected element once, when it is made (the
first selected row for a mask of rows): every later value at an unselected place
is then a copy of a value the compacted program computes, finite wherever the
compacted program's is, whatever the operations are (a value chosen per op, 1
for log, would have to be right for every op and every composition of them).
The replacement's cotangent flows to that first element, and is 0.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import SSAValue

from irad.frontend import numpy_scalars
from irad.frontend.numpy_table import NUMPY, parameters
from irad.frontend.values import Kind, Static, is_array
from irad.ir import tensor as T
from irad.ir.types import F64, I64, is_bool, is_float, numpy_dtype

READ_MESSAGE = ("indexing with a boolean mask computed at run time gives an array whose length is known "
                "only at run time")
HINT = ("reduce it where it is made: x[m].sum(), .mean(), .max(), .min(), .prod(), .var(), .std(), "
        ".any(), .all() (axis=0 over a mask of rows), len(x[m]), after elementwise operations "
        "(np.log(x[m]) ** 2); or use np.where(m, x, 0.0), which keeps the shape "
        "(x[m].mean() is np.sum(np.where(m, x, 0.0)) / np.sum(m))")


@dataclass(frozen=True, eq=False)
class Selection:
    """`x[m]` for a run-time mask: `array` of shape (P, *rest), the mask `mask`
    of shape (P,) (the axes it covered, merged), the mask as written (`source`:
    two selections pair their elements only through one), where it was made."""

    array: SSAValue
    mask: SSAValue
    source: SSAValue
    where: str  # "f.py:3:12", the x[m]
    KIND = Kind.SELECTION

    @property
    def rest(self) -> tuple[int, ...]:
        return T.shape(self.array)[1:]

    def refusal(self, al, node, what: str):
        return al.error(node, f"{what}: {READ_MESSAGE} (x[m] at {self.where}), which irad takes only "
                        "in a reduction or an elementwise operation", HINT)


# ---- making one ------------------------------------------------------------------------
def read(al, x: SSAValue, parts, node):
    """x[m] (or x[m, :]) of a mask known only at run time: a Selection."""
    masks = [p for p in parts if p.kind == "mask"]
    if len(masks) != 1 or parts[0].kind != "mask" or not all(
            p.kind == "slice" and _whole(p.node) for p in parts[1:]):
        raise al.error(node, f"{READ_MESSAGE}; irad takes x[m] alone (a mask over x's leading axes), "
                       "reduced", HINT)
    source = mask = masks[0].value
    dims, covered = T.shape(x), T.shape(mask)
    if len(covered) + len(parts) - 1 > len(dims):
        raise al.error(node, f"too many indices for an array of rank {len(dims)}")
    if dims[:len(covered)] != covered:
        raise al.error(node, f"the boolean mask of shape {covered} does not match the array's leading axes "
                       f"{dims[:len(covered)]} (numpy raises IndexError)")
    count = math.prod(covered)
    rest = dims[len(covered):]
    array = _call(al, np.reshape, [x, Static((count, *rest))], node)
    mask = _call(al, np.reshape, [mask, Static((count,))], node)
    if count:  # the unselected elements become the first selected one (the module docstring says why)
        first = _call(al, np.argmax, [mask], node)
        row = _call(al, np.take, [array, first], node, axis=Static(0))
        array = _call(al, np.where, [_against(al, mask, array, node), array, row], node)
    return Selection(array, mask, source, al.fl.src.location(node))


def _whole(s: ast.Slice) -> bool:
    return s.lower is None and s.upper is None and s.step is None


def _against(al, mask: SSAValue, array: SSAValue, node) -> SSAValue:
    """The mask (P,) as (P, 1, ...), to broadcast against the array."""
    rank = len(T.shape(array))
    return mask if rank == 1 else _call(al, np.reshape, [mask, Static(T.shape(mask) + (1,) * (rank - 1))], node)


def _call(al, fn, args, node, **kwargs):
    return al.call_values(fn, args, kwargs, node)


# ---- elementwise operations ------------------------------------------------------------
_ELEMENTWISE = frozenset({np.clip, np.round, np.around, "ndarray.astype"})


def elementwise(al, node, apply, operands: list):
    """apply(*values) on the whole arrays of the selections among `operands` (and
    the others as they are): a Selection through the same mask."""
    selections = [v for v in operands if isinstance(v, Selection)]
    first = selections[0]
    for s in selections[1:]:
        if s.source is not first.source:
            raise al.error(node, f"an operation on selections through two masks (x[m] at {first.where}, "
                           f"y[m] at {s.where}): irad pairs their elements only through one mask",
                           "compute the mask once and index with it: m = x > 0; x[m] * y[m]")
    values = []
    for v in operands:
        if isinstance(v, Selection):
            values.append(v.array)
        elif is_array(v) and len(T.shape(v)) > len(first.rest):
            raise al.error(node, f"an array of shape {T.shape(v)} with x[m] (at {first.where}), whose length is "
                           "known only at run time: numpy broadcasts them only if the mask's count matches",
                           "select it through the same mask, y[m], or use np.where(m, x, 0.0) for x[m]")
        else:
            values.append(v)
    result = apply(*values)
    if not (is_array(result) and T.shape(result)[:1] == T.shape(first.array)[:1]
            and len(T.shape(result)) == len(T.shape(first.array))):  # pragma: no cover - guarded above
        raise first.refusal(al, node, "this operation")
    return Selection(result, first.mask, first.source, first.where)


def rows_times(al, node, apply, left, right):
    """x[m] @ w for a mask of rows of a 2-d x: each selected row times w (a selection)."""
    if not isinstance(left, Selection) or isinstance(right, Selection) or len(left.rest) != 1:
        raise _first([left, right], {}).refusal(al, node, "`@` of a selection other than x[rows] @ w")
    result = apply(left.array, right)
    return Selection(result, left.mask, left.source, left.where) if is_array(result) else result


# ---- calls: numpy functions and methods --------------------------------------------------
def call(al, fn, args: list, kwargs: dict, node):
    """A numpy function (or an array method, the selection first) with a selection among its arguments."""
    if (isinstance(fn, np.ufunc) and fn.nout == 1) or fn in _ELEMENTWISE:
        if any(isinstance(v, Selection) for v in kwargs.values()):
            raise _first(args, kwargs).refusal(al, node, "a selection as a keyword argument")
        return elementwise(al, node, lambda *values: al.call_values(fn, list(values), kwargs, node), args)
    reduce = _REDUCTIONS.get(fn)
    shown = fn if isinstance(fn, str) else f"np.{getattr(fn, '__name__', fn)}"
    if reduce is None or not isinstance(args[0], Selection) or any(
            isinstance(v, Selection) for v in [*args[1:], *kwargs.values()]):
        if fn in (np.argmax, np.argmin):
            raise _first(args, kwargs).refusal(
                al, node, f"{shown} of a selection (its position counts in the compacted array)")
        raise _first(args, kwargs).refusal(al, node, f"{shown} of a selection")
    _, params = NUMPY[fn]
    spec = parameters(params)
    bound = dict(zip([p.name for p in spec], al.bind(fn, params, args, kwargs, node)))
    for name in ("dtype", "out", "where"):
        if name in bound and al.given(bound[name]):
            raise al.error(node, f"{shown}: irad does not take '{name}' for a selection x[m] (at {args[0].where})",
                           "leave it out")
    return reduce(al, node, args[0], bound)


def _first(args, kwargs) -> Selection:
    return next(v for v in [*args, *kwargs.values()] if isinstance(v, Selection))


def _axes(al, s: Selection, bound: dict, node) -> tuple[Static, Static]:
    """The axis and keepdims of a reduction of `s`: it must reduce the compacted axis 0."""
    axis, keepdims = bound.get("axis", Static(None)), bound.get("keepdims", Static(None))
    rank = len(T.shape(s.array))
    axes = al.static_axes(axis, rank, node)
    if 0 not in axes:
        raise al.error(node, f"a reduction over axes {axes} of x[m] (at {s.where}) leaves its axis 0, whose length is "
                       "known only at run time", "reduce axis 0 too (axis=None or axis=0), or use np.where(m, x, 0.0)")
    return axis, Static(bool(al.static(keepdims, node, "keepdims")))


def _masked(al, s: Selection, fill, node, array: SSAValue | None = None) -> SSAValue:
    """The array with `fill` where the mask is False."""
    array = s.array if array is None else array
    return _call(al, np.where, [_against(al, s.mask, array, node), array, Static(fill)], node)


def count(al, s: Selection, node) -> SSAValue:
    """How many elements the mask selects (an int at run time), as len(x[m])."""
    n = _call(al, np.sum, [s.mask], node)
    return numpy_scalars.mark(al.em.to_int(n) if not isinstance(n, Static) else al.em.const(n.obj, I64),
                              numpy_scalars.PYTHON)


def _sum(fn):
    identity = {np.sum: 0, np.prod: 1}[fn]

    def reduce(al, node, s, bound):
        axis, keepdims = _axes(al, s, bound, node)
        fill = bool(identity) if is_bool(T.element(s.array)) else identity
        return _call(al, fn, [_masked(al, s, fill, node)], node, axis=axis, keepdims=keepdims)
    return reduce


def _logical(fn):
    def reduce(al, node, s, bound):
        axis, keepdims = _axes(al, s, bound, node)
        return _call(al, fn, [_masked(al, s, fn is np.all, node)], node, axis=axis, keepdims=keepdims)
    return reduce


def _extreme(fn):
    def reduce(al, node, s, bound):
        axis, keepdims = _axes(al, s, bound, node)
        elem = T.element(s.array)
        big = fn is np.min
        if is_float(elem):
            fill = math.inf if big else -math.inf
        elif is_bool(elem):
            fill = big
        else:
            info = np.iinfo(numpy_dtype(elem))  # uint8's least is 0: its carrier's would not fit
            fill = int(info.max if big else info.min)
        n = count(al, s, node)
        al.check(al.em.op(arith.CmpiOp(n, al.em.const(0, I64), "sgt")), node,
                 f"zero-size array to reduction operation {'minimum' if big else 'maximum'} which has no "
                 f"identity (x[m] at {s.where} selects no element; numpy raises ValueError)")
        return _call(al, fn, [_masked(al, s, fill, node)], node, axis=axis, keepdims=keepdims)
    return reduce


def _float_array(al, s: Selection) -> SSAValue:
    """The array as numpy's mean takes it: float64 unless it is float32 or float64."""
    elem = T.element(s.array)
    return s.array if is_float(elem) else al.to_element(s.array, F64)


def _divided(al, total, n, ddof: int, node):
    """total / max(n - ddof, 0) in total's float type: numpy's NaN (0 / 0) for no element."""
    if ddof:
        n = al.em.op(arith.MaxSIOp(al.em.op(arith.SubiOp(n, al.em.const(ddof, I64))), al.em.const(0, I64)))
    elem = T.element(total) if is_array(total) else total.type
    divisor = al.to_element(n, elem)
    if is_array(total):
        return al.binary(ast.Div(), total, divisor, node)
    quotient = al.em.op(arith.DivfOp(total, divisor))  # numpy's scalar of total's width (float32 stays)
    return numpy_scalars.mark_width(numpy_scalars.mark(quotient, numpy_scalars.NUMPY), elem)


def _mean(al, node, s, bound):
    axis, keepdims = _axes(al, s, bound, node)
    x = _float_array(al, s)
    total = _call(al, np.sum, [_masked(al, s, 0, node, x)], node, axis=axis, keepdims=keepdims)
    return _divided(al, total, count(al, s, node), 0, node)


def _variance(root: bool):
    def reduce(al, node, s, bound):
        axis, keepdims = _axes(al, s, bound, node)
        ddof = al.static(bound.get("ddof", Static(None)), node, "ddof") or 0
        if not isinstance(ddof, int):
            raise al.error(node, f"ddof must be an int known while lowering, got {ddof!r}")
        x = _float_array(al, s)
        n = count(al, s, node)
        total = _call(al, np.sum, [_masked(al, s, 0, node, x)], node, axis=axis, keepdims=Static(True))
        center = _divided(al, total, n, 0, node)
        deviation = al.binary(ast.Sub(), x, center, node)
        squares = al.binary(ast.Mult(), deviation, deviation, node)
        total = _call(al, np.sum, [_masked(al, s, 0, node, squares)], node, axis=axis, keepdims=keepdims)
        variance = _divided(al, total, n, ddof, node)
        if not root:
            return variance
        if is_array(variance):
            return _call(al, np.sqrt, [variance], node)
        root_ = al.em.op(mathd.SqrtOp(variance))  # numpy's scalar of the variance's width
        return numpy_scalars.mark_width(numpy_scalars.mark(root_, numpy_scalars.NUMPY), variance.type)
    return reduce


_REDUCTIONS = {
    np.sum: _sum(np.sum), np.prod: _sum(np.prod),
    np.max: _extreme(np.max), np.amax: _extreme(np.max), np.min: _extreme(np.min), np.amin: _extreme(np.min),
    np.any: _logical(np.any), np.all: _logical(np.all), np.count_nonzero: _logical(np.count_nonzero),
    np.mean: _mean, np.var: _variance(False), np.std: _variance(True),
}


# ---- attributes ---------------------------------------------------------------------------
def attribute(al, s: Selection, name: str, node):
    """x[m]'s len-like attributes (.shape, .size, .ndim); its methods
    (x[m].sum) are bound by arrays.bound_method, as an array's."""
    rank = 1 + len(s.rest)
    if name == "ndim":
        return Static(rank)
    if name == "shape":
        return (count(al, s, node), *(Static(n) for n in s.rest))
    if name == "size":
        n = count(al, s, node)
        return n if not s.rest else al.binary(ast.Mult(), n, al.em.const(math.prod(s.rest), I64), node)
    raise s.refusal(al, node, f"the attribute `.{name}` of a selection")

