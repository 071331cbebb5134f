"""`np.add.at(a, indices, b)` and `np.subtract.at(a, indices, b)`: numpy's
unbuffered in-place update, where an index that repeats adds (or subtracts)
each of its values, unlike `a[indices] += b`, whose last value wins.

irad lowers it as a scatter-add (irad/ir/gather.py, the adjoint of a gather)
into the array `a` names, written back as `a[...] = updated`, so that every
name and view sharing the array sees it, and a write numpy would make into
an argument, a global or another holder is refused as any in-place write is.
With no array in the index, no position repeats: it is `a[indices] += b`.
"""

from __future__ import annotations

import ast

import numpy as np

from irad.frontend import indexing
from irad.frontend.values import Static, is_array
from irad.ir import tensor as T

_UFUNCS = {np.add: ast.Add, np.subtract: ast.Sub}


def is_ufunc_at(fl, node: ast.expr) -> bool:
    """Is `node` a call of np.add.at or np.subtract.at?"""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "at"):
        return False
    owner = fl.expr(node.func.value)
    return isinstance(owner, Static) and any(owner.obj is u for u in _UFUNCS)


def lower(fl, stmt: ast.Expr) -> None:
    """The statement `np.add.at(a, indices, b)` (is_ufunc_at)."""
    call = stmt.value
    ufunc = fl.expr(call.func.value).obj
    name = f"np.{ufunc.__name__}.at"
    if call.keywords or len(call.args) != 3:
        raise fl.src.error(call, f"{name} takes three arguments here: the array, the indices and the values",
                           f"{name}(a, indices, b)")
    target, index_node, value_node = call.args
    if not isinstance(target, (ast.Name, ast.Subscript, ast.Attribute)):
        raise fl.src.error(target, f"{name} into an array no variable holds changes nothing numpy returns",
                           "bind the array to a variable first")
    al = fl.arrays
    y = fl.expr(target)
    if not is_array(y):
        raise fl.src.error(target, f"{name} needs an array to update, got {fl.kind_of(y)}")
    parts = indexing.parse(al, y, index_node, call)
    if not indexing.has_arrays(parts):  # basic index: nothing repeats, so it is the buffered `+=`
        update = ast.AugAssign(target=ast.Subscript(target, index_node, ast.Store()), op=_UFUNCS[ufunc](),
                               value=value_node)
        fl.statements.statement(ast.copy_location(update, stmt))
        return
    v = al.value(fl.expr(value_node), call)
    v = al.cast(al.negate(v, call) if ufunc is np.subtract else v, T.element(y))
    updated = indexing.write(al, y, parts, v, call, accumulate=True)
    whole = ast.Subscript(target, ast.Constant(Ellipsis), ast.Store())
    fl.statements.assign(ast.copy_location(whole, target), updated, call)
