"""The one builder irad's emitters share: xDSL's `Builder` plus a small vocabulary.

xDSL's Builder keeps the insertion point (the end of a block, or before an op)
and its listeners. On top, `op(...)` inserts an op and returns its single
result, `results(...)` all of them, `block` moves the insertion point to the
end of another block, and the float arithmetic the derivative rules are
written against (`b.add(...)`, `b.mul(...)`, ...). The frontend's Emitter,
reverse mode's builders, forward mode's TangentBuilder and the tape code all
build on it; they differ in where constants go and what `primal(v)` means.
"""

from __future__ import annotations

from xdsl.builder import Builder
from collections.abc import Sequence

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import UNKNOWN_LOC, FloatAttr, FunctionType, IndexType, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint


class IRBuilder(Builder):
    # builders are compared and hashed by identity (xDSL's dataclass compares fields)
    __eq__ = object.__eq__
    __hash__ = object.__hash__

    def __init__(self, block: Block | None = None, before: Operation | None = None):
        if before is not None:
            super().__init__(InsertPoint.before(before))
        else:
            super().__init__(InsertPoint.at_end(block if block is not None else Block()))

    @property
    def block(self) -> Block:
        return self.insertion_point.block

    @block.setter
    def block(self, block: Block) -> None:
        self.insertion_point = InsertPoint.at_end(block)

    def op(self, op: Operation) -> SSAValue | None:
        """Insert `op`; return its single result (or None if it has none)."""
        self.insert(op)
        return op.results[0] if op.results else None

    def results(self, op: Operation) -> tuple[SSAValue, ...]:
        self.insert(op)
        return tuple(op.results)

    def value(self, op: Operation) -> SSAValue:
        return self.insert(op).results[0]

    def index(self, n: int) -> SSAValue:
        return self.value(arith.ConstantOp.from_int_and_width(n, IndexType()))

    def const(self, value: float, type: Attribute) -> SSAValue:
        raise NotImplementedError

    def zero(self, type: Attribute) -> SSAValue:
        return self.const(0.0, type)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(float_op(arith.AddfOp, a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(float_op(arith.SubfOp, a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(float_op(arith.MulfOp, a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(float_op(arith.DivfOp, a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self.value(float_op(arith.NegfOp, a))

    def math(self, op_type: type[Operation], *operands: SSAValue) -> SSAValue:
        """`op_type(*operands)` for a float op of the math dialect (math.cos,
        math.powf, ...), made as `float_op` makes it: derivative rules make them
        by the thousand."""
        return self.value(float_op(op_type, *operands))


_NO_FAST_MATH = arith.FastMathFlagsAttr("none")


def float_op(op_type: type[Operation], *operands: SSAValue) -> Operation:
    """`op_type(*operands)` for float arithmetic (arith's addf, ..., math's sin,
    ...: no fastmath flags, the result of the first operand's type), the op its
    constructor builds, made without the constructor's generic argument handling
    (4x the cost, and the frontend and reverse mode make these ops by the thousand)."""
    return op_type.create(
        operands=operands,
        result_types=[operands[0].type],
        properties={"fastmath": _NO_FAST_MATH},
        location=UNKNOWN_LOC,  # what create would look up (with an import) per op
    )


def constant(value: Attribute, type: Attribute) -> arith.ConstantOp:
    """`arith.ConstantOp(value)` of a scalar `value` of `type`, made as `float_op` makes ops."""
    return arith.ConstantOp.create(result_types=[type], properties={"value": value}, location=UNKNOWN_LOC)


_FLOAT_ATTRS: dict[tuple[str, Attribute], FloatAttr] = {}


def float_attr(value: float, type: Attribute) -> FloatAttr:
    """`FloatAttr(value, type)`, made (and verified) once per value and type:
    a program's constants repeat (0.0, 1.0, its literals), and attributes are
    immutable. Keyed by the bits (`hex`, so 0.0 and -0.0 differ); NaNs, whose
    payloads `hex` does not show, are not kept."""
    value = float(value)
    if value != value:
        return FloatAttr(value, type)
    key = (value.hex(), type)
    found = _FLOAT_ATTRS.get(key)
    if found is None:
        if len(_FLOAT_ATTRS) >= 4096:  # bounded: a long session compiles many programs
            _FLOAT_ATTRS.clear()
        found = _FLOAT_ATTRS[key] = FloatAttr(value, type)
    return found


def call(callee: str, operands: Sequence[SSAValue], result_types: Sequence[Attribute]) -> func.CallOp:
    """`func.CallOp(callee, operands, result_types)`, made as `float_op` makes ops."""
    return func.CallOp.create(
        operands=operands,
        result_types=result_types,
        properties={"callee": SymbolRefAttr(callee)},
        location=UNKNOWN_LOC,
    )


_PRIVATE = StringAttr("private")
_FUNCTION_TYPES: dict[tuple[tuple[Attribute, ...], tuple[Attribute, ...]], FunctionType] = {}


def private_function(name: str, block: Block, outputs: Sequence[Attribute]) -> func.FuncOp:
    """`func.FuncOp(name, (block's argument types, outputs), Region(block),
    visibility="private")`, made as `float_op` makes ops, its FunctionType made
    (and verified) once per signature: the frontend makes one per function
    lowered, and a program's functions share a few signatures."""
    key = (tuple(block.arg_types), tuple(outputs))
    function_type = _FUNCTION_TYPES.get(key)
    if function_type is None:
        if len(_FUNCTION_TYPES) >= 4096:  # bounded, as float_attr's
            _FUNCTION_TYPES.clear()
        function_type = _FUNCTION_TYPES[key] = FunctionType.from_lists(*key)
    return func.FuncOp.create(
        properties={"sym_name": StringAttr(name), "function_type": function_type, "sym_visibility": _PRIVATE},
        regions=[Region(block)],
        location=UNKNOWN_LOC,
    )


def return_op(*values: SSAValue) -> func.ReturnOp:
    """`func.ReturnOp(*values)`, made as `float_op` makes ops."""
    return func.ReturnOp.create(operands=values, location=UNKNOWN_LOC)


def clone(op: Operation, value_mapper: dict[SSAValue, SSAValue]) -> Operation:
    """`op.clone(value_mapper=...)`: for an op without regions, xDSL's clone
    makes it with no operands and then sets them, where `clone_without_regions`
    makes it once with its operands (a third of the cost of cloning)."""
    if op.regions:
        return op.clone(value_mapper=value_mapper)
    return op.clone_without_regions(value_mapper)
