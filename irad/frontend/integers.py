"""Python's int on irad's i64: exact where it is known, checked where it is not.

A Python int never wraps. irad's int is i64, so

* int arithmetic on two constants is folded while lowering, with Python's own
  operators (`2**64 % 1000` is exact), and a result outside 64 bits is an error
  at lowering naming the line (`materialise` refuses it);
* int `+`, `-` and `*` of run-time values carry an overflow check (cf.assert,
  a RuntimeCheckError on either backend) instead of wrapping as MLIR's i64 and
  numpy's int64 do.

The checks only use ops that cannot overflow themselves (the limits minus an
operand, quotients by a non-zero divisor), so they mean the same on the Python
backend, whose ints are unbounded, and on native code, whose ints wrap.
"""

from __future__ import annotations

import ast
import operator

from xdsl.dialects import arith, cf, math
from xdsl.ir import Operation, SSAValue
from xdsl.traits import is_side_effect_free

from irad.frontend.emitter import Emitter
from irad.frontend.folding import folded
from irad.ir.types import I64, is_int

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# Python's operators on ints, for folding two constants.
FOLDS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}


def constant_int(v: SSAValue) -> int | None:
    """The value of an int constant (not a bool), if `v` is one or is computed
    from constants alone (`int(np.log2(8))`: folding.py)."""
    owner = v.owner
    if isinstance(owner, arith.ConstantOp) and is_int(v.type):
        return owner.value.value.data
    if is_int(v.type) and isinstance(owner, Operation):
        known, value = folded(v)
        return value if known else None
    return None


def _leaf(v: SSAValue):
    """A run-time int as a term: two side-effect-free ops computing the same op of
    the same terms are one term (`k % 3` written twice in `x[k % 3:k % 3 + 2]`,
    and `int(2.0 * math.tanh(s))` or `a[0]` of the same array, whose ops are
    `math.*` and `tensor.extract`), since their values are equal."""
    owner = v.owner
    if not isinstance(owner, Operation) or owner.regions or not is_side_effect_free(owner):
        return v
    fields = sorted((k, str(a)) for k, a in (*owner.properties.items(), *owner.attributes.items()))
    return owner.name, tuple(_leaf(o) for o in owner.operands), tuple(fields), v.index


def linear(v: SSAValue) -> tuple[dict[object, int], int]:
    """`v` as a sum of run-time ints times constants plus a constant, following
    the `+`, `-` and `*`-by-a-constant that compute it (`(j + 1) * k` is j*k + k)."""
    c = constant_int(v)
    if c is not None:
        return {}, c
    owner = v.owner
    if isinstance(owner, (arith.AddiOp, arith.SubiOp)):
        (ta, ca), (tb, cb) = linear(owner.lhs), linear(owner.rhs)
        sign = 1 if isinstance(owner, arith.AddiOp) else -1
        terms = dict(ta)
        for leaf, k in tb.items():
            terms[leaf] = terms.get(leaf, 0) + sign * k
        return terms, ca + sign * cb
    if isinstance(owner, arith.MuliOp):
        for x, y in ((owner.lhs, owner.rhs), (owner.rhs, owner.lhs)):
            k = constant_int(y)
            if k is not None:
                terms, c = linear(x)
                return {leaf: k * n for leaf, n in terms.items()}, k * c
    return {_leaf(v): 1}, 0


def difference(a: SSAValue, b: SSAValue) -> int | None:
    """`a - b` when it is the same int whatever the run-time values, else None."""
    (ta, ca), (tb, cb) = linear(a), linear(b)
    leaves = set(ta) | set(tb)
    if any(ta.get(leaf, 0) != tb.get(leaf, 0) for leaf in leaves):
        return None
    return ca - cb


def fold(op: ast.operator, a: SSAValue, b: SSAValue) -> int | None:
    """`a op b` by Python's rules when both are int constants; None otherwise,
    and for a division by zero, which is left to the run-time check."""
    x, y = constant_int(a), constant_int(b)
    fn = FOLDS.get(type(op))
    if x is None or y is None or fn is None:
        return None
    if y == 0 and isinstance(op, (ast.FloorDiv, ast.Mod)):
        return None
    return fn(x, y)


class CheckedIntegers:
    """Emits i64 `+ - *` that raise instead of wrapping."""

    def __init__(self, em: Emitter, where: str):
        self.em = em
        self.where = where  # file:line:col of the expression, for the message

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        for x, c in ((a, constant_int(b)), (b, constant_int(a))):
            if c is not None:  # x + c fits iff x is in [MIN - c, MAX - c]
                self._assert_within(x, INT64_MIN - c, INT64_MAX - c, "+")
                return self.em.op(arith.AddiOp(a, b))
        # b > 0: a > MAX - b overflows; b < 0: a < MIN - b does
        em = self.em
        positive = self._cmp(b, "sgt", em.const(0, I64))
        above = self._cmp(a, "sgt", em.op(arith.SubiOp(self._const(INT64_MAX), b)))
        below = self._cmp(a, "slt", em.op(arith.SubiOp(self._const(INT64_MIN), b)))
        self._assert_not(em.op(arith.SelectOp(positive, above, below)), "+")
        return em.op(arith.AddiOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        em = self.em
        c = constant_int(b)
        if c is not None:  # a - c fits iff a is in [MIN + c, MAX + c]
            self._assert_within(a, INT64_MIN + c, INT64_MAX + c, "-")
            return em.op(arith.SubiOp(a, b))
        c = constant_int(a)
        if c is not None:  # c - b fits iff b is in [c - MAX, c - MIN]
            self._assert_within(b, c - INT64_MAX, c - INT64_MIN, "-")
            return em.op(arith.SubiOp(a, b))
        # b < 0: a > MAX + b overflows; b > 0: a < MIN + b does
        negative = self._cmp(b, "slt", em.const(0, I64))
        above = self._cmp(a, "sgt", em.op(arith.AddiOp(self._const(INT64_MAX), b)))
        below = self._cmp(a, "slt", em.op(arith.AddiOp(self._const(INT64_MIN), b)))
        self._assert_not(em.op(arith.SelectOp(negative, above, below)), "-")
        return em.op(arith.SubiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        em = self.em
        for x, c in ((a, constant_int(b)), (b, constant_int(a))):
            if c is not None:  # x * c fits iff x is in [lo, hi]
                if c > 0:
                    self._assert_within(x, _ceil_div(INT64_MIN, c), INT64_MAX // c, "*")
                elif c < 0:  # dividing by a negative number swaps the bounds
                    self._assert_within(x, _ceil_div(INT64_MAX, c), INT64_MIN // c, "*")
                return em.op(arith.MuliOp(a, b))
        # Two run-time factors. With a > 0: b must lie in [ceil(MIN/a), floor(MAX/a)];
        # with a < -1 in [ceil(MAX/a), floor(MIN/a)]; with a == -1, b != MIN
        # (the one quotient MIN / a that overflows, so that lane divides by 1).
        zero, one = em.const(0, I64), em.const(1, I64)
        a_is_zero = self._cmp(a, "eq", zero)
        a_is_minus_one = self._cmp(a, "eq", em.const(-1, I64))
        divisor = em.op(arith.SelectOp(em.op(arith.OrIOp(a_is_zero, a_is_minus_one)), one, a))
        positive = self._cmp(a, "sgt", zero)
        top, bottom = self._const(INT64_MAX), self._const(INT64_MIN)
        lo = em.op(arith.SelectOp(
            positive,
            em.op(arith.CeilDivSIOp(bottom, divisor)),
            em.op(arith.CeilDivSIOp(top, divisor)),
        ))
        hi = em.op(arith.SelectOp(
            positive,
            em.op(arith.FloorDivSIOp(top, divisor)),
            em.op(arith.FloorDivSIOp(bottom, divisor)),
        ))
        outside = em.op(arith.OrIOp(self._cmp(b, "slt", lo), self._cmp(b, "sgt", hi)))
        outside = em.op(arith.SelectOp(a_is_minus_one, self._cmp(b, "eq", bottom), outside))
        self._assert_not(em.op(arith.SelectOp(a_is_zero, em.const(0, outside.type), outside)), "*")
        return em.op(arith.MuliOp(a, b))

    def negate(self, a: SSAValue) -> SSAValue:
        return self.sub(self.em.const(0, I64), a)

    def floor_divide(self, a: SSAValue, b: SSAValue) -> SSAValue:
        """a // b (b != 0, checked by the caller): INT64_MIN // -1 is 2**63, beyond
        64 bits, and floordivsi traps on it natively (SIGFPE): it is checked."""
        c = constant_int(b)
        if c is None:
            em = self.em
            self._assert_not(em.op(arith.AndIOp(self._cmp(a, "eq", self._const(INT64_MIN)),
                                                self._cmp(b, "eq", self._const(-1)))), "//")
        elif c == -1:
            return self.negate(a)
        return self.em.op(arith.FloorDivSIOp(a, b))

    def absolute(self, a: SSAValue) -> SSAValue:
        """abs(a): abs(INT64_MIN) is 2**63, beyond 64 bits."""
        if constant_int(a) is None or constant_int(a) == INT64_MIN:
            self._assert_not(self._cmp(a, "eq", self._const(INT64_MIN)), "abs")
        return self.em.op(math.AbsIOp(a))

    # ---- helpers -------------------------------------------------------------
    def _cmp(self, a: SSAValue, predicate: str, b: SSAValue) -> SSAValue:
        return self.em.op(arith.CmpiOp(a, b, predicate))

    def _const(self, value: int) -> SSAValue:
        return self.em.const(value, I64)

    def _assert_within(self, x: SSAValue, lo: int, hi: int, symbol: str) -> None:
        """x in [lo, hi], checking only the bounds that exclude some i64."""
        em = self.em
        overflow = None
        for bound, predicate, needed in ((lo, "slt", lo > INT64_MIN), (hi, "sgt", hi < INT64_MAX)):
            if needed:
                out = self._cmp(x, predicate, self._const(bound))
                overflow = out if overflow is None else em.op(arith.OrIOp(overflow, out))
        if overflow is not None:
            self._assert_not(overflow, symbol)

    def _assert_not(self, overflow: SSAValue, symbol: str) -> None:
        em = self.em
        ok = em.op(arith.XOrIOp(overflow, em.const(1, overflow.type)))
        em.op(cf.AssertOp(
            ok,
            f"{self.where}: integer overflow in `{symbol}`: the result does not fit "
            "in 64 bits (irad's int is i64)",
        ))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


FLOAT_TO_INT_MESSAGE = (
    "cannot convert float infinity or NaN to integer (or the integer does not fit in 64 bits)"
)


def float_fits_int64(em: Emitter, x: SSAValue) -> SSAValue:
    """Whether fptosi of the float `x` is defined (it is poison outside i64 and
    for inf and nan). x itself suffices for floor/ceil/trunc too: no double
    lies strictly between 2**63 - 1024 and 2**63, nor just below -2**63."""
    return em.op(arith.AndIOp(  # ordered comparisons: false for nan
        em.op(arith.CmpfOp(x, em.const(-(2.0**63), x.type), "oge")),
        em.op(arith.CmpfOp(x, em.const(2.0**63, x.type), "olt")),
    ))



EXACT_IN_FLOAT = 2**53  # every int up to this magnitude is a float exactly


def compare_with_float(em: Emitter, predicates: tuple[str, str], left: SSAValue, right: SSAValue) -> SSAValue:
    """Python's comparison of an int and a float (one each, either order): exact,
    where converting the int to float would round it above 2**53
    (`2**53 + 1 > 2.0**53` is True). `predicates` is (cmpf's, cmpi's).

    With f in i64's range, t = trunc(f) and its fraction f - t are exact, and
    i p f is i p t where i != t (|f - t| < 1), else 0 p (f - t). Outside the
    range (or NaN), 0 stands for i: every i64 lies on 0's side of f."""
    fpred, ipred = predicates
    int_left = is_int(left.type)
    i, f = (left, right) if int_left else (right, left)

    def ordered(x: SSAValue, y: SSAValue) -> tuple[SSAValue, SSAValue]:
        return (x, y) if int_left else (y, x)

    zero = em.const(0.0, f.type)
    in_range = float_fits_int64(em, f)
    safe = em.op(arith.SelectOp(in_range, f, zero))  # fptosi of the others is poison
    t = em.op(arith.FPToSIOp(safe, I64))
    fraction = em.op(arith.SubfOp(safe, em.op(arith.SIToFPOp(t, f.type))))
    inside = em.op(arith.SelectOp(
        em.op(arith.CmpiOp(i, t, "ne")),
        em.op(arith.CmpiOp(*ordered(i, t), ipred)),
        em.op(arith.CmpfOp(*ordered(zero, fraction), fpred)),
    ))
    outside = em.op(arith.CmpfOp(*ordered(zero, f), fpred))
    return em.op(arith.SelectOp(in_range, inside, outside))
