"""Tests of the Python backend against independent references (math, numpy,
closed forms), including IEEE edge cases taken by the numpy fallback."""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects import builtin, func, scf, tensor
from xdsl.parser import Parser

from irad.backends.python.translate import FAST_NAMESPACE, IEEE_NAMESPACE, PythonModule, compile_module
from irad.ir.mlir_ops import ARITH, MATH
from irad.base.errors import BackendError

INF = math.inf
NAN = math.nan
SPECIAL_FLOATS = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.0, 1e-310,
                  1e300, -1e300, INF, -INF, NAN]


def parse(text: str) -> builtin.ModuleOp:
    ctx = Context(allow_unregistered=True)
    for dialect in (builtin.Builtin, func.Func, ARITH, MATH, scf.Scf, tensor.Tensor):
        ctx.load_dialect(dialect)
    return Parser(ctx, text).parse_module()


def compile_text(text: str) -> PythonModule:
    return compile_module(parse(text))


def op_function(op: str, operand_types: list[str], result_type: str,
                suffix: str = ""):
    """The callable of `func @f` applying one op to its arguments.

    `suffix` is the text after the operands, ": f64" by default."""
    return _compiled_op(op, tuple(operand_types), result_type, suffix)


@functools.cache  # hypothesis calls the same op many times
def _compiled_op(op: str, operand_types: tuple[str, ...], result_type: str,
                 suffix: str):
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(operand_types))
    operands = ", ".join(f"%a{i}" for i in range(len(operand_types)))
    suffix = suffix or f": {operand_types[0]}"
    if suffix.startswith("("):  # generic syntax carries its own operands
        operands = ""
    text = f"""
    func.func @f({params}) -> {result_type} {{
      %r = {op} {operands} {suffix}
      func.return %r : {result_type}
    }}"""
    fn = compile_text(text).function("f")
    return lambda *args: fn(*args)[0]


def same(actual: object, expected: object) -> bool:
    """Exact equality that tells nan and the sign of zero apart."""
    if isinstance(expected, float):
        if math.isnan(expected):
            return isinstance(actual, float) and math.isnan(actual)
        return (isinstance(actual, float) and actual == expected
                and math.copysign(1, actual) == math.copysign(1, expected))
    return type(actual) is type(expected) and actual == expected


def close(actual: float, expected: float) -> bool:
    """Equal up to a few ulps (libm and numpy may differ in the last bit)."""
    if same(actual, expected):
        return True
    return (isinstance(actual, float) and math.isfinite(expected)
            and math.isclose(actual, expected, rel_tol=1e-14, abs_tol=1e-300))


def np_ref(fn, *args) -> float:
    with np.errstate(all="ignore"):
        return float(fn(*(np.float64(a) for a in args)))


floats = st.floats(allow_nan=True, allow_infinity=True)


# --------------------------------------------------------------------------
# API and generated code.
# --------------------------------------------------------------------------

def test_function_returns_tuple_and_python_types():
    cm = compile_text("""
    func.func @f(%x: f64, %n: i64) -> (f64, i64, i1) {
      %y = arith.mulf %x, %x : f64
      %m = arith.addi %n, %n : i64
      %b = arith.cmpf olt, %x, %y : f64
      func.return %y, %m, %b : f64, i64, i1
    }
    func.func @nothing() {
      func.return
    }""")
    assert isinstance(cm.source, str) and "def " in cm.source
    result = cm.function("f")(3.0, 4)
    assert result == (9.0, 8, True)
    assert [type(r) for r in result] == [float, int, bool]
    assert cm.function("nothing")() == ()
    # Arguments are normalised: an int passed for an f64 gives float results.
    assert [type(r) for r in cm.function("f")(3, True)] == [float, int, bool]


def test_dotted_and_colliding_names_are_mangled():
    cm = compile_text("""
    func.func @"f.pullback.dd"(%x: f64) -> f64 {
      func.return %x : f64
    }
    func.func @f_pullback_dd(%x: f64) -> f64 {
      %y = arith.negf %x : f64
      func.return %y : f64
    }""")
    assert cm.function("f.pullback.dd")(2.0) == (2.0,)
    assert cm.function("f_pullback_dd")(2.0) == (-2.0,)
    assert set(cm.function_names) == {"f.pullback.dd", "f_pullback_dd"}


def test_ssa_names_that_clash_with_python_names():
    cm = compile_text("""
    func.func @f(%float: f64, %abs: f64, %_x: f64, %fn_f: f64) -> f64 {
      %if = arith.addf %float, %abs : f64
      %lambda = arith.addf %if, %_x : f64
      %0 = arith.addf %lambda, %fn_f : f64
      func.return %0 : f64
    }""")
    assert cm.function("f")(1.0, 2.0, 3.0, 4.0) == (10.0,)


def test_translation_happens_once(monkeypatch):
    from irad.backends.python import translate as backend

    cm = compile_text("""
    func.func @f(%x: f64) -> f64 {
      %y = arith.divf %x, %x : f64
      func.return %y : f64
    }""")

    def fail(*args, **kwargs):
        raise AssertionError("re-translated")

    monkeypatch.setattr(backend.ModuleTranslator, "translate", fail)
    fn = cm.function("f")
    assert fn is cm.function("f")
    assert fn(2.0) == (1.0,)
    assert math.isnan(fn(0.0)[0])


def test_declarations_are_skipped():
    cm = compile_text("""
    func.func private @external(f64) -> f64
    func.func @f(%x: f64) -> f64 {
      func.return %x : f64
    }""")
    assert cm.function("f")(1.5) == (1.5,)
    with pytest.raises(BackendError, match="external"):
        cm.function("external")


def test_namespaces_define_the_same_names():
    assert FAST_NAMESPACE.keys() == IEEE_NAMESPACE.keys()


# --------------------------------------------------------------------------
# Float arithmetic.
# --------------------------------------------------------------------------

BINARY_FLOAT_REFERENCES = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.remf": np.fmod,
}


@pytest.mark.parametrize("op", sorted(BINARY_FLOAT_REFERENCES))
@settings(max_examples=200, deadline=None)
@given(a=floats, b=floats)
def test_binary_float_ops_match_numpy(op, a, b):
    fn = _binary_f64(op)
    assert same(fn(a, b), np_ref(BINARY_FLOAT_REFERENCES[op], a, b))


@pytest.mark.parametrize("op", sorted(BINARY_FLOAT_REFERENCES))
@pytest.mark.parametrize("a", SPECIAL_FLOATS)
@pytest.mark.parametrize("b", SPECIAL_FLOATS)
def test_binary_float_ops_on_special_values(op, a, b):
    assert same(_binary_f64(op)(a, b), np_ref(BINARY_FLOAT_REFERENCES[op], a, b))


def _binary_f64(op: str):
    return op_function(op, ["f64", "f64"], "f64")


def test_ieee_division_edge_cases():
    divf = _binary_f64("arith.divf")
    assert same(divf(1.0, 0.0), INF)
    assert same(divf(-1.0, 0.0), -INF)
    assert same(divf(1.0, -0.0), -INF)
    assert math.isnan(divf(0.0, 0.0))
    remf = _binary_f64("arith.remf")
    assert same(remf(-7.5, 2.0), -1.5)  # sign of the dividend, like C fmod
    assert same(remf(7.5, -2.0), 1.5)
    assert math.isnan(remf(1.0, 0.0))
    assert math.isnan(remf(INF, 1.0))
    assert same(remf(1.0, INF), 1.0)


def test_negf():
    negf = op_function("arith.negf", ["f64"], "f64")
    assert same(negf(0.0), -0.0)
    assert same(negf(-INF), INF)
    assert same(negf(2.5), -2.5)


def test_float_constants_in_both_namespaces():
    cm = compile_text("""
    func.func @f() -> (f64, f64, f64, f64, f64) {
      %one = arith.constant 1.0 : f64
      %zero = arith.constant 0.0 : f64
      %mzero = arith.constant -0.0 : f64
      %inf = arith.constant 0x7FF0000000000000 : f64
      %ninf = arith.constant 0xFFF0000000000000 : f64
      %nan = arith.constant 0x7FF8000000000000 : f64
      %a = arith.divf %one, %zero : f64
      %b = arith.divf %one, %mzero : f64
      %c = arith.addf %inf, %ninf : f64
      %d = arith.mulf %nan, %zero : f64
      func.return %a, %b, %c, %d, %inf : f64, f64, f64, f64, f64
    }""")
    a, b, c, d, inf = cm.function("f")()
    assert same(a, INF) and same(b, -INF) and same(inf, INF)
    assert math.isnan(c) and math.isnan(d)
    assert all(type(r) is float for r in (a, b, c, d, inf))


def test_ieee_fallback_converts_all_result_types():
    # The division by zero sends the call to the numpy namespace; results of
    # every type must still come back as plain Python values.
    cm = compile_text("""
    func.func @f(%x: f64, %n: i64) -> (f64, i1, i64, f32) {
      %zero = arith.constant 0.0 : f64
      %q = arith.divf %x, %zero : f64
      %b = arith.cmpf ogt, %q, %x : f64
      %m = arith.fptosi %x : f64 to i64
      %s = arith.addi %m, %n : i64
      %h = arith.truncf %x : f64 to f32
      func.return %q, %b, %s, %h : f64, i1, i64, f32
    }""")
    result = cm.function("f")(2.0, 3)
    assert result == (INF, True, 5, 2.0)
    assert [type(r) for r in result] == [float, bool, int, float]


# --------------------------------------------------------------------------
# cmpf and min/max: NaN behaviour.
# --------------------------------------------------------------------------

def _ordered(a, b):
    return not (math.isnan(a) or math.isnan(b))


# Closed-form IEEE definitions: o* = ordered and relation, u* = unordered or
# relation.
CMPF_REFERENCE = {
    "false": lambda a, b: False,
    "oeq": lambda a, b: _ordered(a, b) and a == b,
    "ogt": lambda a, b: _ordered(a, b) and a > b,
    "oge": lambda a, b: _ordered(a, b) and a >= b,
    "olt": lambda a, b: _ordered(a, b) and a < b,
    "ole": lambda a, b: _ordered(a, b) and a <= b,
    "one": lambda a, b: _ordered(a, b) and a != b,
    "ord": _ordered,
    "ueq": lambda a, b: not _ordered(a, b) or a == b,
    "ugt": lambda a, b: not _ordered(a, b) or a > b,
    "uge": lambda a, b: not _ordered(a, b) or a >= b,
    "ult": lambda a, b: not _ordered(a, b) or a < b,
    "ule": lambda a, b: not _ordered(a, b) or a <= b,
    "une": lambda a, b: not _ordered(a, b) or a != b,
    "uno": lambda a, b: not _ordered(a, b),
    "true": lambda a, b: True,
}
CMP_VALUES = [1.0, 2.0, -0.0, 0.0, INF, -INF, NAN]


@pytest.mark.parametrize("predicate", list(CMPF_REFERENCE))
def test_cmpf_all_predicates(predicate):
    fn = op_function(f"arith.cmpf {predicate},", ["f64", "f64"], "i1")
    for a in CMP_VALUES:
        for b in CMP_VALUES:
            result = fn(a, b)
            assert type(result) is bool
            assert result == CMPF_REFERENCE[predicate](a, b), (a, b)


@pytest.mark.parametrize("predicate", list(CMPF_REFERENCE))
def test_cmpf_in_ieee_namespace(predicate):
    # Same comparisons on np.float64, after a division by zero forces the
    # fallback: -inf = -1 / 0.
    cm = compile_text(f"""
    func.func @f(%a: f64, %b: f64, %z: f64) -> i1 {{
      %m = arith.constant -1.0 : f64
      %ninf = arith.divf %m, %z : f64
      %r = arith.cmpf {predicate}, %a, %b : f64
      %lt = arith.cmpf ogt, %ninf, %a : f64
      %x = arith.xori %r, %lt : i1
      func.return %x : i1
    }}""")
    for a in CMP_VALUES:
        for b in CMP_VALUES:
            # -inf > a is false for every a, so the xor is the comparison.
            (result,) = cm.function("f")(a, b, 0.0)
            assert type(result) is bool
            assert result == CMPF_REFERENCE[predicate](a, b), (a, b)


def _min_max_reference(op, a, b):
    if op == "arith.maximumf":
        if math.isnan(a) or math.isnan(b):
            return NAN
    if op == "arith.minimumf":
        if math.isnan(a) or math.isnan(b):
            return NAN
    if op in ("arith.maxnumf", "arith.minnumf"):
        if math.isnan(a):
            return b
        if math.isnan(b):
            return a
    if a == b == 0.0:  # -0.0 orders below +0.0
        negative = [math.copysign(1, a) < 0, math.copysign(1, b) < 0]
        wants_min = op in ("arith.minimumf", "arith.minnumf")
        return -0.0 if (any(negative) if wants_min else all(negative)) else 0.0
    return max(a, b) if "max" in op else min(a, b)


@pytest.mark.parametrize(
    "op", ["arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf"])
def test_float_min_max_nan_and_zero(op):
    fn = op_function(op, ["f64", "f64"], "f64")
    for a in CMP_VALUES:
        for b in CMP_VALUES:
            assert same(fn(a, b), _min_max_reference(op, a, b)), (a, b)


@given(a=floats, b=floats)
def test_maximumf_matches_numpy_maximum(a, b):
    fn = _binary_f64("arith.maximumf")
    if not (a == b == 0.0):  # numpy leaves the sign of equal zeros open
        assert same(fn(a, b), np_ref(np.maximum, a, b))
        assert same(_binary_f64("arith.minimumf")(a, b), np_ref(np.minimum, a, b))
        assert same(_binary_f64("arith.maxnumf")(a, b), np_ref(np.fmax, a, b))
        assert same(_binary_f64("arith.minnumf")(a, b), np_ref(np.fmin, a, b))


# --------------------------------------------------------------------------
# Integers.
# --------------------------------------------------------------------------

def _int_op(op: str, t: str = "i64"):
    return op_function(op, [t, t], t)


def _trunc_div(a: int, b: int) -> int:
    return int(Fraction(a, b))  # int() truncates toward zero


ints = st.integers(min_value=-2**63, max_value=2**63 - 1)
nonzero_ints = ints.filter(lambda n: n != 0)


@settings(max_examples=200, deadline=None)
@given(a=ints, b=nonzero_ints)
def test_integer_division_ops(a, b):
    assert _int_op("arith.divsi")(a, b) == _trunc_div(a, b)
    assert _int_op("arith.remsi")(a, b) == a - b * _trunc_div(a, b)
    assert _int_op("arith.floordivsi")(a, b) == math.floor(Fraction(a, b))
    assert _int_op("arith.ceildivsi")(a, b) == math.ceil(Fraction(a, b))
    mask = 2**64 - 1
    assert _int_op("arith.divui")(a, b) == (a & mask) // (b & mask)
    assert _int_op("arith.remui")(a, b) == (a & mask) % (b & mask)


@pytest.mark.parametrize("a, b, divsi, remsi, floordivsi, ceildivsi", [
    (7, 2, 3, 1, 3, 4),
    (-7, 2, -3, -1, -4, -3),
    (7, -2, -3, 1, -4, -3),
    (-7, -2, 3, -1, 3, 4),
    (6, -3, -2, 0, -2, -2),
    (0, -5, 0, 0, 0, 0),
])
def test_integer_division_signs(a, b, divsi, remsi, floordivsi, ceildivsi):
    assert _int_op("arith.divsi")(a, b) == divsi
    assert _int_op("arith.remsi")(a, b) == remsi
    assert _int_op("arith.floordivsi")(a, b) == floordivsi
    assert _int_op("arith.ceildivsi")(a, b) == ceildivsi


def test_unsigned_ops_read_the_bits_of_their_width():
    assert _int_op("arith.divui", "i32")(-1, 2) == 0x7FFFFFFF
    assert _int_op("arith.remui", "i32")(-1, 16) == 15
    assert _int_op("arith.divui", "i8")(-2, 2) == 127


def test_undefined_integer_results_raise():
    # Undefined behaviour / poison in MLIR: raised, not given a value.
    with pytest.raises(ZeroDivisionError):
        _int_op("arith.divsi")(1, 0)
    with pytest.raises(ValueError):
        cast("arith.fptosi", "f64", "i64")(NAN)


@settings(max_examples=100, deadline=None)
@given(a=ints, b=ints)
def test_integer_arithmetic_and_bitwise(a, b):
    assert _int_op("arith.addi")(a, b) == a + b
    assert _int_op("arith.subi")(a, b) == a - b
    assert _int_op("arith.muli")(a, b) == a * b
    assert _int_op("arith.andi")(a, b) == a & b
    assert _int_op("arith.ori")(a, b) == a | b
    assert _int_op("arith.xori")(a, b) == a ^ b
    assert _int_op("arith.maxsi")(a, b) == max(a, b)
    assert _int_op("arith.minsi")(a, b) == min(a, b)


def test_integers_do_not_wrap_around():
    assert _int_op("arith.muli")(2**62, 4) == 2**64
    assert _int_op("arith.addi", "i32")(2**31 - 1, 1) == 2**31


def test_i1_bitwise_ops_give_bools():
    for op, reference in [("arith.andi", bool.__and__), ("arith.ori", bool.__or__),
                          ("arith.xori", bool.__xor__)]:
        fn = _int_op(op, "i1")
        for a in (False, True):
            for b in (False, True):
                result = fn(a, b)
                assert type(result) is bool and result == reference(a, b)


def test_i1_arithmetic_is_rejected():
    with pytest.raises(BackendError, match="arith.addi"):
        _int_op("arith.addi", "i1")


CMPI_REFERENCE = {
    "eq": lambda a, b, m: a == b,
    "ne": lambda a, b, m: a != b,
    "slt": lambda a, b, m: a < b,
    "sle": lambda a, b, m: a <= b,
    "sgt": lambda a, b, m: a > b,
    "sge": lambda a, b, m: a >= b,
    "ult": lambda a, b, m: a & m < b & m,
    "ule": lambda a, b, m: a & m <= b & m,
    "ugt": lambda a, b, m: a & m > b & m,
    "uge": lambda a, b, m: a & m >= b & m,
}


@pytest.mark.parametrize("predicate", list(CMPI_REFERENCE))
@pytest.mark.parametrize("t, bits", [("i64", 64), ("i32", 32), ("index", 64)])
def test_cmpi_all_predicates(predicate, t, bits):
    fn = op_function(f"arith.cmpi {predicate},", [t, t], "i1")
    values = [0, 1, -1, 5, -5, 2**(bits - 1) - 1, -2**(bits - 1)]
    for a in values:
        for b in values:
            result = fn(a, b)
            assert type(result) is bool
            assert result == CMPI_REFERENCE[predicate](a, b, 2**bits - 1), (a, b)


def test_cmpi_on_i1_reads_true_as_minus_one_when_signed():
    assert op_function("arith.cmpi slt,", ["i1", "i1"], "i1")(True, False) is True
    assert op_function("arith.cmpi ult,", ["i1", "i1"], "i1")(True, False) is False


def test_select():
    fn = op_function("arith.select", ["i1", "f64", "f64"], "f64", ": f64")
    assert fn(True, 1.0, 2.0) == 1.0
    assert fn(False, 1.0, 2.0) == 2.0


# --------------------------------------------------------------------------
# Casts.
# --------------------------------------------------------------------------

def cast(op: str, source: str, target: str):
    return op_function(op, [source], target, f": {source} to {target}")


def test_int_float_casts():
    assert same(cast("arith.sitofp", "i64", "f64")(-3), -3.0)
    assert same(cast("arith.sitofp", "i1", "f64")(True), -1.0)
    assert same(cast("arith.uitofp", "i32", "f64")(-1), 4294967295.0)
    assert same(cast("arith.uitofp", "i1", "f64")(True), 1.0)
    assert cast("arith.fptosi", "f64", "i64")(-2.7) == -2
    assert cast("arith.fptosi", "f64", "i64")(2.7) == 2
    assert cast("arith.fptoui", "f64", "i64")(2.7) == 2
    assert cast("arith.fptosi", "f64", "i1")(-1.0) is True
    assert same(cast("arith.sitofp", "i64", "f32")(2**24 + 1), float(2**24))


def test_float_width_casts():
    truncf = cast("arith.truncf", "f64", "f32")
    assert same(truncf(0.1), float(np.float32(0.1)))
    assert same(truncf(1e300), INF)
    assert same(truncf(-1e-300), -0.0)
    assert same(cast("arith.extf", "f32", "f64")(0.5), 0.5)


def test_integer_width_casts():
    assert cast("arith.extsi", "i1", "i64")(True) == -1
    assert cast("arith.extsi", "i32", "i64")(-5) == -5
    assert cast("arith.extui", "i1", "i64")(True) == 1
    assert cast("arith.extui", "i8", "i32")(-1) == 255
    trunci = cast("arith.trunci", "i64", "i32")
    assert trunci(2**31) == -2**31
    assert trunci(2**32 + 7) == 7
    assert trunci(-1) == -1
    assert cast("arith.trunci", "i64", "i1")(3) is True
    assert cast("arith.trunci", "i64", "i1")(2) is False
    assert cast("arith.index_cast", "i32", "index")(-7) == -7
    assert cast("arith.index_cast", "index", "i32")(2**32 - 1) == -1
    assert cast("arith.index_cast", "index", "i64")(42) == 42


def test_integer_constants():
    cm = compile_text("""
    func.func @f() -> (i1, i1, i8, i64, index) {
      %t = arith.constant true
      %f = arith.constant false
      %b = arith.constant 255 : i8
      %n = arith.constant -12345678901 : i64
      %i = arith.constant 3 : index
      func.return %t, %f, %b, %n, %i : i1, i1, i8, i64, index
    }""")
    assert cm.function("f")() == (True, False, -1, -12345678901, 3)


# --------------------------------------------------------------------------
# f32.
# --------------------------------------------------------------------------

f32s = st.floats(width=32, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(a=f32s, b=f32s)
def test_f32_arithmetic_rounds_like_numpy_float32(a, b):
    for op, reference in [("arith.addf", np.add), ("arith.mulf", np.multiply),
                          ("arith.divf", np.divide)]:
        fn = _f32_binary(op)
        with np.errstate(all="ignore"):
            expected = float(reference(np.float32(a), np.float32(b)))
        assert same(fn(a, b), expected), op


def _f32_binary(op: str):
    return op_function(op, ["f32", "f32"], "f32")


def test_f32_arguments_and_constants_are_rounded():
    cm = compile_text("""
    func.func @f(%x: f32) -> f32 {
      %c = arith.constant 0.1 : f32
      %y = arith.addf %x, %c : f32
      func.return %y : f32
    }""")
    expected = float(np.float32(0.1) + np.float32(0.1))
    assert same(cm.function("f")(0.1)[0], expected)


# --------------------------------------------------------------------------
# math.
# --------------------------------------------------------------------------

# op -> (reference on ordinary inputs, domain of those inputs)
UNARY_MATH = {
    "acos": (math.acos, (-1, 1)),
    "acosh": (math.acosh, (1, 100)),
    "asin": (math.asin, (-1, 1)),
    "asinh": (math.asinh, (-100, 100)),
    "atan": (math.atan, (-100, 100)),
    "atanh": (math.atanh, (-0.99, 0.99)),
    "cbrt": (lambda x: math.copysign(abs(x) ** (1 / 3), x), (-100, 100)),
    "ceil": (lambda x: float(math.ceil(x)), (-100, 100)),
    "cos": (math.cos, (-100, 100)),
    "cosh": (math.cosh, (-100, 100)),
    "erf": (math.erf, (-5, 5)),
    "erfc": (math.erfc, (-5, 25)),
    "exp": (math.exp, (-100, 100)),
    "exp2": (lambda x: 2.0 ** x, (-100, 100)),
    "expm1": (lambda x: math.exp(x) - 1 if abs(x) > 1e-3 else math.expm1(x),
              (-100, 100)),
    "floor": (lambda x: float(math.floor(x)), (-100, 100)),
    "log": (math.log, (1e-9, 1e9)),
    "log10": (lambda x: math.log(x) / math.log(10), (1e-9, 1e9)),
    "log1p": (lambda x: math.log(1 + x) if abs(x) > 1e-3 else math.log1p(x),
              (-0.99, 1e9)),
    "log2": (lambda x: math.log(x) / math.log(2), (1e-9, 1e9)),
    "round": (lambda x: float(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1),
              (-100, 100)),
    "roundeven": (lambda x: float(round(x)), (-100, 100)),
    "rsqrt": (lambda x: 1 / math.sqrt(x), (1e-9, 1e9)),
    "sin": (math.sin, (-100, 100)),
    "sinh": (math.sinh, (-100, 100)),
    "sqrt": (lambda x: x ** 0.5, (0, 1e9)),
    "tan": (math.tan, (-1.5, 1.5)),
    "tanh": (math.tanh, (-100, 100)),
    "trunc": (lambda x: float(int(x)), (-100, 100)),
    "absf": (lambda x: x if x >= 0 else -x, (-100, 100)),
}

def unary(name: str):
    return op_function(f"math.{name}", ["f64"], "f64")


@pytest.mark.parametrize("name", sorted(UNARY_MATH))
def test_unary_math_on_ordinary_inputs(name):
    reference, (low, high) = UNARY_MATH[name]
    for x in np.linspace(low, high, 41):
        x = float(x)
        assert math.isclose(unary(name)(x), reference(x),
                            rel_tol=1e-9, abs_tol=1e-12), x


# op -> (input, expected) on edges: IEEE results where Python would raise,
# and rounding / sign-of-zero details of the MLIR definitions.
UNARY_EDGES = [
    ("log", 0.0, -INF), ("log", -0.0, -INF), ("log", -1.0, NAN), ("log", INF, INF),
    ("log2", 0.0, -INF), ("log10", 0.0, -INF), ("log1p", -1.0, -INF),
    ("log1p", -2.0, NAN), ("log10", -1.0, NAN),
    ("sqrt", -1.0, NAN), ("sqrt", -0.0, -0.0), ("sqrt", INF, INF),
    ("rsqrt", 0.0, INF), ("rsqrt", 4.0, 0.5), ("rsqrt", -1.0, NAN), ("rsqrt", INF, 0.0),
    ("exp", 1000.0, INF), ("exp", -1000.0, 0.0), ("exp", -INF, 0.0),
    ("exp2", 2000.0, INF), ("exp2", 3.0, 8.0), ("exp2", -INF, 0.0),
    ("expm1", 1000.0, INF), ("expm1", -INF, -1.0),
    ("sinh", 1000.0, INF), ("sinh", -1000.0, -INF), ("cosh", -1000.0, INF),
    ("sin", INF, NAN), ("cos", -INF, NAN), ("tan", INF, NAN),
    ("asin", 2.0, NAN), ("acos", -2.0, NAN), ("acosh", 0.5, NAN),
    ("atanh", 1.0, INF), ("atanh", -1.0, -INF), ("atanh", 2.0, NAN),
    ("atan", INF, math.pi / 2), ("tanh", -INF, -1.0), ("erf", INF, 1.0),
    ("erf", -INF, -1.0), ("erf", NAN, NAN),
    ("cbrt", -8.0, -2.0), ("cbrt", -INF, -INF),
    ("cbrt", -0.0, -0.0),
    ("ceil", -0.5, -0.0), ("ceil", 0.5, 1.0), ("ceil", INF, INF), ("ceil", NAN, NAN),
    ("floor", -0.0, -0.0), ("floor", -0.5, -1.0), ("floor", -INF, -INF),
    ("trunc", -0.5, -0.0), ("trunc", -1.5, -1.0), ("trunc", INF, INF),
    ("trunc", 1e300, 1e300),
    ("round", 0.5, 1.0), ("round", 1.5, 2.0), ("round", 2.5, 3.0),
    ("round", -2.5, -3.0), ("round", -0.4, -0.0), ("round", 0.49999999999999994, 0.0),
    ("round", INF, INF), ("round", NAN, NAN), ("round", 4503599627370497.0,
                                               4503599627370497.0),
    ("roundeven", 0.5, 0.0), ("roundeven", 1.5, 2.0), ("roundeven", 2.5, 2.0),
    ("roundeven", -0.5, -0.0), ("roundeven", -INF, -INF),
    ("absf", -0.0, 0.0), ("absf", -INF, INF),
]


@pytest.mark.parametrize("name, x, expected", UNARY_EDGES)
def test_unary_math_edge_cases(name, x, expected):
    assert same(unary(name)(x), expected)


def test_cbrt_is_the_real_cube_root():
    # glibc's cbrt is within an ulp, not exact: cbrt(27) = 3.0000000000000004.
    assert close(unary("cbrt")(-27.0), -3.0)
    assert close(unary("cbrt")(-1e-300), -1e-100)


@pytest.mark.parametrize("name", sorted(UNARY_MATH))
@settings(max_examples=100, deadline=None)
@given(x=floats)
def test_unary_math_matches_numpy_on_all_floats(name, x):
    # The callable gives the fast result when it exists and the numpy one
    # otherwise; both must match numpy's ufunc (or math where numpy has none).
    numpy_names = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin",
                   "asinh": "arcsinh", "atan": "arctan", "atanh": "arctanh",
                   "absf": "abs", "roundeven": "rint"}
    result = unary(name)(x)
    if name in ("erf", "erfc"):  # numpy has neither
        assert same(result, getattr(math, name)(x))
    elif name == "round":
        assert same(result, _round_half_away(x))
    elif name == "rsqrt":
        assert close(result, np_ref(lambda v: 1 / np.sqrt(v), x))
    elif name in ("ceil", "floor", "trunc", "roundeven", "absf", "sqrt"):
        assert same(result, np_ref(getattr(np, numpy_names.get(name, name)), x))
    else:
        assert close(result, np_ref(getattr(np, numpy_names.get(name, name)), x))


def _round_half_away(x: float) -> float:
    if not math.isfinite(x):
        return x
    magnitude = math.floor(abs(Fraction(x)) + Fraction(1, 2))
    return math.copysign(float(magnitude), x)


@pytest.mark.parametrize("helper", sorted(n for n, v in FAST_NAMESPACE.items()
                                          if not isinstance(v, type) and n != "_check_failure"))
def test_fast_and_ieee_helpers_agree_where_fast_succeeds(helper):
    fast, ieee = FAST_NAMESPACE[helper], IEEE_NAMESPACE[helper]
    for args in _helper_arguments(helper):
        try:
            expected = fast(*args)
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
        with np.errstate(all="ignore"):
            actual = ieee(*(np.float64(a) if isinstance(a, float) else a
                            for a in args))
        if isinstance(expected, float):
            assert close(float(actual), expected), args
        else:
            assert actual == expected, args


def _helper_arguments(helper: str) -> list[tuple]:
    if helper in ("_divsi", "_remsi", "_ceildivsi", "_ipowi"):
        values = [-7, -1, 0, 1, 2, 7]
        return [(a, b) for a in values for b in values]
    if helper == "_fma":
        return [(a, b, c) for a in SPECIAL_FLOATS for b in SPECIAL_FLOATS
                for c in (0.0, -0.0, 1.0, INF, NAN)]
    if helper == "_fpowi":
        return [(a, n) for a in SPECIAL_FLOATS for n in (-3, -2, 0, 1, 2, 3)]
    if helper == "_clampf":
        return [(a, b, c) for a in SPECIAL_FLOATS for b in SPECIAL_FLOATS for c in SPECIAL_FLOATS]
    arity = {"_atan2": 2, "_copysign": 2, "_powf": 2, "_remf": 2, "_maximumf": 2,
             "_minimumf": 2, "_maxnumf": 2, "_minnumf": 2}.get(helper, 1)
    if arity == 2:
        return [(a, b) for a in SPECIAL_FLOATS for b in SPECIAL_FLOATS]
    return [(a,) for a in SPECIAL_FLOATS]


@pytest.mark.parametrize("t, dtype", [("f64", np.float64), ("f32", np.float32)])
@pytest.mark.parametrize("name", ["isfinite", "isinf", "isnan", "isnormal"])
def test_float_class_tests_match_numpy(name, t, dtype):
    test = op_function(f"math.{name}", [t], "i1")
    tiny = np.finfo(dtype).tiny
    reference = {
        "isfinite": np.isfinite, "isinf": np.isinf, "isnan": np.isnan,
        "isnormal": lambda v: bool(np.isfinite(v) and abs(v) >= tiny),
    }[name]
    values = [*SPECIAL_FLOATS, float(tiny), -float(tiny), float(tiny) / 2, 3e38, 1e-40]
    with np.errstate(over="ignore"):  # 1e300 is inf in f32
        values = [float(dtype(x)) for x in values]  # values of type t
    for x in values:
        assert test(x) is bool(reference(dtype(x))), x


def test_clampf_is_maximumf_of_minimumf_as_mlir_22_lowers_it():
    clampf = op_function('"math.clampf"', ["f64", "f64", "f64"], "f64", "(%a0, %a1, %a2) : (f64, f64, f64) -> f64")
    # maximumf(minimumf(x, lo), hi): not a clamp of x to [lo, hi]
    assert same(clampf(0.5, 0.0, 1.0), 1.0)
    assert same(clampf(-2.0, 0.0, -3.0), -2.0)
    assert same(clampf(5.0, 0.0, -3.0), 0.0)
    assert math.isnan(clampf(NAN, 0.0, 1.0))


def test_sincos_gives_both():
    sin, cos = compile_text("""
    func.func @f(%x: f64) -> (f64, f64) {
      %s, %c = math.sincos %x : f64
      func.return %s, %c : f64, f64
    }""").function("f")(0.7)
    assert same(sin, math.sin(0.7)) and same(cos, math.cos(0.7))


POWF_CASES = [
    (2.0, 10.0, 1024.0), (-8.0, 1 / 3, NAN), (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0),
    (0.0, -1.0, INF), (-0.0, -1.0, -INF), (-0.0, -2.0, INF), (0.0, -0.5, INF),
    (10.0, 400.0, INF), (-10.0, 401.0, -INF), (-10.0, 400.0, INF),
    (-INF, 0.5, INF), (-INF, 3.0, -INF), (-INF, -3.0, -0.0), (1.0, NAN, 1.0),
    (NAN, 0.0, 1.0), (-1.0, INF, 1.0), (0.5, -INF, INF), (2.0, -2000.0, 0.0),
]


@pytest.mark.parametrize("a, b, expected", POWF_CASES)
def test_powf_follows_c_pow(a, b, expected):
    assert same(op_function("math.powf", ["f64", "f64"], "f64")(a, b), expected)


def test_fpowi_and_ipowi():
    fpowi = op_function("math.fpowi", ["f64", "i32"], "f64", ": f64, i32")
    assert same(fpowi(-2.0, 3), -8.0)
    assert same(fpowi(2.0, -2), 0.25)
    assert same(fpowi(0.0, -1), INF)
    assert same(fpowi(-0.0, -1), -INF)
    assert same(fpowi(10.0, 400), INF)
    ipowi = _int_op("math.ipowi")
    assert ipowi(3, 4) == 81
    assert ipowi(-2, 3) == -8
    assert ipowi(2, -1) == 0
    assert ipowi(1, -5) == 1
    assert ipowi(-1, -3) == -1
    assert ipowi(-1, -4) == 1
    assert ipowi(5, 0) == 1


def test_binary_math():
    atan2 = op_function("math.atan2", ["f64", "f64"], "f64")
    assert same(atan2(1.0, -1.0), math.atan2(1.0, -1.0))
    assert same(atan2(-0.0, -1.0), -math.pi)
    copysign = op_function("math.copysign", ["f64", "f64"], "f64")
    assert same(copysign(2.0, -0.0), -2.0)
    assert same(copysign(-INF, 1.0), INF)
    assert op_function("math.absi", ["i64"], "i64")(-5) == 5


def _exact_fma(a: float, b: float, c: float) -> float:
    exact = Fraction(a) * Fraction(b) + Fraction(c)
    if exact == 0:
        return a * b + c  # the IEEE sign of an exact zero
    # an underflow to zero keeps the sign of the exact result
    return math.copysign(float(exact), exact)


@settings(max_examples=200, deadline=None)
@given(a=st.floats(-1e100, 1e100), b=st.floats(-1e100, 1e100),
       c=st.floats(-1e100, 1e100))
def test_fma_rounds_once(a, b, c):
    fma = _fma_function()
    assert same(fma(a, b, c), _exact_fma(a, b, c))


def test_fma_edge_cases():
    fma = _fma_function()
    a = 1.0 + 2.0 ** -30
    # The product's rounding error, lost without fusion.
    assert fma(a, a, -(a * a)) == 2.0 ** -60
    assert same(fma(1e308, 10.0, -INF), -INF)
    assert same(fma(1e308, 10.0, 0.0), INF)
    assert same(fma(INF, 0.0, 1.0), NAN)
    assert same(fma(-0.0, 1.0, -0.0), -0.0)
    assert same(fma(1.0, 2.0, NAN), NAN)


def _fma_function():
    return op_function("math.fma", ["f64", "f64", "f64"], "f64")


# --------------------------------------------------------------------------
# Control flow and calls.
# --------------------------------------------------------------------------

def test_scf_if_with_results_takes_both_branches():
    cm = compile_text("""
    func.func @relu_and_slope(%x: f64) -> (f64, f64) {
      %zero = arith.constant 0.0 : f64
      %pos = arith.cmpf ogt, %x, %zero : f64
      %r, %d = scf.if %pos -> (f64, f64) {
        %one = arith.constant 1.0 : f64
        scf.yield %x, %one : f64, f64
      } else {
        scf.yield %zero, %zero : f64, f64
      }
      func.return %r, %d : f64, f64
    }""")
    fn = cm.function("relu_and_slope")
    assert fn(2.5) == (2.5, 1.0)
    assert fn(-2.5) == (0.0, 0.0)


def test_scf_if_nested_and_without_results():
    cm = compile_text("""
    func.func @f(%a: i1, %b: i1, %x: f64) -> f64 {
      scf.if %a {
        %unused = arith.addf %x, %x : f64
      }
      %r = scf.if %a -> (f64) {
        %s = scf.if %b -> (f64) {
          %y = math.sin %x : f64
          scf.yield %y : f64
        } else {
          %y = math.cos %x : f64
          scf.yield %y : f64
        }
        scf.yield %s : f64
      } else {
        scf.yield %x : f64
      }
      func.return %r : f64
    }""")
    fn = cm.function("f")
    assert fn(True, True, 1.0) == (math.sin(1.0),)
    assert fn(True, False, 1.0) == (math.cos(1.0),)
    assert fn(False, True, 1.0) == (1.0,)


def test_scf_if_branch_with_ieee_edge():
    cm = compile_text("""
    func.func @f(%x: f64) -> f64 {
      %zero = arith.constant 0.0 : f64
      %neg = arith.cmpf olt, %x, %zero : f64
      %r = scf.if %neg -> (f64) {
        %s = math.sqrt %x : f64
        scf.yield %s : f64
      } else {
        %l = math.log %x : f64
        scf.yield %l : f64
      }
      func.return %r : f64
    }""")
    fn = cm.function("f")
    assert math.isnan(fn(-1.0)[0])
    assert fn(0.0) == (-INF,)
    assert fn(1.0) == (0.0,)


def test_func_call_with_multiple_results():
    cm = compile_text("""
    func.func @divmod(%a: i64, %b: i64) -> (i64, i64) {
      %q = arith.floordivsi %a, %b : i64
      %r = arith.remsi %a, %b : i64
      func.return %q, %r : i64, i64
    }
    func.func @twice(%x: f64) -> f64 {
      %y = arith.addf %x, %x : f64
      func.return %y : f64
    }
    func.func @noop() {
      func.return
    }
    func.func @main.grad(%a: i64, %b: i64, %x: f64) -> (i64, i64, f64) {
      %q, %r = func.call @divmod(%a, %b) : (i64, i64) -> (i64, i64)
      %y = func.call @twice(%x) : (f64) -> f64
      %z = func.call @twice(%y) : (f64) -> f64
      func.call @noop() : () -> ()
      func.return %q, %r, %z : i64, i64, f64
    }""")
    assert cm.function("main.grad")(-7, 2, 1.5) == (-4, -1, 6.0)


def test_ieee_fallback_through_calls():
    cm = compile_text("""
    func.func @inv(%x: f64) -> f64 {
      %one = arith.constant 1.0 : f64
      %y = arith.divf %one, %x : f64
      func.return %y : f64
    }
    func.func @f(%x: f64) -> (f64, f64) {
      %y = func.call @inv(%x) : (f64) -> f64
      %z = math.exp %y : f64
      func.return %y, %z : f64, f64
    }""")
    assert cm.function("f")(0.0) == (INF, INF)
    assert cm.function("f")(-0.0) == (-INF, 0.0)
    assert cm.function("f")(1.0) == (1.0, math.e)


def test_recursion():
    cm = compile_text("""
    func.func @fact(%n: i64) -> i64 {
      %one = arith.constant 1 : i64
      %base = arith.cmpi sle, %n, %one : i64
      %r = scf.if %base -> (i64) {
        scf.yield %one : i64
      } else {
        %m = arith.subi %n, %one : i64
        %f = func.call @fact(%m) : (i64) -> i64
        %p = arith.muli %n, %f : i64
        scf.yield %p : i64
      }
      func.return %r : i64
    }""")
    assert cm.function("fact")(25) == (math.factorial(25),)


# --------------------------------------------------------------------------
# Errors.
# --------------------------------------------------------------------------

def test_unsupported_tensor_op():
    with pytest.raises(BackendError) as info:
        compile_text("""
        func.func @g(%x: f64) -> f64 {
          %t = tensor.empty() : tensor<2xcomplex<f64>>
          func.return %x : f64
        }""")
    message = str(info.value)
    assert "tensor.empty" in message
    assert "@g" in message and "op #0" in message
    assert "does not support" in message


def test_unregistered_op_inside_scf_if():
    with pytest.raises(BackendError) as info:
        compile_text("""
        func.func @h(%c: i1, %x: f64) -> f64 {
          %y = arith.addf %x, %x : f64
          scf.if %c {
            "my.mystery"(%y) : (f64) -> ()
          }
          func.return %y : f64
        }""")
    message = str(info.value)
    assert "my.mystery" in message and "@h" in message and "op #2" in message


def test_unsupported_types():
    with pytest.raises(BackendError) as info:
        compile_text("""
        func.func @f(%x: f64) -> f64 {
          %t = arith.constant dense<1.0> : tensor<2xf16>
          func.return %x : f64
        }""")
    message = str(info.value)
    assert "tensor<2xf16>" in message and "@f" in message and "op #0" in message
    with pytest.raises(BackendError, match="f16.*signature of function @f"):
        compile_text("""
        func.func @f(%x: f16) -> f16 {
          func.return %x : f16
        }""")


def test_call_to_declaration_and_unknown_function():
    with pytest.raises(BackendError, match="@ext"):
        compile_text("""
        func.func private @ext(f64) -> f64
        func.func @f(%x: f64) -> f64 {
          %y = func.call @ext(%x) : (f64) -> f64
          func.return %y : f64
        }""")
    cm = compile_text("""
    func.func @f(%x: f64) -> f64 {
      func.return %x : f64
    }""")
    with pytest.raises(BackendError, match="@nope"):
        cm.function("nope")

