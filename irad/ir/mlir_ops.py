"""The ops of MLIR 22's math and arith dialects that xDSL 0.75 lacks, and the
dialects that hold them beside xDSL's own.

    %e = math.erfc %x : f64
    %s, %c = math.sincos %x : f64
    %y = math.clampf %x to [%lo, %hi] : f64
    %b = math.isfinite %x : f64        (also isinf, isnan, isnormal; i1 results)
    %r = arith.remf %a, %b : f64

`MATH` and `ARITH` are xDSL's dialects plus these ops (any op a later xDSL
defines itself is taken from xDSL). irad's context (irad/ir/dialect.py) loads
them, and irad's universe (irad/universe.py) hands them to stock `xdsl-opt`,
so both parse MLIR 22 math IR. tests/ir/test_mlir_ops.py checks the list
against `mlir-opt` 22 itself.

What each op computes is MLIR's definition as mlir-opt 22 lowers it; in
particular `math.clampf` is `maximumf(minimumf(x, lo), hi)`, which is
how MLIR 22.1 documents and expands it (`--math-expand-ops=ops=clampf`).

`expand_for_llvm` also writes irad's array ops, `irad.cumsum` and
`irad.linear_scan`, as the scf.for loop nests mlir-opt lowers (irad/ir/scan.py).

MLIR 22 lowers `math.isinf` and `math.isnormal` to nothing (no conversion to
LLVM knows them): `expand_for_llvm` rewrites them into comparisons, for
modules handed to mlir-opt (the native backend, `irad-for-mlir-opt`).
"""

from __future__ import annotations

import abc
import math
from typing import ClassVar

from xdsl.dialects import arith as xdsl_arith
from xdsl.dialects import math as xdsl_math
from xdsl.dialects.arith import FastMathFlagsAttr
from xdsl.dialects.builtin import (
    AnyFloat,
    ContainerType,
    Float32Type,
    Float64Type,
    ModuleOp,
    ShapedType,
    TensorType,
    container_of,
    i1,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.printer import Printer
from xdsl.traits import Pure, SameOperandsAndResultType
from xdsl.utils.exceptions import VerifyException

from irad.base.errors import BackendError
from irad.ir.symbols import functions_by_name

__all__ = [
    "ARITH",
    "ClampFOp",
    "ErfcOp",
    "IsFiniteOp",
    "IsInfOp",
    "IsNaNOp",
    "IsNormalOp",
    "MATH",
    "RemFOp",
    "SinCosOp",
    "bool_like",
    "expand_for_llvm",
]

_floating_point_like = container_of(AnyFloat)


@irdl_op_definition
class ErfcOp(xdsl_math.FloatingPointLikeUnaryMathOperation):
    """The complementary error function, 1 - erf(x), without the cancellation."""

    name = "math.erfc"
    traits = traits_def(Pure(), SameOperandsAndResultType())


@irdl_op_definition
class SinCosOp(IRDLOperation):
    """The sine and the cosine of one operand: `%s, %c = math.sincos %x : f64`."""

    name = "math.sincos"
    T: ClassVar = VarConstraint("T", _floating_point_like)
    operand = operand_def(T)
    sin = result_def(T)
    cos = result_def(T)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    traits = traits_def(Pure())
    assembly_format = "$operand (`fastmath` `` $fastmath^)? attr-dict `:` type($operand)"

    def __init__(self, operand: Operation | SSAValue, fastmath: FastMathFlagsAttr | None = None):
        operand = SSAValue.get(operand)
        super().__init__(
            operands=[operand], result_types=[operand.type, operand.type], properties={"fastmath": fastmath}
        )


@irdl_op_definition
class ClampFOp(IRDLOperation):
    """`math.clampf %x to [%lo, %hi]`: MLIR 22.1 defines and lowers it as
    maximumf(minimumf(x, lo), hi)."""

    name = "math.clampf"
    T: ClassVar = VarConstraint("T", _floating_point_like)
    value = operand_def(T)
    min = operand_def(T)
    max = operand_def(T)
    result = result_def(T)
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    traits = traits_def(Pure())
    assembly_format = (
        "$value `to` ` ` `[` $min `,` $max `]` (`fastmath` `` $fastmath^)? attr-dict `:` type($result)"
    )

    def __init__(self, value: SSAValue, lo: SSAValue, hi: SSAValue, fastmath: FastMathFlagsAttr | None = None):
        super().__init__(
            operands=[value, lo, hi], result_types=[SSAValue.get(value).type], properties={"fastmath": fastmath}
        )


def bool_like(type_: Attribute) -> Attribute:
    """i1, or the container of `type_`'s shape holding i1 (a float's test result)."""
    if isinstance(type_, ContainerType) and isinstance(type_, ShapedType):
        return type(type_)(i1, type_.get_shape())  # tensor<3xf64> -> tensor<3xi1>
    return i1


class FloatClassOp(IRDLOperation, abc.ABC):
    """A test of a float's class (finite, inf, NaN, normal), elementwise: i1 results."""

    operand = operand_def(_floating_point_like)
    result = result_def()
    fastmath = prop_def(FastMathFlagsAttr, default_value=FastMathFlagsAttr("none"))
    traits = traits_def(Pure())

    def __init__(self, operand: Operation | SSAValue, fastmath: FastMathFlagsAttr | None = None):
        operand = SSAValue.get(operand)
        super().__init__(
            operands=[operand], result_types=[bool_like(operand.type)], properties={"fastmath": fastmath}
        )

    def verify_(self) -> None:
        expected = bool_like(self.operand.type)
        if self.result.type != expected:
            raise VerifyException(
                f"'{self.name}' op result type {self.result.type} does not match its "
                f"operand's: expected {expected}"
            )

    # MLIR's syntax, `math.isnan %x {fastmath = #arith.fastmath<fast>} : f64`: the
    # result type follows from the operand's (InferTypeOpInterface in MLIR), and
    # the flags, when set, print in the attribute dictionary.
    @classmethod
    def parse(cls, parser: Parser) -> FloatClassOp:
        operand = parser.parse_unresolved_operand()
        attributes = parser.parse_optional_attr_dict()
        fastmath = attributes.pop("fastmath", None)
        if fastmath is not None and not isinstance(fastmath, FastMathFlagsAttr):
            parser.raise_error(f"'{cls.name}' expects fastmath flags, got {fastmath}")
        parser.parse_punctuation(":")
        type_ = parser.parse_type()
        op = cls(parser.resolve_operand(operand, type_), fastmath)
        op.attributes.update(attributes)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.operand)
        shown = dict(self.attributes)
        if self.fastmath != FastMathFlagsAttr("none"):
            shown = {"fastmath": self.fastmath, **shown}
        printer.print_op_attributes(shown)
        printer.print_string(" : ")
        printer.print_attribute(self.operand.type)


@irdl_op_definition
class IsFiniteOp(FloatClassOp):
    name = "math.isfinite"


@irdl_op_definition
class IsInfOp(FloatClassOp):
    name = "math.isinf"


@irdl_op_definition
class IsNaNOp(FloatClassOp):
    name = "math.isnan"


@irdl_op_definition
class IsNormalOp(FloatClassOp):
    name = "math.isnormal"


@irdl_op_definition
class RemFOp(xdsl_arith.FloatingPointLikeBinaryOperation):
    """The remainder of a / b with the sign of a (C `fmod`)."""

    name = "arith.remf"
    traits = traits_def(Pure())


def _extended(dialect: Dialect, extra: list[type[IRDLOperation]]) -> Dialect:
    """`dialect` plus the ops of `extra` it does not define itself."""
    known = {op.name for op in dialect.operations}
    ops = [*dialect.operations, *(op for op in extra if op.name not in known)]
    return Dialect(dialect.name, ops, list(dialect.attributes))


MATH_OPS: list[type[IRDLOperation]] = [ErfcOp, SinCosOp, ClampFOp, IsFiniteOp, IsInfOp, IsNaNOp, IsNormalOp]
ARITH_OPS: list[type[IRDLOperation]] = [RemFOp]

MATH = _extended(xdsl_math.Math, MATH_OPS)
ARITH = _extended(xdsl_arith.Arith, ARITH_OPS)


# ---- what MLIR 22 cannot lower to LLVM ---------------------------------------------
SMALLEST_NORMAL = {Float64Type: 2.2250738585072014e-308, Float32Type: 1.1754943508222875e-38}


def _magnitude_test(rewriter: PatternRewriter, op: FloatClassOp, bounds: list[tuple[str, float]]) -> None:
    """Replace `op` by the conjunction of `cmpf predicate, |x|, bound` over
    `bounds`; on tensors inside a linalg.generic (xDSL's arith.cmpf is scalar)."""
    from irad.ir.constants import float_constant

    def test(e, x: SSAValue) -> SSAValue:
        absolute = e.op(xdsl_math.AbsFOp(x))
        result = None
        for predicate, bound in bounds:
            compare = e.op(xdsl_arith.CmpfOp(absolute, e.op(float_constant(bound, x.type)), predicate))
            result = compare if result is None else e.op(xdsl_arith.AndIOp(result, compare))
        return result

    _replace_elementwise(rewriter, op, test, i1, "piecewise-constant")


def _replace_elementwise(rewriter: PatternRewriter, op: Operation, scalar, result_element: Attribute, kind: str) -> None:
    """Replace the unary `op` by the ops `scalar(builder, x)` emits, on its
    scalar operand, or on each element of its tensor operand (a linalg.generic)."""
    from irad.ir import tensor as T  # here: it imports linalg, which parsing math must not
    from irad.ir.builder import IRBuilder

    b = IRBuilder(Block())
    x = op.operands[0]
    if isinstance(x.type, TensorType):
        result = T.elementwise(b, lambda e, args: scalar(e, args[0]), [x], result_element, kind)
    else:
        result = scalar(b, x)
    ops = list(b.block.ops)
    for new in ops:
        new.detach()
    rewriter.replace(op, ops, [result])
    for new in ops:  # only the result takes the op's name
        for value in new.results:
            if value is not result:
                value.name_hint = None


class _ExpandIsInf(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IsInfOp, rewriter: PatternRewriter) -> None:
        _magnitude_test(rewriter, op, [("oeq", math.inf)])


class _ExpandIsNormal(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IsNormalOp, rewriter: PatternRewriter) -> None:
        element = op.operand.type.element_type if isinstance(op.operand.type, TensorType) else op.operand.type
        tiny = SMALLEST_NORMAL.get(type(element))
        if tiny is not None:  # ordered comparisons: NaN is not normal
            _magnitude_test(rewriter, op, [("oge", tiny), ("olt", math.inf)])


# libm's names of expm1, by element type
LIBM_EXPM1 = {Float64Type: "expm1", Float32Type: "expm1f"}


class _Expm1ToLibm(RewritePattern):
    """math.expm1 as a call of libm's expm1. MLIR 22's --convert-math-to-llvm
    lowers it to exp(x) - 1, with no option to keep it, which loses the digits
    expm1 exists for: expm1(1e-10) came out 8e-8 relatively off, expm1(1e-20)
    as 0. (log1p, lowered to log(1 + x) the same way, has an option:
    `approximate-log1p=false`, in the native backend's LOWERING.)"""

    def __init__(self, declare):
        self.declare = declare  # the callee's name, for its element type -> None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: xdsl_math.ExpM1Op, rewriter: PatternRewriter) -> None:
        from xdsl.dialects import func

        x = op.operand
        element = x.type.element_type if isinstance(x.type, TensorType) else x.type
        name = LIBM_EXPM1.get(type(element))
        if name is None:
            return
        self.declare(name, element)

        def call(e, v: SSAValue) -> SSAValue:
            return e.op(func.CallOp(name, [v], [element]))

        _replace_elementwise(rewriter, op, call, element, "other")


def expand_for_llvm(module: ModuleOp) -> None:
    """Rewrite, in place, the ops MLIR 22 lowers to nothing, or inaccurately,
    into ops it lowers well: math.isinf(x) = |x| == inf; math.isnormal(x) =
    tiny <= |x| < inf; math.expm1 a call of libm's expm1 (declared here);
    irad.cumsum and irad.linear_scan their loop nests (irad/ir/scan.py)."""
    from xdsl.dialects import func

    from irad.ir.scan import expand_scans

    expand_scans(module)

    declared: dict[str, Attribute] = {}
    patterns = [_ExpandIsInf(), _ExpandIsNormal(), _Expm1ToLibm(declared.setdefault)]
    PatternRewriteWalker(GreedyRewritePatternApplier(patterns)).rewrite_module(module)
    existing = functions_by_name(module)
    for name, element in declared.items():
        if name in existing:
            # the native backend renames irad's functions apart (native.namespace_symbols);
            # a hand-written module (irad-for-mlir-opt) may still define the name
            if not existing[name].is_declaration:
                raise BackendError(
                    f"the module defines a function @{name}, the name of the libm function that computes "
                    f"math.expm1 natively\n  hint: rename the function @{name}"
                )
            continue
        module.body.block.add_op(func.FuncOp.external(name, [element], [element]))
