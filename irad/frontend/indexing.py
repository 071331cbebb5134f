"""numpy's advanced indexing: integer arrays and lists as indices, for reads and
writes, mixed with slices and ints (`x[[0, 2]]`, `x[3, 2:, [1, 3]]`,
`y[idx] += v`), and np.take / np.take_along_axis.

numpy's rule, which irad follows: when an index holds an array (or a list),
every int in it is an array too; the index arrays broadcast to one shape B;
the slices apply to their axes; the result has B's axes where the first
advanced index stood if the advanced indices are next to each other, and first
otherwise. irad lowers this in three steps:

1. the slices, as a basic index (a view step, irad/frontend/views.py);
2. the advanced axes moved first and merged into one, and the index arrays
   merged into one linear index (i * n1 + j for two);
3. a gather along the merged axis (irad/ir/gather.py): its adjoint is a
   scatter-add, so repeated indices accumulate their cotangents. A write is a
   scatter along the same axis (where an index repeats, the last value wins,
   as in numpy), written back through the view step.

Index values are wrapped (negatives count from the end) and checked at run
time, like `x[i]`. A boolean mask selects a number of elements known only at
run time: a read through a constant mask is a gather, a read through a run-time
mask is a selection that only reductions and elementwise operations take
(masked_reads.py). A write through a run-time mask keeps the shape, and is a
select (`y[y < 0] = 0.0`, `y[m] += v`: masked_write).
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import SSAValue

from irad.frontend import constant_arrays
from irad.frontend.numpy_table import numpy_function
from irad.frontend.values import Static, is_array
from irad.frontend.views import Slice
from irad.ir import gather as G
from irad.ir import tensor as T
from irad.ir.constants import constant_array
from irad.ir.types import F64, I1, I64, is_bool, is_float, is_int

MASK_HINT = ("x[mask] is taken where it is reduced (x[mask].mean(), np.sum(x[mask] ** 2), "
             "docs/python-subset.md); elsewhere use np.where(mask, x, 0.0), which keeps the shape: "
             "irad's array shapes are known while lowering")


@dataclass(frozen=True)
class Part:
    """One entry of an index: a slice (its AST), a new axis, an int (static or
    SSA scalar), or an array of ints (SSA tensor; `static` holds its values
    when they are known while lowering)."""

    kind: str  # "slice", "new", "int", "array"
    node: ast.expr
    value: object = None
    static: np.ndarray | None = None


def constant_values(v: SSAValue) -> np.ndarray | None:
    """The values of a tensor known while lowering (a dense constant or
    from_elements of constants), else None."""
    owner = v.owner
    shape = T.shape(v)
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, DenseIntOrFPElementsAttr):
        return constant_array(owner.value)
    if isinstance(owner, tensor.FromElementsOp):
        items = []
        for operand in owner.operands:
            if not isinstance(operand.owner, arith.ConstantOp):
                return None
            items.append(operand.owner.value.value.data)
        return np.asarray(items).reshape(shape)
    return None


def parse(al, x: SSAValue, index_node: ast.expr, node, runtime_masks: bool = False) -> list[Part]:
    """The parts of `x[index]`, each evaluated once, an Ellipsis expanded, and
    boolean masks known while lowering turned into int arrays. With
    `runtime_masks` (a write, or a read: masked_reads.py), a mask known only at
    run time is a part of kind "mask" (masked_write), else an error."""
    parts: list[Part] = []
    ellipsis = None
    for part, value in _entries(al, index_node, node):
        if isinstance(part, ast.Slice):
            parts.append(Part("slice", part))
            continue
        if isinstance(value, Static) and value.obj is None:  # None, np.newaxis
            parts.append(Part("new", part))
        elif isinstance(value, Static) and value.obj is Ellipsis:
            if ellipsis is not None:
                raise al.error(node, "an index can only have a single ellipsis ('...')")
            ellipsis = len(parts)
        else:
            parts.extend(_value_parts(al, part, value, node, runtime_masks))
    consumed = sum(p.kind != "new" for p in parts)
    rank = len(T.shape(x))
    if consumed > rank:
        raise al.error(node, f"too many indices for an array of rank {rank}")
    if ellipsis is not None:
        fill = [Part("slice", ast.Slice()) for _ in range(rank - consumed)]
        parts[ellipsis:ellipsis] = fill
    return parts


def _entries(al, index_node: ast.expr, node) -> list[tuple[ast.expr, object]]:
    """The entries of an index, each with its value (None for a slice). A tuple
    value is numpy's index of several entries, as if written out: `A[idx]` with
    `idx = np.triu_indices(n)` is `A[rows, cols]`."""
    if isinstance(index_node, ast.Tuple):
        nodes = list(index_node.elts)
    elif isinstance(index_node, (ast.Slice, ast.List)):
        nodes = [index_node]
    else:
        value = al.fl.expr(index_node)
        if isinstance(value, Static) and type(value.obj) is tuple:
            value = tuple(Static(v, value.origin and value.origin.item(i)) for i, v in enumerate(value.obj))
        if type(value) is tuple:  # a tuple, not a list (numpy: a list is one index array)
            return [(index_node, v) for v in value]
        return [(index_node, value)]
    return [(n, None if isinstance(n, ast.Slice) else _list_index(al, n, node) if isinstance(n, ast.List)
             else al.fl.expr(n)) for n in nodes]


def _value_parts(al, part: ast.expr, value, node, runtime_masks: bool = False) -> list[Part]:
    if isinstance(value, Static) and isinstance(value.obj, np.ndarray):
        value = al.value(value, node)  # an array from outside: read at each call (globals.py)
    if not is_array(value):
        a_bool = (isinstance(value, Static) and isinstance(value.obj, bool)) or (
            isinstance(value, SSAValue) and is_bool(value.type)
        )
        if a_bool:
            raise al.error(node, "a bool as an index is not supported", MASK_HINT)
        return [Part("int", part, value)]
    elem = T.element(value)
    known = constant_values(value)
    if is_bool(elem):
        if known is None:  # `~np.eye(n, dtype=bool)`, `np.arange(n) % 2 == 0`: masks of constants
            known = constant_arrays.evaluate(value)
        if known is None and runtime_masks:
            return [Part("mask", part, value)]
        if known is None:
            raise al.error(node, "indexing with a boolean mask computed at run time gives an array "
                           "whose length is known only at run time, which irad does not support", MASK_HINT)
        return [Part("array", part, _constant_ints(al, positions), positions)
                for positions in np.nonzero(np.asarray(known, dtype=bool))]
    if not is_int(elem):
        raise al.error(node, f"arrays used as indices must hold ints (or bools), got {elem}",
                       "convert them with np.int64(idx)")
    value = al.int_to(value, I64, node)  # int8 ... uint32 indices: their values, as int64
    return [Part("array", part, value, None if known is None else np.asarray(known, dtype=np.int64))]


def _list_index(al, part: ast.List, node) -> SSAValue:
    """A list literal as an index: its values as an int (or bool) array."""
    values = [al.fl.expr(e) if not isinstance(e, ast.List) else _list_index(al, e, node) for e in part.elts]
    if all(al.is_static(v) for v in values):
        known = np.asarray([al.static(v, node, "") for v in values])
        if known.dtype == bool:
            return T.dense(al.em, known, TensorType(I1, list(known.shape)))
        if known.size and known.dtype.kind not in "iu":
            raise al.error(node, "a list used as an index must hold ints or bools")
        return _constant_ints(al, known.astype(np.int64))
    if any(is_array(v) for v in values):
        return al.stack_values([al.array(v, node) for v in values], 0, node)
    items = [al.value(v, node) for v in values]
    if not all(is_int(v.type) or is_bool(v.type) for v in items):
        raise al.error(node, "a list used as an index must hold ints")
    return al.em.op(tensor.FromElementsOp(*[al.em.to_int(v) for v in items]))


def _constant_ints(al, values: np.ndarray) -> SSAValue:
    return T.dense(al.em, values, TensorType(I64, list(np.shape(values))))


def has_arrays(parts: Sequence[Part]) -> bool:
    return any(p.kind == "array" for p in parts)


# ---- the plan: slices first, then one gather along the merged advanced axes ------------
@dataclass
class Plan:
    step: object  # the view step of the slices (views.Slice), or None when there are none
    sliced_dims: tuple[int, ...]  # the shape after the slices (advanced axes whole)
    axes: tuple[int, ...]  # the advanced axes, in order
    linear: SSAValue  # the merged index (i64, shape B)
    result_dims: tuple[int, ...]  # numpy's result shape
    placement: tuple[int, ...]  # result axis -> axis of the gather's (B..., rest...) result


def plan(al, x: SSAValue, parts: Sequence[Part], node) -> Plan:
    dims = T.shape(x)
    if any(p.kind == "new" for p in parts):
        raise al.error(node, "None (np.newaxis) together with an array index is not supported",
                       "add the axis in a second step: x[idx][:, None]")
    offsets, sizes, strides = [], [], []
    advanced: list[tuple[int, Part]] = []
    for axis, part in enumerate(parts):
        n = dims[axis]
        if part.kind == "slice":
            offset, size, stride = al.slice_bounds(part.node, n, node)
            if not isinstance(offset, int):
                raise al.error(node, "a slice with a runtime start together with an array index is not supported")
        else:
            offset, size, stride = 0, n, 1
            advanced.append((axis, part))
        offsets.append(offset)
        sizes.append(size)
        strides.append(stride)
    for n in dims[len(parts):]:
        offsets.append(0)
        sizes.append(n)
        strides.append(1)
    trivial = all(o == 0 for o in offsets) and tuple(sizes) == dims and all(s == 1 for s in strides)
    step = None if trivial else Slice(tuple(offsets), tuple(sizes), tuple(strides), tuple(sizes))
    axes = tuple(a for a, _ in advanced)
    indices = [_positions(al, part, dims[a], node) for a, part in advanced]
    common = T.broadcast_shapes(*(T.shape(i) for i in indices))
    if common is None:
        shown = " and ".join(str(T.shape(i)) for i in indices)
        raise al.error(node, f"index arrays of shapes {shown} cannot be broadcast together")
    indices = [T.broadcast_to(al.em, i, common) for i in indices]
    linear = indices[0]
    for a, index in zip(axes[1:], indices[1:]):  # i * n1 + j, row-major over the advanced axes
        scale = T.dense(al.em, sizes[a], TensorType(I64, list(common))) if common else al.em.const(sizes[a], I64)
        linear = al.em.op(arith.AddiOp(al.em.op(arith.MuliOp(linear, scale)), index))
    rest = [d for d in range(len(sizes)) if d not in axes]
    adjacent = list(axes) == list(range(axes[0], axes[0] + len(axes)))
    before = [d for d in rest if d < axes[0]] if adjacent else []
    # the gather gives (B..., rest...): result axes in numpy's order, as positions in it
    b = len(common)
    gathered = list(range(b)) + [b + i for i in range(len(rest))]
    placement = gathered[b:b + len(before)] + gathered[:b] + gathered[b + len(before):]
    result_dims = tuple(([*common, *(sizes[d] for d in rest)])[p] for p in placement)
    return Plan(step, tuple(sizes), axes, linear, result_dims, tuple(placement))


def _positions(al, part: Part, n: int, node) -> SSAValue:
    """An index part as i64 positions in [0, n): negatives wrapped, the rest checked."""
    if part.kind == "int":
        known = al.is_static(part.value)
        if known:
            i = al.static(part.value, node, "an index")
            if not -n <= i < n:
                raise al.error(node, f"index {i} is out of bounds for an axis of size {n}")
            return T.dense(al.em, i % n, TensorType(I64, []))
        position = al.int_index(part.value, n, part.node)  # wrapped and checked: an index value
        as_int = al.em.op(arith.IndexCastOp(position, I64))
        return T.reshape(al.em, T.splat(al.em, as_int, (1,)), ())
    if part.static is not None:
        if part.static.size and not ((part.static >= -n) & (part.static < n)).all():
            bad = part.static[(part.static < -n) | (part.static >= n)].ravel()[0]
            raise al.error(node, f"index {bad} is out of bounds for an axis of size {n}")
        return _constant_ints(al, part.static % n if n else part.static)
    idx = part.value
    em = al.em
    wrapped = T.elementwise(em, lambda e, a: _wrap(e, a[0], n), [idx], I64)
    inside = T.elementwise(em, lambda e, a: _inside(e, a[0], n), [wrapped], F64)
    count = float(math.prod(T.shape(idx)))
    if count:
        found = T.reduce_all(em, inside) if T.shape(idx) else T.extract_scalar(em, inside)
        al.check(em.op(arith.CmpfOp(found, em.const(count, F64), "oeq")), node,
                 f"an index array holds an index out of bounds for an axis of size {n}")
    return wrapped


def _wrap(e, i: SSAValue, n: int) -> SSAValue:
    size = e.op(arith.ConstantOp.from_int_and_width(n, I64))
    negative = e.op(arith.CmpiOp(i, e.op(arith.ConstantOp.from_int_and_width(0, I64)), "slt"))
    return e.op(arith.SelectOp(negative, e.op(arith.AddiOp(i, size)), i))


def _inside(e, i: SSAValue, n: int) -> SSAValue:
    """1.0 where 0 <= i < n (exactly counted: fewer than 2**53 indices)."""
    low = e.op(arith.CmpiOp(i, e.op(arith.ConstantOp.from_int_and_width(0, I64)), "sge"))
    high = e.op(arith.CmpiOp(i, e.op(arith.ConstantOp.from_int_and_width(n, I64)), "slt"))
    return e.op(arith.UIToFPOp(e.op(arith.AndIOp(low, high)), F64))


def _merged(al, x: SSAValue, p: Plan) -> tuple[SSAValue, list[int]]:
    """x (sliced) with its advanced axes moved first and merged into one."""
    rest = [d for d in range(len(p.sliced_dims)) if d not in p.axes]
    moved = T.transpose(al.em, x, [*p.axes, *rest])
    merged = (math.prod(p.sliced_dims[a] for a in p.axes), *(p.sliced_dims[d] for d in rest))
    return T.reshape(al.em, moved, merged), [*p.axes, *rest]


def read(al, x: SSAValue, parts: Sequence[Part], node) -> SSAValue:
    p = plan(al, x, parts, node)
    sliced = p.step.read(al.em, x) if p.step is not None else x
    merged, _ = _merged(al, sliced, p)
    taken = al.take(merged, p.linear, 0)  # (B..., rest...)
    return al.new(T.transpose(al.em, taken, p.placement))


def write(al, y: SSAValue, parts: Sequence[Part], value: SSAValue, node, accumulate: bool = False) -> SSAValue:
    """y with `value` written at the index (the last of repeated positions wins),
    or with `accumulate`, added there (repeated positions add up: np.add.at)."""
    p = plan(al, y, parts, node)
    if T.broadcast_shapes(T.shape(value), p.result_dims) != p.result_dims:
        raise al.error(node, f"cannot assign a value of shape {T.shape(value)} to an index of shape {p.result_dims}")
    em = al.em
    sliced = p.step.read(em, y) if p.step is not None else y
    merged, order = _merged(al, sliced, p)
    # the value, laid out as the gather's result (B..., rest...), then B flattened
    v = T.broadcast_to(em, value, p.result_dims)
    v = T.transpose(em, v, [p.placement.index(i) for i in range(len(p.placement))])
    count = math.prod(T.shape(p.linear))
    rest = T.shape(merged)[1:]
    v = T.reshape(em, v, (count, *rest))
    flat = T.reshape(em, p.linear, (count,))
    spread = T.broadcast_to(em, T.reshape(em, flat, (count, *[1] * len(rest))), (count, *rest))
    written = (G.scatter_add if accumulate else G.scatter)(em, merged, spread, v, 0)
    moved_dims = [p.sliced_dims[d] for d in order]
    back = T.transpose(em, T.reshape(em, written, moved_dims), [order.index(d) for d in range(len(order))])
    return p.step.write(em, y, back) if p.step is not None else back


def is_runtime_mask(value) -> bool:
    """A bool array whose values are known only at run time."""
    return (is_array(value) and is_bool(T.element(value)) and constant_values(value) is None
            and constant_arrays.evaluate(value) is None)


def masked_write(al, y: SSAValue, mask: SSAValue, value, node) -> SSAValue:
    """`y[mask] = value` for a mask known only at run time, over y's leading axes:
    y where the mask is false, `value` where it is true. numpy takes `value`
    one per selected element too, a shape known only at run time: it must
    broadcast to one element's (a number, or a row of y's other axes)."""
    check_masked_value(al, y, mask, T.shape(value) if is_array(value) else (), node)
    return masked_select(al, y, mask, T.broadcast_to(al.em, value, T.shape(y)))


def check_masked_value(al, y: SSAValue, mask: SSAValue, shape: tuple, node) -> None:
    """The mask covers y's leading axes, and a value of `shape` is one element's."""
    dims, rank = T.shape(y), len(T.shape(mask))
    if T.shape(mask) != dims[:rank]:
        raise al.error(node, f"a boolean mask of shape {T.shape(mask)} does not match the array's "
                       f"leading axes {dims[:rank]} (numpy's IndexError)")
    rest = dims[rank:]
    if T.broadcast_shapes(tuple(shape), rest) != rest:
        raise al.error(node, f"assigning a value of shape {tuple(shape)} through a boolean mask computed at "
                       f"run time: numpy takes one item per selected element, a count known only at run time",
                       "assign a number, or a value for one element, or write y = np.where(mask, values, y) "
                       "with values of y's shape")


def masked_select(al, y: SSAValue, mask: SSAValue, new: SSAValue) -> SSAValue:
    """`new` (of y's shape) where the mask (over y's leading axes) is true, else y."""
    em, dims = al.em, T.shape(y)
    spread = T.broadcast_to(em, T.reshape(em, mask, (*T.shape(mask), *[1] * (len(dims) - len(T.shape(mask))))), dims)
    return T.select(em, spread, new, y)


# ---- np.take and np.take_along_axis ----------------------------------------------------
@numpy_function(np.take, params=("a", "indices", "?axis", "?out", "?mode"))
def _take(al, node, a, indices, axis, out, mode):
    if al.given(out):
        raise al.error(node, "np.take: out= is not supported", "assign the result: y = np.take(x, idx, axis)")
    x = al.array(a, node)
    if not is_array(x):
        raise al.error(node, "np.take needs an array")
    (x,) = al.floats(node, x) if is_float(T.element(x)) else (x,)
    if al.static(axis, node, "the axis") is None:
        x, axis = T.reshape(al.em, x, (math.prod(T.shape(x)),)), 0
    else:
        axis = al.static_axes(axis, len(T.shape(x)), node)[0]
    mode = al.static(mode, node, "the mode") if al.given(mode) else "raise"
    n = T.shape(x)[axis]
    if mode == "wrap":  # numpy: the index modulo the length, negative ones too
        indices = al.call_values(np.mod, [al.array(indices, node), Static(n)], {}, node)
    elif mode == "clip":  # numpy: into [0, n - 1] (a negative index is 0, not counted from the end)
        indices = al.call_values(np.clip, [al.array(indices, node), Static(0), Static(n - 1)], {}, node)
    elif mode != "raise":
        raise al.error(node, f"np.take: mode={mode!r} is not one of numpy's modes", "pass 'raise', 'wrap' or 'clip'")
    part = _index_part(al, indices, node)
    positions = _positions(al, part, T.shape(x)[axis], node)
    return al.new(al.take(x, positions, axis))


def _index_part(al, indices, node) -> Part:
    value = al.array(indices, node)
    if not is_array(value):
        return Part("int", node, value)
    if not is_int(T.element(value)):
        raise al.error(node, "indices must be ints")
    value = al.int_to(value, I64, node)  # int8 ... uint32 indices: their values, as int64
    known = constant_values(value)
    return Part("array", node, value, None if known is None else np.asarray(known, dtype=np.int64))


@numpy_function(np.take_along_axis, params=("arr", "indices", "?axis=-1"))
def _take_along_axis(al, node, arr, indices, axis):
    x = al.array(arr, node)
    part = _index_part(al, indices, node)
    if part.kind != "array":
        raise al.error(node, "np.take_along_axis needs an array of indices")
    if al.static(axis, node, "the axis") is None:
        x = T.reshape(al.em, x, (math.prod(T.shape(x)),))
        axis = 0
    axis = al.static_axes(axis, len(T.shape(x)), node)[0]
    idx = part.value
    if len(T.shape(idx)) != len(T.shape(x)):
        raise al.error(node, "np.take_along_axis: the indices need the array's number of dimensions")
    dims = [T.shape(idx)[d] if d == axis else n for d, n in enumerate(T.shape(x))]
    if T.broadcast_shapes(T.shape(idx), tuple(dims)) != tuple(dims):
        raise al.error(node, f"np.take_along_axis: indices of shape {T.shape(idx)} do not fit an array of shape {T.shape(x)}")
    positions = T.broadcast_to(al.em, _positions(al, part, T.shape(x)[axis], node), dims)
    return al.new(G.gather(al.em, x, positions, axis))


# ---- the indices of a triangle or a diagonal: constants, n known while lowering ----------------
def _sizes(al, node, *values) -> list:
    """Ints known while lowering (n, k, m): the index arrays are constants."""
    out = []
    for what, v in values:
        n = al.static(v, node, what)
        if n is not None and type(n) is not int:
            raise al.error(node, f"{what} must be an int, got {n!r}")
        out.append(n)
    return out


def _index_arrays(al, arrays) -> tuple[SSAValue, ...]:
    return tuple(al.new(_constant_ints(al, np.asarray(a, dtype=np.int64))) for a in arrays)


def _triangle(fn):
    def handler(al, node, n, k, m):
        n, k, m = _sizes(al, node, ("n", n), ("k", k), ("m", m))
        return _index_arrays(al, fn(n, k, m))

    return handler


def _triangle_from(fn):
    def handler(al, node, arr, k):
        x = al.array(arr, node)
        if not is_array(x) or len(T.shape(x)) != 2:
            raise al.error(node, f"np.{fn.__name__}_from needs a 2-d array")
        (k,) = _sizes(al, node, ("k", k))
        rows, cols = T.shape(x)
        return _index_arrays(al, fn(rows, k, cols))

    return handler


numpy_function(np.triu_indices, params=("n", "?k=0", "?m"))(_triangle(np.triu_indices))
numpy_function(np.tril_indices, params=("n", "?k=0", "?m"))(_triangle(np.tril_indices))
numpy_function(np.triu_indices_from, params=("arr", "?k=0"))(_triangle_from(np.triu_indices))
numpy_function(np.tril_indices_from, params=("arr", "?k=0"))(_triangle_from(np.tril_indices))


@numpy_function(np.diag_indices, params=("n", "?ndim=2"))
def _diag_indices(al, node, n, ndim):
    n, ndim = _sizes(al, node, ("n", n), ("ndim", ndim))
    return _index_arrays(al, np.diag_indices(n, ndim))


@numpy_function(np.diag_indices_from, params=("arr",))
def _diag_indices_from(al, node, arr):
    x = al.array(arr, node)
    dims = T.shape(x) if is_array(x) else ()
    if len(dims) < 2 or len(set(dims)) != 1:
        raise al.error(node, f"np.diag_indices_from needs an array of rank 2 or more whose sides are equal, got {dims}")
    return _index_arrays(al, np.diag_indices(dims[0], len(dims)))
