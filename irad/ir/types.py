"""Mapping from Python example values to IR types.

A function is specialised once per signature, and the signature comes from the
types of the example arguments: float -> f64, int -> i64, bool -> i1, and a
numpy array of static shape -> a ranked tensor of its dtype (float64 -> f64,
float32 -> f32, int -> i64, bool -> i1).
"""

from __future__ import annotations

import numbers
import types

import numpy as np
from xdsl.dialects.builtin import Float32Type, Float64Type, IntegerType, TensorType
from xdsl.ir import Attribute

from irad.ir.isa import isa

F64 = Float64Type()
F32 = Float32Type()
I64 = IntegerType(64)
I1 = IntegerType(1)


def is_float(t: Attribute) -> bool:
    return isinstance(t, (Float64Type, Float32Type))


# `isa`, not isinstance, where the answer is mostly no: isinstance of an f64
# against IntegerType or TensorType (ABCs) runs a Python-level check, and the
# frontend asks these of most values it makes.
def is_int(t: Attribute) -> bool:
    return isa(t, IntegerType) and t.width.data > 1


def is_bool(t: Attribute) -> bool:
    return isa(t, IntegerType) and t.width.data == 1


def is_tensor(t: Attribute) -> bool:
    return isa(t, TensorType)


def is_float_tensor(t: Attribute) -> bool:
    return isa(t, TensorType) and is_float(t.element_type)


def is_differentiable(t: Attribute) -> bool:
    """A float scalar or a tensor of floats: a value that can have a cotangent."""
    return is_float(t) or is_float_tensor(t)


def element_type(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, TensorType) else t


def shape_of(t: Attribute) -> tuple[int, ...]:
    """The static shape of a tensor type; () for a scalar."""
    return tuple(t.get_shape()) if isinstance(t, TensorType) else ()


def _array_element_type(dtype: np.dtype) -> Attribute | None:
    if dtype == np.float64:
        return F64
    if dtype == np.float32:
        return F32
    if dtype == np.bool_:
        return I1
    if np.issubdtype(dtype, np.integer):
        return I64
    return None


# functions and modules: what most globals a function reads are, and what the
# isinstance against numbers.Integral (an ABC) below would answer slowly
_NEVER_NUMBERS = frozenset({types.FunctionType, types.BuiltinFunctionType, types.ModuleType})


def type_of_value(value: object) -> Attribute | None:
    """The IR type of an example argument, or None if irad cannot lower it."""
    if type(value) in _NEVER_NUMBERS:  # the frontend asks this of every global it reads
        return None
    if isinstance(value, np.ndarray):
        element = _array_element_type(value.dtype)
        if element is None:
            return None
        if value.ndim == 0:  # a 0-d array behaves as a number
            return element
        return TensorType(element, value.shape)
    if isinstance(value, (bool, np.bool_)):
        return I1
    if isinstance(value, np.floating) and value.dtype == np.float32:
        return F32
    if isinstance(value, float):  # numpy.float64 too (not float16 or longdouble)
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
    if isinstance(t, TensorType):
        shape = "x".join(map(str, t.get_shape()))
        dtype = {F64: "float64", F32: "float32", I64: "int64", I1: "bool"}.get(t.element_type)
        return f"{dtype} array of shape ({shape.replace('x', ', ')}{',' if t.get_num_dims() == 1 else ''}) ({t})"
    return str(t)
