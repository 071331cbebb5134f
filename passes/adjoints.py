"""Adjoints of the primitive arith/math ops, as a table (one small entry per op).

An adjoint receives the builder of the pullback being emitted, the primal op
and the cotangent of its result, and returns one cotangent per operand (None
for an operand that gets none). `b.primal(v)` is the value of primal `v` inside
the pullback: a residual kept by the augmented primal, or a rematerialised
constant. Ops missing here and not listed as non-differentiable are rejected
by the pass with an error naming the op.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects import math as mathd
from xdsl.ir import Operation, SSAValue

from irad.ir.tensor import compare, select

Adjoint = Callable[["object", Operation, SSAValue], list[SSAValue | None]]

ADJOINTS: dict[str, Adjoint] = {}

# Ops whose results carry no derivative (piecewise constant, or not floats).
NON_DIFFERENTIABLE = frozenset(
    {
        "arith.constant",
        "arith.cmpf",
        "arith.cmpi",
        "arith.fptosi",
        "arith.fptoui",
        "math.floor",
        "math.ceil",
        "math.trunc",
        "math.round",
        "math.roundeven",
    }
)


def adjoint(*names: str):
    def register(fn: Adjoint) -> Adjoint:
        for name in names:
            ADJOINTS[name] = fn
        return fn

    return register


def _x(b, op: Operation, i: int = 0) -> SSAValue:
    return b.primal(op.operands[i])


def _y(b, op: Operation) -> SSAValue:
    return b.primal(op.results[0])


# ---- arith ------------------------------------------------------------------
@adjoint("arith.addf")
def _addf(b, op, dy):
    return [dy, dy]


@adjoint("arith.subf")
def _subf(b, op, dy):
    return [dy, b.neg(dy)]


@adjoint("arith.mulf")
def _mulf(b, op, dy):
    lhs, rhs = op.operands
    return [
        b.mul(dy, b.primal(rhs)) if b.is_active(lhs) else None,
        b.mul(dy, b.primal(lhs)) if b.is_active(rhs) else None,
    ]


@adjoint("arith.divf")
def _divf(b, op, dy):
    # d(a/b) = da/b - (a/b) db/b
    da = b.div(dy, _x(b, op, 1))
    db = b.neg(b.mul(da, _y(b, op))) if b.is_active(op.operands[1]) else None
    return [da, db]


@adjoint("arith.negf")
def _negf(b, op, dy):
    return [b.neg(dy)]


@adjoint("arith.select")
def _select(b, op, dy):
    cond = _x(b, op, 0)
    zero = b.zero(dy.type)
    return [
        None,
        b.op(arith.SelectOp(cond, dy, zero)),
        b.op(arith.SelectOp(cond, zero, dy)),
    ]


@adjoint("arith.maximumf", "arith.maxnumf", "arith.minimumf", "arith.minnumf")
def _extremum(b, op, dy):
    # The cotangent goes to the operand that was selected (the first on a tie).
    # compare/select also build the elementwise form on tensors (irad/ir/tensor.py).
    predicate = "oge" if "max" in op.name else "ole"
    first_wins = compare(b, predicate, _x(b, op, 0), _x(b, op, 1))
    zero = b.zero(dy.type)
    return [select(b, first_wins, dy, zero), select(b, first_wins, zero, dy)]


@adjoint("arith.extf")
def _extf(b, op, dy):
    return [b.op(arith.TruncFOp(dy, op.operands[0].type))]


@adjoint("arith.truncf")
def _truncf(b, op, dy):
    return [b.op(arith.ExtFOp(dy, op.operands[0].type))]


@adjoint("arith.sitofp", "arith.uitofp")
def _int_to_float(b, op, dy):
    return [None]


# ---- math -------------------------------------------------------------------
@adjoint("math.sin")
def _sin(b, op, dy):
    return [b.mul(dy, b.op(mathd.CosOp(_x(b, op))))]


@adjoint("math.cos")
def _cos(b, op, dy):
    return [b.neg(b.mul(dy, b.op(mathd.SinOp(_x(b, op)))))]


@adjoint("math.tan")
def _tan(b, op, dy):
    y = _y(b, op)  # 1 + tan^2
    return [b.mul(dy, b.add(b.const(1.0, y.type), b.mul(y, y)))]


@adjoint("math.exp")
def _exp(b, op, dy):
    return [b.mul(dy, _y(b, op))]


@adjoint("math.exp2")
def _exp2(b, op, dy):
    y = _y(b, op)
    return [b.mul(dy, b.mul(y, b.const(math.log(2.0), y.type)))]


@adjoint("math.expm1")
def _expm1(b, op, dy):
    y = _y(b, op)
    return [b.mul(dy, b.add(y, b.const(1.0, y.type)))]


@adjoint("math.log")
def _log(b, op, dy):
    return [b.div(dy, _x(b, op))]


@adjoint("math.log2", "math.log10")
def _log_base(b, op, dy):
    x = _x(b, op)
    ln_base = math.log(2.0) if op.name == "math.log2" else math.log(10.0)
    return [b.div(dy, b.mul(x, b.const(ln_base, x.type)))]


@adjoint("math.log1p")
def _log1p(b, op, dy):
    x = _x(b, op)
    return [b.div(dy, b.add(x, b.const(1.0, x.type)))]


@adjoint("math.sqrt")
def _sqrt(b, op, dy):
    y = _y(b, op)
    return [b.div(b.mul(dy, b.const(0.5, y.type)), y)]


@adjoint("math.rsqrt")
def _rsqrt(b, op, dy):
    y = _y(b, op)  # d/dx x^-1/2 = -y^3 / 2
    return [b.mul(dy, b.mul(b.const(-0.5, y.type), b.mul(y, b.mul(y, y))))]


@adjoint("math.cbrt")
def _cbrt(b, op, dy):
    y = _y(b, op)
    return [b.div(dy, b.mul(b.const(3.0, y.type), b.mul(y, y)))]


@adjoint("math.tanh")
def _tanh(b, op, dy):
    y = _y(b, op)
    return [b.mul(dy, b.sub(b.const(1.0, y.type), b.mul(y, y)))]


@adjoint("math.sinh")
def _sinh(b, op, dy):
    return [b.mul(dy, b.op(mathd.CoshOp(_x(b, op))))]


@adjoint("math.cosh")
def _cosh(b, op, dy):
    return [b.mul(dy, b.op(mathd.SinhOp(_x(b, op))))]


def _one_minus_square_root(b, x):
    return b.op(mathd.SqrtOp(b.sub(b.const(1.0, x.type), b.mul(x, x))))


@adjoint("math.asin")
def _asin(b, op, dy):
    return [b.div(dy, _one_minus_square_root(b, _x(b, op)))]


@adjoint("math.acos")
def _acos(b, op, dy):
    return [b.neg(b.div(dy, _one_minus_square_root(b, _x(b, op))))]


@adjoint("math.atan")
def _atan(b, op, dy):
    x = _x(b, op)
    return [b.div(dy, b.add(b.const(1.0, x.type), b.mul(x, x)))]


@adjoint("math.atan2")
def _atan2(b, op, dy):
    # y = atan2(p, q): dp = q / (p^2 + q^2), dq = -p / (p^2 + q^2)
    p, q = _x(b, op, 0), _x(b, op, 1)
    s = b.div(dy, b.add(b.mul(p, p), b.mul(q, q)))
    return [
        b.mul(s, q) if b.is_active(op.operands[0]) else None,
        b.neg(b.mul(s, p)) if b.is_active(op.operands[1]) else None,
    ]


@adjoint("math.powf")
def _powf(b, op, dy):
    base, exponent = op.operands
    da = db = None
    if b.is_active(base):
        # e * a^(e-1), taken as 0 for e == 0 (x^0 is constant, even at x == 0)
        a, e = b.primal(base), b.primal(exponent)
        zero = b.zero(e.type)
        pow_minus_one = b.op(mathd.PowFOp(a, b.sub(e, b.const(1.0, e.type))))
        constant = compare(b, "oeq", e, zero)
        da = b.mul(dy, select(b, constant, zero, b.mul(e, pow_minus_one)))
    if b.is_active(exponent):
        # y * log(a), taken as 0 at a == 0 (the limit for a positive exponent)
        a, y = b.primal(base), _y(b, op)
        zero = b.zero(a.type)
        log_a = b.op(mathd.LogOp(a))
        at_zero = compare(b, "oeq", a, zero)
        db = b.mul(dy, select(b, at_zero, zero, b.mul(y, log_a)))
    return [da, db]


@adjoint("math.absf")
def _absf(b, op, dy):
    # dy * sign(x), with sign(0) = 0
    x = _x(b, op)
    zero = b.zero(x.type)
    signed = b.mul(dy, b.op(mathd.CopySignOp(b.const(1.0, x.type), x)))
    at_zero = b.op(arith.CmpfOp(x, zero, "oeq"))
    return [b.op(arith.SelectOp(at_zero, zero, signed))]


@adjoint("math.copysign")
def _copysign(b, op, dy):
    # |a| with b's sign: d/da = sign(a) * sign(b); piecewise constant in b
    a, sgn = _x(b, op, 0), _x(b, op, 1)
    one = b.const(1.0, a.type)
    flip = b.mul(b.op(mathd.CopySignOp(one, a)), b.op(mathd.CopySignOp(one, sgn)))
    return [b.mul(dy, flip) if b.is_active(op.operands[0]) else None, None]


@adjoint("math.erf")
def _erf(b, op, dy):
    x = _x(b, op)
    gauss = b.op(mathd.ExpOp(b.neg(b.mul(x, x))))
    return [b.mul(dy, b.mul(b.const(2.0 / math.sqrt(math.pi), x.type), gauss))]
