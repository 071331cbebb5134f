"""Float constants of scalar or tensor type (a tensor gets a splat `dense<v>`)."""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FloatAttr, TensorType
from xdsl.ir import Attribute


def float_constant(value: float, type: Attribute) -> arith.ConstantOp:
    if isinstance(type, TensorType):
        return arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type, [float(value)]))
    return arith.ConstantOp(FloatAttr(value, type))
