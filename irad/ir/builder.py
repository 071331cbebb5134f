"""Emitting ops into the block being built.

`ArithBuilder` is the base of the builders the derivative rules in
passes/adjoints.py are written against (`b.add(...)`, `b.mul(...)`, ...):
reverse mode's PullbackBuilder and forward mode's TangentBuilder differ only in
where constants go and what `primal(v)` means. `Cursor` emits at a fixed place
(the end of a block, or before one of its ops), as the tape code does.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Block, Operation, SSAValue


class Cursor:
    """Appends ops to a block, or inserts them before an op of it. Also the `b`
    of irad/ir/tensor.py."""

    def __init__(self, block: Block, before: Operation | None = None):
        self.block, self.before = block, before

    def add(self, op: Operation) -> Operation:
        if self.before is None:
            self.block.add_op(op)
        else:
            self.block.insert_op_before(op, self.before)
        return op

    def op(self, op: Operation) -> SSAValue | None:
        self.add(op)
        return op.results[0] if op.results else None

    def value(self, op: Operation) -> SSAValue:
        return self.add(op).results[0]

    def index(self, n: int) -> SSAValue:
        return self.value(arith.ConstantOp.from_int_and_width(n, IndexType()))


class ArithBuilder:
    block: Block

    def op(self, op: Operation) -> SSAValue:
        self.block.add_op(op)
        return op.results[0] if op.results else None

    def const(self, value: float, type: Attribute) -> SSAValue:
        raise NotImplementedError

    def zero(self, type: Attribute) -> SSAValue:
        return self.const(0.0, type)

    def add(self, a, b):
        return self.op(arith.AddfOp(a, b))

    def sub(self, a, b):
        return self.op(arith.SubfOp(a, b))

    def mul(self, a, b):
        return self.op(arith.MulfOp(a, b))

    def div(self, a, b):
        return self.op(arith.DivfOp(a, b))

    def neg(self, a):
        return self.op(arith.NegfOp(a))
