"""
Float folds that xDSL's canonicalization lacks, each exact under IEEE 754.

A fold here gives, for every input including NaN, infinities and signed zeros, the
value the unfolded IR computes at run time; only the sign and payload of a NaN may
differ, which IEEE 754 leaves unspecified. Folds that are exact only under fastmath
flags (`x + 0.0`, `x - x`, ...) fire only when the op carries those flags.
docs/optimisation.md lists every fold and every fold deliberately not done.

Constants are folded for scalar `FloatAttr` constants only; dense (tensor)
constants are left alone. Only `x * 1.0` and `x / 1.0` (and -1.0) also see a tensor
of one number as the constant, which leaves `x` (or `negf x`) with x's own type. A
`negf` a fold creates carries no fastmath flags: a sign flip is exact, and dropping
flags only makes an op more defined.
"""

import inspect
import math as libm
from collections.abc import Callable
from types import UnionType
from typing import Union, get_args, get_origin

import numpy as np

from xdsl.context import Context
from xdsl.dialects import arith, builtin, tensor
from xdsl.dialects.builtin import (
    BoolAttr,
    FloatAttr,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
)
from xdsl.dialects.linalg.ops import BroadcastOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from irad.ir import ieee

_NNAN = arith.FastMathFlag.NO_NANS
_NSZ = arith.FastMathFlag.NO_SIGNED_ZEROS

# Significand bits (with the implicit bit) of the float types integers convert to.
_SIGNIFICAND_BITS: dict[type, int] = {Float32Type: 24, Float64Type: 53}


# The patterns read operands as `op.operands`, not through xDSL's named accessors
# (`op.lhs`): those cost several times as much, and the canonicalization walk
# runs these patterns at every float op of a module.
#
# `operand_from` names the op types one of which must define an operand of the op
# for a pattern to rewrite it (a constant for the constant folds): irad-optimize
# tries a pattern only on ops that have such an operand (passes/optimize.py).


def _float_constant(value: SSAValue) -> float | None:
    """The value of a scalar float `arith.constant`, or None."""
    if isinstance(op := value.owner, arith.ConstantOp) and isinstance(
        attr := op.value, FloatAttr
    ):
        return attr.value.data
    return None


def _is_constant(value: SSAValue, expected: float) -> bool:
    """Whether `value` is the float constant `expected`, telling -0.0 from +0.0."""
    c = _float_constant(value)
    return (
        c is not None
        and c == expected
        and libm.copysign(1.0, c) == libm.copysign(1.0, expected)
    )


def is_everywhere(value: SSAValue, expected: float) -> bool:
    """`value` is the float constant `expected`, or a tensor every element of
    which is: a splat dense constant, a tensor.splat of the constant, the whole
    of a rank-0 tensor written by tensor.insert (how a gradient's seed becomes a
    tensor), or a broadcast or reshape of one of those."""
    if not isinstance(value.type, builtin.TensorType):
        return _is_constant(value, expected)
    op = value.owner
    name = op.name if isinstance(op, Operation) else None
    if name == "arith.constant" and isinstance(attr := op.value, builtin.DenseIntOrFPElementsAttr):
        first = next(iter(attr.iter_values()), None)
        return (
            isinstance(first, float)
            and first == expected
            and libm.copysign(1.0, first) == libm.copysign(1.0, expected)
            and attr.is_splat()
        )
    if name == "tensor.insert" and not op.indices:
        return _is_constant(op.scalar, expected)
    if name == "tensor.splat":
        return _is_constant(op.input, expected)
    if name in ("linalg.broadcast", "tensor.reshape"):
        return is_everywhere(op.operands[0], expected)
    return False


# the ops `is_everywhere` looks through: one of them defines a constant tensor operand
ONES_FROM = (arith.ConstantOp, tensor.SplatOp, tensor.InsertOp, BroadcastOp, tensor.ReshapeOp)


def _constant(value: float, type: builtin.AnyFloat) -> arith.ConstantOp:
    return arith.ConstantOp(FloatAttr(value, type))


class MulfByOne(RewritePattern):
    """`x * 1.0 -> x` and `x * -1.0 -> negf x`, the constant on either side; on
    tensors too, where the constant is a tensor of ones (`is_everywhere`: a
    gradient's seed times the cotangent of a sum)."""

    operand_from = ONES_FROM

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MulfOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        for c, x in ((rhs, lhs), (lhs, rhs)):
            if is_everywhere(c, 1.0):
                rewriter.replace(op, (), (x,))
                return
            if is_everywhere(c, -1.0):
                rewriter.replace(op, arith.NegfOp(x))
                return


class DivfByOne(RewritePattern):
    """`x / 1.0 -> x` and `x / -1.0 -> negf x` (on tensors too, as MulfByOne)."""

    operand_from = ONES_FROM

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.DivfOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        if is_everywhere(rhs, 1.0):
            rewriter.replace(op, (), (lhs,))
        elif is_everywhere(rhs, -1.0):
            rewriter.replace(op, arith.NegfOp(lhs))


class AddfOfZero(RewritePattern):
    """
    `x + -0.0 -> x`, the constant on either side. With `nsz`, also `x + 0.0 -> x`
    (without it, -0.0 + 0.0 is +0.0, not -0.0).
    """

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        for c, x in ((rhs, lhs), (lhs, rhs)):
            if _is_constant(c, -0.0) or (_NSZ in op.fastmath.data and _is_constant(c, 0.0)):
                rewriter.replace(op, (), (x,))
                return


class SubfOfZero(RewritePattern):
    """
    `x - 0.0 -> x` and `-0.0 - x -> negf x`. With `nsz`, also `x - -0.0 -> x` and
    `0.0 - x -> negf x` (without it, 0.0 - 0.0 is +0.0 where negf 0.0 is -0.0).
    """

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SubfOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        if _is_constant(rhs, 0.0) or (_NSZ in op.fastmath.data and _is_constant(rhs, -0.0)):
            rewriter.replace(op, (), (lhs,))
        elif _is_constant(lhs, -0.0) or (_NSZ in op.fastmath.data and _is_constant(lhs, 0.0)):
            rewriter.replace(op, arith.NegfOp(rhs))


class SubfOfSameOperand(RewritePattern):
    """
    `x - x -> 0.0`, with `nnan` only: inf - inf and nan - nan are NaN.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SubfOp, rewriter: PatternRewriter, /):
        if (
            op.lhs == op.rhs
            and _NNAN in op.fastmath.data
            and isinstance(op.result.type, builtin.AnyFloat)
        ):
            rewriter.replace(op, _constant(0.0, op.result.type))


class MulfByZero(RewritePattern):
    """
    `x * 0.0 -> 0.0`, with `nnan` and `nsz` only: inf * 0.0 is NaN and
    -1.0 * 0.0 is -0.0.
    """

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.MulfOp, rewriter: PatternRewriter, /):
        if not {_NNAN, _NSZ} <= op.fastmath.data:
            return
        for c in (op.rhs, op.lhs):
            if _is_constant(c, 0.0) or _is_constant(c, -0.0):
                rewriter.replace(op, (), (c,))
                return


class AddfOfNegf(RewritePattern):
    """`x + negf y -> x - y`, `negf y` on either side (IEEE defines x - y as x + -y)."""

    operand_from = (arith.NegfOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.AddfOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        for neg, x in ((rhs, lhs), (lhs, rhs)):
            if isinstance(neg.owner, arith.NegfOp):
                rewriter.replace(op, arith.SubfOp(x, neg.owner.operand, op.fastmath))
                return


class SubfOfNegf(RewritePattern):
    """`x - negf y -> x + y`."""

    operand_from = (arith.NegfOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.SubfOp, rewriter: PatternRewriter, /):
        lhs, rhs = op.operands
        if isinstance(neg := rhs.owner, arith.NegfOp):
            rewriter.replace(op, arith.AddfOp(lhs, neg.operand, op.fastmath))


class MulfDivfOfNegfs(RewritePattern):
    """`negf x * negf y -> x * y` and `negf x / negf y -> x / y`."""

    operand_from = (arith.NegfOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.MulfOp | arith.DivfOp, rewriter: PatternRewriter, /
    ):
        a, b = op.operands
        if isinstance(lhs := a.owner, arith.NegfOp) and isinstance(rhs := b.owner, arith.NegfOp):
            rewriter.replace(op, type(op)(lhs.operand, rhs.operand, op.fastmath))


class NegfOfProductWithNegf(RewritePattern):
    """`negf (negf x * y) -> x * y`, and the same for `x * negf y` and for
    divf: one of the product's signs flips twice (rounding is symmetric in
    sign). Only where the negf is the product's one use, so it is not
    computed twice. Reverse mode makes these chains (the adjoint of
    `1 / (1 + exp(-x))` negates twice around a product)."""

    operand_from = (arith.MulfOp, arith.DivfOp)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        inner = op.operand.owner
        if not isinstance(inner, arith.MulfOp | arith.DivfOp) or not op.operand.has_one_use():
            return
        lhs, rhs = inner.lhs, inner.rhs
        if isinstance(lhs.owner, arith.NegfOp):
            lhs = lhs.owner.operand
        elif isinstance(rhs.owner, arith.NegfOp):
            rhs = rhs.owner.operand
        else:
            return
        rewriter.replace(op, type(inner)(lhs, rhs, inner.fastmath))


class NegfOfNegf(RewritePattern):
    """`negf (negf x) -> x`."""

    operand_from = (arith.NegfOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        if isinstance(inner := op.operands[0].owner, arith.NegfOp):
            rewriter.replace(op, (), (inner.operand,))


class NegfOfConstant(RewritePattern):
    """`negf c -> -c`: flips the sign bit, of zeros and NaNs too."""

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.NegfOp, rewriter: PatternRewriter, /):
        if (c := _float_constant(op.operands[0])) is not None:
            assert isinstance(op.result.type, builtin.AnyFloat)
            rewriter.replace(op, _constant(-c, op.result.type))


# The value of `cmpf pred, x, x` where it does not depend on x (NaN or not).
_CMPF_SAME_OPERAND: dict[str, bool] = {
    "ogt": False,
    "olt": False,
    "one": False,
    "ueq": True,
    "uge": True,
    "ule": True,
}


class CmpfOfConstants(RewritePattern):
    """
    `cmpf pred, c1, c2 -> true/false`; also `cmpf pred, x, x` for the predicates
    whose answer is the same for every x, NaN included, and `cmpf false/true`.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: arith.CmpfOp, rewriter: PatternRewriter, /):
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        if predicate in ("false", "true"):
            result = predicate == "true"
        elif op.lhs == op.rhs and predicate in _CMPF_SAME_OPERAND:
            result = _CMPF_SAME_OPERAND[predicate]
        elif (a := _float_constant(op.lhs)) is not None and (
            b := _float_constant(op.rhs)
        ) is not None:
            result = ieee.CMPF[predicate](a, b)
        else:
            return
        rewriter.replace(op, arith.ConstantOp(BoolAttr.from_bool(result)))


def _is_signed_zero_pair(a: float, b: float) -> bool:
    return a == b == 0.0 and libm.copysign(1.0, a) != libm.copysign(1.0, b)


class MinMaxOfConstants(RewritePattern):
    """
    `maximumf`/`minimumf`/`maxnumf`/`minnumf` of two constants. maxnumf and minnumf
    of +0.0 and -0.0 may return either, so those are left alone.
    """

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: arith.MaximumfOp | arith.MinimumfOp | arith.MaxnumfOp | arith.MinnumfOp,
        rewriter: PatternRewriter,
        /,
    ):
        if (a := _float_constant(op.lhs)) is None or (b := _float_constant(op.rhs)) is None:
            return
        # ieee.maxnumf/minnumf pick one zero, as the Python backend does; compiled
        # code may pick the other, so a fold may not.
        if isinstance(op, arith.MaxnumfOp | arith.MinnumfOp) and _is_signed_zero_pair(a, b):
            return
        assert isinstance(op.result.type, builtin.AnyFloat)
        rewriter.replace(op, _constant(ieee.MIN_MAX[op.name](a, b), op.result.type))


_MIN_MAX_IDENTITY: dict[type[Operation], float] = {
    arith.MaximumfOp: -libm.inf,
    arith.MinimumfOp: libm.inf,
}


class MinMaxIdentity(RewritePattern):
    """
    `max(x, x) -> x` and `min(x, x) -> x` for all four, `maximumf(x, -inf) -> x`
    and `minimumf(x, +inf) -> x`. (maxnumf(nan, -inf) is -inf, so that one is not.)
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: arith.MaximumfOp | arith.MinimumfOp | arith.MaxnumfOp | arith.MinnumfOp,
        rewriter: PatternRewriter,
        /,
    ):
        if op.lhs == op.rhs:
            rewriter.replace(op, (), (op.lhs,))
            return
        if (identity := _MIN_MAX_IDENTITY.get(type(op))) is None:
            return
        for c, x in ((op.rhs, op.lhs), (op.lhs, op.rhs)):
            if _float_constant(c) == identity:
                rewriter.replace(op, (), (x,))
                return


def _round_integer(value: int, bits: int) -> int:
    """`value` rounded to `bits` significant bits, ties to even."""
    shift = abs(value).bit_length() - bits
    if shift <= 0:
        return value
    magnitude = builtin.FloatSemantics.round_half_even(abs(value), shift) << shift
    return magnitude if value >= 0 else -magnitude


class IntToFloatOfConstant(RewritePattern):
    """`sitofp c`, `uitofp c` -> the f32/f64 constant nearest c (ties to even)."""

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.SIToFPOp | arith.UIToFPOp, rewriter: PatternRewriter, /
    ):
        if (
            not isinstance(c := op.input.owner, arith.ConstantOp)
            or not isinstance(attr := c.value, IntegerAttr)
            or not isinstance(int_type := attr.type, IntegerType)
            or (bits := _SIGNIFICAND_BITS.get(type(op.result.type))) is None
        ):
            return
        width = int_type.width.data
        value = attr.value.data % (1 << width)
        if isinstance(op, arith.SIToFPOp) and value >= 1 << (width - 1):
            value -= 1 << width
        # Rounding the integer first makes float() exact: one rounding in all.
        value = _round_integer(value, bits)
        try:
            result = float(value)
        except OverflowError:
            result = libm.copysign(libm.inf, value)
        assert isinstance(op.result.type, builtin.AnyFloat)
        rewriter.replace(op, _constant(result, op.result.type))


class ExtfTruncfOfConstant(RewritePattern):
    """
    `extf c` (exact) and `truncf c` (one rounding, to nearest even; not with an
    explicit `roundingmode`), to f32 or f64.
    """

    operand_from = (arith.ConstantOp,)

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: arith.ExtFOp | arith.TruncFOp, rewriter: PatternRewriter, /
    ):
        if (
            (c := _float_constant(op.input)) is None
            or "roundingmode" in op.attributes
            or type(op.result.type) not in ieee.NUMPY_FLOATS
        ):
            return
        assert isinstance(op.result.type, builtin.AnyFloat)
        rewriter.replace(op, _constant(c, op.result.type))


# Math ops folded for f64 only: the f64 libm is what Python's math module, and the
# native backend through LLVM, call (see ieee.LIBM).
_LIBM_MATH: dict[str, Callable[..., float]] = {name: ieee.libm(name) for name in ieee.LIBM}


def _evaluate_math(op: Operation, args: list[float]) -> float | None:
    """The value of math op `op` on constant operands, or None if not folded."""
    result_type = type(op.results[0].type)
    if (exact := ieee.CORRECTLY_ROUNDED.get(op.name)) and (
        dtype := ieee.NUMPY_FLOATS.get(result_type)
    ):
        with np.errstate(all="ignore"):  # computed in the result's precision
            return float(exact(*map(dtype, args)))
    if op.name in _LIBM_MATH and result_type is Float64Type:
        return _LIBM_MATH[op.name](*args)
    return None


class MathOfConstants(RewritePattern):
    """A math op of ieee.CORRECTLY_ROUNDED or ieee.LIBM on float constants -> its value."""

    operand_from = (arith.ConstantOp,)

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if op.name not in ieee.CORRECTLY_ROUNDED and op.name not in _LIBM_MATH:
            return
        args = [c for x in op.operands if (c := _float_constant(x)) is not None]
        if len(args) != len(op.operands):
            return
        if (result := _evaluate_math(op, args)) is not None:
            result_type = op.results[0].type
            assert isinstance(result_type, builtin.AnyFloat)
            rewriter.replace(op, _constant(result, result_type))


FLOAT_FOLDS: tuple[RewritePattern, ...] = (
    MulfByOne(),
    DivfByOne(),
    AddfOfZero(),
    SubfOfZero(),
    SubfOfSameOperand(),
    MulfByZero(),
    AddfOfNegf(),
    SubfOfNegf(),
    MulfDivfOfNegfs(),
    NegfOfProductWithNegf(),
    NegfOfNegf(),
    NegfOfConstant(),
    CmpfOfConstants(),
    MinMaxOfConstants(),
    MinMaxIdentity(),
    IntToFloatOfConstant(),
    ExtfTruncfOfConstant(),
    MathOfConstants(),
)
"""Every pattern of this file, in the order they are tried."""


def _matched_types(pattern: RewritePattern) -> tuple[type, ...]:
    """The op types an @op_type_rewrite_pattern method accepts (its annotation)."""
    expected = inspect.getclosurevars(type(pattern).match_and_rewrite).nonlocals.get("expected_type")
    if expected is None:  # not an @op_type_rewrite_pattern method: try it on every op
        return (Operation,)
    return get_args(expected) if get_origin(expected) in (Union, UnionType) else (expected,)


class DispatchedFloatFolds(RewritePattern):
    """FLOAT_FOLDS, looked up by op type: one dict lookup per op instead of trying
    each pattern's type check in turn (the optimiser visits every op of a module
    several times, so this is a measurable share of compile time)."""

    def __init__(self) -> None:
        self.accepts = [(pattern, _matched_types(pattern)) for pattern in FLOAT_FOLDS]
        self.by_type: dict[type, list[RewritePattern]] = {}

    def patterns_for(self, op_type: type) -> list[RewritePattern]:
        found = self.by_type.get(op_type)
        if found is None:  # the patterns whose type check this op type passes, in order
            found = self.by_type[op_type] = [
                p for p, types in self.accepts if issubclass(op_type, types)
            ]
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        for pattern in self.patterns_for(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


class FloatFoldsPass(ModulePass):
    """
    Applies irad's IEEE-exact float folds (and only them; see FLOAT_FOLDS).
    """

    name = "irad-float-folds"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        PatternRewriteWalker(
            GreedyRewritePatternApplier(list(FLOAT_FOLDS), dce_enabled=False)
        ).rewrite_module(op)
