"""The Python library functions the frontend knows, as a table.

Each entry maps a Python callable to an emitter that appends its IR. Functions
with a single math-dialect op lower to that op (its derivative lives in
passes/ad/derivatives/scalar.py). Functions irad implements in Python (irad/numerics.py)
are lowered from their source like user functions, so the rule table sees a
call to them.
"""

from __future__ import annotations

import builtins
import functools
import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import SSAValue

from irad import numerics
from irad.frontend.emitter import Emitter
from irad.ir.arith import RemFOp
from irad.ir.builder import float_op
from irad.ir.types import F64, I64, is_float

Emit = Callable[[Emitter, Sequence[SSAValue]], SSAValue]


def _unary_float(op_class) -> Emit:
    def emit(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
        return em.op(float_op(op_class, em.to_float(args[0])))

    return emit


def _binary_float(op_class) -> Emit:
    def emit(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
        a, b = em.unify(em.to_float(args[0]), em.to_float(args[1]))
        return em.op(float_op(op_class, a, b))

    return emit


def _rounding(op_class) -> Emit:
    """math.floor/ceil/trunc return an int in Python."""

    def emit(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
        x = args[0]
        if not is_float(x.type):
            return em.to_int(x)
        return em.op(arith.FPToSIOp(em.op(op_class(x)), I64))

    return emit


def select_extremum(em: Emitter, args: Sequence[SSAValue], pick_max: bool) -> SSAValue:
    """Python's min/max: keep the earlier argument unless a later one is strictly beyond it."""
    best = args[0]
    for x in args[1:]:
        best, x = em.unify(best, x)
        if is_float(best.type):
            beyond = em.op(arith.CmpfOp(x, best, "ogt" if pick_max else "olt"))
        else:
            beyond = em.op(arith.CmpiOp(x, best, "sgt" if pick_max else "slt"))
        best = em.op(arith.SelectOp(beyond, x, best))
    return best


def _abs(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
    x = args[0]
    if is_float(x.type):
        return em.op(mathd.AbsFOp(x))
    return em.op(mathd.AbsIOp(em.to_int(x)))


def _float(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
    return em.explicit_float(args[0], args[0].type if is_float(args[0].type) else F64)


def _int(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
    x = args[0]
    if is_float(x.type):  # int() truncates toward zero
        return em.op(arith.FPToSIOp(x, I64))
    return em.to_int(x)


def _pow(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
    a, b = em.unify(em.to_float(args[0]), em.to_float(args[1]))
    return em.op(mathd.PowFOp(a, b))


# 20! is the largest factorial that fits in irad's i64
FACTORIALS = tuple(math.factorial(n) for n in range(21))


def _factorial(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
    """A table lookup; the call site checks the argument first (INT_RANGES)."""
    table = em.const(np.array(FACTORIALS, dtype=np.int64), TensorType(I64, [len(FACTORIALS)]))
    index = em.op(arith.IndexCastOp(em.to_int(args[0]), IndexType()))
    return em.op(tensor.ExtractOp(table, [index], I64))


def _float_test(predicate: str, against: float | None) -> Emit:
    """math.isnan/isinf/isfinite: a comparison (of |x| with inf; NaN: unordered with itself)."""

    def emit(em: Emitter, args: Sequence[SSAValue]) -> SSAValue:
        x = em.to_float(args[0])
        if against is None:
            return em.op(arith.CmpfOp(x, x, predicate))
        return em.op(arith.CmpfOp(em.op(mathd.AbsFOp(x)), em.const(against, x.type), predicate))

    return emit


def fmod_domain(em: Emitter, args: Sequence[SSAValue], result: SSAValue) -> SSAValue:
    """Where Python's math.fmod raises ValueError (math domain error): C's fmod
    gives NaN from operands that are not NaN (y == 0, or x infinite)."""
    x, y = (em.to_float(a) for a in args)
    number = em.op(arith.CmpfOp(result, result, "ord"))
    nan_operand = em.op(arith.OrIOp(em.op(arith.CmpfOp(x, x, "uno")), em.op(arith.CmpfOp(y, y, "uno"))))
    return em.op(arith.OrIOp(number, nan_operand))


# callable -> (accepted argument counts, emitter)
OPS: dict[object, tuple[tuple[int, ...], Emit]] = {
    math.sin: ((1,), _unary_float(mathd.SinOp)),
    math.cos: ((1,), _unary_float(mathd.CosOp)),
    math.tan: ((1,), _unary_float(mathd.TanOp)),
    math.exp: ((1,), _unary_float(mathd.ExpOp)),
    math.log: ((1,), _unary_float(mathd.LogOp)),
    math.log1p: ((1,), _unary_float(mathd.Log1pOp)),
    math.log2: ((1,), _unary_float(mathd.Log2Op)),
    math.log10: ((1,), _unary_float(mathd.Log10Op)),
    math.expm1: ((1,), _unary_float(mathd.ExpM1Op)),
    math.sqrt: ((1,), _unary_float(mathd.SqrtOp)),
    math.tanh: ((1,), _unary_float(mathd.TanhOp)),
    math.sinh: ((1,), _unary_float(mathd.SinhOp)),
    math.cosh: ((1,), _unary_float(mathd.CoshOp)),
    math.asin: ((1,), _unary_float(mathd.AsinOp)),
    math.asinh: ((1,), _unary_float(mathd.AsinhOp)),
    math.acos: ((1,), _unary_float(mathd.AcosOp)),
    math.atan: ((1,), _unary_float(mathd.AtanOp)),
    math.erf: ((1,), _unary_float(mathd.ErfOp)),
    math.fabs: ((1,), _unary_float(mathd.AbsFOp)),
    math.atan2: ((2,), _binary_float(mathd.Atan2Op)),
    math.pow: ((2,), _binary_float(mathd.PowFOp)),
    math.floor: ((1,), _rounding(mathd.FloorOp)),
    math.ceil: ((1,), _rounding(mathd.CeilOp)),
    math.trunc: ((1,), _rounding(mathd.TruncOp)),
    builtins.abs: ((1,), _abs),
    builtins.min: ((2, 3, 4, 5, 6, 7, 8), lambda em, a: select_extremum(em, a, False)),
    builtins.max: ((2, 3, 4, 5, 6, 7, 8), lambda em, a: select_extremum(em, a, True)),
    builtins.float: ((1,), _float),
    builtins.bool: ((1,), lambda em, a: em.to_bool(a[0])),  # Python's truth: x != 0 (NaN is true)
    builtins.int: ((1,), _int),
    builtins.pow: ((2,), _pow),
    math.factorial: ((1,), _factorial),
    math.isnan: ((1,), _float_test("uno", None)),
    math.isinf: ((1,), _float_test("oeq", math.inf)),
    math.isfinite: ((1,), _float_test("olt", math.inf)),
    math.copysign: ((2,), _binary_float(mathd.CopySignOp)),
    math.fmod: ((2,), _binary_float(RemFOp)),  # C's fmod: the sign of x, as Python's
}

# The callables above that Python refuses for some arguments: the condition
# that holds where it does not, and the message of Python's error (the call
# site checks it at run time, as for int conversions).
DOMAINS = {math.fmod: (fmod_domain, "math domain error (math.fmod(x, y) with y == 0 or x infinite)")}

# The callables above that take an int only, and the range the call site
# checks it is in: (lowest, message below it, highest, message above it).
INT_RANGES = {
    math.factorial: (0, "factorial() not defined for negative values",
                     len(FACTORIALS) - 1, "math.factorial(n) for n above 20 does not fit in "
                     "irad's 64-bit int"),
}

# The callables above that convert a float to an int (fptosi): the call site
# checks the argument first (see FunctionLowering.check_int_conversion).
FLOAT_TO_INT = frozenset({math.floor, math.ceil, math.trunc, builtins.int})

# Functions lowered from source whose arguments are converted to float first,
# as Python's math functions do (so `logaddexp(x, 0)` meets the float rule).
FLOAT_FUNCTIONS = frozenset(
    {numerics.sigmoid, numerics.softplus, numerics.logaddexp, numerics.hypot, numerics.lgamma,
     numerics.gamma, numerics.digamma}
)


def describe_callable(fn: object) -> str:
    if isinstance(fn, functools.partial):
        return f"partial({describe_callable(fn.func)})"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if not isinstance(name, str):  # an object with __call__
        name = f"{type(fn).__qualname__} object"
        module = type(fn).__module__
    return f"{module}.{name}" if module and module != "builtins" else name


def python_reference(obj: object) -> str:
    """`module:qualname`, by which the backend imports a callable without source."""
    module = getattr(obj, "__module__", None) or "builtins"
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    return f"{module}:{name}"
