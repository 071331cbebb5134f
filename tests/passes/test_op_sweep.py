"""Every entry of the registry of op derivatives, differentiated.

Each differentiable unary or binary elementwise entry (passes/derivatives/) is
swept on f64 and f32 scalars and on f64 tensors; each other tensor/linalg entry
(and arith.select) on small tensors built with irad/ir/tensor.py. A tiny
function applying the op is differentiated by the real passes (irad.grad and
irad.jvp requests, then the optimisation pipeline) and run on the Python
backend at seeded random points inside the op's domain, checking that

(a) the reverse rule agrees with central finite differences, and
(b) forward and reverse agree: <J v, u> = <v, J^T u>.

A new entry joins the sweep by itself, and fails until DOMAINS (elementwise)
or STRUCTURAL (the others) says how to sample it. Refused entries (no
derivative, on purpose) are checked to refuse in tests/passes/test_mlir_ops.py.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pytest
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import Float32Type, FunctionType, IntegerType, ModuleOp, TensorType, f32, f64, i32
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser

from irad.backends.python.translate import compile_module
from irad.ir import gather as G
from irad.ir import scan as S
from irad.ir import contraction as C
from irad.ir import tensor as T
from irad.ir.builder import IRBuilder
from irad.ir.constants import float_constant
from irad.ir.dialect import make_context
from irad.ir.mlir_ops import SinCosOp
from irad.passes.ad.derivatives import DERIVATIVES, TENSOR_FORMS
from irad.passes.pipelines import Options, autodiff_passes
from irad.pipeline import run
from tests.samplers import NONZERO, POSITIVE, WIDE, away_from_zero, uniform

CONTEXT = make_context()


def _integers(lo: int, hi: int):
    """An integer operand (math.fpowi's exponent): never differentiated."""
    return lambda rng, shape: rng.integers(lo, hi + 1, shape)


# elementwise op -> a sampler per operand: points where the op is smooth
DOMAINS = {
    "arith.addf": (WIDE, WIDE),
    "arith.subf": (WIDE, WIDE),
    "arith.mulf": (WIDE, WIDE),
    "arith.divf": (WIDE, NONZERO),
    # |x / y| in (2.04, 2.95): trunc(x / y) = 2 on every sample, away from the jumps
    "arith.remf": (away_from_zero(4.5, 5.9), away_from_zero(2.0, 2.2)),
    "arith.negf": (WIDE,),
    # random points: ties (where the derivative jumps) have probability zero
    "arith.maximumf": (WIDE, WIDE),
    "arith.maxnumf": (WIDE, WIDE),
    "arith.minimumf": (WIDE, WIDE),
    "arith.minnumf": (WIDE, WIDE),
    "arith.extf": (WIDE,),
    "arith.truncf": (WIDE,),
    "math.sin": (WIDE,),
    "math.cos": (WIDE,),
    "math.tan": (uniform(-1.2, 1.2),),
    "math.exp": (WIDE,),
    "math.exp2": (WIDE,),
    "math.expm1": (WIDE,),
    "math.log": (POSITIVE,),
    "math.log2": (POSITIVE,),
    "math.log10": (POSITIVE,),
    "math.log1p": (uniform(-0.5, 2.0),),
    "math.sqrt": (POSITIVE,),
    "math.rsqrt": (POSITIVE,),
    "math.cbrt": (NONZERO,),
    "math.tanh": (WIDE,),
    "math.sinh": (WIDE,),
    "math.cosh": (WIDE,),
    "math.asin": (uniform(-0.9, 0.9),),
    "math.asinh": (WIDE,),
    "math.acos": (uniform(-0.9, 0.9),),
    "math.acosh": (uniform(1.2, 3.0),),
    "math.atanh": (uniform(-0.9, 0.9),),
    "math.atan": (WIDE,),
    "math.atan2": (NONZERO, NONZERO),
    "math.powf": (POSITIVE, WIDE),
    "math.absf": (NONZERO,),
    "math.copysign": (NONZERO, NONZERO),
    "math.erf": (WIDE,),
    "math.erfc": (WIDE,),
    "math.acosh": (uniform(1.2, 3.0),),
    "math.atanh": (uniform(-0.9, 0.9),),
    "math.fma": (WIDE, WIDE, WIDE),
    # MLIR 22.1's clampf is maximumf(minimumf(x, lo), hi): random points pick each
    # operand somewhere, ties have probability zero
    "math.clampf": (WIDE, WIDE, WIDE),
    "math.fpowi": (NONZERO, _integers(-3, 3)),
    # the quotient jumps where a / b is an integer: probability zero at random points
    "arith.remf": (WIDE, NONZERO),
}
# operands of integer type: operand index -> element type
INTEGER_OPERANDS = {"math.fpowi": {1: i32}}

# ops that change the float type: (operand element type, result element type)
CONVERSIONS = {"arith.extf": (f32, f64), "arith.truncf": (f64, f32)}
# elementwise ops the Python backend does not run on tensors yet (the frontend
# never emits them on arrays): strict xfails, so support shows up here
NO_TENSOR_BACKEND = {"math.fma"}
SHAPE = (3,)


# ---- differentiating one function of the op --------------------------------------
class _Emitter(IRBuilder):
    """Appends to one block, as the frontend's emitter does."""

    def const(self, value: float, type: Attribute) -> SSAValue:
        return self.op(float_constant(value, type))


Build = Callable[[_Emitter, Sequence[SSAValue]], SSAValue]


def _is_integer(t: Attribute) -> bool:
    return isinstance(t.element_type if isinstance(t, TensorType) else t, IntegerType)


def _function(name: str, arg_types: Sequence[Attribute], body: Build) -> tuple[func.FuncOp, Attribute]:
    block = Block(arg_types=arg_types)
    result = body(_Emitter(block), block.args)
    block.add_op(func.ReturnOp(result))
    return func.FuncOp(name, FunctionType.from_lists(arg_types, [result.type]), Region(block)), result.type


def _with_request(fn: func.FuncOp, request: str) -> ModuleOp:
    """A module of `fn` and the function parsed from `request`. `fn` itself is
    not printed and parsed again: xDSL 0.75 reads a printed dense<-inf> (a
    reduction's init) back as an integer."""
    parsed = Parser(CONTEXT, request).parse_module()
    ops = list(parsed.ops)
    for op in ops:
        op.detach()
    return ModuleOp([fn, *ops])


def _compiled(build: Build, arg_types: Sequence[Attribute]):
    """Two compiled modules with @op(args) applying the op and @loss(args, u) =
    sum(u * op(args)) (the cotangent u makes irad.grad give J^T u): one with
    @grad of @loss, one with @jvp of @op, each through its pipeline."""
    op, r = _function("op", arg_types, build)

    def loss(b, args):
        product = b.mul(build(b, args[:-1]), args[-1])
        return T.reduce_all(b, product) if isinstance(r, TensorType) else product

    loss_fn, _ = _function("loss", [*arg_types, r], loss)
    n = len(arg_types)
    wrt = [i for i, t in enumerate(arg_types) if not _is_integer(t)]  # integers get none
    params = ", ".join(f"%a{i}: {t}" for i, t in enumerate(arg_types))
    args = ", ".join(f"%a{i}" for i in range(n))
    types = ", ".join(str(t) for t in arg_types)
    wrt_types = ", ".join(str(arg_types[i]) for i in wrt)
    wrt_list = ", ".join(map(str, wrt))
    grad = f"""
func.func @grad({params}, %u: {r}) -> ({wrt_types}) {{
  %g:{len(wrt)} = irad.grad @loss({args}, %u) {{wrt = [{wrt_list}]}} : ({types}, {r}) -> ({wrt_types})
  func.return {", ".join(f"%g#{i}" for i in range(len(wrt)))} : {wrt_types}
}}"""
    tangents = ", ".join(f"%t{i}" for i in wrt)
    tangent_params = ", ".join(f"%t{i}: {arg_types[i]}" for i in wrt)
    jvp = f"""
func.func @jvp({params}, {tangent_params}) -> ({r}, {r}) {{
  %v, %t = irad.jvp @op({args}, {tangents}) {{wrt = [{wrt_list}]}} : ({types}, {wrt_types}) -> ({r}, {r})
  func.return %v, %t : {r}, {r}
}}"""
    reverse, forward = _with_request(loss_fn, grad), _with_request(op, jvp)
    run(reverse, autodiff_passes(Options()))
    run(forward, autodiff_passes(Options()))
    return compile_module(reverse), compile_module(forward), r


def _numpy(t: Attribute) -> tuple[tuple[int, ...], type]:
    element = t.element_type if isinstance(t, TensorType) else t
    shape = tuple(t.get_shape()) if isinstance(t, TensorType) else ()
    if isinstance(element, IntegerType):
        return shape, np.int64
    return shape, np.float32 if isinstance(element, Float32Type) else np.float64


def _check(label: str, build: Build, arg_types: Sequence[Attribute], samplers: Sequence) -> None:
    reverse, forward, r = _compiled(build, arg_types)
    grad, loss, jvp = reverse.function("grad"), reverse.function("loss"), forward.function("jvp")
    inputs = [_numpy(t) for t in arg_types]
    out_shape, out_dtype = _numpy(r)
    # f32 resolves ~1e-7: a wider step and looser tolerances
    f32_involved = out_dtype is np.float32 or any(d is np.float32 for _, d in inputs)
    h, rtol, atol = (1e-2, 2e-2, 2e-3) if f32_involved else (1e-6, 1e-6, 1e-8)
    rng = np.random.default_rng(sum(map(ord, label)))
    floats = [i for i, t in enumerate(arg_types) if not _is_integer(t)]
    for _ in range(5):
        xs = [np.asarray(s(rng, shape), dtype) for s, (shape, dtype) in zip(samplers, inputs)]
        vs = [np.asarray(rng.uniform(-1.0, 1.0, shape), dtype) if i in floats else None
              for i, (shape, dtype) in enumerate(inputs)]
        u = np.asarray(rng.uniform(-1.0, 1.0, out_shape), out_dtype)
        cotangents = [np.asarray(g, np.float64) for g in grad(*xs, u)]  # J^T u per float operand
        # (a) <v, J^T u> against central differences of <u, f> along v
        up = loss(*(x if v is None else x + h * v for x, v in zip(xs, vs)), u)[0]
        down = loss(*(x if v is None else x - h * v for x, v in zip(xs, vs)), u)[0]
        difference = (float(up) - float(down)) / (2 * h)
        back = sum(float(np.sum(c * vs[i])) for c, i in zip(cotangents, floats))
        assert back == pytest.approx(difference, rel=rtol, abs=atol), (label, xs)
        # (b) <J v, u> from the jvp against <v, J^T u> from the gradient
        _, tangent = jvp(*xs, *(vs[i] for i in floats))
        ahead = float(np.sum(np.asarray(tangent, np.float64) * u))
        close = dict(rel=1e-5, abs=1e-6) if f32_involved else dict(rel=1e-12, abs=1e-14)
        assert ahead == pytest.approx(back, **close), (label, xs)


# ---- elementwise entries ------------------------------------------------------------
def _arity(name: str) -> int:
    return len(CONTEXT.get_op(name).get_irdl_definition().operands)


def _swept(entry) -> bool:
    """Entries with a derivative (not piecewise constant, not refused)."""
    return entry.differentiable and not entry.refused


ELEMENTWISE = sorted(
    name
    for name, entry in DERIVATIVES.items()
    if _swept(entry) and entry.elementwise and not entry.multi_result
)


def _elementwise_cases():
    """(op, form): f64 and f32 scalars and f64 tensors (a conversion: its own types)."""
    for name in ELEMENTWISE:
        forms = [str(CONVERSIONS[name][0]), "tensor"] if name in CONVERSIONS else ["f64", "f32", "tensor"]
        for form in forms:
            marks = []
            if form == "tensor" and name in NO_TENSOR_BACKEND:
                marks = [pytest.mark.xfail(reason="not on tensors in the Python backend", strict=True)]
            yield pytest.param(name, form, marks=marks, id=f"{name}-{form}")


@pytest.mark.parametrize(("name", "form"), list(_elementwise_cases()))
def test_elementwise_entry(name, form):
    assert name in DOMAINS, f"{name}: add where to sample it to DOMAINS in {__file__}"
    samplers = DOMAINS[name]
    n = _arity(name)
    assert len(samplers) == n, f"{name}: DOMAINS gives {len(samplers)} samplers for {n} operands"
    element, result = CONVERSIONS.get(name, (f32 if form == "f32" else f64,) * 2)
    elements = [INTEGER_OPERANDS.get(name, {}).get(i, element) for i in range(n)]
    if form == "tensor":
        elements, result = [TensorType(e, SHAPE) for e in elements], TensorType(result, SHAPE)

    def build(b, args):
        return b.op(CONTEXT.get_op(name).create(operands=list(args), result_types=[result]))

    _check(f"{name}-{form}", build, elements, samplers)


def test_every_tensor_form_is_swept():
    assert set(TENSOR_FORMS) <= set(ELEMENTWISE)


# ---- tensor/linalg entries (and arith.select) ----------------------------------------
def _index(b, i: int) -> SSAValue:
    return b.op(arith.ConstantOp.from_int_and_width(i, T.INDEX))


def _vector(n: int) -> TensorType:
    return TensorType(f64, [n])


MATRIX = TensorType(f64, [2, 3])


def _reduction(combiner: type) -> Build:
    return lambda b, a: T.reduce(b, a[0], [1], combiner)


def _indices(b, values) -> SSAValue:
    """A constant i64 index tensor (repeated positions included)."""
    return T.dense(b, np.array(values), TensorType(T.I64, list(np.shape(values))))


def _greater_of(b, a):  # np.where(x > y, x, y): a linalg.generic select
    return T.select(b, T.compare(b, "ogt", a[0], a[1]), a[0], a[1])


def _sincos(pick: Callable) -> Build:
    def build(b, a):
        sin, cos = b.results(SinCosOp(a[0]))
        return pick(b, sin, cos)

    return build


# each result alone (the other gets no cotangent), and both
SINCOS = {"sin": lambda b, s, c: s, "cos": lambda b, s, c: c, "sin * cos": lambda b, s, c: b.mul(s, c)}

# entry -> variants: (label, operand types, samplers, build)
STRUCTURAL: dict[str, list[tuple[str, list, tuple, Build]]] = {
    "math.sincos": [
        (f"{label} of {t}", [t], (WIDE,), _sincos(pick))
        for label, pick in SINCOS.items()
        for t in (f64, f32, _vector(3))
    ],
    "arith.select": [("x > y ? x : y", [f64, f64], (WIDE, WIDE),
                      lambda b, a: b.op(arith.SelectOp(b.op(arith.CmpfOp(a[0], a[1], "ogt")), a[0], a[1])))],
    "linalg.broadcast": [("(3,) to (2, 3)", [_vector(3)], (WIDE,), lambda b, a: T.broadcast_to(b, a[0], (2, 3)))],
    "linalg.reduce": [
        ("sum", [MATRIX], (WIDE,), _reduction(arith.AddfOp)),
        ("product", [MATRIX], (NONZERO,), _reduction(arith.MulfOp)),
        ("max", [MATRIX], (WIDE,), _reduction(arith.MaximumfOp)),
        ("min", [MATRIX], (WIDE,), _reduction(arith.MinimumfOp)),
    ],
    "linalg.transpose": [("(2, 3)", [MATRIX], (WIDE,), lambda b, a: T.transpose(b, a[0], [1, 0]))],
    "linalg.matmul": [("(2, 3) @ (3, 2)", [MATRIX, TensorType(f64, [3, 2])], (WIDE, WIDE),
                       lambda b, a: T.matmul(b, a[0], a[1]))],
    "linalg.generic": [
        ("where", [_vector(3), _vector(3)], (WIDE, WIDE), _greater_of),
        ("sign", [_vector(3)], (NONZERO,), lambda b, a: b.mul(T.sign(b, a[0]), a[0])),
        ("gather", [MATRIX], (WIDE,), lambda b, a: G.gather(b, a[0], _indices(b, [[2, 0, 2, 1], [0, 0, 1, 1]]), 1)),
        ("scatter-add", [TensorType(f64, [2, 4]), MATRIX], (WIDE, WIDE),
         lambda b, a: G.scatter_add(b, a[1], _indices(b, [[2, 0, 2, 1], [0, 0, 1, 1]]), a[0], 1)),
        ("scatter", [TensorType(f64, [2, 4]), MATRIX], (WIDE, WIDE),
         lambda b, a: G.scatter(b, a[1], _indices(b, [[2, 0, 2, 1], [0, 0, 1, 1]]), a[0], 1)),
        ("contraction: batched matmul", [TensorType(f64, [2, 2, 3]), TensorType(f64, [2, 3, 2])], (WIDE, WIDE),
         lambda b, a: C.contract(b, a, ["bik", "bkj"], "bij")),
        ("contraction: three operands", [_vector(3), TensorType(f64, [3, 4]), _vector(4)], (WIDE,) * 3,
         lambda b, a: C.contract(b, a, ["i", "ij", "j"], "")),
        ("contraction: broadcast", [_vector(3)], (WIDE,), lambda b, a: C.contract(b, a, ["j"], "ij", {"i": 2})),
        ("contraction: float32", [TensorType(f32, [2, 3]), TensorType(f32, [3])], (WIDE, WIDE),
         lambda b, a: C.contract(b, a, ["ij", "j"], "i")),
    ],
    "irad.cumsum": [
        (f"axis {axis}{' reversed' if reverse else ''} of {t}", [t], (WIDE,),
         (lambda axis, reverse: lambda b, a: S.cumsum(b, a[0], axis, reverse))(axis, reverse))
        for t, axis, reverse in ((_vector(4), 0, False), (_vector(4), 0, True), (MATRIX, 1, False),
                                 (MATRIX, 0, True), (TensorType(f32, [2, 3]), 1, False))
    ],
    "irad.linear_scan": [
        (f"axis {axis}{' reversed' if reverse else ''} of {t}", [t, t], (WIDE, WIDE),
         (lambda axis, reverse: lambda b, a: S.linear_scan(b, a[0], a[1], axis, reverse))(axis, reverse))
        for t, axis, reverse in ((_vector(4), 0, False), (_vector(4), 0, True), (MATRIX, 1, False),
                                 (MATRIX, 0, True), (TensorType(f32, [2, 3]), 1, False))
    ] + [("cumprod with a zero", [_vector(4)], (WIDE,),
          lambda b, a: S.cumprod(b, b.mul(a[0], T.dense(b, np.array([1.0, 0.0, 1.0, 1.0]), _vector(4))), 0))],
    "tensor.splat": [("to (3,)", [f64], (WIDE,), lambda b, a: T.splat(b, a[0], (3,)))],
    "tensor.reshape": [("(2, 3) to (3, 2)", [MATRIX], (WIDE,), lambda b, a: T.reshape(b, a[0], (3, 2)))],
    "tensor.extract": [("[1]", [_vector(3)], (WIDE,), lambda b, a: b.op(tensor.ExtractOp(a[0], [_index(b, 1)], f64)))],
    "tensor.insert": [("[1]", [f64, _vector(3)], (WIDE, WIDE),
                       lambda b, a: b.op(tensor.InsertOp(a[0], a[1], [_index(b, 1)])))],
    "tensor.extract_slice": [("[1:3]", [_vector(4)], (WIDE,),
                              lambda b, a: b.op(tensor.ExtractSliceOp(a[0], [1], [2], [1], _vector(2))))],
    "tensor.insert_slice": [("[1:3]", [_vector(2), _vector(4)], (WIDE, WIDE),
                             lambda b, a: b.op(tensor.InsertSliceOp.get(a[0], a[1], [2], [1], [1])))],
    "tensor.concat": [("(2,) ++ (3,)", [_vector(2), _vector(3)], (WIDE, WIDE),
                       lambda b, a: b.op(tensor.ConcatOp(list(a), 0, _vector(5))))],
    "tensor.from_elements": [("3 scalars", [f64, f64, f64], (WIDE, WIDE, WIDE),
                              lambda b, a: b.op(tensor.FromElementsOp(*a)))],
}

OTHERS = sorted(
    name
    for name, entry in DERIVATIVES.items()
    if _swept(entry) and not entry.structured and name not in ELEMENTWISE
)


@pytest.mark.parametrize("name", OTHERS)
def test_tensor_entry(name):
    assert name in STRUCTURAL, f"{name}: add how to build and sample it to STRUCTURAL in {__file__}"
    for label, types, samplers, build in STRUCTURAL[name]:
        _check(f"{name} {label}", build, types, samplers)
