"""Updates through a boolean mask known only at run time: `y[m] op= v`,
`y[m] = z[m]` and `c["k"][m] = v` (`y[m] = v` of a named array is an index part
of kind "mask": indexing.py).

Reading `y[m]` gives an array whose length is known only at run time, which
irad refuses; an update through the mask keeps `y`'s shape, so it is a select
over the whole array (indexing.masked_select), written back in place as
`E[...] = ...` (through views and containers, as any item assignment):

    y[m] op= v      y[...] = np.where(m, y op v, y)     (numpy's in-place casting)
    y[m] = z[m]     y[...] = np.where(m, z, y)          (one mask expression on both sides)

`v` must be one item (indexing.check_masked_value): numpy broadcasts it to the
run-time count of True entries."""

from __future__ import annotations

import ast

import numpy as np
from xdsl.ir import SSAValue

from irad.frontend import indexing
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T

# index expressions that may compute a mask: evaluated once more to find out (pure, so CSE merges the copies)
_MASK_FORMS = (ast.Compare, ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Call, ast.Name, ast.Attribute, ast.Subscript)


def _pure(expr: ast.expr) -> bool:
    """No call but numpy's and Python's pure builtins, no `:=`: evaluating it once
    more to look for a mask changes nothing (`y[order.pop()] = v` must pop once)."""
    for n in ast.walk(expr):
        if isinstance(n, ast.NamedExpr):
            return False
        if isinstance(n, ast.Call):
            root = n.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if not (isinstance(root, ast.Name) and root.id in _PURE_ROOTS):
                return False
    return True


_PURE_ROOTS = frozenset({"np", "numpy", "abs", "len", "float", "int", "bool", "min", "max", "round"})


def runtime_mask(fl, target: ast.expr) -> SSAValue | None:
    """The mask of a target `E[m]`, where `m` is a bool array known only at run time; else None."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.slice, _MASK_FORMS) and _pure(target.slice)):
        return None
    value = fl.expr(target.slice)
    if isinstance(value, Static) and isinstance(value.obj, np.ndarray) and value.obj.dtype == bool:
        value = fl.arrays.value(value, target)  # a global array: read at each call (globals.py)
    return value if isinstance(value, SSAValue) and indexing.is_runtime_mask(value) else None


def assign(fl, target: ast.Subscript, mask: SSAValue, value, node) -> None:
    """`E[m] = value` through a container or view (`c["k"][m] = v`): the mask is
    read before the container is taken apart for the write (nested_targets.py)."""
    y = _array(fl, target, node)
    v = fl.arrays.cast(fl.arrays.value(value, node), T.element(y))
    _write_whole(fl, target, indexing.masked_write(fl.arrays, y, mask, v, node), node)


def assign_copy(fl, stmt: ast.Assign) -> bool:
    """`E[m] = Z[m]` with one mask expression on both sides: np.where(m, Z, E). False
    where the statement is not of this form or `m` is not a run-time mask."""
    if len(stmt.targets) != 1 or not isinstance(stmt.value, ast.Subscript):
        return False
    target = stmt.targets[0]
    if not isinstance(target, ast.Subscript) or ast.dump(target.slice) != ast.dump(stmt.value.slice):
        return False
    if not _pure(stmt.value.value):  # evaluated here, and again where this is not the form
        return False
    mask = runtime_mask(fl, stmt.value)
    if mask is None:
        return False
    source = fl.expr(stmt.value.value)
    if not is_array(source):
        return False
    y = _array(fl, target, stmt)
    k = len(T.shape(mask))
    if T.shape(source)[:k] != T.shape(mask):
        raise fl.src.error(stmt, f"a boolean mask of shape {T.shape(mask)} does not match the indexed array's "
                           f"leading axes {T.shape(source)[:k]} (numpy's IndexError)")
    z = fl.arrays.cast(source, T.element(y))
    rest = T.shape(y)[k:]
    if T.broadcast_shapes(T.shape(z)[k:], rest) != rest:
        raise fl.src.error(stmt, f"cannot assign items of shape {T.shape(z)[k:]} to items of shape {rest} through "
                           "a boolean mask", "write y = np.where(mask, values, y) with values of y's shape")
    _write_whole(fl, target, indexing.masked_select(fl.arrays, y, mask, T.broadcast_to(fl.em, z, T.shape(y))), stmt)
    return True


def augment(fl, stmt: ast.AugAssign, mask: SSAValue) -> None:
    """`E[m] op= value`: numpy computes `E[m] op value` and writes it back with its
    in-place casting (arrays.update refuses what numpy's same-kind rule does)."""
    target = stmt.target
    y = _array(fl, target, stmt)
    v = fl.arrays.value(fl.expr(stmt.value), stmt)
    indexing.check_masked_value(fl.arrays, y, mask, v, stmt)
    combined = fl.expressions.binary(stmt.op, y, stmt.value, stmt, right=v)
    if T.shape(combined) != T.shape(y):
        combined = T.broadcast_to(fl.em, combined, T.shape(y))
    kept = fl.arrays.cast(y, T.element(combined))  # a select over one element type; cast back on the write
    selected = indexing.masked_select(fl.arrays, kept, mask, combined)
    if isinstance(target.value, ast.Name) and is_array(fl.env.get(target.value.id)):
        fl.arrays.update(target.value.id, y, selected, stmt)  # numpy's same-kind cast, in place
    else:
        _write_whole(fl, target, fl.arrays.cast(selected, T.element(y)), stmt)


def _array(fl, target: ast.Subscript, node) -> SSAValue:
    y = fl.expr(target.value)
    if not is_array(y):
        raise fl.src.error(node, "item assignment through a boolean mask to a value that is not an array")
    return y


def _write_whole(fl, target: ast.Subscript, whole: SSAValue, node) -> None:
    """`E[...] = whole`: an in-place write of every element, as any item assignment."""
    everything = ast.copy_location(ast.Subscript(value=target.value, slice=ast.Constant(Ellipsis), ctx=ast.Store()),
                                   target)
    fl.statements.assign(everything, whole, node)
