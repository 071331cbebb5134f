"""Tests of irad-optimize and irad-float-folds (passes/optimize.py, float_folds.py).

Folded functions are checked against the unfolded ones by evaluating both with a
small numpy evaluator on edge-case inputs (signed zeros, infinities, NaN, subnormals),
and constant folds against values computed here with numpy and Python's math.
"""

import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xdsl.context import Context
from xdsl.dialects import arith, bufferization, builtin, func, linalg, memref, scf, tensor
from xdsl.dialects import math as math_dialect
from xdsl.dialects.builtin import FloatAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.parser import Parser
from xdsl.transforms.dead_code_elimination import region_dce, would_be_trivially_dead

import irad.passes.optimize as optimize_module
import irad.passes.optimisation.simplify as simplify
from irad import pipeline
from tests import generated_programs
from irad.arguments import normalise_argnums
from irad.frontend import signature_of
from irad.passes.float_folds import FLOAT_FOLDS, FloatFoldsPass
from irad.passes.optimize import OptimizePass


def _context() -> Context:
    ctx = Context()
    for dialect in (
        builtin.Builtin,
        func.Func,
        arith.Arith,
        math_dialect.Math,
        scf.Scf,
        linalg.Linalg,
        tensor.Tensor,
        bufferization.Bufferization,
        memref.MemRef,
    ):
        ctx.load_dialect(dialect)
    return ctx


CTX = _context()

EDGE_VALUES = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    2.5,
    -3.0,
    math.inf,
    -math.inf,
    math.nan,
    1e308,
    -5e-324,
    2.2250738585072014e-308,
]


def parse(text: str) -> ModuleOp:
    return Parser(CTX, text).parse_module()


def optimize(text: str, **options: int) -> ModuleOp:
    module = parse(text)
    OptimizePass(**options).apply(CTX, module)
    module.verify()
    return module


def float_folds(text: str) -> ModuleOp:
    module = parse(text)
    FloatFoldsPass().apply(CTX, module)
    module.verify()
    return module


def body_ops(module: ModuleOp) -> list[str]:
    """Names of the ops of the module's functions, without the return."""
    return [
        op.name
        for op in module.walk()
        if not isinstance(op, func.FuncOp | func.ReturnOp | ModuleOp)
    ]


def function(args: str, body: str, result: str = "f64", ty: str = "f64") -> str:
    """A function @f of arguments `args` whose body ends with `return %r`."""
    params = ", ".join(f"%{a}: {ty}" for a in args.split())
    return (
        f"func.func @f({params}) -> {result} {{\n{body}\n"
        f"  func.return %r : {result}\n}}"
    )


# A numpy evaluator of straight-line functions, independent of the passes.

_CMPF = {
    "false": lambda a, b: False,
    "oeq": lambda a, b: a == b,
    "ogt": lambda a, b: a > b,
    "oge": lambda a, b: a >= b,
    "olt": lambda a, b: a < b,
    "ole": lambda a, b: a <= b,
    "one": lambda a, b: not np.isnan(a) and not np.isnan(b) and a != b,
    "ord": lambda a, b: not np.isnan(a) and not np.isnan(b),
    "ueq": lambda a, b: np.isnan(a) or np.isnan(b) or a == b,
    "ugt": lambda a, b: np.isnan(a) or np.isnan(b) or a > b,
    "uge": lambda a, b: np.isnan(a) or np.isnan(b) or a >= b,
    "ult": lambda a, b: np.isnan(a) or np.isnan(b) or a < b,
    "ule": lambda a, b: np.isnan(a) or np.isnan(b) or a <= b,
    "une": lambda a, b: np.isnan(a) or np.isnan(b) or a != b,
    "uno": lambda a, b: np.isnan(a) or np.isnan(b),
    "true": lambda a, b: True,
}

_BINARY = {
    arith.AddfOp: np.add,
    arith.SubfOp: np.subtract,
    arith.MulfOp: np.multiply,
    arith.DivfOp: np.divide,
}


def evaluate(module: ModuleOp, *args: float) -> list[object]:
    """Run @f (straight-line f64 code) on numpy float64 scalars."""
    (f,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    env: dict[SSAValue, object] = {
        arg: np.float64(a) for arg, a in zip(f.body.block.args, args, strict=True)
    }
    with np.errstate(all="ignore"):
        for op in f.body.block.ops:
            if isinstance(op, func.ReturnOp):
                return [env[v] for v in op.arguments]
            env[op.results[0]] = _evaluate_op(op, [env[v] for v in op.operands])
    raise AssertionError("no return")


def _evaluate_op(op: Operation, x: list[object]) -> object:
    if isinstance(op, arith.ConstantOp):
        value = op.value
        assert isinstance(value, FloatAttr | builtin.IntegerAttr)
        return np.float64(value.value.data)
    if type(op) in _BINARY:
        return _BINARY[type(op)](x[0], x[1])
    if isinstance(op, arith.NegfOp):
        return np.negative(x[0])
    if isinstance(op, arith.CmpfOp):
        predicate = arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data]
        return bool(_CMPF[predicate](x[0], x[1]))
    if isinstance(op, arith.SelectOp):
        return x[1] if x[0] else x[2]
    raise NotImplementedError(op.name)


def same(a: object, b: object) -> bool:
    """Bitwise equality, except that all NaNs are equal (IEEE leaves their sign)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    a, b = np.float64(a), np.float64(b)
    if np.isnan(a) or np.isnan(b):
        return bool(np.isnan(a) and np.isnan(b))
    return a.view(np.uint64) == b.view(np.uint64)


def assert_equivalent(text: str, nargs: int) -> ModuleOp:
    """Optimise `text` and check it computes the same on all edge-value tuples."""
    before, after = parse(text), optimize(text)
    for args in itertools.product(EDGE_VALUES, repeat=nargs):
        expected, actual = evaluate(before, *args), evaluate(after, *args)
        assert all(map(same, expected, actual)), (args, expected, actual)
    return after


# Identities: each fires, and the folded function computes the same on every input.

IDENTITIES = [
    # (body, remaining ops)
    ("%c = arith.constant 1.0 : f64\n%r = arith.mulf %x, %c : f64", []),
    ("%c = arith.constant 1.0 : f64\n%r = arith.mulf %c, %x : f64", []),
    ("%c = arith.constant -1.0 : f64\n%r = arith.mulf %x, %c : f64", ["arith.negf"]),
    ("%c = arith.constant -1.0 : f64\n%r = arith.mulf %c, %x : f64", ["arith.negf"]),
    ("%c = arith.constant 1.0 : f64\n%r = arith.divf %x, %c : f64", []),
    ("%c = arith.constant -1.0 : f64\n%r = arith.divf %x, %c : f64", ["arith.negf"]),
    ("%c = arith.constant -0.0 : f64\n%r = arith.addf %x, %c : f64", []),
    ("%c = arith.constant -0.0 : f64\n%r = arith.addf %c, %x : f64", []),
    ("%c = arith.constant 0.0 : f64\n%r = arith.subf %x, %c : f64", []),
    ("%c = arith.constant -0.0 : f64\n%r = arith.subf %c, %x : f64", ["arith.negf"]),
    ("%n = arith.negf %x : f64\n%r = arith.negf %n : f64", []),
    ("%n = arith.negf %y : f64\n%r = arith.addf %x, %n : f64", ["arith.subf"]),
    ("%n = arith.negf %y : f64\n%r = arith.addf %n, %x : f64", ["arith.subf"]),
    ("%n = arith.negf %y : f64\n%r = arith.subf %x, %n : f64", ["arith.addf"]),
    (
        "%a = arith.negf %x : f64\n%b = arith.negf %y : f64\n"
        "%r = arith.mulf %a, %b : f64",
        ["arith.mulf"],
    ),
    (
        "%a = arith.negf %x : f64\n%b = arith.negf %y : f64\n"
        "%r = arith.divf %a, %b : f64",
        ["arith.divf"],
    ),
    ("%a = arith.negf %x : f64\n%p = arith.mulf %a, %y : f64\n%r = arith.negf %p : f64", ["arith.mulf"]),
    ("%b = arith.negf %y : f64\n%p = arith.mulf %x, %b : f64\n%r = arith.negf %p : f64", ["arith.mulf"]),
    ("%a = arith.negf %x : f64\n%p = arith.divf %a, %y : f64\n%r = arith.negf %p : f64", ["arith.divf"]),
    ("%b = arith.negf %y : f64\n%p = arith.divf %x, %b : f64\n%r = arith.negf %p : f64", ["arith.divf"]),
]


@pytest.mark.parametrize("body, remaining", IDENTITIES)
def test_identity_fires_and_is_exact(body: str, remaining: list[str]):
    after = assert_equivalent(function("x y", body), 2)
    assert body_ops(after) == remaining


def test_identity_keeps_f32_type():
    text = function(
        "x",
        "%c = arith.constant -1.0 : f32\n%r = arith.mulf %x, %c : f32",
        "f32",
        "f32",
    )
    (negf,) = [op for op in optimize(text).walk() if isinstance(op, arith.NegfOp)]
    assert negf.result.type == builtin.f32


def test_negf_of_a_shared_product_is_kept():
    # the product has another use: folding the negf would compute it twice
    body = "%a = arith.negf %x : f64\n%p = arith.mulf %a, %y : f64\n%n = arith.negf %p : f64\n%r = arith.mulf %n, %p : f64"
    after = assert_equivalent(function("x y", body), 2)
    assert body_ops(after) == ["arith.negf", "arith.mulf", "arith.negf", "arith.mulf"]


def test_chain_collapses():
    body = """
    %one = arith.constant 1.0 : f64
    %m1 = arith.constant -1.0 : f64
    %nz = arith.constant -0.0 : f64
    %z = arith.constant 0.0 : f64
    %a = arith.mulf %x, %one : f64
    %b = arith.mulf %a, %m1 : f64
    %c = arith.addf %nz, %b : f64
    %d = arith.negf %c : f64
    %e = arith.divf %d, %one : f64
    %r = arith.subf %e, %z : f64
    """
    after = assert_equivalent(function("x", body), 1)
    assert body_ops(after) == []


# Folds that are not exact, and are therefore not done without fastmath flags.

NOT_EXACT = [
    # (body, an input on which the fold would change the result)
    ("%c = arith.constant 0.0 : f64\n%r = arith.addf %x, %c : f64", -0.0),
    ("%c = arith.constant 0.0 : f64\n%r = arith.addf %c, %x : f64", -0.0),
    ("%c = arith.constant -0.0 : f64\n%r = arith.subf %x, %c : f64", -0.0),
    ("%c = arith.constant 0.0 : f64\n%r = arith.subf %c, %x : f64", 0.0),
    ("%r = arith.subf %x, %x : f64", math.inf),
    ("%c = arith.constant 0.0 : f64\n%r = arith.mulf %x, %c : f64", -1.0),
    ("%r = arith.divf %x, %x : f64", 0.0),
]

# What each of those folds would produce.
NAIVE = {
    "%c = arith.constant 0.0 : f64\n%r = arith.addf %x, %c : f64": lambda x: x,
    "%c = arith.constant 0.0 : f64\n%r = arith.addf %c, %x : f64": lambda x: x,
    "%c = arith.constant -0.0 : f64\n%r = arith.subf %x, %c : f64": lambda x: x,
    "%c = arith.constant 0.0 : f64\n%r = arith.subf %c, %x : f64": lambda x: -x,
    "%r = arith.subf %x, %x : f64": lambda x: 0.0,
    "%c = arith.constant 0.0 : f64\n%r = arith.mulf %x, %c : f64": lambda x: 0.0,
    "%r = arith.divf %x, %x : f64": lambda x: 1.0,
}


@pytest.mark.parametrize("body, witness", NOT_EXACT)
def test_inexact_fold_is_not_done(body: str, witness: float):
    text = function("x", body)
    (actual,) = evaluate(parse(text), witness)
    assert not same(actual, NAIVE[body](np.float64(witness)))
    after = optimize(text)
    assert len(body_ops(after)) == len(body_ops(parse(text)))


C = ["arith.constant"]
NEG = ["arith.negf"]


@pytest.mark.parametrize(
    "body, flags, remaining",
    [
        ("%c = arith.constant 0.0 : f64\n%r = arith.addf %x, %c", "nsz", []),
        ("%c = arith.constant -0.0 : f64\n%r = arith.subf %x, %c", "nsz", []),
        ("%c = arith.constant 0.0 : f64\n%r = arith.subf %c, %x", "nsz", NEG),
        ("%r = arith.subf %x, %x", "nnan", C),
        ("%c = arith.constant 0.0 : f64\n%r = arith.mulf %x, %c", "nnan,nsz", C),
        ("%c = arith.constant -0.0 : f64\n%r = arith.mulf %c, %x", "fast", C),
    ],
)
def test_fastmath_flags_allow_inexact_folds(body: str, flags: str, remaining):
    assert body_ops(optimize(function("x", f"{body} fastmath<{flags}> : f64"))) == (
        remaining
    )


@pytest.mark.parametrize(
    "body, flags",
    [
        ("%r = arith.subf %x, %x", "nsz"),
        ("%c = arith.constant 0.0 : f64\n%r = arith.mulf %x, %c", "nnan"),
        ("%c = arith.constant 0.0 : f64\n%r = arith.mulf %x, %c", "nsz"),
    ],
)
def test_insufficient_fastmath_flags_block_folds(body: str, flags: str):
    text = function("x", f"{body} fastmath<{flags}> : f64")
    assert body_ops(optimize(text)) == body_ops(parse(text))


# Constant folds.


def folded_value(text: str) -> object:
    """Optimise `text`, check @f folded to one constant, and return its value."""
    after = optimize(text)
    ops = [op for op in after.walk() if not isinstance(op, func.FuncOp | ModuleOp)]
    assert [op.name for op in ops] == ["arith.constant", "func.return"], ops
    constant = ops[0]
    assert isinstance(constant, arith.ConstantOp)
    value = constant.value
    assert isinstance(value, FloatAttr | builtin.IntegerAttr)
    return value.value.data


def unary(op: str, x: float, ty: str = "f64") -> str:
    return function(
        "",
        f"%c = arith.constant {_literal(x, ty)} : {ty}\n%r = {op} %c : {ty}",
        ty,
        ty,
    )


def binary(op: str, x: float, y: float, ty: str = "f64", result: str = "") -> str:
    return function(
        "",
        f"%a = arith.constant {_literal(x, ty)} : {ty}\n"
        f"%b = arith.constant {_literal(y, ty)} : {ty}\n"
        f"%r = {op} %a, %b : {ty}",
        result or ty,
        ty,
    )


_BITS = {"f16": (np.float16, np.uint16), "f32": (np.float32, np.uint32)}


def _literal(x: float, ty: str) -> str:
    """The literal of type `ty` closest to x, as the hexadecimal of its bits."""
    float_type, bits = _BITS.get(ty, (np.float64, np.uint64))
    value = float_type(x).view(bits)
    return f"0x{value:0{2 * value.itemsize}X}"


def _bits_equal(a: float, b: float) -> bool:
    return same(np.float64(a), np.float64(b))


LIBM_CASES = [
    ("math.exp", [0.5, 1000.0, -1000.0, -math.inf, math.nan], math.exp, np.exp),
    ("math.log", [2.0, 0.0, -0.0, -1.0, math.inf], math.log, np.log),
    ("math.log1p", [1e-10, -1.0, -2.0, -0.0], math.log1p, np.log1p),
    ("math.expm1", [1e-10, 800.0, -0.0], math.expm1, np.expm1),
    ("math.log2", [8.0, 0.0], math.log2, np.log2),
    ("math.log10", [1e5, -3.0], math.log10, np.log10),
    ("math.exp2", [0.5, 2000.0], math.exp2, np.exp2),
    ("math.sin", [1.0, -0.0, math.inf], math.sin, np.sin),
    ("math.cos", [1.0, math.inf], math.cos, np.cos),
    ("math.tan", [1.0, -0.0], math.tan, np.tan),
    ("math.tanh", [0.5, -math.inf], math.tanh, np.tanh),
    ("math.sinh", [0.5, -1000.0], math.sinh, np.sinh),
    ("math.cosh", [0.5, 1000.0], math.cosh, np.cosh),
    ("math.asin", [0.5, 2.0], math.asin, np.arcsin),
    ("math.acos", [0.5, -2.0], math.acos, np.arccos),
    ("math.atan", [0.5, math.inf], math.atan, np.arctan),
    ("math.asinh", [0.5], math.asinh, np.arcsinh),
    ("math.acosh", [1.5, 0.5], math.acosh, np.arccosh),
    ("math.atanh", [0.5, 1.0, -1.0, 2.0], math.atanh, np.arctanh),
    ("math.cbrt", [-27.0, 2.0], math.cbrt, np.cbrt),
    ("math.erf", [0.5, -math.inf], math.erf, None),
]


@pytest.mark.parametrize(
    "op, x, libm, ieee",
    [(op, x, libm, ieee) for op, xs, libm, ieee in LIBM_CASES for x in xs],
)
def test_math_of_f64_constant_uses_libm(op, x, libm, ieee):
    """The platform libm (via Python's math), IEEE special values where it raises."""
    try:
        expected = libm(x)
    except (ValueError, OverflowError):
        with np.errstate(all="ignore"):
            expected = float(ieee(np.float64(x)))
    assert _bits_equal(folded_value(unary(op, x)), expected)


@pytest.mark.parametrize(
    "op, x, expected",
    [
        ("math.log", 0.0, -math.inf),
        ("math.log", -1.0, math.nan),
        ("math.sqrt", -1.0, math.nan),
        ("math.sqrt", -0.0, -0.0),
        ("math.exp", 1000.0, math.inf),
        ("math.log1p", -1.0, -math.inf),
        ("math.atanh", 1.0, math.inf),
        ("math.acos", 2.0, math.nan),
        ("math.sinh", -1000.0, -math.inf),
        ("math.absf", -0.0, 0.0),
        ("math.floor", -0.5, -1.0),
        ("math.ceil", -0.5, -0.0),
        ("math.trunc", -0.5, -0.0),
        ("math.round", 2.5, 3.0),
        ("math.round", -2.5, -3.0),
        ("math.round", -0.25, -0.0),
        ("math.round", 0.49999999999999994, 0.0),
        ("math.roundeven", 2.5, 2.0),
        ("math.roundeven", -0.5, -0.0),
        ("arith.negf", 0.0, -0.0),
        ("arith.negf", -math.inf, math.inf),
    ],
)
def test_special_values(op: str, x: float, expected: float):
    assert _bits_equal(folded_value(unary(op, x)), expected)


@pytest.mark.parametrize(
    "op, x, y, expected",
    [
        ("math.powf", 2.0, 0.5, math.sqrt(2.0)),
        ("math.powf", 0.0, -1.0, math.inf),
        ("math.powf", -0.0, -3.0, -math.inf),
        ("math.powf", -8.0, 1 / 3, math.nan),
        ("math.powf", 10.0, 400.0, math.inf),
        ("math.powf", math.nan, 0.0, 1.0),
        ("math.atan2", -0.0, -1.0, -math.pi),
        ("math.atan2", 1.0, 1.0, math.atan2(1.0, 1.0)),
        ("math.copysign", 3.0, -0.0, -3.0),
        ("arith.maximumf", -0.0, 0.0, 0.0),
        ("arith.maximumf", 0.0, -0.0, 0.0),
        ("arith.minimumf", 0.0, -0.0, -0.0),
        ("arith.maximumf", math.nan, 1.0, math.nan),
        ("arith.minimumf", 1.0, math.nan, math.nan),
        ("arith.maxnumf", math.nan, 1.0, 1.0),
        ("arith.minnumf", 2.0, math.nan, 2.0),
        ("arith.maxnumf", 2.0, 3.0, 3.0),
        ("arith.divf", -1.0, 0.0, -math.inf),  # folded by xDSL
        ("arith.divf", 1.0, -0.0, -math.inf),
    ],
)
def test_binary_constants(op: str, x: float, y: float, expected: float):
    assert _bits_equal(folded_value(binary(op, x, y)), expected)


def test_maxnumf_of_opposite_zeros_is_not_folded():
    """maxnum(+0, -0) may return either zero, so no answer is the runtime's."""
    for op in ("arith.maxnumf", "arith.minnumf"):
        assert op in body_ops(optimize(binary(op, 0.0, -0.0)))


@pytest.mark.parametrize("predicate", list(_CMPF))
def test_cmpf_of_constants(predicate: str):
    for a, b in itertools.product([1.0, 2.0, -0.0, 0.0, math.inf, math.nan], repeat=2):
        text = binary(f"arith.cmpf {predicate},", a, b, result="i1")
        expected = _CMPF[predicate](np.float64(a), np.float64(b))
        assert bool(folded_value(text)) == bool(expected), (predicate, a, b)


@pytest.mark.parametrize(
    "predicate, expected",
    [
        ("ogt", False),
        ("olt", False),
        ("one", False),
        ("ueq", True),
        ("uge", True),
        ("ule", True),
        ("false", False),
        ("true", True),
    ],
)
def test_cmpf_of_same_operand(predicate: str, expected: bool):
    text = function("x", f"%r = arith.cmpf {predicate}, %x, %x : f64", "i1")
    for x in EDGE_VALUES:
        assert _CMPF[predicate](np.float64(x), np.float64(x)) == expected
    assert bool(folded_value(text)) == expected


@pytest.mark.parametrize("predicate", ["oeq", "oge", "ole", "ord", "une", "uno"])
def test_cmpf_of_same_operand_depending_on_nan_is_kept(predicate: str):
    text = function("x", f"%r = arith.cmpf {predicate}, %x, %x : f64", "i1")
    assert body_ops(optimize(text)) == ["arith.cmpf"]


@pytest.mark.parametrize(
    "op, value, int_type, float_type, expected",
    [
        ("arith.sitofp", 3, "i32", "f64", 3.0),
        ("arith.sitofp", -1, "i1", "f64", -1.0),
        ("arith.uitofp", -1, "i1", "f64", 1.0),
        ("arith.uitofp", -1, "i8", "f64", 255.0),
        ("arith.sitofp", 255, "i8", "f64", -1.0),
        ("arith.sitofp", 2**53 + 1, "i64", "f64", 2.0**53),  # tie -> even
        ("arith.sitofp", 2**53 + 3, "i64", "f64", 2.0**53 + 4),
        ("arith.sitofp", 2**24 + 1, "i32", "f32", 2.0**24),
        # Rounding through f64 first would land on a tie and give 2**60.
        ("arith.sitofp", 2**60 + 2**36 + 1, "i64", "f32", 2.0**60 + 2**37),
        ("arith.uitofp", -1, "i64", "f32", 2.0**64),
    ],
)
def test_int_to_float_of_constant(op, value, int_type, float_type, expected):
    text = function(
        "",
        f"%c = arith.constant {value} : {int_type}\n"
        f"%r = {op} %c : {int_type} to {float_type}",
        float_type,
    )
    assert folded_value(text) == expected


def test_f32_constants_are_rounded_once():
    cases = [
        ("arith.addf", 0.1, 0.2, np.float32(0.1) + np.float32(0.2)),  # by xDSL
        ("arith.divf", 1.0, 3.0, np.float32(1.0) / np.float32(3.0)),
        ("math.copysign", 1.5, -2.0, np.float32(-1.5)),
    ]
    for op, x, y, expected in cases:
        x32, y32 = float(np.float32(x)), float(np.float32(y))
        assert folded_value(binary(op, x32, y32, "f32")) == float(expected)
    x = float(np.float32(2.0))
    assert folded_value(unary("math.sqrt", x, "f32")) == float(np.sqrt(np.float32(2)))
    truncf = function(
        "",
        "%c = arith.constant 0.1 : f64\n%r = arith.truncf %c : f64 to f32",
        "f32",
    )
    assert folded_value(truncf) == float(np.float32(0.1))
    extf = function(
        "",
        "%c = arith.constant 0.1 : f32\n%r = arith.extf %c : f32 to f64",
        "f64",
    )
    assert folded_value(extf) == float(np.float32(0.1))


@pytest.mark.parametrize("op", ["math.exp", "math.sin", "math.log", "math.tanh"])
def test_f32_transcendental_is_not_folded(op: str):
    """No Python function gives the f32 libm's (expf, ...) results."""
    assert body_ops(optimize(unary(op, 0.5, "f32"))) == ["arith.constant", op]


def test_min_max_identities():
    body = """
    %ninf = arith.constant 0xFFF0000000000000 : f64
    %pinf = arith.constant 0x7FF0000000000000 : f64
    %a = arith.maximumf %x, %ninf : f64
    %b = arith.minimumf %pinf, %a : f64
    %r = arith.maxnumf %b, %b : f64
    """
    assert body_ops(optimize(function("x", body))) == []
    kept = "%ninf = arith.constant 0xFFF0000000000000 : f64\n"
    kept += "%r = arith.maxnumf %x, %ninf : f64"  # maxnumf(nan, -inf) = -inf
    assert body_ops(optimize(function("x", kept))) == C + ["arith.maxnumf"]


def test_select_of_constant_condition():
    body = """
    %t = arith.constant true
    %a = arith.constant 2.0 : f64
    %r = arith.select %t, %x, %a : f64
    """
    assert body_ops(optimize(function("x", body))) == []


def test_dense_constants_are_left_alone():
    text = """
    func.func @f(%x: tensor<2xf64>) -> tensor<2xf64> {
      %one = arith.constant dense<1.0> : tensor<2xf64>
      %two = arith.constant dense<2.0> : tensor<2xf64>
      %c = arith.constant dense<[2.0, 3.0]> : tensor<2xf64>
      %m = arith.mulf %x, %one : tensor<2xf64>
      %t = arith.mulf %m, %two : tensor<2xf64>
      %e = math.exp %c : tensor<2xf64>
      %n = arith.negf %e : tensor<2xf64>
      %s = arith.addf %t, %n : tensor<2xf64>
      func.return %s : tensor<2xf64>
    }
    """
    # `x * ones -> x` (a tensor of ones is 1.0 everywhere) and `t + negf e -> t - e`
    # apply; nothing dense is evaluated (exp of a dense constant, a product with 2.0).
    assert body_ops(optimize(text)) == [
        "arith.constant",
        "arith.constant",
        "arith.mulf",
        "math.exp",
        "arith.subf",
    ]


def test_other_float_types():
    """Identities hold for every IEEE type; constants are folded for f32/f64 only."""
    text = function(
        "x",
        "%c = arith.constant 1.0 : f16\n%r = arith.mulf %x, %c : f16",
        "f16",
        "f16",
    )
    assert body_ops(optimize(text)) == []
    kept = ["arith.constant", "math.sqrt"]
    assert body_ops(optimize(unary("math.sqrt", 2.0, "f16"))) == kept
    assert body_ops(optimize(unary("arith.negf", 2.0, "f16"))) == ["arith.constant"]


# The pipeline: CSE, DCE, regions and the fixed point.


def test_cse_and_dce():
    body = """
    %a = math.sin %x : f64
    %b = math.sin %x : f64
    %dead = math.cos %x : f64
    %r = arith.addf %a, %b : f64
    """
    assert body_ops(optimize(function("x", body))) == ["math.sin", "arith.addf"]


def test_cse_exposes_folds_in_a_later_round():
    body = """
    %a = math.exp %x : f64
    %b = math.exp %x : f64
    %n = arith.negf %b : f64
    %s = arith.subf %a, %n : f64
    %c = arith.cmpf ule, %a, %b : f64
    %r = arith.select %c, %s, %x : f64
    """
    text = function("x", body)
    # One round: CSE merges the exps, but the cmpf folds only in the next round.
    assert "arith.cmpf" in body_ops(optimize(text, max_rounds=1))
    assert body_ops(optimize(text)) == ["math.exp", "arith.addf"]


def _count_calls(monkeypatch: pytest.MonkeyPatch, name: str) -> list:
    calls = []
    real = getattr(optimize_module, name)
    monkeypatch.setattr(optimize_module, name, lambda *args: calls.append(args) or real(*args))
    return calls


def test_fixed_point_stops_after_a_quiet_round(monkeypatch: pytest.MonkeyPatch):
    calls = _count_calls(monkeypatch, "cse")
    text = function("x", "%r = math.sin %x : f64")
    before = str(parse(text))
    assert str(optimize(text)) == before
    assert len(calls) == 1  # nothing to do: a single round
    calls.clear()
    body = "%a = math.sin %x : f64\n%b = math.sin %x : f64\n"
    optimize(function("x", body + "%r = arith.addf %a, %b : f64"))
    # CSE changed something; the walk from what it touched rewrote nothing:
    # the fixed point, without another CSE
    assert len(calls) == 1


def test_one_whole_module_walk(monkeypatch: pytest.MonkeyPatch):
    """Only the first canonicalization walks the whole module; the later ones
    start from what CSE and DCE touched (a few ops here, where a whole walk
    would visit all of them)."""
    walks = _count_calls(monkeypatch, "canonicalize")
    visited = []
    real = simplify.Canonicalize.match_and_rewrite
    monkeypatch.setattr(
        simplify.Canonicalize, "match_and_rewrite",
        lambda self, op, rewriter: visited.append(op.name) or real(self, op, rewriter),
    )
    filler = "".join(f"%c{i} = arith.constant {i}.5 : f64\n%u{i} = arith.mulf %x, %c{i} : f64\n" for i in range(50))
    sums = "".join(f"%v{i + 1} = arith.addf %v{i}, %u{i} : f64\n" for i in range(50))
    merged = "%a = math.exp %x : f64\n%b = math.exp %x : f64\n%le = arith.cmpf ule, %a, %b : f64\n"
    body = filler + merged + "%v0 = arith.select %le, %x, %a : f64\n" + sums + "%r = arith.addf %v50, %x : f64"
    module = optimize(function("x", body))
    assert "arith.select" not in str(module)  # exp(x) <= exp(x) folded once CSE merged the exps
    # one whole walk (no `only`), then walks started from the ops CSE and DCE touched
    assert [args[2] is None for args in walks] == [True, False, False]
    whole = len([op for op in parse(function("x", body)).walk()])
    assert len(visited) < whole + 20  # the later walks visited a handful of ops


@pytest.mark.parametrize("make", [
    lambda: generated_programs.tree(40), lambda: generated_programs.chain(30), generated_programs.shared_tree,
], ids=["tree", "chain", "shared_tree"])
def test_result_is_a_fixed_point_of_whole_module_walks(make, tmp_path):
    """What irad-optimize leaves, a whole canonicalization walk, CSE and DCE
    leave unchanged: the walks started from touched ops missed nothing."""
    program = make()
    f = getattr(generated_programs.load(program.source(), f"fixed_point_{tmp_path.name}", tmp_path), program.entry)
    signature = signature_of(f, (0.3,))
    module, *_ = pipeline.gradient_module(f, signature, normalise_argnums(f, (0,), signature), False)
    _assert_fixed_point(module)


def test_fixed_point_on_the_filecheck_inputs():
    for path in sorted(Path(__file__).parents[2].joinpath("filecheck", "optimize").glob("*.mlir")):
        module = parse(path.read_text())
        OptimizePass().apply(CTX, module)
        _assert_fixed_point(module)


def _assert_fixed_point(module: ModuleOp) -> None:
    before = str(module)
    touched = simplify.Touched()
    assert not simplify.canonicalize(pipeline.context(), module)
    assert not simplify.cse(module, touched)
    assert not simplify.dce(module, touched)
    assert not region_dce(module.body)  # xDSL's own, sweeping liveness to its fixed point
    assert str(module) == before


def test_calls_and_nested_regions():
    text = """
    func.func private @g(f64) -> f64
    func.func @f(%x: f64, %n: index) -> f64 {
      %lb = arith.constant 0 : index
      %step = arith.constant 1 : index
      %one = arith.constant 1.0 : f64
      %nz = arith.constant -0.0 : f64
      %unused = func.call @g(%x) : (f64) -> f64
      %r = scf.for %i = %lb to %n step %step iter_args(%acc = %nz) -> (f64) {
        %a = arith.mulf %acc, %one : f64
        %b = arith.addf %a, %x : f64
        scf.yield %b : f64
      }
      func.return %r : f64
    }
    """
    ops = body_ops(optimize(text))
    assert "func.call" in ops  # may have effects: kept
    assert "arith.mulf" not in ops
    assert ops.count("arith.addf") == 1


def test_float_folds_pass_applies_only_the_folds():
    body = """
    %one = arith.constant 1.0 : f64
    %a = arith.mulf %x, %one : f64
    %b = math.sin %a : f64
    %dead = math.cos %a : f64
    %r = math.sin %a : f64
    """
    after = float_folds(function("x", body))
    # x * 1.0 is gone; dead and duplicate ops and the constant stay (no DCE/CSE).
    assert body_ops(after) == ["arith.constant", "math.sin", "math.cos", "math.sin"]


# Property: the optimised function agrees with the original on arbitrary floats.

PROPERTY_BODY = """
%one = arith.constant 1.0 : f64
%m1 = arith.constant -1.0 : f64
%nz = arith.constant -0.0 : f64
%z = arith.constant 0.0 : f64
%a = arith.mulf %x, %one : f64
%b = arith.mulf %m1, %y : f64
%c = arith.addf %a, %b : f64
%d = arith.subf %nz, %c : f64
%e = arith.divf %d, %m1 : f64
%f = arith.negf %e : f64
%g = arith.subf %x, %f : f64
%h = arith.addf %g, %z : f64
%i = arith.subf %h, %z : f64
%j = arith.addf %nz, %i : f64
%k = arith.mulf %f, %b : f64
%l = arith.cmpf ugt, %j, %k : f64
%m = arith.select %l, %j, %k : f64
%n = arith.subf %z, %m : f64
%r = arith.divf %n, %one : f64
"""


@settings(max_examples=300, deadline=None)
@given(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_nan=True, allow_infinity=True),
)
def test_optimised_function_agrees_on_all_floats(x: float, y: float):
    text = function("x y", PROPERTY_BODY)
    (expected,) = evaluate(parse(text), x, y)
    (actual,) = evaluate(_OPTIMISED_PROPERTY, x, y)
    assert same(expected, actual), (x, y, expected, actual)


_OPTIMISED_PROPERTY = optimize(function("x y", PROPERTY_BODY))


def test_property_function_was_simplified():
    assert len(body_ops(_OPTIMISED_PROPERTY)) < len(
        body_ops(parse(function("x y", PROPERTY_BODY)))
    )


def test_one_sweep_dce_removes_what_xdsl_dce_removes():
    """Dead values used only by dead ops nested in loops and branches: one
    liveness sweep removes what xDSL's sweeps to a fixed point remove."""
    text = """
    func.func @f(%x: f64, %n: index, %c: i1) -> f64 {
      %lb = arith.constant 0 : index
      %step = arith.constant 1 : index
      %dead_outer = math.exp %x : f64
      %also_dead = arith.mulf %dead_outer, %x : f64
      %live_outer = math.sin %x : f64
      %r = scf.for %i = %lb to %n step %step iter_args(%acc = %x) -> (f64) {
        %d1 = arith.addf %also_dead, %acc : f64
        %d2 = arith.mulf %d1, %d1 : f64
        %b = arith.addf %acc, %live_outer : f64
        scf.yield %b : f64
      }
      %unused = scf.if %c -> (f64) {
        %e = arith.mulf %r, %dead_outer : f64
        scf.yield %e : f64
      } else {
        scf.yield %x : f64
      }
      func.return %r : f64
    }
    """
    ours, theirs = parse(text), parse(text)
    assert simplify.dce(ours, simplify.Touched())
    assert region_dce(theirs.body)
    assert str(ours) == str(theirs)
    assert "%d1" not in str(ours) and "%also_dead" not in str(ours)  # dead inside the loop, then outside


def test_dead_if_unused_is_xdsls_query_outside_linalg(tmp_path):
    """The per-type answers agree with xDSL's would_be_trivially_dead on every op
    but the linalg ones (which xDSL cannot remove), the nested ones included."""
    program = generated_programs.tree(13)
    f = getattr(generated_programs.load(program.source(), f"dead_query_{tmp_path.name}", tmp_path), program.entry)
    modules = [pipeline.lowered(f, signature_of(f, (0.3,)))[0]]
    for path in sorted(Path(__file__).parents[2].joinpath("filecheck", "optimize").glob("*.mlir")):
        modules.append(parse(path.read_text()))
    checked = 0
    for module in modules:
        for op in module.walk():
            if not op.name.startswith("linalg."):
                assert simplify.dead_if_unused(op) == would_be_trivially_dead(op), op.name
                checked += 1
    assert checked > 100


def test_dead_linalg_reduce_of_a_discarded_primal_value():
    """grad of sum(exp(x) * 2) does not need the sum: DCE removes its
    linalg.reduce and the product only it read; the gradient is 2 exp(x)."""
    import irad

    def f(x):
        return np.sum(np.exp(x) * 2.0)

    x = np.array([0.5, -1.0, 2.0])
    signature = signature_of(f, (x,))
    module, *_ = pipeline.gradient_module(f, signature, normalise_argnums(f, (0,), signature), False)
    names = [op.name for op in module.walk()]
    assert "linalg.reduce" not in names
    # the pullback's product with 2.0; its product with the seed 1.0 folds, the primal's is gone
    assert names.count("arith.mulf") == 1
    np.testing.assert_allclose(irad.grad(f)(x), 2.0 * np.exp(x), rtol=1e-14)


def _before_optimisation(program, name: str, tmp_path) -> str:
    """The gradient module of `program` as irad-optimize receives it."""
    f = getattr(generated_programs.load(program.source(), name, tmp_path), program.entry)
    signature = signature_of(f, (0.3,))
    texts = []
    pipeline.AFTER_PASS.append(lambda previous, module, last: texts.append(str(module)) if previous.name == "irad-lower-tape" else None)
    try:
        pipeline.gradient_module(f, signature, normalise_argnums(f, (0,), signature), False)
    finally:
        pipeline.AFTER_PASS.pop()
    return texts[0]


def _filecheck_inputs(*folders: str) -> list[str]:
    root = Path(__file__).parents[2].joinpath("filecheck")
    return [p.read_text() for folder in folders for p in sorted(root.joinpath(folder).glob("*.mlir"))]


@pytest.mark.parametrize("make", [lambda: generated_programs.tree(40), lambda: generated_programs.chain(30, affine=False)])
def test_cse_does_what_xdsls_does(make, tmp_path):
    """irad's CSE (cheaper keys, per-type effect answers) leaves the module xDSL's
    CSEDriver leaves: on differentiated call trees before optimisation (where CSE
    has much to merge) and on the FileCheck inputs with their nested regions."""
    from xdsl.transforms.common_subexpression_elimination import CSEDriver

    inputs = [_before_optimisation(make(), f"cse_{tmp_path.name}", tmp_path)] + _filecheck_inputs("optimize")
    changed = []
    for text in inputs:
        ours, theirs = parse(text), parse(text)
        changed.append(simplify.cse(ours, simplify.Touched()))
        CSEDriver().simplify(theirs)
        assert str(ours) == str(theirs)
    assert changed[0]  # the differentiated module had something to merge


def _operand_kinds_module() -> str:
    """Every float op irad's and xDSL's float patterns match, on every pair of
    operands from: an argument, constants (edge values), a negf, a mulf, a divf."""
    defs = ["%c{i} = arith.constant {v} : f64".format(i=i, v=_mlir_float(v)) for i, v in enumerate([0.0, -0.0, 1.0, -1.0, 2.0, -math.inf])]
    defs += ["%n = arith.negf %x : f64", "%p = arith.mulf %x, %y : f64", "%q = arith.divf %x, %y : f64"]
    defs += ["%k = arith.constant 3 : i32", "%h = arith.constant 1.5 : f32"]
    for name in ("addf", "mulf"):  # (c op x) op c', which reassociates with `reassoc`
        for j, flags in enumerate(["", " fastmath<fast>", " fastmath<reassoc>"]):
            defs += [f"%{name}_in{j} = arith.{name} %c4, %x{flags} : f64", f"%{name}_out{j} = arith.{name} %{name}_in{j}, %c4{flags} : f64"]
    values = ["%x", "%y", "%n", "%p", "%q"] + [f"%c{i}" for i in range(6)]
    ops = []
    fast = ["", " fastmath<fast>"]
    for i, (a, b) in enumerate(itertools.product(values, repeat=2)):
        for name in ("addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf", "minnumf"):
            for j, flags in enumerate(fast):
                ops.append(f"%{name}{i}_{j} = arith.{name} %{a[1:]}, %{b[1:]}{flags} : f64")
        ops.append(f"%cmp{i} = arith.cmpf olt, %{a[1:]}, %{b[1:]} : f64")
        ops.append(f"%pow{i} = math.powf %{a[1:]}, %{b[1:]} : f64")
    for i, a in enumerate(values):
        ops += [f"%neg{i} = arith.negf %{a[1:]} : f64", f"%exp{i} = math.exp %{a[1:]} : f64", f"%tr{i} = arith.truncf %{a[1:]} : f64 to f32"]
    ops += ["%si = arith.sitofp %k : i32 to f64", "%sj = arith.sitofp %z : i32 to f64", "%ex = arith.extf %h : f32 to f64"]
    body = "\n".join(defs + ops)
    return f"func.func @f(%x: f64, %y: f64, %z: i32) {{\n{body}\nfunc.return\n}}"


def _mlir_float(v: float) -> str:
    return "0xFFF0000000000000" if v == -math.inf else repr(v)


def test_patterns_need_what_they_declare():
    """A pattern declaring `operand_from` (irad's float folds; xDSL's float
    constant folds in optimize._XDSL_OPERAND_FROM) rewrites no op none of whose
    operands is defined by one of those op types, and an xDSL pattern rewrites no
    op its guard (optimize._XDSL_GUARDS) rejects, so irad-optimize may skip it
    there. (Each op is tried on unchanged IR: a pattern that does nothing leaves
    it as it was, and one that rewrites fails the test.)"""
    from collections import Counter

    from xdsl.pattern_rewriter import PatternRewriter

    canonicalize = simplify.Canonicalize(pipeline.context())
    texts = [_operand_kinds_module()] + _filecheck_inputs("optimize", "float-folds", "join-slice-sums")
    checked: Counter = Counter()
    for text in texts:
        for op in list(parse(text).walk()):
            if op.parent_block() is None:
                continue
            _, patterns = canonicalize._for(type(op))
            for pattern, needs in patterns:
                inner = getattr(pattern, "pattern", pattern)  # xDSL's, behind its guard
                name = type(inner).__name__
                if isinstance(pattern, simplify._Guarded) and not pattern.guard(op):
                    rewriter = PatternRewriter(op)
                    inner.match_and_rewrite(op, rewriter)
                    assert not rewriter.has_done_action, (name, "guard", str(op))
                    checked[name + " guard"] += 1
                if needs is None or any(isinstance(v.owner, needs) for v in op.operands):
                    continue
                rewriter = PatternRewriter(op)
                inner.match_and_rewrite(op, rewriter)
                assert not rewriter.has_done_action, (name, str(op))
                checked[name] += 1
    declared = {type(p).__name__ for p in FLOAT_FOLDS if simplify.operand_from(p)} | {"ElementwiseOfBroadcasts", "ElementwiseOfSplats", "SumOfSlicesIntoZeros", "ReductionOfSplat", "ExtractOfSplat", "GenericOfSplats"} | {
        t.__name__ for t in simplify._XDSL_OPERAND_FROM
    } | {t.__name__ + " guard" for t in simplify._XDSL_GUARDS}
    assert declared == set(checked) and min(checked.values()) >= 2, checked


def test_skipping_patterns_changes_nothing(tmp_path):
    """Canonicalizing with every pattern tried at every op gives the module the
    filtered walk gives: on the operand-kinds module, the FileCheck inputs and a
    differentiated call tree."""
    texts = [_before_optimisation(generated_programs.tree(40), f"skip_{tmp_path.name}", tmp_path), _operand_kinds_module()]
    texts += _filecheck_inputs("optimize", "float-folds")

    class Unfiltered(simplify.Canonicalize):
        def _for(self, op_type):
            folds, patterns = super()._for(op_type)
            return folds, [(pattern, None) for pattern, _ in patterns]

    for text in texts:
        ours, theirs = parse(text), parse(text)
        simplify._OneWalk(simplify.Canonicalize(pipeline.context())).rewrite_module(ours)
        simplify._OneWalk(Unfiltered(pipeline.context())).rewrite_module(theirs)
        assert str(ours) == str(theirs)
