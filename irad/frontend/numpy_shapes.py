"""numpy's shape functions beyond arrays.py's: one table entry each
(numpy_table.py), composed from the structural tensor ops (slices, negative
strides included, concat, reshape, transpose, broadcast, selects), whose
adjoints are the op registry's. Shapes and every size are known while
lowering, so each becomes a handful of ops.

Where numpy returns a view (flip, moveaxis, swapaxes, atleast_nd, split), so
does irad: writes through it are seen in the array (irad/frontend/views.py).
Functions that return several arrays (np.split, np.gradient over several axes,
np.meshgrid) return a tuple.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue

from irad.frontend.arrays import ArrayLowering
from irad.frontend.numpy_table import numpy_function
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T
from irad.ir.constants import refuse_large
from irad.ir.types import F64, I1, is_float

# ---- helpers ---------------------------------------------------------------------


def _tensor(al: ArrayLowering, v, node) -> SSAValue:
    """An argument as a float or int tensor (a number becomes a 0-d tensor)."""
    x = al.array(v, node)
    if not is_array(x):
        x = T.reshape(al.em, T.splat(al.em, x, (1,)), ())
    return x


def _float_tensor(al: ArrayLowering, v, node) -> SSAValue:
    (x,) = al.floats(node, _tensor(al, v, node))
    return x


def _axis(al: ArrayLowering, axis, rank: int, node) -> int:
    return al.static_axes(al.static(axis, node, "the axis"), rank, node)[0]


def _ints(al: ArrayLowering, value, node, what: str) -> tuple:
    v = al.static(value, node, what)
    return v if isinstance(v, tuple) else (v,)


def _sequence(al: ArrayLowering, value, node) -> list[SSAValue]:
    """A list/tuple of arrays, or an array as the sequence of its rows (numpy's view)."""
    if isinstance(value, tuple):
        return [al.array(v, node) for v in value]
    x = al.array(value, node)
    if not is_array(x):
        raise al.error(node, "expected a sequence of arrays")
    return [_take_index(al, x, 0, i) for i in range(T.shape(x)[0])]


def _take_index(al: ArrayLowering, x: SSAValue, axis: int, i: int) -> SSAValue:
    """x[..., i, ...] on `axis` (the axis dropped)."""
    part = T.slice_along(al.em, x, axis, i, 1)
    return T.reshape(al.em, part, [n for d, n in enumerate(T.shape(x)) if d != axis])


def _slice(al: ArrayLowering, x: SSAValue, axis: int, start: int, size: int, step: int = 1) -> SSAValue:
    """x[start : start + size * step : step] on `axis`, as a view of x (numpy's basic slice)."""
    return al.slice_view(x, axis, start, size, step)


def _at_least(al: ArrayLowering, x: SSAValue, rank: int) -> SSAValue:
    """numpy's atleast_1d/2d/3d: (N,) -> (1, N) -> (1, N, 1); (M, N) -> (M, N, 1)."""
    dims = T.shape(x)
    if len(dims) >= rank:
        return x
    if rank == 1 or len(dims) == 0:
        new = (1,) * (rank - len(dims)) + dims
    elif rank == 2:
        new = (1, *dims)
    else:
        new = (1, *dims, 1) if len(dims) == 1 else (*dims, 1)
    return al.reshape_view(x, new)


def _join(al: ArrayLowering, items: Sequence[SSAValue], axis: int, node) -> SSAValue:
    return al.concat(list(items), axis, node)


# ---- moving axes -----------------------------------------------------------------
@numpy_function(np.moveaxis, params=("a", "source", "destination"))
def _moveaxis(al, node, a, source, destination):
    x = _tensor(al, a, node)
    rank = len(T.shape(x))
    sources = [al.static_axes(s, rank, node)[0] for s in _ints(al, source, node, "source")]
    targets = [al.static_axes(d, rank, node)[0] for d in _ints(al, destination, node, "destination")]
    if len(sources) != len(targets):
        raise al.error(node, "np.moveaxis: `source` and `destination` need the same number of axes")
    order = [d for d in range(rank) if d not in sources]
    for target, source in sorted(zip(targets, sources)):
        order.insert(target, source)
    return al.transpose_view(x, order)


@numpy_function(np.swapaxes, params=("a", "axis1", "axis2"))
def _swapaxes(al, node, a, axis1, axis2):
    x = _tensor(al, a, node)
    rank = len(T.shape(x))
    i, j = _axis(al, axis1, rank, node), _axis(al, axis2, rank, node)
    order = list(range(rank))
    order[i], order[j] = order[j], order[i]
    return al.transpose_view(x, order)


@numpy_function(np.rollaxis, params=("a", "axis", "?start=0"))
def _rollaxis(al, node, a, axis, start):
    x = _tensor(al, a, node)
    rank = len(T.shape(x))
    axis = _axis(al, axis, rank, node)
    start = al.static(start, node, "start")
    if not -rank <= start <= rank:
        raise al.error(node, f"np.rollaxis: start {start} is out of bounds for rank {rank}")
    start %= rank + 1
    if axis < start:
        start -= 1
    order = [d for d in range(rank) if d != axis]
    order.insert(start, axis)
    return al.transpose_view(x, order)


def _atleast(rank: int):
    def handler(al, node, arrays):
        items = [_at_least(al, _tensor(al, v, node), rank) for v in arrays]
        return items[0] if len(items) == 1 else tuple(items)

    return handler


for _fn, _rank in ((np.atleast_1d, 1), (np.atleast_2d, 2), (np.atleast_3d, 3)):
    numpy_function(_fn, params=("*arrays",))(_atleast(_rank))


@numpy_function(np.broadcast_to, params=("array", "shape"))
def _broadcast_to(al, node, array, shape):
    x = al.array(array, node)
    dims = al.shape_arg(shape, node)
    if T.broadcast_shapes(T.shape(x), dims) != dims:
        raise al.error(node, f"np.broadcast_to: shape {T.shape(x)} cannot be broadcast to {dims}")
    return al.new(T.broadcast_to(al.em, x, dims))


# ---- joining ---------------------------------------------------------------------
@numpy_function(np.vstack, *([np.row_stack] if hasattr(np, "row_stack") else []), params=("tup",))
def _vstack(al, node, tup):
    return _join(al, [_at_least(al, _tensor(al, v, node), 2) for v in _sequence(al, tup, node)], 0, node)


@numpy_function(np.hstack, params=("tup",))
def _hstack(al, node, tup):
    items = [_at_least(al, _tensor(al, v, node), 1) for v in _sequence(al, tup, node)]
    return _join(al, items, 0 if len(T.shape(items[0])) == 1 else 1, node)


@numpy_function(np.dstack, params=("tup",))
def _dstack(al, node, tup):
    return _join(al, [_at_least(al, _tensor(al, v, node), 3) for v in _sequence(al, tup, node)], 2, node)


@numpy_function(np.column_stack, params=("tup",))
def _column_stack(al, node, tup):
    """1-d arrays become columns (n, 1), numbers (1, 1), as numpy's
    `array(v, ndmin=2).T`; 2-d arrays join as they are."""
    items = []
    for v in _sequence(al, tup, node):
        x = _tensor(al, v, node)
        dims = T.shape(x)
        items.append(T.reshape(al.em, x, (*dims, 1) if len(dims) == 1 else (1, 1)) if len(dims) < 2 else x)
    return _join(al, items, 1, node)


@numpy_function(np.append, params=("arr", "values", "?axis"))
def _append(al, node, arr, values, axis):
    x, v = _tensor(al, arr, node), _tensor(al, values, node)
    if al.static(axis, node, "the axis") is None:
        flat = [T.reshape(al.em, t, (math.prod(T.shape(t)),)) for t in (x, v)]
        return _join(al, flat, 0, node)
    return _join(al, [x, v], _axis(al, axis, len(T.shape(x)), node), node)


# ---- splitting ---------------------------------------------------------------------
def _split_points(al: ArrayLowering, sections, length: int, node, even: bool) -> list[int]:
    """The boundaries np.split/np.array_split cut at, 0 and length included."""
    given = al.static(sections, node, "indices_or_sections")
    if isinstance(given, tuple):
        cuts = [min(max(c + length if c < 0 else c, 0), length) for c in given]
        return [0, *cuts, length]
    if not isinstance(given, int) or given <= 0:
        raise al.error(node, "the number of sections must be a positive int")
    if even and length % given:
        raise al.error(node, f"array split does not result in an equal division ({length} into {given})",
                       "use np.array_split for unequal parts")
    size, extra = divmod(length, given)
    sizes = [size + 1] * extra + [size] * (given - extra)
    return [0, *np.cumsum(sizes).tolist()]


def _splitter(even: bool, fixed_axis: int | None = None, least: int = 1):
    def handler(al, node, ary, sections, axis=None):
        x = _tensor(al, ary, node)
        if len(T.shape(x)) < least:
            raise al.error(node, f"this split needs an array of rank {least} or more")
        axis = fixed_axis if fixed_axis is not None else _axis(al, axis, len(T.shape(x)), node)
        points = _split_points(al, sections, T.shape(x)[axis], node, even)
        return tuple(_slice(al, x, axis, start, max(stop - start, 0)) for start, stop in zip(points, points[1:]))

    return handler


numpy_function(np.split, params=("ary", "indices_or_sections", "?axis=0"))(_splitter(even=True))
numpy_function(np.array_split, params=("ary", "indices_or_sections", "?axis=0"))(_splitter(even=False))


@numpy_function(np.hsplit, params=("ary", "indices_or_sections"))
def _hsplit(al, node, ary, sections):
    x = _tensor(al, ary, node)
    return _splitter(True, 0 if len(T.shape(x)) == 1 else 1)(al, node, x, sections)


numpy_function(np.vsplit, params=("ary", "indices_or_sections"))(_splitter(True, 0, least=2))
numpy_function(np.dsplit, params=("ary", "indices_or_sections"))(_splitter(True, 2, least=3))


# ---- repeating -------------------------------------------------------------------
@numpy_function(np.repeat, params=("a", "repeats", "?axis"))
def _repeat(al, node, a, repeats, axis):
    x = _tensor(al, a, node)
    if al.static(axis, node, "the axis") is None:
        x, axis = T.reshape(al.em, x, (math.prod(T.shape(x)),)), 0
    else:
        axis = _axis(al, axis, len(T.shape(x)), node)
    dims = T.shape(x)
    counts = al.static(repeats, node, "repeats")
    if isinstance(counts, tuple) and len(counts) == 1:
        counts = counts[0]
    if isinstance(counts, int):
        if counts < 0:
            raise al.error(node, "np.repeat: repeats must be non-negative")
        spread = list(dims[: axis + 1]) + [counts] + list(dims[axis + 1 :])
        expanded = T.reshape(al.em, x, list(dims[: axis + 1]) + [1] + list(dims[axis + 1 :]))
        tiled = T.broadcast_to(al.em, expanded, spread)
        return al.new(T.reshape(al.em, tiled, [n * counts if d == axis else n for d, n in enumerate(dims)]))
    if len(counts) != dims[axis] or any(not isinstance(c, int) or c < 0 for c in counts):
        raise al.error(node, f"np.repeat: {len(counts)} repeat counts for an axis of length {dims[axis]}")
    source = np.repeat(np.arange(dims[axis]), counts)  # which element each output copies
    return al.new(al.take(x, T.dense(al.em, source, TensorType(T.I64, [len(source)])), axis))


@numpy_function(np.tile, params=("A", "reps"))
def _tile(al, node, a, reps):
    x = _tensor(al, a, node)
    reps = _ints(al, reps, node, "reps")
    rank = max(len(reps), len(T.shape(x)))
    dims = (1,) * (rank - len(T.shape(x))) + T.shape(x)
    reps = (1,) * (rank - len(reps)) + tuple(reps)
    interleaved = [n for pair in zip([1] * rank, dims) for n in pair]
    spread = [n for pair in zip(reps, dims) for n in pair]
    tiled = T.broadcast_to(al.em, T.reshape(al.em, x, interleaved), spread)
    return al.new(T.reshape(al.em, tiled, [r * n for r, n in zip(reps, dims)]))


# ---- reversing and rotating ----------------------------------------------------------
def _flipped(al: ArrayLowering, x: SSAValue, axes: Sequence[int]) -> SSAValue:
    for axis in axes:
        n = T.shape(x)[axis]
        x = _slice(al, x, axis, n - 1, n, -1) if n else x
    return x


@numpy_function(np.flip, params=("m", "?axis"))
def _flip(al, node, m, axis):
    x = _tensor(al, m, node)
    return _flipped(al, x, al.static_axes(axis, len(T.shape(x)), node))


def _flip_axis(axis: int, name: str):
    """np.flipud (axis 0) and np.fliplr (axis 1)."""

    def handler(al, node, m):
        x = _tensor(al, m, node)
        if len(T.shape(x)) <= axis:
            raise al.error(node, f"np.{name} needs an array of rank {axis + 1} or more")
        return _flipped(al, x, [axis])

    return handler


numpy_function(np.flipud, params=("m",))(_flip_axis(0, "flipud"))
numpy_function(np.fliplr, params=("m",))(_flip_axis(1, "fliplr"))


@numpy_function(np.rot90, params=("m", "?k=1", "?axes=(0, 1)"))
def _rot90(al, node, m, k, axes):
    x = _tensor(al, m, node)
    rank = len(T.shape(x))
    first, second = (al.static_axes(a, rank, node)[0] for a in _ints(al, axes, node, "axes"))
    if first == second:
        raise al.error(node, "np.rot90: the two axes must differ")
    k = al.static(k, node, "k") % 4
    swap = list(range(rank))
    swap[first], swap[second] = swap[second], swap[first]
    if k == 0:
        return x
    if k == 2:
        return _flipped(al, x, [first, second])
    if k == 1:
        return al.transpose_view(_flipped(al, x, [second]), swap)
    return _flipped(al, al.transpose_view(x, swap), [second])


@numpy_function(np.roll, params=("a", "shift", "?axis"))
def _roll(al, node, a, shift, axis):
    x = _tensor(al, a, node)
    shifts = _ints(al, shift, node, "shift")
    if al.static(axis, node, "the axis") is None:
        if len(shifts) != 1:
            raise al.error(node, "np.roll without an axis takes one shift")
        flat = _roll_along(al, T.reshape(al.em, x, (math.prod(T.shape(x)),)), 0, shifts[0], node)
        return al.new(T.reshape(al.em, flat, T.shape(x)))
    axes = _ints(al, axis, node, "the axis")
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise al.error(node, "np.roll: `shift` and `axis` need the same length")
    for s, ax in zip(shifts, axes):
        x = _roll_along(al, x, al.static_axes(ax, len(T.shape(x)), node)[0], s, node)
    return al.new(x)


def _roll_along(al: ArrayLowering, x: SSAValue, axis: int, shift: int, node) -> SSAValue:
    n = T.shape(x)[axis]
    shift = shift % n if n else 0
    if shift == 0:
        return al.copy(x)
    tail = T.slice_along(al.em, x, axis, n - shift, shift)
    head = T.slice_along(al.em, x, axis, 0, n - shift)
    return T.concat(al.em, [tail, head], axis)


# ---- triangles and diagonals -----------------------------------------------------------
def _triangle(lower: bool):
    def handler(al, node, m, k):
        x = _tensor(al, m, node)
        k = al.static(k, node, "k")
        dims = T.shape(x)
        if len(dims) < 2:
            raise al.error(node, "np.tril/np.triu need an array of rank 2 or more")
        rows, cols = dims[-2:]
        mask = T.band(al.em, rows, cols, k, I1, "oge" if lower else "ole")  # j <= i + k, or j >= i + k
        keep = T.broadcast_to(al.em, mask, dims)
        return al.new(T.select(al.em, keep, x, T.dense(al.em, 0, x.type)))

    return handler


numpy_function(np.tril, params=("m", "?k=0"))(_triangle(lower=True))
numpy_function(np.triu, params=("m", "?k=0"))(_triangle(lower=False))


def diagonal_of(al: ArrayLowering, x: SSAValue, offset: int, axis1: int, axis2: int, node) -> SSAValue:
    """The diagonal `offset` of axes (axis1, axis2), as the last axis: the other axes
    moved first, the two merged, then a strided slice of the merged axis."""
    rank = len(T.shape(x))
    if rank < 2:
        raise al.error(node, "a diagonal needs an array of rank 2 or more")
    first, second = al.static_axes(axis1, rank, node)[0], al.static_axes(axis2, rank, node)[0]
    if first == second:
        raise al.error(node, "the two axes of a diagonal must differ")
    order = [d for d in range(rank) if d not in (first, second)] + [first, second]
    moved = T.transpose(al.em, x, order)
    *outer, rows, cols = T.shape(moved)
    length = max(0, min(rows, cols - offset) if offset >= 0 else min(rows + offset, cols))
    start = offset if offset >= 0 else -offset * cols
    if length == 0:
        start = 0
    merged = T.reshape(al.em, moved, [*outer, rows * cols])
    return T.slice_along(al.em, merged, len(outer), start, length, cols + 1)


@numpy_function(np.diagonal, params=("a", "?offset=0", "?axis1=0", "?axis2=1"))
def _diagonal(al, node, a, offset, axis1, axis2):
    x = _tensor(al, a, node)
    return al.new(diagonal_of(al, x, al.static(offset, node, "offset"), axis1, axis2, node))


@numpy_function(np.trace, params=("a", "?offset=0", "?axis1=0", "?axis2=1", "?dtype", "?out"))
def trace(al, node, a, offset, axis1, axis2, dtype, out):
    for name, value in (("dtype", dtype), ("out", out)):
        if al.given(value):
            raise al.error(node, f"np.trace: the argument '{name}' is not supported")
    x = _float_tensor(al, a, node)
    diagonal = diagonal_of(al, x, al.static(offset, node, "offset"), axis1, axis2, node)
    return al.reduction(diagonal, -1, False, node, arith.AddfOp)


@numpy_function(np.diag, params=("v", "?k=0"))
def _diag(al, node, v, k):
    x = _tensor(al, v, node)
    k = al.static(k, node, "k")
    if len(T.shape(x)) == 2:
        return al.new(diagonal_of(al, x, k, 0, 1, node))
    if len(T.shape(x)) != 1:
        raise al.error(node, "np.diag takes a vector or a matrix")
    (n,) = T.shape(x)
    size = n + abs(k)
    # row i holds x[i] on column i + k (k >= 0); column j holds x[j] on row j - k (k < 0)
    padded = T.concat(al.em, [x, T.dense(al.em, 0, TensorType(T.element(x), [abs(k)]))], 0)
    spread = T.broadcast_to(al.em, T.reshape(al.em, padded, (size, 1) if k >= 0 else (1, size)), (size, size))
    on = T.band(al.em, size, size, k, I1)
    return al.new(T.select(al.em, on, spread, T.dense(al.em, 0, spread.type)))


# ---- padding ----------------------------------------------------------------------
def _pad_widths(al: ArrayLowering, pad_width, rank: int, node) -> list[tuple[int, int]]:
    """numpy's forms: n, (n,), (before, after), ((before, after),), one pair per axis."""
    given = al.static(pad_width, node, "pad_width")
    widths = np.broadcast_to(np.asarray(given, dtype=np.int64).reshape(-1, 2) if np.size(given) > 1
                             else np.full((1, 2), np.asarray(given).ravel()[0]), (rank, 2))
    if (widths < 0).any():
        raise al.error(node, "np.pad: pad widths must be non-negative")
    return [tuple(int(w) for w in row) for row in widths]


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


@numpy_function(np.pad, params=("array", "pad_width", "?mode='constant'", "?constant_values=0"))
def _pad(al, node, array, pad_width, mode, constant_values):
    x = _tensor(al, array, node)
    mode = al.static(mode, node, "mode")
    if mode not in _PAD_MODES:
        raise al.error(node, f"np.pad: mode {mode!r} is not supported", f"supported: {', '.join(_PAD_MODES)}")
    widths = _pad_widths(al, pad_width, len(T.shape(x)), node)
    if mode == "constant":
        fill = al.array(constant_values, node)
        if is_array(fill):
            raise al.error(node, "np.pad: constant_values must be one number here")
        dims = [n + b + a for n, (b, a) in zip(T.shape(x), widths)]
        base = al.cast(T.splat(al.em, fill, dims), T.element(x))  # as numpy writes it into x's dtype (bools, uint8s)
        offsets = [b for b, _ in widths]
        return al.new(al.em.op(_insert_slice(x, base, offsets)))
    for axis, (before, after) in enumerate(widths):
        x = _pad_axis(al, x, axis, before, after, mode, node)
    return al.new(x)


def _insert_slice(x: SSAValue, into: SSAValue, offsets: Sequence[int]):
    return tensor.InsertSliceOp.get(x, into, list(T.shape(x)), list(offsets), [1] * len(offsets))


def _pad_axis(al: ArrayLowering, x: SSAValue, axis: int, before: int, after: int, mode: str, node) -> SSAValue:
    n = T.shape(x)[axis]
    if not before and not after:
        return x
    if n == 0:
        raise al.error(node, f"np.pad: cannot pad an empty axis in mode {mode!r}")

    def pick(positions: Sequence[int]) -> list[SSAValue]:
        return [T.slice_along(al.em, x, axis, p, 1) for p in positions]

    def source(i: int) -> int:
        """The element position i (out of range for the padding) copies."""
        if mode == "edge":
            return min(max(i, 0), n - 1)
        if mode == "wrap":
            return i % n
        period = 2 * n - (2 if mode == "reflect" else 0)
        if period == 0:
            return 0
        i %= period
        if mode == "reflect":
            return i if i < n else period - i
        return i if i < n else period - 1 - i

    pieces = pick([source(i) for i in range(-before, 0)]) + [x] + pick([source(i) for i in range(n, n + after)])
    return T.concat(al.em, pieces, axis)


# ---- selecting, gradients, ranges ---------------------------------------------------------
@numpy_function(np.select, params=("condlist", "choicelist", "?default=0"))
def _select(al, node, condlist, choicelist, default):
    if not isinstance(condlist, tuple) or not isinstance(choicelist, tuple) or len(condlist) != len(choicelist):
        raise al.error(node, "np.select takes two lists of the same length")
    conds = [al.array(c, node) for c in condlist]
    if not all(T.element(c) == I1 for c in conds):
        raise al.error(node, "np.select: the conditions must be bool arrays (comparisons)")
    choices = al.floats(node, *[al.array(c, node) for c in choicelist], al.array(default, node))
    *choices, result = al.broadcast(node, *choices)
    conds = al.broadcast(node, *conds, result)[:-1]
    for cond, choice in reversed(list(zip(conds, choices))):  # the first true condition wins
        result = T.select(al.em, cond, choice, result)
    return al.new(result)


@numpy_function(np.gradient, params=("f", "*varargs", "?axis", "?edge_order=1"))
def _gradient(al, node, f, varargs, axis, edge_order):
    x = _float_tensor(al, f, node)
    rank = len(T.shape(x))
    given = al.static(axis, node, "the axis")
    axes = tuple(range(rank)) if given is None else al.static_axes(given, rank, node)
    if isinstance(given, tuple):  # in the order given, as numpy returns them
        axes = tuple(d % rank for d in given)
    spacings = [al.static(v, node, "the spacing") for v in varargs]
    if len(spacings) not in (0, 1, len(axes)) or any(not isinstance(h, (int, float)) for h in spacings):
        raise al.error(node, "np.gradient takes uniform spacings: none, one number, or one per axis",
                       "coordinate arrays are not supported")
    spacings = spacings * len(axes) if len(spacings) == 1 else spacings or [1.0] * len(axes)
    order = al.static(edge_order, node, "edge_order")
    if order not in (1, 2):
        raise al.error(node, "np.gradient: edge_order must be 1 or 2")
    out = tuple(_gradient_along(al, x, ax, float(h), order, node) for ax, h in zip(axes, spacings))
    return out[0] if len(out) == 1 and not isinstance(given, tuple) else out


def _gradient_along(al: ArrayLowering, x: SSAValue, axis: int, h: float, order: int, node) -> SSAValue:
    """numpy's: central differences inside, one-sided ones of `order` at the ends."""
    n = T.shape(x)[axis]
    if n < order + 1:
        raise al.error(node, f"np.gradient needs at least {order + 1} points along axis {axis}")
    em = al.em

    def part(start: int, size: int = 1) -> SSAValue:
        return T.slice_along(em, x, axis, start, size)

    def scaled(v: SSAValue, factor: float) -> SSAValue:
        return em.mul(v, em.const(factor, v.type))

    inner = scaled(em.sub(part(2, n - 2), part(0, n - 2)), 0.5 / h)
    if order == 1:
        first = scaled(em.sub(part(1), part(0)), 1 / h)
        last = scaled(em.sub(part(n - 1), part(n - 2)), 1 / h)
    else:
        first = scaled(em.add(em.sub(scaled(part(1), 4.0), scaled(part(0), 3.0)), em.neg(part(2))), 0.5 / h)
        last = scaled(em.sub(em.add(scaled(part(n - 1), 3.0), part(n - 3)), scaled(part(n - 2), 4.0)), 0.5 / h)
    return al.new(T.concat(em, [first, inner, last], axis))


@numpy_function(np.linspace, params=("start", "stop", "?num=50", "?endpoint=True", "?retstep=False", "?dtype", "?axis=0"))
def _linspace(al, node, start, stop, num, endpoint, retstep, dtype, axis):
    num = al.static(num, node, "num")
    endpoint, retstep = al.static(endpoint, node, "endpoint"), al.static(retstep, node, "retstep")
    if al.static(axis, node, "axis") != 0:
        raise al.error(node, "np.linspace: only axis=0 is supported")
    elem = al.dtype(dtype, node, F64)
    if not is_float(elem):
        raise al.error(node, "np.linspace: only float dtypes are supported")
    div = num - 1 if endpoint else num
    if al.is_static(start) and al.is_static(stop):
        refuse_large(num, (num,))
        values, step = np.linspace(al.static(start, node, ""), al.static(stop, node, ""), num, endpoint, True)
        result = al.new(T.dense(al.em, values, TensorType(elem, [num])))
        return (result, al.em.const(float(step), elem)) if retstep else result
    lo, hi = (al.to_element(al.value(v, node), elem) for v in (start, stop))
    if is_array(lo) or is_array(hi):
        raise al.error(node, "np.linspace: array start and stop are not supported")
    em = al.em
    delta = em.sub(hi, lo)
    steps = T.dense(em, np.arange(num, dtype=np.float64), TensorType(elem, [num]))
    if div > 0:
        step = em.div(delta, em.const(float(div), elem))
        values = em.add(em.mul(steps, T.splat(em, step, (num,))), T.splat(em, lo, (num,)))
    else:  # one point: start (numpy's step is NaN then)
        step = em.mul(delta, em.const(math.nan, elem))
        values = em.add(em.mul(steps, T.splat(em, delta, (num,))), T.splat(em, lo, (num,)))
    if endpoint and num > 1:  # the last point is stop itself, as numpy makes it
        values = em.op(_insert_slice(T.reshape(em, T.splat(em, hi, (1,)), (1,)), values, [num - 1]))
    result = al.new(values)
    return (result, step) if retstep else result


@numpy_function(np.meshgrid, params=("*xi", "?indexing='xy'"))
def _meshgrid(al, node, xi, indexing):
    vectors = [_tensor(al, v, node) for v in xi]
    vectors = [v if len(T.shape(v)) == 1 else T.reshape(al.em, v, (math.prod(T.shape(v)),))
               for v in vectors]  # numpy flattens each input (numbers and matrices too)
    sizes = [T.shape(v)[0] for v in vectors]
    cartesian = al.static(indexing, node, "indexing") == "xy" and len(vectors) > 1
    if cartesian:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    grids = []
    for i, v in enumerate(vectors):
        axis = {0: 1, 1: 0}.get(i, i) if cartesian else i
        shaped = T.reshape(al.em, v, [n if d == axis else 1 for d, n in enumerate(sizes)])
        grids.append(al.new(T.broadcast_to(al.em, shaped, sizes)))
    return tuple(grids)



# ---- np.r_ and np.c_ -------------------------------------------------------------------
def index_concatenate(al: ArrayLowering, which, index_node, node) -> SSAValue:
    """np.r_[a, b, 1:4] and np.c_[a, b]: r_ joins along the first axis (numbers
    and slices become vectors: a slice is np.arange of it); c_ joins along the
    last axis, vectors as columns."""
    parts = list(index_node.elts) if isinstance(index_node, ast.Tuple) else [index_node]
    items = []
    for part in parts:
        if isinstance(part, ast.Constant) and isinstance(part.value, str):
            raise al.error(node, "np.r_/np.c_ with a string directive is not supported",
                           "use np.concatenate or np.stack with axis=")
        if isinstance(part, ast.Slice):
            bounds = [None if p is None else al.static(al.fl.expr(p), node, "a slice bound")
                      for p in (part.lower, part.upper, part.step)]
            if any(isinstance(b, complex) for b in bounds):
                raise al.error(node, "np.r_ with a complex step (a point count) is not supported", "use np.linspace")
            values = np.arange(*[0 if bounds[0] is None else bounds[0], bounds[1], 1 if bounds[2] is None else bounds[2]])
            elem = F64 if values.dtype.kind == "f" else T.I64
            items.append(T.dense(al.em, values, TensorType(elem, list(values.shape))))
            continue
        items.append(_tensor(al, al.fl.expr(part), node))
    if which is np.c_:
        items = [T.reshape(al.em, x, (T.shape(x)[0], 1) if len(T.shape(x)) == 1 else (1, 1))
                 if len(T.shape(x)) < 2 else x for x in items]
        return _join(al, items, len(T.shape(items[0])) - 1, node)
    items = [_at_least(al, x, 1) for x in items]
    return _join(al, items, 0, node)


# ---- more creation ------------------------------------------------------------------
@numpy_function(np.empty, params=("shape", "?dtype"))
def _empty(al, node, shape, dtype):
    """Zeros: numpy leaves the values unspecified, and zeros are one choice of them."""
    elem = al.dtype(dtype, node, F64)
    return al.new(T.dense(al.em, 0, TensorType(elem, list(al.shape_arg(shape, node)))))


@numpy_function(np.empty_like, params=("prototype", "?dtype"))
def _empty_like(al, node, prototype, dtype):
    x = _tensor(al, prototype, node)
    return al.new(T.dense(al.em, 0, TensorType(al.dtype(dtype, node, T.element(x)), list(T.shape(x)))))


@numpy_function(np.identity, params=("n", "?dtype"))
def _identity(al, node, n, dtype):
    n = al.static(n, node, "n")
    return al.new(T.band(al.em, n, n, 0, al.dtype(dtype, node, F64)))


@numpy_function(np.logspace, params=("start", "stop", "?num=50", "?endpoint=True", "?base=10.0", "?dtype", "?axis=0"))
def _logspace(al, node, start, stop, num, endpoint, base, dtype, axis):
    exponents = _linspace(al, node, start, stop, num, endpoint, Static(False), dtype, axis)
    (b, e) = al.floats(node, al.array(base, node), exponents)
    return al.new(al.em.op(mathd.PowFOp(b, e)))
