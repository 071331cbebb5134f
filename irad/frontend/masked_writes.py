"""Writes through a boolean mask known only at run time: `y[m] = v`,
`y[m] op= v` and `y[m] = z[m]`.

Reading `y[m]` gives an array whose length is known only at run time, which
irad refuses (indexing.py); writing through the mask keeps `y`'s shape, so it
is a select over the whole array, written back in place as `y[...] = ...`
(through views and containers, as any item assignment):

    y[m] = v        y[...] = np.where(m, v, y)
    y[m] op= v      y[...] = np.where(m, y op v, y)     (numpy's in-place casting)
    y[m] = z[m]     y[...] = np.where(m, z, y)

numpy's rules, which irad checks while lowering: `m` has `y`'s leading
dimensions (k of them) and selects sub-arrays of shape `y.shape[k:]`; `v`
broadcasts to `(count, *y.shape[k:])` for the count of True elements, which is
known only at run time, so `v` must broadcast to `(1, *y.shape[k:])`: a number,
or one sub-array. Where it would fit only some counts, irad refuses it."""

from __future__ import annotations

import ast

import numpy as np
from xdsl.ir import SSAValue

from irad.frontend import constant_arrays, indexing
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T
from irad.ir.types import is_bool

# index expressions that may compute a mask: evaluated once more to find out (pure, so CSE merges the copies)
_MASK_FORMS = (ast.Compare, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Call, ast.Name, ast.Attribute, ast.Subscript)
_HINT = "write np.where(m, v, y) for the whole array"


def runtime_mask(fl, target: ast.expr) -> SSAValue | None:
    """The mask of a target `E[m]`, where `m` is a bool array known only at run time; else None."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.slice, _MASK_FORMS)):
        return None
    value = fl.expr(target.slice)
    if isinstance(value, Static) and isinstance(value.obj, np.ndarray) and value.obj.dtype == bool:
        value = fl.arrays.value(value, target)  # a global array: read at each call (globals.py)
    if not (isinstance(value, SSAValue) and is_array(value) and is_bool(T.element(value))):
        return None
    if indexing.constant_values(value) is not None or constant_arrays.evaluate(value) is not None:
        return None  # known while lowering: int positions (indexing.py)
    return value


def assign(fl, target: ast.Subscript, mask: SSAValue, value, node) -> None:
    """`E[m] = value`."""
    y = _array(fl, target, node)
    v = _items(fl, fl.arrays.cast(fl.arrays.value(value, node), T.element(y)), y, mask, node)
    _write_whole(fl, target, T.select(fl.em, _spread(fl, y, mask, node), v, y), node)


def assign_copy(fl, stmt: ast.Assign) -> bool:
    """`E[m] = Z[m]` with one mask expression on both sides: np.where(m, Z, E). False
    where the statement is not of this form or `m` is not a run-time mask."""
    if len(stmt.targets) != 1 or not isinstance(stmt.value, ast.Subscript):
        return False
    target = stmt.targets[0]
    if not isinstance(target, ast.Subscript) or ast.dump(target.slice) != ast.dump(stmt.value.slice):
        return False
    source = fl.expr(stmt.value.value)
    if not is_array(source):
        return False
    mask = runtime_mask(fl, stmt.value)
    if mask is None:
        return False
    y = _array(fl, target, stmt)
    k = len(T.shape(mask))
    if T.shape(source)[:k] != T.shape(mask):
        raise fl.src.error(stmt, f"boolean index of shape {T.shape(mask)} does not match the indexed "
                           f"array's shape {T.shape(source)} (numpy: IndexError)")
    z = fl.arrays.cast(source, T.element(y))
    rest = T.broadcast_shapes(T.shape(z)[k:], T.shape(y)[k:])
    if rest != T.shape(y)[k:]:
        raise fl.src.error(stmt, f"cannot assign items of shape {T.shape(z)[k:]} to items of shape "
                           f"{T.shape(y)[k:]} through a boolean mask", _HINT)
    _write_whole(fl, target, T.select(fl.em, _spread(fl, y, mask, stmt), T.broadcast_to(fl.em, z, T.shape(y)), y),
                 stmt)
    return True


def augment(fl, stmt: ast.AugAssign, mask: SSAValue) -> None:
    """`E[m] op= value`: numpy computes `E[m] op value` and writes it back with its
    in-place casting (arrays.update refuses what numpy's same-kind rule does)."""
    target = stmt.target
    y = _array(fl, target, stmt)
    v = _items(fl, fl.arrays.value(fl.expr(stmt.value), stmt), y, mask, stmt)
    combined = fl.expressions.binary(stmt.op, y, stmt.value, stmt, right=v)
    if T.shape(combined) != T.shape(y):
        raise fl.src.error(stmt, f"the result of shape {T.shape(combined)} cannot be written into items of "
                           f"shape {T.shape(y)}", _HINT)
    kept = fl.arrays.cast(y, T.element(combined))  # select over one element type; cast back on the write
    selected = T.select(fl.em, _spread(fl, y, mask, stmt), combined, kept)
    if isinstance(target.value, ast.Name) and is_array(fl.env.get(target.value.id)):
        fl.arrays.update(target.value.id, y, selected, stmt)  # numpy's same-kind cast, in place
    else:
        _write_whole(fl, target, selected, stmt)


def _array(fl, target: ast.Subscript, node) -> SSAValue:
    y = fl.expr(target.value)
    if not is_array(y):
        raise fl.src.error(node, "item assignment through a boolean mask to a value that is not an array")
    return y


def _spread(fl, y: SSAValue, mask: SSAValue, node) -> SSAValue:
    """The mask over all of `y`'s elements."""
    dims, k = T.shape(y), len(T.shape(mask))
    if tuple(dims[:k]) != tuple(T.shape(mask)):
        raise fl.src.error(node, f"boolean index of shape {T.shape(mask)} does not match the array's shape "
                           f"{dims} (numpy: IndexError)")
    shaped = T.reshape(fl.em, mask, tuple(T.shape(mask)) + (1,) * (len(dims) - k))
    return T.broadcast_to(fl.em, shaped, dims)


def _items(fl, v: SSAValue, y: SSAValue, mask: SSAValue, node) -> SSAValue:
    """`v` as the selected items see it: broadcast to `y.shape[k:]`, with `y`'s
    leading axes of size 1 to broadcast along the mask's."""
    k = len(T.shape(mask))
    rest = tuple(T.shape(y)[k:])
    dims = tuple(T.shape(v)) if is_array(v) else ()
    if len(dims) == len(rest) + 1 and dims[:1] == (1,):
        dims = dims[1:]
        v = T.reshape(fl.em, v, dims)
    if len(dims) > len(rest) or T.broadcast_shapes(dims, rest) != rest:
        raise fl.src.error(node, f"a value of shape {dims} written through a boolean mask known only at run time: "
                           f"numpy broadcasts it to (count, *{rest}) for the number of True elements, which "
                           "irad does not know while lowering", "write a number, one item of shape "
                           f"{rest}, or np.where(m, v, y) for the whole array")
    v = T.broadcast_to(fl.em, v, rest) if rest else v
    return T.broadcast_to(fl.em, T.reshape(fl.em, v, (1,) * k + rest) if rest else v, T.shape(y))


def _write_whole(fl, target: ast.Subscript, whole: SSAValue, node) -> None:
    """`E[...] = whole`: an in-place write of every element, as any item assignment."""
    everything = ast.copy_location(ast.Subscript(value=target.value, slice=ast.Constant(Ellipsis), ctx=ast.Store()),
                                   target)
    fl.statements.assign(everything, whole, node)
