"""Derivatives of the scalar arith/math ops (entries of passes/ad/derivatives/).

One small entry per op: its reverse rule, decorated. The forward rule is the
reverse rule used as a linear map (registry.linearised: a 1x1 Jacobian per
operand is its own transpose), except for the ops whose reverse rule changes
type or structure (select, extf, truncf, sincos), which have their own. The
same rules serve the elementwise ops on tensors: `b.const` builds tensor
constants, and compare/select come from irad/ir/tensor.py; tensor.py has the
tensor forms that differ.

Every op of MLIR 22's math dialect and every arith op on floats has an entry
here: a derivative, piecewise constant (no derivative), or refused with a reason
(tests/passes/test_mlir_ops.py holds the list, checked against mlir-opt 22).
"""

from __future__ import annotations

import math

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import Operation, SSAValue

from irad.ir.mlir_ops import SinCosOp
from irad.ir.tensor import compare, select, to_float
from irad.ir.types import is_tensor
from irad.passes.ad.derivatives import batching
from irad.passes.ad.derivatives.registry import OpDerivative, non_differentiable, refused, registrar

ENTRIES: dict[str, OpDerivative] = {}
derivative = registrar(ENTRIES, elementwise=True, batch=batching.elementwise)

# Ops whose results carry no derivative: piecewise constant, or not floats, or
# from integers (which never carry one).
non_differentiable(
    ENTRIES,
    batching.elementwise,
    "arith.constant",
    "arith.cmpf",
    "arith.cmpi",
    "arith.fptosi",
    "arith.fptoui",
    "arith.sitofp",
    "arith.uitofp",
    "math.floor",
    "math.ceil",
    "math.trunc",
    "math.round",
    "math.roundeven",
    # tests of a float's class: booleans
    "math.isfinite",
    "math.isinf",
    "math.isnan",
    "math.isnormal",
    # integer ops
    "math.absi",
    "math.ctlz",
    "math.cttz",
    "math.ctpop",
    "math.ipowi",
)
refused(
    ENTRIES,
    "it reinterprets the bits of its operand, which has no derivative",
    "arith.bitcast",
)
refused(
    ENTRIES,
    "irad does not differentiate the block-scaled (microscaling) float types",
    "arith.scaling_extf",
    "arith.scaling_truncf",
)


def _x(b, op: Operation, i: int = 0) -> SSAValue:
    return b.primal(op.operands[i])


def _y(b, op: Operation) -> SSAValue:
    return b.primal(op.results[0])


# ---- arith ------------------------------------------------------------------
@derivative("arith.addf")
def _addf(b, op, dy):
    return [dy, dy]


@derivative("arith.subf")
def _subf(b, op, dy):
    return [dy, b.neg(dy)]


@derivative("arith.mulf")
def _mulf(b, op, dy):
    lhs, rhs = op.operands
    if lhs is rhs:  # a square: one cotangent 2 * (dy * x) (doubling is exact), accumulated once
        if not b.is_active(lhs):
            return [None, None]
        term = b.mul(dy, b.primal(lhs))
        return [b.add(term, term), None]
    return [
        b.mul(dy, b.primal(rhs)) if b.is_active(lhs) else None,
        b.mul(dy, b.primal(lhs)) if b.is_active(rhs) else None,
    ]


@derivative("arith.divf")
def _divf(b, op, dy):
    # d(a/b) = da/b - (a/b) db/b
    da = b.div(dy, _x(b, op, 1))
    db = b.neg(b.mul(da, _y(b, op))) if b.is_active(op.operands[1]) else None
    return [da, db]


@derivative("arith.negf")
def _negf(b, op, dy):
    return [b.neg(dy)]


def _select_tangent(b, op):
    ty = op.results[0].type
    t1 = b.tangents.get(op.operands[1]) or b.zero(ty)
    t2 = b.tangents.get(op.operands[2]) or b.zero(ty)
    return b.op(arith.SelectOp(b.primal(op.operands[0]), t1, t2))


@derivative("arith.select", forward=_select_tangent, operands=(1, 2), elementwise=False)
def _select(b, op, dy):
    cond = _x(b, op, 0)
    zero = b.zero(dy.type)
    return [
        None,
        b.op(arith.SelectOp(cond, dy, zero)),
        b.op(arith.SelectOp(cond, zero, dy)),
    ]


@derivative("arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf")
def _extremum(b, op, dy):
    # The cotangent goes to the operand that was selected (the first on a tie).
    # compare/select also build the elementwise form on tensors (irad/ir/tensor.py).
    predicate = "oge" if "max" in op.name else "ole"
    first, second = _x(b, op, 0), _x(b, op, 1)
    first_wins = compare(b, predicate, first, second)
    if op.name in ("arith.maxnumf", "arith.minnumf"):  # these return the operand that is not NaN
        first_wins = b.op(arith.OrIOp(first_wins, compare(b, "uno", second, second)))
    zero = b.zero(dy.type)
    return [select(b, first_wins, dy, zero), select(b, first_wins, zero, dy)]


@derivative("arith.remf")
def _remf(b, op, dy):
    # y = a - n b with n = trunc(a / b), an integer fmod computes exactly; (a - y) / b
    # is within rounding of n, so roundeven recovers it (trunc(a / b) is not exact)
    a, d = op.operands
    quotient = None
    if b.is_active(d):
        y = _y(b, op)
        n = b.math(mathd.RoundEvenOp, b.div(b.sub(b.primal(a), y), b.primal(d)))
        quotient = b.neg(b.mul(dy, n))
    return [dy if b.is_active(a) else None, quotient]


# A conversion's tangent converts like its value; its cotangent converts back.
def _extf_tangent(b, op):
    return b.op(arith.ExtFOp(b.tangents[op.operands[0]], op.results[0].type))


@derivative("arith.extf", forward=_extf_tangent)
def _extf(b, op, dy):
    return [b.op(arith.TruncFOp(dy, op.operands[0].type))]


def _truncf_tangent(b, op):
    return b.op(arith.TruncFOp(b.tangents[op.operands[0]], op.results[0].type))


@derivative("arith.truncf", forward=_truncf_tangent)
def _truncf(b, op, dy):
    return [b.op(arith.ExtFOp(dy, op.operands[0].type))]


# ---- math -------------------------------------------------------------------
@derivative("math.sin")
def _sin(b, op, dy):
    return [b.mul(dy, b.math(mathd.CosOp, _x(b, op)))]


@derivative("math.cos")
def _cos(b, op, dy):
    return [b.neg(b.mul(dy, b.math(mathd.SinOp, _x(b, op))))]


@derivative("math.tan")
def _tan(b, op, dy):
    y = _y(b, op)  # 1 + tan^2
    return [b.mul(dy, b.add(b.const(1.0, y.type), b.mul(y, y)))]


@derivative("math.exp")
def _exp(b, op, dy):
    return [b.mul(dy, _y(b, op))]


@derivative("math.exp2")
def _exp2(b, op, dy):
    y = _y(b, op)
    return [b.mul(dy, b.mul(y, b.const(math.log(2.0), y.type)))]


@derivative("math.expm1")
def _expm1(b, op, dy):
    y = _y(b, op)
    return [b.mul(dy, b.add(y, b.const(1.0, y.type)))]


@derivative("math.log")
def _log(b, op, dy):
    return [b.div(dy, _x(b, op))]


@derivative("math.log2", "math.log10")
def _log_base(b, op, dy):
    x = _x(b, op)
    ln_base = math.log(2.0) if op.name == "math.log2" else math.log(10.0)
    return [b.div(dy, b.mul(x, b.const(ln_base, x.type)))]


@derivative("math.log1p")
def _log1p(b, op, dy):
    x = _x(b, op)
    return [b.div(dy, b.add(x, b.const(1.0, x.type)))]


@derivative("math.sqrt")
def _sqrt(b, op, dy):
    y = _y(b, op)
    return [b.div(b.mul(dy, b.const(0.5, y.type)), y)]


@derivative("math.rsqrt")
def _rsqrt(b, op, dy):
    y = _y(b, op)  # d/dx x^-1/2 = -y^3 / 2
    return [b.mul(dy, b.mul(b.const(-0.5, y.type), b.mul(y, b.mul(y, y))))]


@derivative("math.cbrt")
def _cbrt(b, op, dy):
    y = _y(b, op)
    return [b.div(dy, b.mul(b.const(3.0, y.type), b.mul(y, y)))]


@derivative("math.tanh")
def _tanh(b, op, dy):
    y = _y(b, op)
    return [b.mul(dy, b.sub(b.const(1.0, y.type), b.mul(y, y)))]


@derivative("math.sinh")
def _sinh(b, op, dy):
    return [b.mul(dy, b.math(mathd.CoshOp, _x(b, op)))]


@derivative("math.cosh")
def _cosh(b, op, dy):
    return [b.mul(dy, b.math(mathd.SinhOp, _x(b, op)))]


def _one_minus_square_root(b, x):
    return b.math(mathd.SqrtOp, b.sub(b.const(1.0, x.type), b.mul(x, x)))


@derivative("math.asin")
def _asin(b, op, dy):
    return [b.div(dy, _one_minus_square_root(b, _x(b, op)))]


@derivative("math.acos")
def _acos(b, op, dy):
    return [b.neg(b.div(dy, _one_minus_square_root(b, _x(b, op))))]


@derivative("math.asinh")
def _asinh(b, op, dy):
    x = _x(b, op)
    return [b.div(dy, b.math(mathd.SqrtOp, b.add(b.mul(x, x), b.const(1.0, x.type))))]


@derivative("math.acosh")
def _acosh(b, op, dy):
    x = _x(b, op)  # 1 / sqrt(x^2 - 1), as (x - 1)(x + 1) for accuracy near 1
    one = b.const(1.0, x.type)
    return [b.div(dy, b.math(mathd.SqrtOp, b.mul(b.sub(x, one), b.add(x, one))))]


@derivative("math.atanh")
def _atanh(b, op, dy):
    x = _x(b, op)  # 1 / (1 - x^2), as (1 - x)(1 + x)
    one = b.const(1.0, x.type)
    return [b.div(dy, b.mul(b.sub(one, x), b.add(one, x)))]


@derivative("math.atan")
def _atan(b, op, dy):
    x = _x(b, op)
    return [b.div(dy, b.add(b.const(1.0, x.type), b.mul(x, x)))]


@derivative("math.atan2")
def _atan2(b, op, dy):
    # y = atan2(p, q): dp = q / (p^2 + q^2), dq = -p / (p^2 + q^2)
    p, q = _x(b, op, 0), _x(b, op, 1)
    s = b.div(dy, b.add(b.mul(p, p), b.mul(q, q)))
    return [
        b.mul(s, q) if b.is_active(op.operands[0]) else None,
        b.neg(b.mul(s, p)) if b.is_active(op.operands[1]) else None,
    ]


@derivative("math.powf")
def _powf(b, op, dy):
    base, exponent = op.operands
    da = db = None
    if b.is_active(base):
        # e * a^(e-1), taken as 0 for e == 0 (x^0 is constant, even at x == 0)
        a, e = b.primal(base), b.primal(exponent)
        zero = b.zero(e.type)
        pow_minus_one = b.math(mathd.PowFOp, a, b.sub(e, b.const(1.0, e.type)))
        constant = compare(b, "oeq", e, zero)
        da = b.mul(dy, select(b, constant, zero, b.mul(e, pow_minus_one)))
    if b.is_active(exponent):
        # y * log(a), taken as 0 at a == 0 (the limit for a positive exponent)
        a, y = b.primal(base), _y(b, op)
        zero = b.zero(a.type)
        log_a = b.math(mathd.LogOp, a)
        at_zero = compare(b, "oeq", a, zero)
        db = b.mul(dy, select(b, at_zero, zero, b.mul(y, log_a)))
    return [da, db]


@derivative("math.absf")
def _absf(b, op, dy):
    # dy * sign(x), with sign(0) = 0
    x = _x(b, op)
    zero = b.zero(x.type)
    signed = b.mul(dy, b.math(mathd.CopySignOp, b.const(1.0, x.type), x))
    at_zero = b.op(arith.CmpfOp(x, zero, "oeq"))
    return [b.op(arith.SelectOp(at_zero, zero, signed))]


@derivative("math.copysign", operands=(0,))
def _copysign(b, op, dy):
    # |a| with b's sign: d/da = sign(a) * sign(b); piecewise constant in b
    a, sgn = _x(b, op, 0), _x(b, op, 1)
    one = b.const(1.0, a.type)
    flip = b.mul(b.math(mathd.CopySignOp, one, a), b.math(mathd.CopySignOp, one, sgn))
    return [b.mul(dy, flip) if b.is_active(op.operands[0]) else None, None]


@derivative("math.erf")
def _erf(b, op, dy):
    x = _x(b, op)
    gauss = b.math(mathd.ExpOp, b.neg(b.mul(x, x)))
    return [b.mul(dy, b.mul(b.const(2.0 / math.sqrt(math.pi), x.type), gauss))]


@derivative("math.erfc")
def _erfc(b, op, dy):
    x = _x(b, op)
    gauss = b.math(mathd.ExpOp, b.neg(b.mul(x, x)))
    return [b.mul(dy, b.mul(b.const(-2.0 / math.sqrt(math.pi), x.type), gauss))]


@derivative("math.fma")
def _fma(b, op, dy):
    x, y, _ = op.operands
    return [
        b.mul(dy, b.primal(y)) if b.is_active(x) else None,
        b.mul(dy, b.primal(x)) if b.is_active(y) else None,
        dy,
    ]


def _int_to_float(b, n: SSAValue, like: SSAValue) -> SSAValue:
    if is_tensor(n.type):
        return to_float(b, n, like.type.element_type)
    return b.op(arith.SIToFPOp(n, like.type))


@derivative("math.fpowi", operands=(0,))
def _fpowi(b, op, dy):
    # n x^(n-1), taken as 0 for n == 0 (x^0 is constant, even at x == 0); n - 1 in
    # floats, exact below 2^53, where an integer n - 1 could wrap
    x, n = _x(b, op, 0), _x(b, op, 1)
    e = _int_to_float(b, n, x)
    zero = b.zero(x.type)
    power = b.math(mathd.PowFOp, x, b.sub(e, b.const(1.0, x.type)))
    return [b.mul(dy, select(b, compare(b, "oeq", e, zero), zero, b.mul(e, power))), None]


@derivative("math.clampf")
def _clampf(b, op, dy):
    # The result is one of the operands (MLIR 22.1 computes maximumf(minimumf(x,
    # lo), hi)); the cotangent goes to the one it equals, x first, then lo, on a
    # tie, as for maximumf/minimumf. It relies only on the result being an
    # operand, not on how the op picks it.
    y = _y(b, op)
    zero = b.zero(dy.type)
    cotangents, rest = [], dy
    for operand in op.operands:
        picked = compare(b, "oeq", y, b.primal(operand))
        cotangents.append(select(b, picked, rest, zero) if b.is_active(operand) else None)
        rest = select(b, picked, zero, rest)
    return cotangents


def _sincos_tangent(b, op: Operation) -> list[SSAValue]:
    t = b.tangents[op.operands[0]]
    sin, cos = (b.primal(r) for r in op.results)
    return [b.mul(t, cos), b.neg(b.mul(t, sin))]


@derivative("math.sincos", forward=_sincos_tangent, multi_result=True)
def _sincos(b, op: SinCosOp, dys):
    # d sin = cos dx, d cos = -sin dx
    d_sin, d_cos = dys
    parts = []
    if d_sin is not None:
        parts.append(b.mul(d_sin, b.primal(op.cos)))
    if d_cos is not None:
        parts.append(b.neg(b.mul(d_cos, b.primal(op.sin))))
    return [parts[0] if len(parts) == 1 else b.add(parts[0], parts[1])]
