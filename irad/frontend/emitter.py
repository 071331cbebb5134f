"""Appends ops to a block, with the numeric conversions Python semantics need."""

from __future__ import annotations

from xdsl.dialects import arith, cf, func
from xdsl.dialects.builtin import Float64Type, IntegerAttr, UnitAttr
from xdsl.ir import Attribute, Block, SSAValue

from irad.ir.builder import IRBuilder, constant, float_attr
from irad.ir.types import F64, I1, I64, is_bool, is_float, is_tensor

# on a float constant made of an int literal (`2` in `n * 2`): Python's int, which
# irad/frontend/number_joins.py tells from a float literal; dropped after lowering
INT_LITERAL = "irad.int_literal"


def can_raise(block: Block) -> bool:
    """Can running `block` raise: a check (an assert, a bound, a `raise`) or a
    call (whose callee may check)? Code Python may skip (a branch that changes no
    variable, an operand of `and`/`or`) is kept, or run only where Python runs it."""
    return any(isinstance(op, (cf.AssertOp, func.CallOp)) for op in block.walk())


class Emitter(IRBuilder):
    """Builds straight-line code at the end of one block."""

    def __init__(self, block: Block):
        super().__init__(block)

    def const(self, value, type: Attribute) -> SSAValue:
        if is_tensor(type):  # a numpy array (or a splat of one number)
            from irad.ir.tensor import dense

            return dense(self, value, type)
        if is_float(type):
            return self.op(constant(float_attr(value, type), type))
        return self.op(constant(IntegerAttr(int(value), type), type))

    def to_float(self, v: SSAValue, type: Attribute = F64) -> SSAValue:
        """Promote an int or bool to float, as Python does in mixed arithmetic."""
        if is_float(v.type):
            if v.type == type:
                return v
            narrowing = isinstance(v.type, Float64Type)  # f64 -> f32 (the loop joins types)
            return self.op((arith.TruncFOp if narrowing else arith.ExtFOp)(v, type))
        owner = v.owner
        if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
            literal = owner.value.value.data
            if is_bool(v.type):
                literal = literal != 0  # i1 true may be stored as -1
            widened = self.const(literal, type)  # a literal needs no conversion op
            widened.owner.attributes[INT_LITERAL] = UnitAttr()
            return widened
        if is_bool(v.type):
            return self.op(arith.UIToFPOp(v, type))
        return self.op(arith.SIToFPOp(v, type))

    def explicit_float(self, v: SSAValue, type: Attribute = F64) -> SSAValue:
        """float(v), np.float64(v): v as a float, a new value even where v is one
        (v + -0.0, which is v for every float, -0.0 included), so that
        irad/frontend/held_ints.py, which follows ints irad holds as floats, can
        tell the float the program asked for from v."""
        return self.op(arith.AddfOp(self.to_float(v, type), self.const(-0.0, type)))

    def to_int(self, v: SSAValue) -> SSAValue:
        """bool -> int (Python's True == 1)."""
        if is_bool(v.type):
            return self.op(arith.ExtUIOp(v, I64))
        return v

    def to_bool(self, v: SSAValue) -> SSAValue:
        """Python truthiness of a number: x != 0."""
        if is_bool(v.type):
            return v
        if is_float(v.type):
            zero = self.const(0.0, v.type)
            return self.op(arith.CmpfOp(v, zero, "une"))
        zero = self.const(0, v.type)
        return self.op(arith.CmpiOp(v, zero, "ne"))

    def unify(self, a: SSAValue, b: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Bring two numbers to a common type (float wins, then int)."""
        if is_float(a.type) or is_float(b.type):
            ftype = a.type if is_float(a.type) else b.type
            if is_float(a.type) and is_float(b.type) and a.type != b.type:
                ftype = F64
            return self.to_float(a, ftype), self.to_float(b, ftype)
        return self.to_int(a), self.to_int(b)


__all__ = ["Emitter", "F64", "I1", "I64"]
