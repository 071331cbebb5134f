"""Default backend: translate a scalar xDSL module into Python source code.

The module is translated once into straight-line Python (one local variable
per SSA value, a Python ``if`` per ``scf.if``) and compiled once. The code is
then executed in two namespaces that bind the same helper names differently:

* the *fast* namespace works on Python floats with operators and ``math``,
  which raise ZeroDivisionError / ValueError / OverflowError where IEEE 754
  gives inf or nan (``1.0 / 0.0``, ``math.log(0.0)``, ``math.exp(1000.0)``);
* the *IEEE* namespace works on ``np.float64`` scalars with numpy ufuncs under
  ``np.errstate(all="ignore")``, which follow IEEE 754.

Every generated function wraps its body in ``try: ... except _IEEE_ERRORS:``.
In the fast namespace ``_IEEE_ERRORS`` is those three errors and the handler
re-runs the same function from the IEEE namespace; in the IEEE namespace it is
``()``, which catches nothing. So the common case runs at plain-Python speed
with no wrapper, and an exceptional call (or just the callee that raised)
still gets IEEE results. Both namespaces follow the MLIR definition of each
op, as irad/ir/ieee.py states it (e.g. ``math.round`` rounds half away from
zero, ``math.powf`` is C ``pow``, ``math.cbrt`` is the real cube root).

Value representation:

* f64: Python float (``np.float64`` in the IEEE namespace).
* f32: the same, holding a value on the f32 grid: an f32 op is computed in f64
  and its result rounded to f32, which is exact for + - * / sqrt.
* iN and index: Python int *without wraparound* (``addi``/``muli`` never
  overflow). Ops whose meaning depends on the bit pattern (unsigned ops,
  ``trunci``, ``extui``) reinterpret the value modulo 2**width; their results
  are not renormalised. Arithmetic on i1 other than bitwise ops is rejected.
* i1: Python bool.

Integer division or remainder by zero (undefined behaviour in MLIR) raises
ZeroDivisionError; ``fptosi``/``fptoui`` of nan or inf (poison in MLIR) raise
ValueError/OverflowError.

Ops are translated through two tables keyed by op name: ``EXPRESSION_OPS``
(an op with one result computed by a Python expression) and ``STATEMENT_OPS``
(ops that emit whole statements: calls, returns, control flow). Supporting a
new op means adding an entry to one of them.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import itertools
import keyword
import linecache
import math
import re
import struct
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    UnregisteredOp,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from irad.backends import entry
from irad.backends.protocol import CompiledModule

from irad.backends.python import arrays as python_arrays

from irad.backends.python import temporaries as python_temporaries
from irad.backends.python.arrays import float_literal as _float_literal
from irad.base.errors import BackendError, RuntimeCheckError, check_failure
from irad.ir import printing
from irad.ir import ieee
from irad.ir.dialect import TAPE_COPY
from irad.ir.locations import recursion_message
from irad.ir.mlir_ops import SMALLEST_NORMAL
from irad.ir.types import NARROW_INTS, is_tensor
from irad.ir.walk import operands as operand_tuple, ops_of
from irad.ir.isa import isa

# --------------------------------------------------------------------------
# Runtime helpers bound in the namespaces the generated code runs in.
# --------------------------------------------------------------------------

# Errors by which Python floats and `math` signal what IEEE 754 answers with
# inf or nan; seeing one means "re-run in the IEEE namespace".
_NON_IEEE_ERRORS = (ZeroDivisionError, ValueError, OverflowError)

_F32 = struct.Struct("f")


def _fast_to_f32(x: float) -> float:
    # Packing to a C float rounds to nearest-even (overflowing to inf).
    return _F32.unpack(_F32.pack(x))[0]


# ieee.CORRECTLY_ROUNDED on Python floats, at plain-Python speed. math's
# ceil/floor/trunc return ints, losing the sign of zero (ceil(-0.5) is -0.0 in
# IEEE), and raise on inf and nan.
def _fast_ceil(x: float) -> float:
    return math.copysign(float(math.ceil(x)), x)


def _fast_floor(x: float) -> float:
    return math.copysign(float(math.floor(x)), x)


def _fast_trunc(x: float) -> float:
    return math.copysign(float(math.trunc(x)), x)


def _fast_round(x: float) -> float:
    return float(ieee.round_half_away(x))  # rare (the frontend never emits it): no math version


def _fast_roundeven(x: float) -> float:
    # round() with ndigits returns a float, rounded half to even.
    return round(x, 0)


_FAST_CORRECTLY_ROUNDED: dict[str, Callable[..., float]] = {
    "math.ceil": _fast_ceil,
    "math.copysign": math.copysign,
    "math.floor": _fast_floor,
    "math.round": _fast_round,
    "math.roundeven": _fast_roundeven,
    "math.sqrt": math.sqrt,
    "math.trunc": _fast_trunc,
}


def _fast_rsqrt(x: float) -> float:
    return 1.0 / math.sqrt(x)


def _ieee_fma(a: Any, b: Any, c: Any) -> np.float64:
    return np.float64(ieee.fma(a, b, c))


def _helper(op_name: str) -> str:
    """The name generated code calls op `op_name` by: `_sin` for math.sin."""
    return "_" + op_name.partition(".")[2]


# Float math functions: name used by the generated code -> (fast, IEEE).
_FLOAT_FUNCTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    **{_helper(name): pair for name, pair in ieee.LIBM.items()},
    **{
        _helper(name): (fast, ieee.CORRECTLY_ROUNDED[name])
        for name, fast in _FAST_CORRECTLY_ROUNDED.items()
    },
    "_fma": (ieee.fma, _ieee_fma),
    "_fpowi": (math.pow, ieee.fpowi),
    "_remf": (math.fmod, np.fmod),
    "_rsqrt": (_fast_rsqrt, ieee.rsqrt),
    "_f64": (float, np.float64),
    "_f32": (_fast_to_f32, ieee.round_to_f32),
}

# Helpers that are correct in both namespaces: they only compare and pick, or
# work on ints.
_SHARED_FUNCTIONS: dict[str, Callable[..., Any]] = {
    **{_helper(name): pick for name, pick in ieee.MIN_MAX.items()},
    "_clampf": ieee.clampf,
    "_divsi": ieee.divsi,
    "_remsi": ieee.remsi,
    "_ceildivsi": ieee.ceildivsi,
    "_ipowi": ieee.ipowi,
}

FAST_NAMESPACE: dict[str, Any] = {
    **{name: fast for name, (fast, _) in _FLOAT_FUNCTIONS.items()},
    **_SHARED_FUNCTIONS,
    "_check_failure": check_failure,  # cf.assert
}
IEEE_NAMESPACE: dict[str, Any] = {
    **{name: precise for name, (_, precise) in _FLOAT_FUNCTIONS.items()},
    **_SHARED_FUNCTIONS,
    "_check_failure": check_failure,
}

# --------------------------------------------------------------------------
# Types.
# --------------------------------------------------------------------------

_INDEX_WIDTH = 64


def _is_float(t: Attribute) -> bool:
    return isinstance(t, (Float64Type, Float32Type))


def _is_tape(t: Attribute) -> bool:
    return isinstance(t, MemRefType) and len(t.shape) == 1 and _is_float(t.element_type)


@functools.lru_cache(maxsize=1024)  # per type, not per value: a module has few types
def _is_supported_type(t: Attribute) -> bool:
    if is_tensor(t):  # numpy arrays: python/arrays.py
        return python_arrays.is_supported_tensor(t) and _is_supported_type(t.element_type)
    if python_arrays.is_tape_view(t) or python_arrays.is_buffer(t):
        return True
    return _is_float(t) or isinstance(t, (IntegerType, IndexType)) or _is_tape(t)


def _width(t: Attribute) -> int:
    """Bit width of an integer-like type."""
    if isinstance(t, IndexType):
        return _INDEX_WIDTH
    assert isinstance(t, IntegerType)
    return t.width.data


def _is_i1(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def _as_signed(expr: str, t: Attribute) -> str:
    """`expr` (a value of integer type t) read as a signed integer."""
    return f"(-{expr})" if _is_i1(t) else expr  # i1 true is -1


def _as_unsigned(expr: str, t: Attribute) -> str:
    """`expr` (a value of integer type t) read as an unsigned integer."""
    if _is_i1(t):
        return expr  # False < True already
    return f"({expr} & {hex((1 << _width(t)) - 1)})"


def _truncate(expr: str, t: Attribute) -> str:
    """Keep the low bits of an int, as a signed value of integer type t."""
    if _is_i1(t):
        return f"bool({expr} & 1)"
    half = 1 << (_width(t) - 1)
    return f"((({expr}) + {hex(half)}) & {hex(2 * half - 1)}) - {hex(half)}"


def _to_float(expr: str, t: Attribute) -> str:
    return f"_f32({expr})" if isinstance(t, Float32Type) else f"_f64({expr})"


def _result_converter(t: Attribute) -> Callable[[Any], Any]:
    """Turns an IEEE-namespace result into the plain Python type."""
    if is_tensor(t):
        return python_arrays.owned
    if _is_float(t):
        return float
    if _is_tape(t):
        return list
    return bool if _is_i1(t) else int


def _ieee_argument(t: Attribute) -> Callable[[Any], Any]:
    """Turns a fast-namespace argument into the IEEE namespace's type. A
    private function skips its entry's conversions, and a tape's entries are
    Python floats whoever reads it: both would still raise where IEEE 754
    gives inf or nan (a pullback divides by a record its forward pass never
    wrote, on a path it does not take)."""
    if _is_float(t):
        return np.float64
    if _is_tape(t):
        return _ieee_tape
    return lambda value: value


def _ieee_tape(tape: list) -> list:
    """The tape's Python floats as np.float64, in place: the caller may
    still read or write the same list, and the values are the same."""
    for i, value in enumerate(tape):
        if type(value) is float:
            tape[i] = np.float64(value)
    return tape


def _is_private(function: func.FuncOp) -> bool:
    visibility = function.sym_visibility
    return visibility is not None and visibility.data == "private"


def _argument_conversion(t: Attribute, param: str) -> str:
    """The expression that normalises argument `param` of type t on entry."""
    if is_tensor(t):
        return python_arrays.argument_conversion(t, param)
    if isinstance(t, Float32Type):
        return f"_f32({param})"
    if _is_float(t):
        return f"_f64({param})"
    if _is_tape(t):
        return f"list({param})"
    return f"bool({param})" if _is_i1(t) else f"int({param})"


def _vouched(kind: Any, t: Attribute) -> bool:
    """An entry's check that an argument is of `kind` (entry.py) makes its
    conversion to type t a no-op."""
    if isinstance(kind, entry.ArrayKind):
        return is_tensor(t) and kind.dtype == np.dtype(python_arrays.dtype_name(t)[3:])
    if kind is float:
        return isinstance(t, Float64Type)
    if kind is bool:
        return _is_i1(t)
    return kind is int and isinstance(t, (IntegerType, IndexType)) and not _is_i1(t)


def _has_arrays(function: func.FuncOp) -> bool:
    signature = function.function_type
    return any(is_tensor(t) for t in (*signature.inputs, *signature.outputs))


def _owned_result(tr: FunctionTranslator, v: SSAValue) -> str:
    """A result handed to the caller: an array only it holds (python_arrays.owned),
    copied unless generated code just allocated it for this result alone."""
    name = tr.value(v)
    if not is_tensor(v.type) or python_arrays.fresh(v):
        return name
    return f"np.array({name})" if v.type.get_shape() else f"_owned({name})"


# --------------------------------------------------------------------------
# The op tables.
# --------------------------------------------------------------------------

# Builds the Python expression for an op with one result.
ExpressionEmitter = Callable[["FunctionTranslator", Operation], str]
# Emits the statements for an op (control flow, calls, returns).
StatementEmitter = Callable[["FunctionTranslator", Operation], None]


def _infix(symbol: str) -> ExpressionEmitter:
    def emit(tr: FunctionTranslator, op: Operation) -> str:
        lhs, rhs = tr.operands(op)
        return f"{lhs} {symbol} {rhs}"

    return emit


def _call(helper: str) -> ExpressionEmitter:
    def emit(tr: FunctionTranslator, op: Operation) -> str:
        return f"{helper}({', '.join(tr.operands(op))})"

    return emit


def _integer_arithmetic(emitter: ExpressionEmitter) -> ExpressionEmitter:
    """Rejects i1 operands, where Python's bool arithmetic would be wrong."""

    def emit(tr: FunctionTranslator, op: Operation) -> str:
        if _is_i1(op.results[0].type):
            raise tr.error(op, "arithmetic on i1 is not supported")
        return emitter(tr, op)

    return emit


def _unsigned_infix(symbol: str) -> ExpressionEmitter:
    def emit(tr: FunctionTranslator, op: Operation) -> str:
        t = op.operands[0].type
        lhs, rhs = tr.operands(op)
        return f"{_as_unsigned(lhs, t)} {symbol} {_as_unsigned(rhs, t)}"

    return _integer_arithmetic(emit)


def _emit_constant(tr: FunctionTranslator, op: Operation) -> str:
    assert isinstance(op, arith.ConstantOp)
    t = op.result.type
    attr = op.value
    if isinstance(attr, FloatAttr):
        return tr.constant(_to_float(_float_literal(attr.value.data), t))
    assert isinstance(attr, IntegerAttr)
    value = attr.value.data
    if _is_i1(t):
        return repr(value != 0)
    # Normalise to the signed reading of the bits, the representation of ints;
    # one of numpy's narrow dtypes only fills or meets arrays: a numpy scalar of it
    width = _width(t)
    if t in NARROW_INTS:
        return python_arrays.int_literal(value, t)
    if value >= 1 << (width - 1):
        value -= 1 << width
    return repr(value)


def _emit_cmpf(tr: FunctionTranslator, op: Operation) -> str:
    assert isinstance(op, arith.CmpfOp)
    predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
    a, b = tr.operands(op)
    return ieee.CMPF_EXPRESSIONS[predicate].format(a=a, b=b)


# arith.cmpi predicate -> (Python operator, reading of the operands).
_CMPI_OPERATORS: dict[str, tuple[str, Callable[[str, Attribute], str]]] = {
    "eq": ("==", _as_signed),
    "ne": ("!=", _as_signed),
    "slt": ("<", _as_signed),
    "sle": ("<=", _as_signed),
    "sgt": (">", _as_signed),
    "sge": (">=", _as_signed),
    "ult": ("<", _as_unsigned),
    "ule": ("<=", _as_unsigned),
    "ugt": (">", _as_unsigned),
    "uge": (">=", _as_unsigned),
}


def _emit_cmpi(tr: FunctionTranslator, op: Operation) -> str:
    assert isinstance(op, arith.CmpiOp)
    predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
    symbol, read = _CMPI_OPERATORS[predicate]
    t = op.operands[0].type
    a, b = tr.operands(op)
    return f"{read(a, t)} {symbol} {read(b, t)}"


def _emit_select(tr: FunctionTranslator, op: Operation) -> str:
    condition, if_true, if_false = tr.operands(op)
    return f"{if_true} if {condition} else {if_false}"


def _emit_sitofp(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return _to_float(_as_signed(x, op.operands[0].type), op.results[0].type)


def _emit_uitofp(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return _to_float(_as_unsigned(x, op.operands[0].type), op.results[0].type)


def _emit_fptoi(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    t = op.results[0].type
    # int() truncates toward zero, as fptosi/fptoui do.
    return _truncate(f"int({x})", t) if _is_i1(t) else f"int({x})"


def _emit_extf(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return x  # an f32 value is already an exact f64


def _emit_truncf(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return f"_f32({x})"


def _emit_extsi(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return _as_signed(x, op.operands[0].type)


def _emit_extui(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    t = op.operands[0].type
    return f"int({x})" if _is_i1(t) else _as_unsigned(x, t)


def _emit_trunci(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    t = op.results[0].type
    if t in NARROW_INTS:  # a number that fills an array of numpy's dtype: a numpy scalar of it
        return python_arrays.int_literal(x, t, expression=_truncate(x, t))
    return _truncate(x, t)


def _emit_index_cast(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    source, target = op.operands[0].type, op.results[0].type
    if _width(target) < _width(source):
        return _truncate(x, target)
    return _as_signed(x, source)  # sign extension


def _emit_negf(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return f"-{x}"


def _emit_abs(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return f"abs({x})"


# Tests of a float's class, on f64 and on f32 values (held as f64 on the f32 grid).
_FLOAT_CLASS = {
    "math.isfinite": "(abs({x}) < float('inf'))",
    "math.isinf": "(abs({x}) == float('inf'))",
    "math.isnan": "({x} != {x})",
    "math.isnormal": "({tiny} <= abs({x}) < float('inf'))",  # NaN compares false
}


def _emit_float_class(tr: FunctionTranslator, op: Operation) -> str:
    (x,) = tr.operands(op)
    return _FLOAT_CLASS[op.name].format(x=x, tiny=repr(SMALLEST_NORMAL.get(type(op.operands[0].type))))


def _emit_load(tr: FunctionTranslator, op: Operation) -> str:
    memref, index = tr.operands(op)
    return f"{memref}[{index}]"


def _emit_dim(tr: FunctionTranslator, op: Operation) -> str:
    memref, _ = tr.operands(op)  # a tape has one dimension
    return f"len({memref})"


EXPRESSION_OPS: dict[str, ExpressionEmitter] = {
    "arith.constant": _emit_constant,
    # Float arithmetic.
    "arith.addf": _infix("+"),
    "arith.subf": _infix("-"),
    "arith.mulf": _infix("*"),
    "arith.divf": _infix("/"),
    "arith.negf": _emit_negf,
    "arith.remf": _call("_remf"),
    "arith.maximumf": _call("_maximumf"),
    "arith.minimumf": _call("_minimumf"),
    "arith.maxnumf": _call("_maxnumf"),
    "arith.minnumf": _call("_minnumf"),
    "arith.cmpf": _emit_cmpf,
    # Integer arithmetic.
    "arith.addi": _integer_arithmetic(_infix("+")),
    "arith.subi": _integer_arithmetic(_infix("-")),
    "arith.muli": _integer_arithmetic(_infix("*")),
    "arith.divsi": _integer_arithmetic(_call("_divsi")),
    "arith.remsi": _integer_arithmetic(_call("_remsi")),
    "arith.floordivsi": _integer_arithmetic(_infix("//")),
    "arith.ceildivsi": _integer_arithmetic(_call("_ceildivsi")),
    "arith.divui": _unsigned_infix("//"),
    "arith.remui": _unsigned_infix("%"),
    "arith.maxsi": _integer_arithmetic(_call("max")),
    "arith.minsi": _integer_arithmetic(_call("min")),
    "arith.andi": _infix("&"),
    "arith.ori": _infix("|"),
    "arith.xori": _infix("^"),
    "arith.cmpi": _emit_cmpi,
    "arith.select": _emit_select,
    # Casts.
    "arith.sitofp": _emit_sitofp,
    "arith.uitofp": _emit_uitofp,
    "arith.fptosi": _emit_fptoi,
    "arith.fptoui": _emit_fptoi,
    "arith.extf": _emit_extf,
    "arith.truncf": _emit_truncf,
    "arith.extsi": _emit_extsi,
    "arith.extui": _emit_extui,
    "arith.trunci": _emit_trunci,
    "arith.index_cast": _emit_index_cast,
    # The tape (memref<?xf64> as a Python list).
    "memref.load": _emit_load,
    **python_arrays.TAPE_EXPRESSIONS,  # tensors on the tape
    "memref.dim": _emit_dim,
    # math.
    "math.absf": _emit_abs,
    "math.absi": _integer_arithmetic(_emit_abs),
    "math.ipowi": _integer_arithmetic(_call("_ipowi")),
    **{
        f"math.{name}": _call(f"_{name}")
        for name in (
            "acos acosh asin asinh atan atan2 atanh cbrt ceil clampf copysign cos "
            "cosh erf erfc exp exp2 expm1 floor fma fpowi log log10 log1p log2 powf "
            "round roundeven rsqrt sin sinh sqrt tan tanh trunc"
        ).split()
    },
    **{name: _emit_float_class for name in _FLOAT_CLASS},
}

# Ops with an f32 result that is already on the f32 grid: exact on f32
# operands, or rounding by themselves. Every other f32 result gets rounded.
_F32_EXACT_OPS = {
    "arith.constant",
    "arith.negf",
    "arith.select",
    "arith.remf",
    "arith.maximumf",
    "arith.minimumf",
    "arith.maxnumf",
    "arith.minnumf",
    "arith.sitofp",
    "arith.uitofp",
    "arith.truncf",
    "math.absf",
    "math.clampf",
    "math.copysign",
    "math.ceil",
    "math.floor",
    "math.trunc",
    "math.round",
    "math.roundeven",
}


# ---- Forwarded expressions (FunctionTranslator._forwarded) --------------------------
# A scalar op whose one use is later in the same block may be computed inside that
# user's line: SSA values are never reassigned before the end of their block (a
# loop's carried variables are assigned by its yield, all at once), so the
# expression reads the same values there. Only ops that read no memory move (not
# memref.load, nor memref.dim or views of the tape, which a store may change), and
# only into users that evaluate each operand at most once, at their own place.
_FORWARDABLE = frozenset(EXPRESSION_OPS) - {"memref.load", "memref.dim", *python_arrays.TAPE_EXPRESSIONS}
_READ_TWICE = frozenset({"arith.cmpf", *_FLOAT_CLASS})  # their expressions repeat an operand


def _forwards_into(user: Operation) -> bool:
    name = _op_name(user)
    if name in ("memref.store", "func.return", "func.call", "scf.yield"):
        return True
    return name in EXPRESSION_OPS and name not in _READ_TWICE and not python_arrays.has_tensor(user)


_MAX_FORWARDED_DEPTH = 8


def _emit_return(tr: FunctionTranslator, op: Operation) -> None:
    tr.line(f"return {_tuple(tr.operands(op))}")


def _emit_call(tr: FunctionTranslator, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    callee = tr.function_identifier(op, op.callee.string_value())
    call = f"{callee}({', '.join(tr.operands(op))})"
    if op.results:
        targets = [tr.define(result) for result in op.results]
        tr.line(f"{_tuple(targets)} = {call}")
    else:
        tr.line(call)


def _emit_sincos(tr: FunctionTranslator, op: Operation) -> None:
    (x,) = tr.operands(op)
    if python_arrays.has_tensor(op):
        sin, cos = f"np.sin({x})", f"np.cos({x})"
    elif isinstance(op.operands[0].type, Float32Type):
        sin, cos = f"_f32(_sin({x}))", f"_f32(_cos({x}))"
    else:
        sin, cos = f"_sin({x})", f"_cos({x})"
    tr.line(f"{tr.define(op.results[0])}, {tr.define(op.results[1])} = {sin}, {cos}")


def _emit_if(tr: FunctionTranslator, op: Operation) -> None:
    assert isinstance(op, scf.IfOp)
    # Both branches assign the same variables: the results of the if.
    targets = [tr.define(result) for result in op.results]
    tr.line(f"if {tr.value(op.cond)}:")
    with tr.indented():
        tr.region_yielding_into(op, op.true_region, targets)
    if op.false_region.blocks:
        tr.line("else:")
        with tr.indented():
            tr.region_yielding_into(op, op.false_region, targets)


def _assign(tr: FunctionTranslator, targets: Sequence[str], values: Sequence[str]) -> None:
    """Assign all values at once (a loop may swap its carried values)."""
    if targets:
        tr.line(f"{', '.join(targets)} = {', '.join(values)}")


def _emit_assert(tr: FunctionTranslator, op: Operation) -> None:
    # a check compiled into the program (an index in bounds): numpy's IndexError
    tr.line(f"if not {tr.value(op.operands[0])}:")
    with tr.indented():
        tr.line(f"raise _check_failure({op.msg.data!r})")


def _emit_for(tr: FunctionTranslator, op: Operation) -> None:
    assert isinstance(op, scf.ForOp)
    body = tr._single_block(op, op.body)
    lower, upper, step, *inits = tr.operands(op)
    if TAPE_COPY in op.attributes:  # the tape growing: one slice copy, not a loop
        load, store = list(body.ops)[:2]
        source, dest = tr.value(load.memref), tr.value(store.memref)
        tr.line(f"{dest}[{lower}:{upper}] = {source}[{lower}:{upper}]")
        return
    carried = [tr.define(arg) for arg in body.args[1:]]
    _assign(tr, carried, inits)
    tr.line(f"for {tr.define(body.args[0])} in range({lower}, {upper}, {step}):")
    with tr.indented():
        tr.region_yielding_into(op, op.body, carried)
    _assign(tr, [tr.define(r) for r in op.results], carried)


def _emit_while(tr: FunctionTranslator, op: Operation) -> None:
    assert isinstance(op, scf.WhileOp)
    before = tr._single_block(op, op.before_region)
    after = tr._single_block(op, op.after_region)
    carried = [tr.define(arg) for arg in before.args]
    _assign(tr, carried, tr.operands(op))
    results = [tr.define(r) for r in op.results]
    tr.line("while True:")
    with tr.indented():
        *ops, condition = before.ops
        for inner in ops:
            tr.translate_op(inner)
        if not isinstance(condition, scf.ConditionOp):
            raise tr.error(condition, "expected scf.condition ending the before region")
        _assign(tr, results, [tr.value(v) for v in condition.operands[1:]])
        tr.line(f"if not {tr.value(condition.operands[0])}:")
        tr.line("    break")
        _assign(tr, [tr.define(arg) for arg in after.args], results)
        tr.region_yielding_into(op, op.after_region, carried)


# The tape is a memref<?xf64>: a Python list, written in place.
def _emit_alloc(tr: FunctionTranslator, op: Operation) -> None:
    if python_arrays.is_buffer(op.results[0].type):  # a tensor's record: python/arrays.py
        return python_arrays.emit_static_alloc(tr, op)
    (size,) = tr.operands(op)
    tr.line(f"{tr.define(op.results[0])} = [0.0] * {size}")


def _emit_store(tr: FunctionTranslator, op: Operation) -> None:
    value, memref, index = tr.operands(op)
    tr.line(f"{memref}[{index}] = {value}")


def _emit_dealloc(tr: FunctionTranslator, op: Operation) -> None:
    pass  # Python frees the list when it is no longer referenced


STATEMENT_OPS: dict[str, StatementEmitter] = {
    "math.sincos": _emit_sincos,
    "func.return": _emit_return,
    "func.call": _emit_call,
    "scf.if": _emit_if,
    "cf.assert": _emit_assert,
    "scf.for": _emit_for,
    "scf.while": _emit_while,
    "memref.alloc": _emit_alloc,
    "memref.store": _emit_store,
    "memref.dealloc": _emit_dealloc,
    "memref.copy": python_arrays.emit_copy,
    "bufferization.materialize_in_destination": python_arrays.emit_materialize,
}


def _tuple(items: Sequence[str]) -> str:
    if len(items) == 1:
        return f"({items[0]},)"
    return f"({', '.join(items)})"


# --------------------------------------------------------------------------
# Translation.
# --------------------------------------------------------------------------

_RESERVED_NAMES = frozenset(dir(builtins)) | frozenset(keyword.kwlist)


def _op_name(op: Operation) -> str:
    if isa(op, UnregisteredOp):
        return op.op_name.data
    return op.name


def _sanitize(text: str) -> str:
    return re.sub(r"\W", "_", text, flags=re.ASCII)


@functools.lru_cache(maxsize=4096)  # name hints repeat (%x, %r0, ...)
def _local_base(hint: str) -> str:
    """The Python name a local for a value named `hint` starts from. Locals never
    start with "_" or "fn_" (runtime helpers, functions) and never shadow a
    builtin the generated code may call."""
    base = _sanitize(hint)
    if not base or base[0].isdigit() or base.startswith(("_", "fn_")) or base in _RESERVED_NAMES:
        base = f"v{base}"
    return base


class _Names:
    """Unique Python identifiers."""

    def __init__(self) -> None:
        self._used: set[str] = set()
        self._next: dict[str, int] = {}  # base -> next suffix to try: O(1) per name

    def fresh(self, base: str) -> str:
        name, suffix = base, self._next.get(base, 1)
        if name in self._used:
            name = f"{base}_{suffix}"
            while name in self._used:
                suffix += 1
                name = f"{base}_{suffix}"
            self._next[base] = suffix + 1
        self._used.add(name)
        return name


class FunctionTranslator:
    """Translates the body of one func.func into a Python `def`."""

    def __init__(self, module: ModuleTranslator, function: func.FuncOp) -> None:
        self.module = module
        self.function = function
        self.lines: list[str] = []
        self._indent = 1
        self._names = _Names()
        self._values: dict[SSAValue, str] = {}
        self._depth: dict[SSAValue, int] = {}  # nesting of forwarded expressions

    # Helpers for emitters.

    def define(self, value: SSAValue) -> str:
        """A new local variable for an SSA value, named after its hint."""
        name = self._names.fresh(_local_base(value.name_hint or ""))
        self._values[value] = name
        return name

    def value(self, value: SSAValue) -> str:
        return self._values[value]

    def alias(self, value: SSAValue, name: str) -> None:
        """Generated code reads `value` by `name`, a variable it already has."""
        self._values[value] = name

    def operands(self, op: Operation) -> list[str]:
        return [self.value(operand) for operand in op.operands]

    def constant(self, initializer: str) -> str:
        return self.module.constant(initializer)

    def function_identifier(self, op: Operation, sym_name: str) -> str:
        identifier = self.module.function_identifiers.get(sym_name)
        if identifier is None:
            raise self.error(op, f"the callee @{sym_name} has no body in this module")
        return identifier

    def line(self, text: str) -> None:
        self.lines.append("    " * self._indent + text)

    @contextmanager
    def indented(self) -> Iterator[None]:
        self._indent += 1
        try:
            yield
        finally:
            self._indent -= 1

    def region_yielding_into(
        self, owner: Operation, region: Region, targets: Sequence[str]
    ) -> None:
        """Translates a single-block region ending in scf.yield, assigning
        the yielded values to `targets`."""
        block = self._single_block(owner, region)
        *body, terminator = ops_of(block)
        emitted = len(self.lines)
        for op in body:
            self.translate_op(op)
        if not isinstance(terminator, scf.YieldOp):
            raise self.error(terminator, "expected scf.yield ending the region")
        if len(targets) != len(terminator.operands):
            raise self.error(terminator, "scf.yield yields a different number of values")
        # all at once: a loop's yield may swap or shift its carried values
        _assign(self, targets, [self.value(v) for v in terminator.operands])
        if len(self.lines) == emitted:
            self.line("pass")

    def location(self, op: Operation) -> str:
        """Where `op` is, for error messages."""
        function = f"function @{self.function.sym_name.data}"
        if op is self.function:
            return f"in the signature of {function}"
        index = next(i for i, o in enumerate(self.function.body.walk()) if o is op)
        return f"in {function}, op #{index}: {str(op).splitlines()[0]}"

    def error(self, op: Operation, reason: str) -> BackendError:
        return BackendError(
            f"the Python backend does not support op '{_op_name(op)}': "
            f"{reason} ({self.location(op)})"
        )

    # Translation proper.

    def translate(self, identifier: str) -> list[str]:
        block = self._single_block(self.function, self.function.body)
        for arg in block.args:
            self._check_type(self.function, arg.type)
        params = [self.define(arg) for arg in block.args]
        self.params = params  # kept with `body` and `returned` for call entries (entry.py)
        # A public function with arrays sets numpy's error state itself (numpy
        # follows IEEE 754 on arrays, but warns) and hands out arrays the caller
        # owns: `quiet` wraps its body.
        quiet = not _is_private(self.function) and _has_arrays(self.function)
        self.lines.append(f"def {identifier}({', '.join(params)}):")
        if quiet:
            self.line("_token = _ERROR_STATE.set(_IGNORE_ERRORS)")
        self.line("try:")
        with self.indented():
            # Normalise arguments (an int passed for an f64; np.float64 in the
            # IEEE namespace) so the body sees the representation it expects.
            # Private functions are only called from generated code, whose
            # values already have it, so they skip this (it is per-call cost).
            if not _is_private(self.function):
                for param, arg in zip(params, block.args):
                    self.line(f"{param} = {_argument_conversion(arg.type, param)}")
            start = len(self.lines)
            *body, terminator = ops_of(block)
            for op in body:
                self.translate_op(op)
            if isinstance(terminator, func.ReturnOp):
                self.body = self.lines[start:]
                self.returned = [self.value(v) for v in terminator.operands]
                if quiet:
                    self.returned = [_owned_result(self, v) for v in terminator.operands]
                self.line(f"return {_tuple(self.returned)}")
            else:
                self.translate_op(terminator)
        # The parameters are never reassigned to other values, so the
        # fallback gets the original arguments.
        self.line("except _IEEE_ERRORS:")
        fallback_args = [repr(self.function.sym_name.data), *params]
        self.line(f"    return _ieee_fallback({', '.join(fallback_args)})")
        if quiet:
            self.line("finally:")
            self.line("    _ERROR_STATE.reset(_token)")
        return self.lines

    def fresh_local(self) -> str:
        return self._names.fresh("t")

    def translate_op(self, op: Operation) -> None:
        name = _op_name(op)
        if name in python_arrays.ARRAY_OPS and python_arrays.has_tensor(op):
            self._check_types(op)  # a tensor op: one vectorised numpy call
            if python_arrays.pushed_as_is(op) or python_arrays.popped_as_is(op):  # the record is the array
                self.alias(op.results[0], self.value(op.operands[0]))
                return
            if python_temporaries.absorbed(op):
                return  # computed inside the sum or accumulation that is its only use
            if python_temporaries.emit_accumulation(self, op):
                return  # `acc[slot] += value`: the result is acc's array
            expression = python_temporaries.expression(self, op) or python_arrays.ARRAY_OPS[name](self, op)
            self.line(f"{self.define(op.results[0])} = {expression}")
        elif name in EXPRESSION_OPS:
            self._check_types(op)
            (result,) = op.results
            alias = python_arrays.aliases(self, op)
            if alias is not None:  # no line: read by another name, or not by name
                self.alias(result, alias)
                return
            expression = EXPRESSION_OPS[name](self, op)
            if isa(result.type, Float32Type) and name not in _F32_EXACT_OPS:
                expression = f"_f32({expression})"
            if name in _FORWARDABLE and self._forwarded(op, expression):
                return  # written into its one user's line
            self.line(f"{self.define(result)} = {expression}")
        elif name in STATEMENT_OPS:
            self._check_types(op)
            STATEMENT_OPS[name](self, op)
        else:
            raise self.error(op, "no translation for this op")

    def _forwarded(self, op: Operation, expression: str) -> bool:
        """Writes the expression of scalar op `op` (of _FORWARDABLE) into its user's line instead
        of a line and a local of its own, if that is the same computation (see
        _FORWARDED): CPython then keeps the value on its stack, which saves a
        store and a load per op in scalar code. Values named after a Python
        variable keep their local (the generated code stays readable), and
        nesting is bounded (CPython's parser limits it)."""
        (result,) = op.results
        use = result.first_use
        if (
            use is None
            or use._next_use is not None  # more than one use (xDSL's list of uses)
            or result.name_hint is not None
            or use.operation.parent is not op.parent
            or not _forwards_into(use.operation)
        ):
            return False
        depth = 1 + max((self._depth.get(v, 0) for v in op.operands), default=0)
        if depth > _MAX_FORWARDED_DEPTH:
            return False
        self._depth[result] = depth
        self._values[result] = f"({expression})"
        return True

    def _check_types(self, op: Operation) -> None:
        for value in (*operand_tuple(op), *op.results):
            self._check_type(op, value.type)

    def _check_type(self, op: Operation, t: Attribute) -> None:
        if not _is_supported_type(t):
            raise BackendError(
                f"the Python backend does not support type {t}, only scalar "
                f"f64, f32, iN, index and the memref<?xf64> tape ({self.location(op)})"
            )

    def _single_block(self, owner: Operation, region: Region) -> Block:
        if len(region.blocks) != 1:
            raise self.error(owner, "regions with several blocks are not supported")
        return region.blocks.first  # type: ignore[return-value]


class ModuleTranslator:
    """Translates a ModuleOp into the source of a Python module."""

    def __init__(self, module: ModuleOp) -> None:
        self.module = module
        # func.func sym_name -> Python identifier of its def.
        self.function_identifiers: dict[str, str] = {}
        # Float constants are module-level names so that each namespace holds
        # them in its own float type: initializer -> name.
        self._constants: dict[str, str] = {}
        # identifier -> `module:qualname` of a Python callable (irad.python)
        self.python_callables: dict[str, str] = {}
        # identifier -> the template of a print declaration (irad.print)
        self.printers: dict[str, str] = {}
        # sym_name -> the translator of a public function (its body, for call entries)
        self.translators: dict[str, FunctionTranslator] = {}

    def constant(self, initializer: str) -> str:
        if initializer not in self._constants:
            self._constants[initializer] = f"_k{len(self._constants)}"
        return self._constants[initializer]

    def translate(self) -> str:
        functions = self._functions()
        names = _Names()
        for function in functions:
            sym_name = function.sym_name.data
            self.function_identifiers[sym_name] = names.fresh(
                f"fn_{_sanitize(sym_name)}"
            )
        for sym_name, (reference, outputs) in self.externals().items():
            identifier = names.fresh(f"fn_{_sanitize(sym_name)}")
            self.function_identifiers[sym_name] = identifier
            self.python_callables[identifier] = reference, outputs
        for op in self.module.ops:
            if printing.is_print(op):
                identifier = names.fresh(f"fn_{_sanitize(op.sym_name.data)}")
                self.function_identifiers[op.sym_name.data] = identifier
                self.printers[identifier] = op.attributes[printing.PRINT].data
        definitions: list[str] = []
        for function in functions:
            identifier = self.function_identifiers[function.sym_name.data]
            translator = FunctionTranslator(self, function)
            definitions += ["", ""] + translator.translate(identifier)
            if not _is_private(function):
                self.translators[function.sym_name.data] = translator
        header = ["# Generated by irad.backends.python.translate."]
        constants = [f"{name} = {init}" for init, name in self._constants.items()]
        return "\n".join(header + constants + definitions) + "\n"

    def externals(self) -> dict[str, tuple[str, tuple[Attribute, ...]]]:
        """Declarations bound to Python callables: sym_name -> (`module:qualname`,
        result types)."""
        return {
            op.sym_name.data: (op.attributes["irad.python"].data, tuple(op.function_type.outputs.data))
            for op in self.module.ops
            if isinstance(op, func.FuncOp) and op.is_declaration and "irad.python" in op.attributes
        }

    def _functions(self) -> list[func.FuncOp]:
        functions = []
        for index, op in enumerate(self.module.ops):
            if isinstance(op, func.FuncOp):
                if not op.is_declaration:  # external functions: nothing to run
                    functions.append(op)
                continue
            raise BackendError(
                f"the Python backend does not support op '{_op_name(op)}' at "
                f"module level (module op #{index}: {str(op).splitlines()[0]})"
            )
        return functions


# --------------------------------------------------------------------------
# Compiled modules.
# --------------------------------------------------------------------------

_module_counter = itertools.count()


class PythonModule(CompiledModule):
    """A module translated to Python; `function()` gives its callables."""

    def __init__(self, module: ModuleOp) -> None:
        translator = ModuleTranslator(module)
        self.source: str = translator.translate()
        filename = f"<irad.backends.python.translate #{next(_module_counter)}>"
        # Lets tracebacks through generated code show its lines.
        linecache.cache[filename] = (
            len(self.source),
            None,
            self.source.splitlines(keepends=True),
            filename,
        )
        code = compile(self.source, filename, "exec")
        self._identifiers = translator.function_identifiers
        self._translators = translator.translators
        self._signatures = {
            op.sym_name.data: op.function_type for op in module.ops if isinstance(op, func.FuncOp)
        }
        self._result_converters = {
            op.sym_name.data: [_result_converter(t) for t in op.function_type.outputs]
            for op in module.ops
            if isinstance(op, func.FuncOp)
        }
        self._ieee_arguments = {
            op.sym_name.data: [_ieee_argument(t) for t in op.function_type.inputs]
            for op in module.ops
            if isinstance(op, func.FuncOp)
        }
        recursion = {  # what a RecursionError in each function means (recursion_error)
            self._identifiers[op.sym_name.data]: recursion_message(op)
            for op in module.ops
            if isinstance(op, func.FuncOp) and op.sym_name.data in self._identifiers
        }
        self._fast: dict[str, Any] = {
            _RECURSION: recursion,
            **FAST_NAMESPACE,
            **python_arrays.NAMESPACE,
            "_IEEE_ERRORS": _NON_IEEE_ERRORS,
            "_ieee_fallback": self._run_ieee,
            "_ERROR_STATE": _ERROR_STATE,
            "_IGNORE_ERRORS": _IGNORE_ERRORS,
        }
        self._ieee: dict[str, Any] = {
            _RECURSION: recursion,
            **IEEE_NAMESPACE,
            **python_arrays.NAMESPACE,
            "_IEEE_ERRORS": (),  # the IEEE version is the last resort
            "_ieee_fallback": None,
            "_ERROR_STATE": _ERROR_STATE,
            "_IGNORE_ERRORS": _IGNORE_ERRORS,
        }
        for identifier, (reference, outputs) in translator.python_callables.items():
            fn = _import_callable(reference)
            if any(is_tensor(t) for t in outputs) or len(outputs) != 1:
                # a library primitive (irad/linalg.py): arrays and flags, as declared
                self._fast[identifier] = self._ieee[identifier] = _results_as_declared(fn, outputs)
                continue
            # each namespace keeps its own float type; calls return a tuple
            self._fast[identifier] = lambda *a, fn=fn: (float(fn(*a)),)
            self._ieee[identifier] = lambda *a, fn=fn: (np.float64(fn(*a)),)
        for identifier, text in translator.printers.items():
            self._fast[identifier] = self._ieee[identifier] = printing.printer(text)
        exec(code, self._fast)
        exec(code, self._ieee)

    @property
    def function_names(self) -> list[str]:
        """sym_names of the functions that can be called."""
        return list(self._identifiers)

    def function(self, name: str) -> Callable[..., tuple[Any, ...]]:
        """The callable for the func.func with this sym_name. It takes the
        arguments positionally and returns a tuple of all results. A public
        function converts its arguments to the declared types; a private one
        (only meant to be called from generated code) expects them already."""
        identifier = self._identifiers.get(name)
        if identifier is None:
            raise BackendError(
                f"no function @{name} with a body in the compiled module "
                f"(available: {', '.join(self._identifiers) or 'none'})"
            )
        return self._fast[identifier]

    def entry(self, name: str, plan: entry.EntryPlan) -> Callable:
        """The call entry (entry.py) of public function `name`: the checks of
        `plan`, then the function's body inline, its arguments' conversions
        left out where the checks make them no-ops."""
        self.function(name)  # a clear error for an unknown name
        tr = self._translators.get(name)
        n_results = len(self._signatures[name].outputs)
        if tr is None or not hasattr(tr, "body") or len(plan.kinds) != len(tr.params):
            return super().entry(name, plan)
        quiet = _has_arrays(tr.function)
        types = [arg.type for arg in tr.function.body.blocks.first.args]
        lines = ["    _token = _ERROR_STATE.set(_IGNORE_ERRORS)"] if quiet else []
        lines.append("    try:")
        for param, t, kind in zip(tr.params, types, plan.kinds):
            if not _vouched(kind, t):
                lines.append(f"        {param} = {_argument_conversion(t, param)}")
        lines += tr.body
        lines.append(f"        return {plan.results.format(*tr.returned)}")
        lines.append("    except _IEEE_ERRORS:")
        lines.append(f"        _r = _ieee_fallback({', '.join([repr(name), *tr.params])})")
        lines.append(f"        return {plan.results.format(*(f'_r[{k}]' for k in range(n_results)))}")
        lines.append("    except RecursionError:")  # the general path raises the limit
        lines.append("        return _e_otherwise(_self, _args, _kwargs)")
        if quiet:
            lines += ["    finally:", "        _ERROR_STATE.reset(_token)"]
        return entry.define(plan, tr.params, entry.Body(lines, {}), self._fast, name)

    def recursion_error(self, exc: RecursionError) -> RuntimeCheckError | None:
        return recursion_error(exc)

    def _run_ieee(self, name: str, *args: Any) -> tuple[Any, ...]:
        """Runs the IEEE version of a function whose fast version raised."""
        args = [convert(a) for convert, a in zip(self._ieee_arguments[name], args)]
        with np.errstate(all="ignore"):
            results = self._ieee[self._identifiers[name]](*args)
        converters = self._result_converters[name]
        return tuple(convert(r) for convert, r in zip(converters, results))


_RECURSION = "_irad_recursion"  # in generated code's globals: identifier -> message


def recursion_error(exc: RecursionError) -> RuntimeCheckError | None:
    """The error to raise for a RecursionError from generated code: a
    RuntimeCheckError naming the innermost generated function, as the native
    backend's stack check does (None if no generated code raised it)."""
    message = None
    tb = exc.__traceback__
    while tb is not None:
        code, namespace = tb.tb_frame.f_code, tb.tb_frame.f_globals
        message = namespace.get(_RECURSION, {}).get(code.co_name, message)
        tb = tb.tb_next
    return RuntimeCheckError(message) if message is not None else None


try:
    # numpy >= 2 keeps its floating-point error state in a context variable;
    # setting it directly is what np.errstate(all="ignore") does, at a small
    # fraction of its cost (np.errstate costs more than a small array op).
    from numpy._core._ufunc_config import _extobj_contextvar as _ERROR_STATE
    from numpy._core._ufunc_config import _make_extobj

    _IGNORE_ERRORS = _make_extobj(all="ignore")
except (ImportError, TypeError):  # numpy 1.x: np.seterr, with the same calls

    class _ErrorState:
        @staticmethod
        def set(_ignore) -> dict:
            return np.seterr(all="ignore")

        @staticmethod
        def reset(token: dict) -> None:
            np.seterr(**token)

    _ERROR_STATE, _IGNORE_ERRORS = _ErrorState(), None


def _results_as_declared(fn: Callable[..., Any], outputs: Sequence[Attribute]) -> Callable[..., tuple]:
    """`fn`, its results converted to the declared types (a tuple, as calls expect)."""
    converters = []
    for t in outputs:
        if is_tensor(t):
            dtype = np.dtype(python_arrays.dtype_name(t)[3:])
            converters.append(lambda r, dtype=dtype: np.asarray(r, dtype=dtype))
        elif isinstance(t, IntegerType) and t.width.data == 1:
            converters.append(bool)
        elif isinstance(t, IntegerType):
            converters.append(int)
        else:
            converters.append(float)

    def call(*args: Any) -> tuple:
        results = fn(*args)
        results = results if isinstance(results, tuple) else (results,)
        return tuple(convert(r) for convert, r in zip(converters, results))

    return call


def _import_callable(reference: str) -> Callable[..., Any]:
    """The object `module:qualname` names (irad.python on a declaration)."""
    module_name, _, qualname = reference.partition(":")
    try:
        obj: Any = importlib.import_module(module_name)
        for part in qualname.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise BackendError(f"cannot find the Python function {reference}: {exc}") from None
    return obj


def compile_module(module: ModuleOp) -> PythonModule:
    """Translates `module` to Python once; raises BackendError for ops or
    types this backend does not support."""
    return PythonModule(module)
