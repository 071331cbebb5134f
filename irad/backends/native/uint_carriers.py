"""numpy's uint dtypes for mlir-opt: each carrier narrowed to its dtype.

irad's IR holds a uint8 array in i9 (irad/ir/types.py): one bit wider than
the dtype, so its values are non-negative, the signed ops mean the unsigned
ones, and `+ - *` are masked to 8 bits. numpy's array holds uint8 in one
byte, so the copy of a module for mlir-opt narrows every carrier to the
dtype's width (i9 -> i8, i17 -> i16, i33 -> i32) and, where the two readings
differ, gives the op its unsigned form: `cmpi slt` -> `ult`, floordivsi and
divsi -> divui, remsi -> remui, maxsi/minsi -> maxui/minui, extsi -> extui,
sitofp -> uitofp. Constants keep their low bits (255 : i9 is -1 : i8), and
the masks become `andi` with all ones.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.rewriter import Rewriter

from irad.ir.constants import dense_attr
from irad.ir.types import is_uint

# signed op -> its unsigned form, on operands of a carrier
_BINARY = {
    arith.FloorDivSIOp: arith.DivUIOp, arith.DivSIOp: arith.DivUIOp, arith.RemSIOp: arith.RemUIOp,
    arith.MaxSIOp: arith.MaxUIOp, arith.MinSIOp: arith.MinUIOp, arith.CeilDivSIOp: arith.CeilDivUIOp,
}
_CASTS = {arith.ExtSIOp: arith.ExtUIOp, arith.SIToFPOp: arith.UIToFPOp}
_UNSIGNED_PREDICATES = {2: 6, 3: 7, 4: 8, 5: 9}  # slt, sle, sgt, sge -> ult, ule, ugt, uge


def narrow_carriers(module: ModuleOp) -> None:
    """Narrow every uint carrier of `module` to its dtype's width, in place."""
    for op in list(module.walk()):
        operand = _element(op.operands[0].type) if op.operands else None
        if operand is not None and is_uint(operand):
            _unsigned_form(op)
    for op in module.walk():
        for v in op.results:
            if _narrow(v.type) is not v.type:
                Rewriter.replace_value_with_new_type(v, _narrow(v.type))
        for region in op.regions:
            for block in region.blocks:
                for v in block.args:
                    if _narrow(v.type) is not v.type:
                        Rewriter.replace_value_with_new_type(v, _narrow(v.type))
        for attrs in (op.properties, op.attributes):
            for name, attr in list(attrs.items()):
                new = _narrow_attribute(attr)
                if new is not attr:
                    attrs[name] = new


def _unsigned_form(op: Operation) -> None:
    if type(op) in _BINARY:
        Rewriter.replace_op(op, _BINARY[type(op)](op.operands[0], op.operands[1]))
    elif type(op) in _CASTS:
        Rewriter.replace_op(op, _CASTS[type(op)](op.operands[0], op.results[0].type))
    elif isinstance(op, arith.CmpiOp) and op.predicate.value.data in _UNSIGNED_PREDICATES:
        op.properties["predicate"] = IntegerAttr(_UNSIGNED_PREDICATES[op.predicate.value.data], i64)


def _element(t: Attribute) -> Attribute:
    return t.element_type if isinstance(t, (TensorType, MemRefType)) else t


def _narrow(t: Attribute) -> Attribute:
    if is_uint(t):
        return IntegerType(t.width.data - 1)
    if isinstance(t, TensorType) and is_uint(t.element_type):
        return TensorType(_narrow(t.element_type), t.get_shape(), t.encoding)
    if isinstance(t, MemRefType) and is_uint(t.element_type):
        return MemRefType(_narrow(t.element_type), t.get_shape(), t.layout, t.memory_space)
    return t


def _narrow_attribute(attr: Attribute) -> Attribute:
    if isinstance(attr, IntegerAttr) and is_uint(attr.type):
        return IntegerAttr(_low_bits(attr.value.data, attr.type.width.data - 1), _narrow(attr.type))
    if isinstance(attr, DenseIntOrFPElementsAttr) and is_uint(attr.type.element_type):
        width = attr.type.element_type.width.data - 1
        return dense_attr([_low_bits(v, width) for v in attr.get_values()], _narrow(attr.type))  # a splat stays one number
    if isinstance(attr, FunctionType):
        inputs, outputs = [_narrow(t) for t in attr.inputs.data], [_narrow(t) for t in attr.outputs.data]
        if inputs != list(attr.inputs.data) or outputs != list(attr.outputs.data):
            return FunctionType.from_lists(inputs, outputs)
    return _narrow(attr)


def _low_bits(value: int, width: int) -> int:
    """The signed reading of `value`'s low `width` bits."""
    value %= 1 << width
    return value - (1 << width) if value >= 1 << (width - 1) else value
