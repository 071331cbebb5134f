"""Updates through a boolean mask known only at run time that are not one
index part (`y[m] = v` is one, of kind "mask", written through views and
containers as any item: indexing.py, nested_targets.py):

    y[m] op= v      y[...] = np.where(m, y op v, y)     (numpy's in-place casting)
    y[m] = z[m]     y[...] = np.where(m, z, y)          (one mask expression on both sides)

Reading `y[m]` gives an array whose length is known only at run time, which
irad refuses; an update through the mask keeps `y`'s shape, so it is a select
over the whole array (indexing.masked_select), written back in place as
`E[...] = ...`. `v` must be one item (indexing.check_masked_value): numpy
broadcasts it to the run-time count of True entries."""

from __future__ import annotations

import ast

import numpy as np
from xdsl.ir import SSAValue

from irad.frontend import indexing
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T


def _pure(expr: ast.expr) -> bool:
    """No call but numpy's and Python's pure builtins, no `:=`: evaluating it in
    another order, or once for two places, changes nothing."""
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
    """The mask of a target `E[m]` whose index was evaluated (Statements.indices_evaluated:
    a variable, read, not lowered again), where `m` is a bool array known only at run time; else None."""
    if not (isinstance(target, ast.Subscript) and isinstance(target.slice, ast.Name)):
        return None
    value = fl.expr(target.slice)
    if isinstance(value, Static) and isinstance(value.obj, np.ndarray) and value.obj.dtype == bool:
        value = fl.arrays.value(value, target)  # a global array: read at each call (globals.py)
    return value if isinstance(value, SSAValue) and indexing.is_runtime_mask(value) else None


def assign_copy(fl, stmt: ast.Assign) -> bool:
    """`E[i] = Z[i]` with one pure index expression on both sides, evaluated once
    for both: np.where(m, Z, E) where it is a mask `m` known only at run time,
    else the assignment as any. False where the statement is not of this form."""
    if len(stmt.targets) != 1 or not isinstance(stmt.value, ast.Subscript):
        return False
    target, source = stmt.targets[0], stmt.value
    if not isinstance(target, ast.Subscript) or ast.dump(target.slice) != ast.dump(source.slice):
        return False
    if not (_pure(source.value) and _pure(source.slice)):  # Python evaluates the source, then the target's index
        return False
    with fl.statements.indices_evaluated(source) as source:
        mask = runtime_mask(fl, source)
        z = fl.expr(source.value) if mask is not None else None
        if not is_array(z):
            target = ast.copy_location(ast.Subscript(target.value, source.slice, ast.Store()), target)
            fl.statements.assign(target, fl.expr(source), stmt)
            return True
        with fl.statements.indices_evaluated(target.value) as base:  # its indices once: read, then written
            y = _array(fl, base, stmt)
            k = len(T.shape(mask))
            indexing.check_masked_value(fl.arrays, z, mask, (), stmt)  # z[m]: numpy's IndexError
            indexing.check_masked_value(fl.arrays, y, mask, T.shape(z)[k:], stmt)
            z = T.broadcast_to(fl.em, fl.arrays.cast(z, T.element(y)), T.shape(y))
            _write_whole(fl, base, indexing.masked_select(fl.arrays, y, mask, z), stmt)
    return True


def augment(fl, stmt: ast.AugAssign, target: ast.Subscript, mask: SSAValue) -> None:
    """`E[m] op= value` (`target` with its indices evaluated): numpy computes
    `E[m] op value` and writes it back with its in-place casting (arrays.update
    refuses what numpy's same-kind rule does)."""
    y = _array(fl, target.value, stmt)
    v = fl.arrays.value(fl.expr(stmt.value), stmt)
    indexing.check_masked_value(fl.arrays, y, mask, T.shape(v) if is_array(v) else (), stmt)
    combined = fl.expressions.binary(stmt.op, y, stmt.value, stmt, right=v)
    if T.shape(combined) != T.shape(y):
        combined = T.broadcast_to(fl.em, combined, T.shape(y))
    kept = fl.arrays.cast(y, T.element(combined))  # a select over one element type; cast back on the write
    selected = indexing.masked_select(fl.arrays, kept, mask, combined)
    if isinstance(target.value, ast.Name) and is_array(fl.env.get(target.value.id)):
        fl.arrays.update(target.value.id, y, selected, stmt)  # numpy's same-kind cast, in place
    else:
        _write_whole(fl, target.value, fl.arrays.cast(selected, T.element(y)), stmt)


def _array(fl, base: ast.expr, node) -> SSAValue:
    y = fl.expr(base)
    if not is_array(y):
        raise fl.src.error(node, "item assignment through a boolean mask to a value that is not an array")
    return y


def _write_whole(fl, base: ast.expr, whole: SSAValue, node) -> None:
    """`E[...] = whole`: an in-place write of every element, as any item assignment."""
    everything = ast.copy_location(ast.Subscript(value=base, slice=ast.Constant(Ellipsis), ctx=ast.Store()), base)
    fl.statements.assign(everything, whole, node)
