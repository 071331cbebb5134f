"""Constants of scalar or tensor type, and the one recogniser of tensors made
of one number.

A tensor constant made of one number is held as that number: xDSL 0.75's
DenseIntOrFPElementsAttr.from_list stores a splat element by element (and
`is_splat` unpacks them all), so np.ones((30000, 30000)) took gigabytes
while lowering. `dense_attr` builds the attribute with one element of
storage, which xDSL prints as `dense<v>` (what MLIR reads as a splat); code
that wants the elements asks `constant_array`, never `get_values()`. A
constant of more than MAX_CONSTANT_ELEMENTS elements that is not one number
is refused (`ConstantTooLarge`): the program should take it as an argument.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.dialects.linalg.ops import BroadcastOp, FillOp
from xdsl.ir import Attribute, SSAValue

from irad.base.errors import UnsupportedError
from irad.ir.builder import constant, float_attr
from irad.ir.isa import isa

# the most elements a constant tensor not made of one number may have (80 MB of float64)
MAX_CONSTANT_ELEMENTS = 10**7
# a tensor made of one number with more elements than this is made when the program
# runs (the native backend's linalg.fill, the Python backend's broadcast view), not
# spelt out in generated code
LARGE_SPLAT = 1 << 16


class ConstantTooLarge(UnsupportedError):
    """A constant array of more than MAX_CONSTANT_ELEMENTS elements, not made of
    one number; the frontend adds the location of the numpy call."""

    def __init__(self, count: int, shape) -> None:
        self.message = (f"a constant array of {count} elements (shape {tuple(shape)}), more than the "
                        f"{MAX_CONSTANT_ELEMENTS} irad holds in its IR while compiling")
        self.hint = "make the array outside the function and pass it as an argument"
        super().__init__(f"{self.message}\n  hint: {self.hint}")


def refuse_large(count: int, shape) -> None:
    """Raise ConstantTooLarge for a constant of more than MAX_CONSTANT_ELEMENTS
    elements, before numpy computes its values."""
    if count > MAX_CONSTANT_ELEMENTS:
        raise ConstantTooLarge(count, shape)


def dense_attr(values, type: TensorType) -> DenseIntOrFPElementsAttr:
    """The elements of a constant tensor of `type` from a numpy array or one
    number; one number (every element the same bits) is stored once."""
    array = np.asarray(values)
    count = math.prod(type.get_shape())
    if array.size == 1 or (array.size and _same_bits(array)):
        first = _python(array.reshape(-1)[0].item(), type.element_type)
        one = DenseIntOrFPElementsAttr.from_list(TensorType(type.element_type, []), [first])
        return DenseIntOrFPElementsAttr(type, one.data)
    refuse_large(count, type.get_shape())
    return DenseIntOrFPElementsAttr.from_list(type, [_python(v, type.element_type) for v in array.ravel().tolist()])


def _same_bits(array: np.ndarray) -> bool:
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.itemsize not in (1, 2, 4, 8):
        return bool((flat == flat[0]).all())
    bits = flat.view(f"u{flat.dtype.itemsize}")  # -0.0 is not 0.0, a NaN is itself
    return bool((bits == bits[0]).all())


def _python(v, element: Attribute):
    if isinstance(element, IntegerType) and element.width.data == 1:
        return int(bool(v))
    if isinstance(element, (IntegerType, IndexType)):  # np.zeros(3, dtype=int): 0.0 as the int 0
        return int(v)
    return float(v)


def constant_array(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The elements of a dense attribute in its shape; one held as a single
    number is a read-only broadcast of it (no copy per element)."""
    shape = tuple(attr.get_shape())
    values = np.asarray(attr.get_values())
    if values.size == 1:
        return np.broadcast_to(values.reshape(()), shape)
    return values.reshape(shape)


def splat_element(attr: DenseIntOrFPElementsAttr):
    """The one number every element of `attr` is, compared by bits (-0.0 is
    not 0.0, a NaN is itself), else None. No element: None."""
    data, size = attr.data.data, attr.get_element_type().compile_time_size
    if not data or data != data[:size] * (len(data) // size):
        return None
    return next(iter(attr.iter_values()))


def scalar_constant(attr: DenseIntOrFPElementsAttr) -> arith.ConstantOp:
    """The first element of a dense attribute (the number of a splat) as a scalar constant."""
    element, value = attr.get_element_type(), next(iter(attr.iter_values()))
    if isinstance(element, (IntegerType, IndexType)):
        return arith.ConstantOp(IntegerAttr(value, element))
    return arith.ConstantOp(FloatAttr(value, element))


def float_constant(value: float, type: Attribute) -> arith.ConstantOp:
    if isinstance(type, TensorType):
        return arith.ConstantOp(dense_attr(float(value), type))
    return constant(float_attr(value, type), type)


def zero_constant(type: Attribute) -> arith.ConstantOp:
    """0 of any float, integer or index type, or a tensor of them."""
    element = type.element_type if isinstance(type, TensorType) else type
    if isinstance(element, (Float32Type, Float64Type)):
        return float_constant(0.0, type)
    if isinstance(type, TensorType):
        return arith.ConstantOp(dense_attr(0, type))
    return arith.ConstantOp(IntegerAttr(0, type))


# the ops `splat_number` looks through: one of them defines a tensor made of one number
# (patterns that match on such an operand declare them as their `operand_from`)
SPLAT_SOURCES = (arith.ConstantOp, tensor.SplatOp, tensor.InsertOp, BroadcastOp, tensor.ReshapeOp, FillOp)


def splat_number(value: SSAValue) -> SSAValue | float | int | None:
    """The number every element of tensor `value` is, if it is made of one: a
    splat dense constant (the number itself; not NaN, not an empty tensor), a
    tensor.splat, the whole of a rank-0 tensor written by tensor.insert (how a
    gradient's seed and a scalar's cotangent become tensors; the scalar SSA
    value), a linalg.fill (what the native backend makes of a large splat
    before it looks for BLAS products' zero inits: native/large_splats.py),
    and broadcasts and reshapes of those. None otherwise, and for a value
    that is not a tensor."""
    if not isinstance(value.type, TensorType):
        return None
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            return None
        first = splat_element(attr)
        return None if isinstance(first, float) and math.isnan(first) else first
    if isinstance(owner, tensor.SplatOp):
        return owner.input
    if isinstance(owner, tensor.InsertOp):
        return None if owner.indices else owner.scalar
    if isinstance(owner, FillOp):  # writes every element, whatever its destination held
        number = owner.inputs[0]  # (linalg.fill may cast it: then not the element itself)
        return number if number.type == value.type.element_type else None
    if isinstance(owner, BroadcastOp):
        return splat_number(owner.input)
    if isinstance(owner, tensor.ReshapeOp):
        return splat_number(owner.source)
    return None


def is_splat_of(value: SSAValue, number: float) -> bool:
    """`value` is the constant `number`, or a tensor every element of which is
    (`splat_number`, the number a constant). Compared with ==, so 0.0 and -0.0
    are both zero: the callers ask for 1.0 and -1.0, or for zeros an
    accumulation starts from."""
    if isa(value.type, TensorType):
        found = splat_number(value)
        if isinstance(found, SSAValue):
            return is_splat_of(found, number)
        return found is not None and found == number
    owner = value.owner
    return (  # isa: asked of most float ops' operands by irad-optimize's float folds
        isa(owner, arith.ConstantOp)
        and isa(owner.value, (FloatAttr, IntegerAttr))
        and owner.value.value.data == number
    )
