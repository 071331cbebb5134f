"""Mapping from Python example values to IR types.

A function is specialised once per signature, and the signature comes from the
types of the example arguments: float -> f64, int -> i64, bool -> i1.
"""

from __future__ import annotations

import numbers

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType
from xdsl.ir import Attribute

F64 = Float64Type()
F32 = Float32Type()
I64 = IntegerType(64)
I1 = IntegerType(1)


def is_float(t: Attribute) -> bool:
    return isinstance(t, (Float64Type, Float32Type))


def is_int(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data > 1


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def type_of_value(value: object) -> Attribute | None:
    """The IR type of an example argument, or None if irad cannot lower it."""
    if isinstance(value, (bool, np.bool_)):
        return I1
    if isinstance(value, np.floating) and value.dtype == np.float32:
        return F32
    if isinstance(value, (float, np.floating)):
        return F64
    if isinstance(value, numbers.Integral):
        return I64
    return None


def describe(t: Attribute) -> str:
    """A user-facing name for an IR type."""
    if isinstance(t, Float64Type):
        return "float (f64)"
    if isinstance(t, Float32Type):
        return "float32 (f32)"
    if is_bool(t):
        return "bool (i1)"
    if is_int(t):
        return "int (i64)"
    return str(t)
