"""numpy's uint dtypes for mlir-opt: ui8 ... ui64 become i8 ... i64.

irad's IR types a uint8 array `tensor<...xui8>` (irad/ir/types.py), and the
frontend emits the unsigned op wherever signedness matters (divui, cmpi ult,
extui, uitofp, maxui; irad/frontend/narrow_ints.py checks it), so the type's
`u` says nothing the ops do not. MLIR's arith wants signless ints: the copy
of a module for mlir-opt drops the `u` of every type and constant, keeping
each constant's bits (200 : ui8 is -56 : i8).
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.rewriter import Rewriter


def drop_unsigned(module: ModuleOp) -> None:
    """Make every unsigned int type of `module` signless, in place."""
    for op in module.walk():
        for v in op.results:
            if _signless(v.type) is not v.type:
                Rewriter.replace_value_with_new_type(v, _signless(v.type))
        for region in op.regions:
            for block in region.blocks:
                for v in block.args:
                    if _signless(v.type) is not v.type:
                        Rewriter.replace_value_with_new_type(v, _signless(v.type))
        for attrs in (op.properties, op.attributes):
            for name, attr in list(attrs.items()):
                new = _signless_attribute(attr)
                if new is not attr:
                    attrs[name] = new


def _signless(t: Attribute) -> Attribute:
    if isinstance(t, IntegerType) and t.signedness.data == Signedness.UNSIGNED:
        return IntegerType(t.width.data)
    if isinstance(t, TensorType) and _signless(t.element_type) is not t.element_type:
        return TensorType(_signless(t.element_type), t.get_shape(), t.encoding)
    if isinstance(t, MemRefType) and _signless(t.element_type) is not t.element_type:
        return MemRefType(_signless(t.element_type), t.get_shape(), t.layout, t.memory_space)
    return t


def _signless_attribute(attr: Attribute) -> Attribute:
    if isinstance(attr, IntegerAttr) and _signless(attr.type) is not attr.type:
        return IntegerAttr(_signed_bits(attr.value.data, attr.type.width.data), _signless(attr.type))
    if isinstance(attr, DenseIntOrFPElementsAttr) and _signless(attr.type) is not attr.type:
        width = attr.type.element_type.width.data
        return DenseIntOrFPElementsAttr.from_list(_signless(attr.type),
                                                  [_signed_bits(v, width) for v in attr.get_values()])
    if isinstance(attr, FunctionType):
        inputs, outputs = [_signless(t) for t in attr.inputs.data], [_signless(t) for t in attr.outputs.data]
        if inputs != list(attr.inputs.data) or outputs != list(attr.outputs.data):
            return FunctionType.from_lists(inputs, outputs)
    return _signless(attr)


def _signed_bits(value: int, width: int) -> int:
    """The signed reading of `value`'s low `width` bits."""
    value %= 1 << width
    return value - (1 << width) if value >= 1 << (width - 1) else value
