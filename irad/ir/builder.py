"""Emitting float arithmetic into the block being built.

The base of the builders the derivative rules in passes/derivatives/ are
written against (`b.add(...)`, `b.mul(...)`, ...): reverse mode's
PullbackBuilder and forward mode's TangentBuilder differ only in where
constants go and what `primal(v)` means.
"""

from __future__ import annotations

from xdsl.dialects import arith
from xdsl.ir import Attribute, Block, Operation, SSAValue


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
