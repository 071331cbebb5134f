"""Constants of scalar or tensor type (a tensor gets a splat `dense<v>`)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute

from irad.ir.builder import constant, float_attr


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
