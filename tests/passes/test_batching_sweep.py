"""Every batching rule of the registry of op derivatives, against a loop over the batch.

Each entry with a `batch` rule (passes/ad/derivatives/batching.py) is applied
in a tiny function @op, built as tests/passes/test_op_sweep.py builds it; an
`irad.vmap` request maps @op over a batch of 3 with every operand batched,
and with each operand alone batched (the others shared), through irad's
pipeline; the Python backend runs it and the result must equal @op called on
each element of the batch in turn. The ops with regions and calls are swept
on IR written out below (scf.if on a batched and an unbatched condition,
scf.for, func.call); the tape ops and scf.while on batched values are
refused with a reason.
"""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import Float32Type, FunctionType, IntegerType, ModuleOp, TensorType, f64, i64
from xdsl.ir import Block, Region
from xdsl.parser import Parser

from irad.backends.python.translate import compile_module
from irad.base.errors import BatchingError
from irad.ir.dialect import VmapOp, batched_type
from irad.passes.ad.derivatives import DERIVATIVES, TENSOR_FORMS
from irad.passes.ad.derivatives.batching import INTEGER_OPS, SCALAR_ONLY
from irad.passes.pipelines import Options, autodiff_passes
from irad.pipeline import run
from tests.passes.test_op_sweep import (
    CONTEXT, CONVERSIONS, DOMAINS, INTEGER_OPERANDS, NO_TENSOR_BACKEND, STRUCTURAL, _arity, _function, _numpy,
)
from tests.samplers import WIDE

BATCH = 3

# the non-differentiable elementwise entries: (operand types, result type, samplers, build)
def _cmpf(b, a):
    return b.op(arith.CmpfOp(a[0], a[1], "olt"))


PIECEWISE = {
    "arith.cmpf": ([f64, f64], (WIDE, WIDE), _cmpf),
    "arith.cmpi": ([i64, i64], ((lambda rng, s: rng.integers(-3, 4, s)),) * 2,
                   lambda b, a: b.op(arith.CmpiOp(a[0], a[1], "slt"))),
    "arith.fptosi": ([f64], (WIDE,), lambda b, a: b.op(arith.FPToSIOp(a[0], i64))),
    "arith.sitofp": ([i64], ((lambda rng, s: rng.integers(-9, 9, s)),), lambda b, a: b.op(arith.SIToFPOp(a[0], f64))),
    **{name: ([f64], (WIDE,), (lambda n: lambda b, a: b.op(CONTEXT.get_op(n).create(operands=[a[0]], result_types=[f64])))(name))
       for name in ("math.floor", "math.ceil", "math.trunc", "math.roundeven")},
}
INTEGER = {
    "arith.addi": lambda b, a: b.op(arith.AddiOp(a[0], a[1])),
    "arith.muli": lambda b, a: b.op(arith.MuliOp(a[0], a[1])),
    "arith.subi": lambda b, a: b.op(arith.SubiOp(a[0], a[1])),
}
# entries swept elsewhere or refused, with where / why
ELSEWHERE = {
    "scf.if": "IR below", "scf.for": "IR below", "func.call": "IR below", "scf.while": "refused below",
    **{name: "refused below (tape)" for name, e in DERIVATIVES.items() if name.startswith(("irad.tape", "irad.shadow"))},
    "arith.constant": "no operands: never batched",
    "math.round": "refused: SCALAR_ONLY",
    # classified piecewise constant, never emitted by irad on batched values yet
    **{name: "bit-level and class tests: elementwise like math.floor" for name in (
        "arith.fptoui", "arith.uitofp", "math.isfinite", "math.isinf", "math.isnan", "math.isnormal",
        "math.absi", "math.ctlz", "math.cttz", "math.ctpop", "math.ipowi")},
}


def _vmapped(build, arg_types, result_type, batched):
    """@op and @main = irad.vmap of @op over the operands flagged `batched`, compiled."""
    op_fn, r = _function("op", arg_types, build)
    block = Block(arg_types=[batched_type(t, 0 if flag else None, BATCH) for t, flag in zip(arg_types, batched)])
    request = VmapOp("op", block.args, [0 if flag else None for flag in batched], [0], BATCH,
                     [batched_type(r, 0, BATCH)])
    block.add_ops([request, func.ReturnOp(*request.results)])
    main = func.FuncOp("main", FunctionType.from_lists(block.arg_types, request.result_types), Region(block))
    module = ModuleOp([op_fn, main])
    run(module, autodiff_passes(Options()))
    return compile_module(module)


def _check(label, build, arg_types, samplers):
    n = len(arg_types)
    patterns = [(True,) * n] + ([tuple(i == j for j in range(n)) for i in range(n)] if n > 1 else [])
    rng = np.random.default_rng(sum(map(ord, label)))
    for batched in patterns:
        code = _vmapped(build, arg_types, None, batched)
        op, main = code.function("op"), code.function("main")
        xs = []
        for sampler, t, flag in zip(samplers, arg_types, batched):
            shape, dtype = _numpy(t)
            xs.append(np.asarray(sampler(rng, (BATCH, *shape) if flag else shape), dtype))
        got = np.asarray(main(*xs)[0])
        expected = np.stack([np.asarray(op(*(x[k] if flag else x for x, flag in zip(xs, batched)))[0])
                             for k in range(BATCH)])
        assert got.shape == expected.shape, (label, batched)
        f32 = any(isinstance(getattr(t, "element_type", t), Float32Type) for t in arg_types)
        np.testing.assert_allclose(got, expected, rtol=1e-6 if f32 else 1e-13, atol=1e-12,
                                   err_msg=f"{label} batched {batched}")


def _elementwise_cases():
    for name, entry in sorted(DERIVATIVES.items()):
        if entry.batch is None or not entry.elementwise or entry.multi_result or name not in DOMAINS:
            continue
        if name in SCALAR_ONLY:
            yield pytest.param(name, "refused", id=f"{name}-refused")
            continue
        forms = [str(CONVERSIONS[name][0])] if name in CONVERSIONS else ["f64", "tensor"]
        for form in forms:
            if form == "tensor" and name in NO_TENSOR_BACKEND:
                continue
            yield pytest.param(name, form, id=f"{name}-{form}")


@pytest.mark.parametrize(("name", "form"), list(_elementwise_cases()))
def test_elementwise_rule(name, form):
    n = _arity(name)
    element, result = CONVERSIONS.get(name, (f64, f64))
    elements = [INTEGER_OPERANDS.get(name, {}).get(i, element) for i in range(n)]
    if form == "tensor":
        elements, result = [TensorType(e, (3,)) for e in elements], TensorType(result, (3,))

    def build(b, args):
        return b.op(CONTEXT.get_op(name).create(operands=list(args), result_types=[result]))

    if form == "refused":
        with pytest.raises(BatchingError, match=f"cannot batch `{name}`: the backends run it on numbers only"):
            _check(name, build, elements, DOMAINS[name])
        return
    _check(f"{name}-{form}", build, elements, DOMAINS[name])


@pytest.mark.parametrize("name", sorted(PIECEWISE))
def test_piecewise_constant_rule(name):
    types, samplers, build = PIECEWISE[name]
    _check(name, build, types, samplers)


@pytest.mark.parametrize("name", sorted(INTEGER))
def test_integer_rule(name):
    assert name in INTEGER_OPS
    ints = (lambda rng, s: rng.integers(-5, 6, s),) * 2
    _check(name, INTEGER[name], [i64, i64], ints)


STRUCTURAL_NAMES = sorted(n for n, e in DERIVATIVES.items() if e.batch is not None and n in STRUCTURAL)


@pytest.mark.parametrize("name", STRUCTURAL_NAMES)
def test_structural_rule(name):
    for label, types, samplers, build in STRUCTURAL[name]:
        _check(f"{name} {label}", build, types, samplers)


def test_every_entry_with_a_rule_is_swept():
    swept = {n for n in DOMAINS} | set(PIECEWISE) | set(STRUCTURAL) | set(ELSEWHERE)
    missing = sorted(n for n, e in DERIVATIVES.items() if n not in swept and not e.refused)
    assert not missing, f"add these registry entries to a sweep in {__file__}: {missing}"
    assert all(TENSOR_FORMS[n].batch is not None for n in TENSOR_FORMS)


# ---- regions and calls, on IR written out --------------------------------------------
REGIONS = """
func.func private @scale(%v: tensor<2xf64>, %s: f64) -> tensor<2xf64> {
  %t = tensor.splat %s : tensor<2xf64>
  %r = arith.mulf %v, %t : tensor<2xf64>
  func.return %r : tensor<2xf64>
}
func.func @op(%x: f64, %v: tensor<2xf64>, %n: index) -> f64 {
  %zero = arith.constant 0.0 : f64
  %c = arith.cmpf ogt, %x, %zero : f64
  %y = scf.if %c -> (f64) {
    %s = math.sin %x : f64
    scf.yield %s : f64
  } else {
    %s = arith.mulf %x, %x : f64
    scf.yield %s : f64
  }
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  %w = func.call @scale(%v, %y) : (tensor<2xf64>, f64) -> tensor<2xf64>
  %acc = scf.for %i = %lb to %n step %one iter_args(%a = %zero) -> (f64) {
    %e = tensor.extract %w[%lb] : tensor<2xf64>
    %b = arith.addf %a, %e : f64
    scf.yield %b : f64
  }
  %fixed = arith.cmpi sgt, %n, %one : index
  %z = scf.if %fixed -> (f64) {
    scf.yield %acc : f64
  } else {
    scf.yield %zero : f64
  }
  func.return %z : f64
}
"""


def _module(text: str, batched: tuple[bool, ...], types: list) -> ModuleOp:
    module = Parser(CONTEXT, text).parse_module()
    block = Block(arg_types=[batched_type(t, 0 if flag else None, BATCH) for t, flag in zip(types, batched)])
    request = VmapOp("op", block.args, [0 if f else None for f in batched], [0], BATCH, [TensorType(f64, [BATCH])])
    block.add_ops([request, func.ReturnOp(*request.results)])
    module.body.block.add_op(func.FuncOp("main", FunctionType.from_lists(block.arg_types, request.result_types),
                                         Region(block)))
    return module


@pytest.mark.parametrize("batched", [(True, True, False), (True, False, False), (False, True, False)])
def test_regions_and_calls(batched):
    from irad.ir.tensor import INDEX

    module = _module(REGIONS, batched, [f64, TensorType(f64, [2]), INDEX])
    run(module, autodiff_passes(Options()))
    code = compile_module(module)
    rng = np.random.default_rng(3)
    x = rng.normal(size=BATCH) if batched[0] else 0.4
    v = rng.normal(size=(BATCH, 2)) if batched[1] else rng.normal(size=2)
    got = code.function("main")(x, v, 3)[0]
    op = code.function("op")
    expected = [op(x[k] if batched[0] else x, v[k] if batched[1] else v, 3)[0] for k in range(BATCH)]
    np.testing.assert_allclose(got, expected, rtol=1e-13)


def test_extract_at_batched_indices_gathers():
    text = """
func.func @op(%m: tensor<2x3xf64>, %i64: i64, %j64: i64) -> f64 {
  %i = arith.index_cast %i64 : i64 to index
  %j = arith.index_cast %j64 : i64 to index
  %e = tensor.extract %m[%i, %j] : tensor<2x3xf64>
  func.return %e : f64
}
"""
    for batched in [(True, True, True), (False, True, False), (False, False, True)]:
        module = _module(text, batched, [TensorType(f64, [2, 3]), i64, i64])
        run(module, autodiff_passes(Options()))
        code = compile_module(module)
        rng = np.random.default_rng(5)
        m = rng.normal(size=(BATCH, 2, 3) if batched[0] else (2, 3))
        i = np.array([1, 0, 1]) if batched[1] else 1
        j = np.array([2, 0, 1]) if batched[2] else 2
        got = code.function("main")(m, i, j)[0]
        expected = [(m[k] if batched[0] else m)[(i[k] if batched[1] else i), (j[k] if batched[2] else j)]
                    for k in range(BATCH)]
        np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_while_on_a_batched_condition_runs_with_a_mask():
    text = """
func.func @op(%x: f64) -> f64 {
  %r = scf.while (%a = %x) : (f64) -> f64 {
    %one = arith.constant 1.0 : f64
    %c = arith.cmpf olt, %a, %one : f64
    scf.condition(%c) %a : f64
  } do {
  ^bb0(%b: f64):
    %d = arith.addf %b, %b : f64
    scf.yield %d : f64
  }
  func.return %r : f64
}
"""
    module = _module(text, (True,), [f64])
    run(module, autodiff_passes(Options()))
    xs = np.array([0.3, 2.0, 0.01])  # doubled 2, 0 and 7 times

    def doubled(a):
        while a < 1.0:
            a = a + a
        return a

    np.testing.assert_allclose(compile_module(module).function("main")(xs)[0], [doubled(a) for a in xs], rtol=0)


def test_while_with_a_shared_condition():
    text = """
func.func @op(%x: f64) -> f64 {
  %zero = arith.constant 0 : i64
  %r:2 = scf.while (%i = %zero, %a = %x) : (i64, f64) -> (i64, f64) {
    %three = arith.constant 3 : i64
    %c = arith.cmpi slt, %i, %three : i64
    scf.condition(%c) %i, %a : i64, f64
  } do {
  ^bb0(%j: i64, %b: f64):
    %one = arith.constant 1 : i64
    %k = arith.addi %j, %one : i64
    %s = math.sin %b : f64
    %d = arith.addf %b, %s : f64
    scf.yield %k, %d : i64, f64
  }
  func.return %r#1 : f64
}
"""
    module = _module(text, (True,), [f64])
    run(module, autodiff_passes(Options()))
    code = compile_module(module)
    xs = np.array([0.1, 0.5, -1.0])
    got = code.function("main")(xs)[0]
    np.testing.assert_allclose(got, [code.function("op")(x)[0] for x in xs], rtol=1e-13)


def test_for_with_batched_bounds_and_step_runs_with_a_mask():
    text = """
func.func @op(%x: f64, %lb: index, %ub: index, %step: index) -> f64 {
  %r = scf.for %i = %lb to %ub step %step iter_args(%a = %x) -> (f64) {
    %j = arith.index_cast %i : index to i64
    %f = arith.sitofp %j : i64 to f64
    %b = arith.addf %a, %f : f64
    %c = math.sin %b : f64
    scf.yield %c : f64
  }
  func.return %r : f64
}
"""
    from irad.ir.tensor import INDEX

    for batched in [(True, True, True, True), (False, False, True, False), (False, True, False, True)]:
        module = _module(text, batched, [f64, INDEX, INDEX, INDEX])
        run(module, autodiff_passes(Options()))
        code = compile_module(module)
        values = {0: np.array([0.1, -0.5, 0.9]), 1: np.array([0, 2, 5]), 2: np.array([7, 3, 5]), 3: np.array([2, 1, 3])}
        args = [values[i] if flag else values[i][0] for i, flag in enumerate(batched)]
        got = code.function("main")(*args)[0]
        expected = [code.function("op")(*(a[k] if flag else a for a, flag in zip(args, batched)))[0]
                    for k in range(BATCH)]
        np.testing.assert_allclose(got, expected, rtol=1e-14)
