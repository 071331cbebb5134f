"""Mapping from Python example values to IR types.

A function is specialised once per signature, and the signature comes from the
types of the example arguments: float -> f64, int -> i64, bool -> i1, and a
numpy array of static shape -> a ranked tensor of its dtype (float64 -> f64,
float32 -> f32, int64 -> i64, bool -> i1).

numpy's narrow integer dtypes have element types of their own, so that the
type says the dtype and the arithmetic wraps as numpy's does:

* int8, int16, int32 -> i8, i16, i32: signless ints read as signed, which
  wrap in their width as numpy's do;
* uint8, uint16, uint32 -> i9, i17, i33: one bit wider than the dtype, so
  that every value is non-negative and the signed ops (comparisons, `//`,
  `%`, sitofp, extsi) mean the unsigned ones; `+ - *` are followed by a mask
  to the dtype's bits (`uint_mask`), which makes them wrap as numpy's do. An
  array of them holds numpy's dtype (uint8 in one byte): the Python backend
  computes on uint8 arrays, the native one narrows the carrier to the
  dtype's width with the unsigned ops (native/unsigned.py).

Every type and op stays standard MLIR (signless ints). Arrays of these dtypes
only: a number of one (an np.uint8 scalar, a 0-d array) is refused
(`refusal`), since irad's numbers are int64; so is uint64 (its carrier,
i65, has no dense constants in xDSL). So are ndarray subclasses, whose
operators mean something else (np.matrix's `*` is a matrix product, np.ma
ignores masked elements).
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

# numpy's integer dtypes other than int64, by element type (see the module's docstring)
NARROW_INTS = {
    IntegerType(8): np.dtype(np.int8), IntegerType(16): np.dtype(np.int16), IntegerType(32): np.dtype(np.int32),
    **{IntegerType(n + 1): np.dtype(f"uint{n}") for n in (8, 16, 32)},  # carriers, one bit wider
}
_NARROW_ELEMENTS = {dtype: element for element, dtype in NARROW_INTS.items()}


def is_float(t: Attribute) -> bool:
    return isinstance(t, (Float64Type, Float32Type))


# `isa`, not isinstance, where the answer is mostly no: isinstance of an f64
# against IntegerType or TensorType (ABCs) runs a Python-level check, and the
# frontend asks these of most values it makes.
def is_int(t: Attribute) -> bool:
    return isa(t, IntegerType) and t.width.data > 1


def is_narrow_int(t: Attribute) -> bool:
    """An element type of a numpy int dtype other than int64 (int8 ... uint64)."""
    return isa(t, IntegerType) and t in NARROW_INTS


def is_uint(t: Attribute) -> bool:
    """The carrier of a numpy uint dtype (i9 for uint8, ...: the module's docstring)."""
    return isa(t, IntegerType) and t in NARROW_INTS and t.width.data % 2 == 1


def uint_mask(t: Attribute) -> int:
    """The bits of the uint dtype whose carrier `t` is (255 for uint8's i9)."""
    return (1 << (t.width.data - 1)) - 1


def int_element(dtype: np.dtype) -> Attribute:
    """The element type of a numpy integer or bool dtype."""
    return I64 if dtype == np.int64 else I1 if dtype == np.bool_ else _NARROW_ELEMENTS[np.dtype(dtype)]


def numpy_dtype(element: Attribute) -> np.dtype | None:
    """numpy's dtype of an element type (None for another type)."""
    if element in NARROW_INTS:
        return NARROW_INTS[element]
    name = {F64: "float64", F32: "float32", I64: "int64", I1: "bool"}.get(element)
    return None if name is None else np.dtype(name)


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
    if dtype == np.int64:
        return I64
    return _NARROW_ELEMENTS.get(dtype)


def refusal(value: object) -> tuple[str, str] | None:
    """(what, hint) for a value irad refuses on purpose, because taking it as
    a plain float64/int64/bool value would change what numpy computes with it:
    an ndarray subclass, or a number of an integer dtype other than int64. None otherwise."""
    if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
        cls = f"{type(value).__module__}.{type(value).__name__}"
        if isinstance(value, np.ma.MaskedArray):
            return (f"a masked array ({cls}), an ndarray subclass whose functions skip the masked "
                    "elements; irad takes plain arrays and would ignore the mask",
                    "pass x.filled(value) (the masked elements replaced), or np.asarray(x) to drop the mask")
        if isinstance(value, np.matrix):
            return (f"a {cls}, an ndarray subclass whose `*` and `**` are matrix products; irad takes "
                    "plain arrays, whose `*` is elementwise",
                    "pass np.asarray(x) and write `@` where the matrix product is meant")
        return (f"a {cls}, an ndarray subclass whose operators may differ from a plain array's",
                "pass np.asarray(x)")
    dtype = getattr(value, "dtype", None) if isinstance(value, (np.ndarray, np.generic)) else None
    if dtype == np.uint64 and isinstance(value, np.ndarray) and value.ndim:
        return ("an array of dtype uint64: its values above 2**63 do not fit irad's int64, and irad does not "
                "compute uint64 arithmetic (int8 ... uint32 arrays it computes as numpy)",
                "convert it where it enters: x.astype(np.int64) if the values are below 2**63, else "
                "x.astype(np.float64)")
    if dtype is not None and dtype.kind in "iu" and dtype != np.int64 and not (
            isinstance(value, np.ndarray) and value.ndim):
        return (f"a number of dtype {dtype} (a numpy scalar or a 0-d array): numpy's {dtype} arithmetic "
                f"wraps around in {dtype.itemsize * 8} bits and promotes by NEP 50 ({dtype} - 1 stays "
                f"{dtype}), while irad's numbers are int64 (arrays of {dtype} are supported)",
                "pass it as int(x) (a Python int), or as an array of shape (1,)")
    return None


# functions and modules: what most globals a function reads are, and what the
# isinstance against numbers.Integral (an ABC) below would answer slowly
_NEVER_NUMBERS = frozenset({types.FunctionType, types.BuiltinFunctionType, types.ModuleType})


def type_of_value(value: object) -> Attribute | None:
    """The IR type of an example argument, or None if irad cannot lower it."""
    if type(value) in _NEVER_NUMBERS:  # the frontend asks this of every global it reads
        return None
    if isinstance(value, np.ndarray):
        if type(value) is not np.ndarray:  # np.matrix, np.ma: see refusal
            return None
        element = _array_element_type(value.dtype)
        if element is None:
            return None
        if value.ndim == 0:  # a 0-d array behaves as a number
            return None if element in NARROW_INTS else element
        return TensorType(element, value.shape)
    if isinstance(value, (bool, np.bool_)):
        return I1
    if isinstance(value, np.floating) and value.dtype == np.float32:
        return F32
    if isinstance(value, float):  # numpy.float64 too (not float16 or longdouble)
        return F64
    if isinstance(value, np.integer) and value.dtype != np.int64:  # see refusal
        return None
    if isinstance(value, numbers.Integral):
        return I64
    return None


def dtype_name(element: Attribute) -> str | None:
    """numpy's name of the dtype of an element type (None for another type)."""
    dtype = numpy_dtype(element)
    return None if dtype is None else dtype.name


def describe(t: Attribute) -> str:
    """A user-facing name for an IR type."""
    if isinstance(t, Float64Type):
        return "float (f64)"
    if isinstance(t, Float32Type):
        return "float32 (f32)"
    if is_bool(t):
        return "bool (i1)"
    if t in NARROW_INTS:
        return f"{NARROW_INTS[t]} ({t})"
    if is_int(t):
        return "int (i64)"
    if isinstance(t, TensorType):
        shape = "x".join(map(str, t.get_shape()))
        dtype = dtype_name(t.element_type)
        return f"{dtype} array of shape ({shape.replace('x', ', ')}{',' if t.get_num_dims() == 1 else ''}) ({t})"
    return str(t)
