"""Where two types meet: the one place that decides what a variable holds after
an `if`, across loop iterations, and what a recursive function returns.

The join is numpy's: bool < int < float; a float32 and a float64 make float64;
a number joined with an array is broadcast to the array's shape (a Python float
is "weak" beside a float32 array, as in numpy), where number_joins.py refuses
the uses numpy's result would not match; two arrays of the same shape
join their dtypes. Arrays of different static shapes have no join: irad's
shapes are static, so that is an error at lowering, never invalid IR.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from irad.frontend import held_ints, number_classes, number_joins, numpy_scalars
from irad.frontend.emitter import Emitter
from irad.ir import tensor as T
from irad.ir.types import F32, F64, I64, describe, is_bool, is_float


_KIND = {True: "a bool", False: "an int"}


def join_scalars(a: Attribute, b: Attribute) -> Attribute:
    """bool < int < float; float32 with float64 is float64."""
    if a == b:
        return a
    if is_float(a) and is_float(b):
        return F64
    if is_float(a) or is_float(b):
        return a if is_float(a) else b
    return I64  # bool and int


def join_types(a: Attribute, b: Attribute) -> Attribute | None:
    """The type both a and b convert to, or None when there is none."""
    if a == b:
        return a
    a_array, b_array = isinstance(a, TensorType), isinstance(b, TensorType)
    if not a_array and not b_array:
        return join_scalars(a, b)
    if a_array and b_array:
        if a.get_shape() != b.get_shape():
            return None
        elem = _join_elements(a.element_type, b.element_type)
        return None if elem is None else TensorType(elem, a.get_shape())
    array, number = (a, b) if a_array else (b, a)
    elem = array.element_type
    if is_float(elem):  # a number beside a float array takes the array's dtype
        return array
    if is_float(number):  # an int or bool array with a float: float64, as numpy
        return TensorType(F64, array.get_shape())
    return array if number == elem else None


def _join_elements(a: Attribute, b: Attribute) -> Attribute | None:
    if a == b:
        return a
    if is_float(a) or is_float(b):
        return join_scalars(a, b)
    return None  # int with bool arrays: not needed by any program yet


def mismatch(a: Attribute, b: Attribute) -> str:
    """Why two types have no join, for the error message."""
    return f"{describe(a)} on one path and {describe(b)} on the other"


def convert(em: Emitter, v: SSAValue, t: Attribute, joined: str) -> SSAValue:
    """`v` as type `t`, a join of its type (see join_types). `joined` names the
    variable and the join (`file:line:col: 'x' ... into the loop`): a number
    held as an array is marked with it (number_joins.py checks its uses)."""
    if v.type == t:
        return v
    if not isinstance(t, TensorType):
        numpy_bool = is_bool(v.type) and numpy_scalars.kind(v) != numpy_scalars.PYTHON
        if not is_float(t):
            widened = em.to_int(v)
        else:
            widened = em.to_float(v, t)
            if not is_float(v.type):  # an int (or bool) on this path: numpy's arrays made of it are ints
                held_ints.mark(widened, joined.format("an int", "a float"))
        if widened is not v and not is_float(v.type):  # what isinstance sees on this path
            number_classes.mark(widened, v, joined.format(_KIND[is_bool(v.type)], "an int" if not is_float(t)
                                                          else "a float"))
        if numpy_bool:  # beside another bool, numpy's `+` of it is `or` on this path (numpy_scalars.py)
            numpy_scalars.mark(widened, numpy_scalars.JOINED_BOOL)
        return widened
    elem = t.element_type
    if not isinstance(v.type, TensorType):  # a number broadcast to the array's shape
        if is_float(elem) and is_float(v.type) and v.type != elem:
            scalar = em.op((arith.TruncFOp if elem == F32 else arith.ExtFOp)(v, elem))
        elif is_float(elem):
            scalar = em.to_float(v, elem)
        else:
            scalar = em.to_int(v)
        held = T.splat(em, scalar, t.get_shape())
        number_joins.mark(held, joined)
        return held
    src = v.type.element_type
    if is_float(src):
        return em.op((arith.TruncFOp if elem == F32 else arith.ExtFOp)(v, t))
    widened = T.to_float(em, v, elem)  # an int array on this path: numpy casts what is written into it
    held_ints.mark(widened, joined.format("an int array", "a float array"))
    return widened
