"""irad's module rewritten into forms IREE 3.13 compiles correctly (`for_iree`).

IREE runs a module in two parts: the array kernels (linalg ops, compiled by
LLVM for the target) and the scalar host code around them (scalar arith and
math, the scf control flow), which runs in IREE's VM. Three kinds of rewrite:

- **Control flow (a miscompile).** The VM keeps 32-bit and 64-bit scalars in
  one register file, a 64-bit value in an aligned pair of 32-bit slots. When
  a branch passes values to a block (an scf.if's results, a loop's carried
  values), the VM moves them into the block's registers; IREE orders those
  moves with a graph keyed by each register's first slot, so it does not see
  a 32-bit move overwrite the second half of a 64-bit value still to be moved.
  An if/elif chain yielding an f64 and an i1 then computes a wrong value
  silently (elif_chain of tests/passes/test_control_flow.py: -3.0 for
  -0.2014). So every scalar narrower than 64 bits that crosses a block
  boundary (an i1, an i32, an f32) is widened to 64 bits across it and
  narrowed back after: all moved registers are then aligned pairs, which
  overlap only when they are the same register.
- **Host math the VM lacks.** The VM has no f64 (or f32) tan, sinh, cosh,
  asin, acos, asinh, acosh, atanh, trunc, copysign or float -> int
  conversion. Each becomes ops it has, by identities that keep the
  accuracy of libm to a few ulps (tested against numpy in
  tests/backends/test_backend_iree.py). MLIR's own `--math-expand-ops`
  expansions are not used: sinh as (e^x - e^-x)/2 and asinh as
  log(x + sqrt(x^2 + 1)) lose all accuracy near 0 and for negative x.
  Ops inside array kernels are left alone: LLVM compiles those.
- **Tensor ops (a miscompile and a refusal).** `tensor.insert` into a tensor
  of rank 2 or more and an f64 `tensor.splat`; and irad's `irad.cumsum`
  and `irad.linear_scan`, which IREE does not know, as tensor ops.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    f64,
    i64,
)
from xdsl.dialects.linalg.ops import FillOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from irad.backends import blocked_sums
from irad.ir import scan as S
from irad.ir.builder import IRBuilder
from irad.ir.dialect import CumsumOp, LinearScanOp


def for_iree(module: ModuleOp) -> ModuleOp:
    """A copy of `module` with what IREE 3.13 miscompiles or refuses written
    in forms it takes."""
    module = module.clone()
    # IREE also adds a long reduction in order (O(n) rounding error); first, as the
    # partial sums start from splats, which IREE takes as fills (_SplatAsFill)
    blocked_sums.block_sums(module)
    walker = GreedyRewritePatternApplier([_CumsumAsTensorOps(), _LinearScanAsTensorOps(), _InsertAsSlice(), _SplatAsFill(), _HostMath()])
    PatternRewriteWalker(walker, apply_recursively=False).rewrite_module(module)
    branches_as_selects(module)
    widen_carried_scalars(module)
    return module


# ---- control flow: branches of scalar arithmetic as selects -----------------------------
# Integer division and remainder trap (or are undefined) on a zero divisor the
# branch may exist to avoid, so a branch holding one is not run speculatively.
_TRAPPING = frozenset({"arith.divsi", "arith.divui", "arith.remsi", "arith.remui", "arith.floordivsi",
                       "arith.ceildivsi"})


def _speculatable(op: Operation) -> bool:
    """Whether `op` may run on the path not taken: scalar arith and math, no check,
    no array op, no call."""
    if isinstance(op, scf.YieldOp):
        return True
    if not op.name.startswith(("arith.", "math.")) or op.name in _TRAPPING or op.regions:
        return False
    return not any(isinstance(v.type, TensorType) for v in (*op.operands, *op.results))


def branches_as_selects(module: ModuleOp) -> None:
    """An scf.if with scalar results whose two branches are scalar arithmetic
    becomes both branches, run unconditionally, and an arith.select per result
    (the if-conversion compilers do): no block arguments reach IREE's VM,
    whose register allocator miscompiles them (module docstring). Innermost
    first, so a chain of elifs becomes a chain of selects."""
    for op in reversed(list(module.walk())):  # after its nested ifs
        if not isinstance(op, scf.IfOp) or not op.results or not op.false_region.blocks:
            continue
        if any(isinstance(r.type, TensorType) for r in op.results):
            continue
        if not all(_speculatable(inner) for region in op.regions for inner in region.block.ops):
            continue
        chosen = []
        for region in op.regions:
            block = region.block
            yielded = list(block.last_op.operands)
            block.erase_op(block.last_op)
            for inner in list(block.ops):
                inner.detach()
                Rewriter.insert_op(inner, InsertPoint.before(op))
            chosen.append(yielded)
        selects = [arith.SelectOp(op.cond, a, b) for a, b in zip(*chosen)]
        Rewriter.insert_op(selects, InsertPoint.before(op))
        Rewriter.replace_op(op, [], [s.result for s in selects])


# ---- control flow: 64-bit values across block boundaries ----------------------------
def _wide(t: Attribute) -> Attribute | None:
    """The 64-bit type a scalar of type `t` crosses a block boundary as (None: as it is)."""
    if isinstance(t, IntegerType) and t.width.data < 64:
        return i64
    if isinstance(t, AnyFloat) and t.bitwidth < 64:
        return f64
    return None


def _widen(value: SSAValue, before: Operation) -> SSAValue:
    """`value` extended to 64 bits just before `before` (exact: narrowing gives it back)."""
    wide = _wide(value.type)
    if isinstance(value.type, AnyFloat):
        op = arith.ExtFOp(value, wide)
    elif value.type.width.data == 1:
        op = arith.ExtUIOp(value, wide)
    else:
        op = arith.ExtSIOp(value, wide)
    Rewriter.insert_op(op, InsertPoint.before(before))
    return op.result


def _widen_definition(value: SSAValue, narrow: Attribute) -> None:
    """Give `value` (a result or block argument) its 64-bit type, and its users
    the value narrowed back to `narrow`, computed right after it is defined."""
    wide = Rewriter.replace_value_with_new_type(value, _wide(narrow))
    op = arith.TruncFOp(wide, narrow) if isinstance(narrow, AnyFloat) else arith.TruncIOp(wide, narrow)
    if isinstance(wide.owner, Operation):
        Rewriter.insert_op(op, InsertPoint.after(wide.owner))
    else:
        Rewriter.insert_op(op, InsertPoint.at_start(wide.owner))
    wide.replace_uses_with_if(op.results[0], lambda use: use.operation is not op)


def _widen_operands(op: Operation, positions: list[int]) -> None:
    for i in positions:
        op.operands[i] = _widen(op.operands[i], op)


def widen_carried_scalars(module: ModuleOp) -> None:
    """Every scalar narrower than 64 bits that an scf op passes across a block
    boundary (results, carried values, the values each region yields) crosses
    it as 64 bits (module docstring: a miscompile of IREE's VM)."""
    for op in list(module.walk()):
        if isinstance(op, scf.IfOp):
            narrow = [i for i, r in enumerate(op.results) if _wide(r.type)]
            for region in op.regions:
                if region.blocks:
                    _widen_operands(region.block.last_op, narrow)
            for i in narrow:
                _widen_definition(op.results[i], op.results[i].type)
        elif isinstance(op, scf.ForOp):
            narrow = [i for i, r in enumerate(op.results) if _wide(r.type)]
            _widen_operands(op, [3 + i for i in narrow])  # the initial values
            _widen_operands(op.body.block.last_op, narrow)
            for i in narrow:
                _widen_definition(op.body.block.args[1 + i], op.results[i].type)
                _widen_definition(op.results[i], op.results[i].type)
        elif isinstance(op, scf.WhileOp):
            before, after = op.before_region.block, op.after_region.block
            carried = [i for i, a in enumerate(before.args) if _wide(a.type)]
            _widen_operands(op, carried)
            _widen_operands(after.last_op, carried)  # scf.yield
            passed = [i for i, a in enumerate(after.args) if _wide(a.type)]
            _widen_operands(before.last_op, [1 + i for i in passed])  # scf.condition
            for i in carried:
                _widen_definition(before.args[i], before.args[i].type)
            for i in passed:
                _widen_definition(after.args[i], after.args[i].type)
                _widen_definition(op.results[i], op.results[i].type)


# ---- host math the VM lacks -----------------------------------------------------------
class _Float(IRBuilder):
    """Builds before an op, in the float type of its result."""

    def __init__(self, before: Operation, t: Attribute):
        super().__init__(before=before)
        self.t = t

    def const(self, value: float, type: Attribute | None = None) -> SSAValue:
        return self.value(arith.ConstantOp(FloatAttr(value, type or self.t)))

    def int(self, value: int, t: IntegerType) -> SSAValue:
        return self.value(arith.ConstantOp(IntegerAttr(value, t)))

    def math(self, op_type: type[Operation], *operands: SSAValue) -> SSAValue:
        return self.value(op_type(*operands))

    def cmp(self, a: SSAValue, predicate: str, b: SSAValue | float) -> SSAValue:
        b = self.const(b) if isinstance(b, float) else b
        return self.value(arith.CmpfOp(a, b, predicate))

    def select(self, condition: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.value(arith.SelectOp(condition, a, b))

    def half(self, a: SSAValue) -> SSAValue:
        return self.mul(self.const(0.5), a)

    def odd(self, x: SSAValue, magnitude: SSAValue) -> SSAValue:
        """f(x) of an odd f from its value f(|x|): the sign of x, and x itself at
        ±0 (so f(-0.0) = -0.0, as libm gives)."""
        signed = self.select(self.cmp(x, "olt", 0.0), self.neg(magnitude), magnitude)
        return self.select(self.cmp(x, "oeq", 0.0), x, signed)

    def exp_large(self, ax: SSAValue) -> SSAValue:
        """e^|x| / 2 for |x| up to the largest whose sinh is finite (e^|x| alone
        overflows first): (e^(|x|/2) / 2) * e^(|x|/2)."""
        w = self.math(mathd.ExpOp, self.half(ax))
        return self.mul(self.half(w), w)


def _tan(b: _Float, x: SSAValue) -> SSAValue:
    return b.div(b.math(mathd.SinOp, x), b.math(mathd.CosOp, x))


def _sinh(b: _Float, x: SSAValue) -> SSAValue:
    # |x| < 22: with t = e^|x| - 1 (expm1, exact near 0), 2 sinh|x| = t + t/(t+1),
    # a sum of two positive terms, so nothing cancels. Beyond, e^-|x| is below
    # an ulp of e^|x|.
    ax = b.math(mathd.AbsFOp, x)
    t = b.math(mathd.ExpM1Op, ax)
    small = b.half(b.add(t, b.div(t, b.add(t, b.const(1.0)))))
    return b.odd(x, b.select(b.cmp(ax, "olt", 22.0), small, b.exp_large(ax)))


def _cosh(b: _Float, x: SSAValue) -> SSAValue:
    ax = b.math(mathd.AbsFOp, x)
    e = b.math(mathd.ExpOp, ax)
    small = b.add(b.half(e), b.div(b.const(0.5), e))
    return b.select(b.cmp(ax, "olt", 22.0), small, b.exp_large(ax))


def _cos_of_asin(b: _Float, x: SSAValue) -> SSAValue:
    """sqrt(1 - x²) as sqrt((1 - x)(1 + x)): 1 - x is exact near 1, where 1 - x*x is not."""
    one = b.const(1.0)
    return b.math(mathd.SqrtOp, b.mul(b.sub(one, x), b.add(one, x)))


def _asin(b: _Float, x: SSAValue) -> SSAValue:
    return b.math(mathd.Atan2Op, x, _cos_of_asin(b, x))  # NaN beyond ±1, from the sqrt


def _acos(b: _Float, x: SSAValue) -> SSAValue:
    return b.math(mathd.Atan2Op, _cos_of_asin(b, x), x)


LN2 = math.log(2.0)
BIG = 2.0**28  # beyond it, sqrt(x² ± 1) = |x| to the last bit


def _asinh(b: _Float, x: SSAValue) -> SSAValue:
    ax = b.math(mathd.AbsFOp, x)
    one = b.const(1.0)
    x2 = b.mul(ax, ax)
    root = b.math(mathd.SqrtOp, b.add(x2, one))
    small = b.math(mathd.Log1pOp, b.add(ax, b.div(x2, b.add(one, root))))  # log1p: exact near 0
    middle = b.math(mathd.LogOp, b.add(b.add(ax, ax), b.div(one, b.add(root, ax))))
    large = b.add(b.math(mathd.LogOp, ax), b.const(LN2))
    magnitude = b.select(b.cmp(ax, "ole", 2.0), small, b.select(b.cmp(ax, "olt", BIG), middle, large))
    return b.odd(x, magnitude)


def _acosh(b: _Float, x: SSAValue) -> SSAValue:
    one = b.const(1.0)
    t = b.sub(x, one)  # exact near 1
    small = b.math(mathd.Log1pOp, b.add(t, b.math(mathd.SqrtOp, b.add(b.add(t, t), b.mul(t, t)))))
    root = b.math(mathd.SqrtOp, b.sub(b.mul(x, x), one))
    middle = b.math(mathd.LogOp, b.sub(b.add(x, x), b.div(one, b.add(x, root))))
    large = b.add(b.math(mathd.LogOp, x), b.const(LN2))
    # below 1, `small` is NaN (the log1p or the sqrt of a negative number)
    return b.select(b.cmp(x, "ole", 2.0), small, b.select(b.cmp(x, "olt", BIG), middle, large))


def _atanh(b: _Float, x: SSAValue) -> SSAValue:
    ax = b.math(mathd.AbsFOp, x)
    two_ax = b.add(ax, ax)
    rest = b.sub(b.const(1.0), ax)
    small = b.math(mathd.Log1pOp, b.add(two_ax, b.div(b.mul(two_ax, ax), rest)))
    large = b.math(mathd.Log1pOp, b.div(two_ax, rest))
    return b.odd(x, b.half(b.select(b.cmp(ax, "olt", 0.5), small, large)))


def _trunc(b: _Float, x: SSAValue) -> SSAValue:
    return b.select(b.cmp(x, "olt", 0.0), b.math(mathd.CeilOp, x), b.math(mathd.FloorOp, x))


def _bits_type(t: AnyFloat) -> IntegerType:
    return IntegerType(t.bitwidth)


def _copysign(b: _Float, x: SSAValue, y: SSAValue) -> SSAValue:
    """|x| with the sign bit of y, in the bits (exact, as libm)."""
    bits, width = _bits_type(b.t), b.t.bitwidth
    magnitude = b.value(arith.AndIOp(b.value(arith.BitcastOp(x, bits)), b.int((1 << (width - 1)) - 1, bits)))
    sign = b.value(arith.AndIOp(b.value(arith.BitcastOp(y, bits)), b.int(-(1 << (width - 1)), bits)))
    return b.value(arith.BitcastOp(b.value(arith.OrIOp(magnitude, sign)), b.t))


# float type -> (bits of its fraction, its exponent bias)
_FORMATS = {64: (52, 1023), 32: (23, 127)}


def _fptosi(b: _Float, x: SSAValue, result: IntegerType) -> SSAValue:
    """x rounded towards 0 as an integer, from its bits: the fraction with its
    leading 1, shifted by the exponent. Exact where fptosi is defined (|x| below
    2^63; irad checks the range before converting)."""
    fraction_bits, bias = _FORMATS[x.type.bitwidth]
    bits = b.value(arith.BitcastOp(x, _bits_type(x.type)))
    if x.type.bitwidth < 64:
        bits = b.value(arith.ExtUIOp(bits, i64))

    def c(v: int) -> SSAValue:
        return b.int(v, i64)

    exponent = b.value(arith.AndIOp(b.value(arith.ShRUIOp(bits, c(fraction_bits))), c((1 << (x.type.bitwidth - 1 - fraction_bits)) - 1)))
    fraction = b.value(arith.OrIOp(b.value(arith.AndIOp(bits, c((1 << fraction_bits) - 1))), c(1 << fraction_bits)))
    shift = b.value(arith.SubiOp(exponent, c(bias + fraction_bits)))  # |x| = fraction * 2^shift

    def clamped(v: SSAValue) -> SSAValue:  # a shift by 64 or more is poison
        return b.value(arith.MinSIOp(b.value(arith.MaxSIOp(v, c(0))), c(63)))

    left = b.value(arith.ShLIOp(fraction, clamped(shift)))
    right = b.value(arith.ShRUIOp(fraction, clamped(b.value(arith.SubiOp(c(0), shift)))))
    magnitude = b.select(b.value(arith.CmpiOp(shift, c(0), "sge")), left, right)
    negative = b.cmp(x, "olt", 0.0)
    value = b.select(negative, b.value(arith.SubiOp(c(0), magnitude)), magnitude)
    return value if result.width.data == 64 else b.value(arith.TruncIOp(value, result))


def _cbrt(b: _Float, x: SSAValue) -> SSAValue:
    """|x|^(1/3) by pow (1/3 is rounded, so pow is off by up to ~|log x| ulps),
    then one Newton step y - (y - |x|/y²)/3, which leaves the rounding error
    of a few operations; the sign of x; x itself at ±0, ±inf and NaN."""
    ax = b.math(mathd.AbsFOp, x)
    y = b.math(mathd.PowFOp, ax, b.const(1.0 / 3.0))
    y = b.sub(y, b.div(b.sub(y, b.div(ax, b.mul(y, y))), b.const(3.0)))
    signed = b.select(b.cmp(x, "olt", 0.0), b.neg(y), y)
    finite_nonzero = b.value(arith.AndIOp(b.cmp(ax, "one", 0.0), b.cmp(ax, "one", math.inf)))
    return b.select(finite_nonzero, signed, x)


def _bool_to_float(b: _Float, x: SSAValue, signed: bool) -> SSAValue:
    """An i1 as a float (the VM converts from i64 only, and IREE folds an
    extension to i64 back into the i1's conversion): a select of the two
    values it can have (a signed i1 is 0 or -1)."""
    return b.select(x, b.const(-1.0 if signed else 1.0), b.const(0.0))


EXPANSIONS: dict[type[Operation], Callable[..., SSAValue]] = {
    mathd.TanOp: _tan,
    mathd.SinhOp: _sinh,
    mathd.CoshOp: _cosh,
    mathd.AsinOp: _asin,
    mathd.AcosOp: _acos,
    mathd.AsinhOp: _asinh,
    mathd.AcoshOp: _acosh,
    mathd.AtanhOp: _atanh,
    mathd.TruncOp: _trunc,
    mathd.CopySignOp: _copysign,
    mathd.CbrtOp: _cbrt,
}


def _in_host_code(op: Operation) -> bool:
    """Whether `op` runs in IREE's VM: it is not in the body of an array op."""
    parent = op.parent_op()
    while parent is not None:
        if parent.name.startswith(("linalg.", "tensor.")):
            return False
        parent = parent.parent_op()
    return True


class _HostMath(RewritePattern):
    """The scalar math ops IREE's VM has no instruction for, written with ops it has."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not op.operands or not _in_host_code(op):
            return
        if isinstance(op, arith.SIToFPOp | arith.UIToFPOp):
            if op.operands[0].type == IntegerType(1):
                b = _Float(op, op.results[0].type)
                rewriter.replace(op, [], [_bool_to_float(b, op.operands[0], isinstance(op, arith.SIToFPOp))])
            return
        if not isinstance(op.operands[0].type, Float64Type | Float32Type):
            return
        if isinstance(op, arith.TruncFOp):
            rewriter.replace(op, _truncf_in_a_kernel(op))
            return
        if isinstance(op, arith.FPToSIOp):
            value = _fptosi(_Float(op, op.operands[0].type), op.operands[0], op.results[0].type)
        elif type(op) in EXPANSIONS:
            value = EXPANSIONS[type(op)](_Float(op, op.results[0].type), *op.operands)
        else:
            return
        rewriter.replace(op, [], [value])


def _truncf_in_a_kernel(op: arith.TruncFOp) -> list[Operation]:
    """f64 -> f32 on the host as a one-element array kernel: the VM has no
    narrowing conversion (a float32 scalar argument's cotangent, computed in
    float64, is narrowed at the end), LLVM's code for the kernel has."""
    wide = tensor.FromElementsOp(op.operands[0], result_type=TensorType(op.operands[0].type, []))
    narrow = arith.TruncFOp(wide.result, TensorType(op.results[0].type, []))
    scalar = tensor.ExtractOp(narrow.result, [], op.results[0].type)
    return [wide, narrow, scalar]


# ---- tensor ops -------------------------------------------------------------------------
class _CumsumAsTensorOps(RewritePattern):
    """`irad.cumsum` as the blocked scan of tensor ops (irad/ir/scan.py): IREE
    runs linalg kernels, and the native backend's loop nest of scalar inserts
    would run element by element in its VM."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CumsumOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [], [S.blocked_cumsum(IRBuilder(before=op), op)])


class _LinearScanAsTensorOps(RewritePattern):
    """`irad.linear_scan` (np.cumprod and its derivatives) as the blocked scan
    on pairs of tensor ops (irad/ir/scan.py), as `irad.cumsum`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LinearScanOp, rewriter: PatternRewriter, /):
        rewriter.replace(op, [], [S.blocked_linear_scan(IRBuilder(before=op), op)])


class _InsertAsSlice(RewritePattern):
    """`tensor.insert` into a tensor of rank 2 or more as a one-element
    `tensor.insert_slice`: IREE 3.13 on llvm-cpu writes the scalar to several
    elements otherwise (tensor<3x2xf64> at [1, 1] wrote [1, 1], [2, 0] and
    [2, 1]); the slice form is right.

    Into a rank-0 tensor, the insert is `tensor.from_elements` of the scalar.
    irad makes a tensor<f64> from a scalar by inserting it into a constant
    zero; inside a loop IREE 3.13 turns that insert into a store into the
    constant's resource (flow.tensor.store) that the kernel reading it never
    sees, so every iteration read 0: a pullback that broadcasts a per-row
    scalar cotangent into an array accumulated zeros (the GMM's all-zero
    gradient of the means, tests/backends/test_backend_iree.py)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.InsertOp, rewriter: PatternRewriter, /):
        rank = len(op.dest.type.get_shape())
        if rank == 0:
            rewriter.replace(op, [tensor.FromElementsOp(op.scalar, result_type=op.dest.type)])
            return
        if rank < 2:
            return
        one = TensorType(op.scalar.type, [1] * rank)
        element = tensor.FromElementsOp(op.scalar, result_type=one)
        update = tensor.InsertSliceOp.get(element.result, op.dest, [1] * rank, [DYNAMIC_INDEX] * rank,
                                          offsets=list(op.indices))
        rewriter.replace(op, [element, update])


class _SplatAsFill(RewritePattern):
    """`tensor.splat` as `linalg.fill` of a `tensor.empty`: IREE 3.13 cannot
    compile a splat of an f64 scalar (its VM has no such op); a fill is an
    array kernel."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.SplatOp, rewriter: PatternRewriter, /):
        if op.dynamicSizes:
            return
        empty = tensor.EmptyOp([], op.result.type)
        rewriter.replace(op, [empty, FillOp([op.input], [empty.tensor], [op.result.type])])
