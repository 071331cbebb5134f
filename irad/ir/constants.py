"""Constants of scalar or tensor type (a tensor gets a splat `dense<v>`), and
the one recogniser of tensors made of one number."""

from __future__ import annotations

import math

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.dialects.linalg.ops import BroadcastOp
from xdsl.ir import Attribute, SSAValue

from irad.ir.builder import constant, float_attr
from irad.ir.isa import isa


def float_constant(value: float, type: Attribute) -> arith.ConstantOp:
    if isinstance(type, TensorType):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type, [float(value)]))
    return constant(float_attr(value, type), type)


def zero_constant(type: Attribute) -> arith.ConstantOp:
    """0 of any float, integer or index type, or a tensor of them."""
    element = type.element_type if isinstance(type, TensorType) else type
    if isinstance(element, (Float32Type, Float64Type)):
        return float_constant(0.0, type)
    if isinstance(type, TensorType):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type, [0]))
    return arith.ConstantOp(IntegerAttr(0, type))


# the ops `splat_number` looks through: one of them defines a tensor made of one number
# (patterns that match on such an operand declare them as their `operand_from`)
SPLAT_SOURCES = (arith.ConstantOp, tensor.SplatOp, tensor.InsertOp, BroadcastOp, tensor.ReshapeOp)


def splat_number(value: SSAValue) -> SSAValue | float | int | None:
    """The number every element of tensor `value` is, if it is made of one: a
    splat dense constant (the number itself; not NaN, not an empty tensor), a
    tensor.splat, the whole of a rank-0 tensor written by tensor.insert (how a
    gradient's seed and a scalar's cotangent become tensors; the scalar SSA
    value), and broadcasts and reshapes of those. None otherwise, and for a
    value that is not a tensor."""
    if not isinstance(value.type, TensorType):
        return None
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            return None
        first = next(iter(attr.iter_values()), None)
        if first is None or (isinstance(first, float) and math.isnan(first)) or not attr.is_splat():
            return None
        return first
    if isinstance(owner, tensor.SplatOp):
        return owner.input
    if isinstance(owner, tensor.InsertOp):
        return None if owner.indices else owner.scalar
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
