"""The native backend (upstream MLIR 22 + llvmlite) runs the same programs as
the Python backend: every test program's value and gradient agree on both and
match finite differences; vjp, jvp and Jacobians; the tape is freed; compiled
code is cached; export round-trips through mlir-opt and mlir-runner; errors
name what to install.

Each program is JIT-compiled once (the API caches per signature) and then run
at all its points, which keeps this file to a few seconds.
"""

from __future__ import annotations

import ctypes
import gc
import glob
import math
import os
import runpy
import subprocess
import tempfile
from pathlib import Path

import numpy as np
import pytest

import irad
from irad import compiled
from irad.backends.native import mlir_tools
from irad.backends.native import compile as native
from irad.backends.python import translate as python_backend
from irad.backends.native.llvm_jit import JitModule
from irad.ir.dialect import make_context
from tests.frontend import test_arrays as ta
from tests.passes import test_control_flow as cf
from tests.passes import test_forward as fw
from tests.api import test_gradients as tg
from tests.reference import five_point_difference

NATIVE_MISSING = native.unavailable_reason()
needs_native = pytest.mark.skipif(NATIVE_MISSING is not None, reason=NATIVE_MISSING or "")
BENCH_ARRAYS = runpy.run_path(str(Path(__file__).resolve().parents[2] / "bench" / "arrays.py"))


def _program_points():
    """(function, args) for every scalar test program: math functions, operators,
    compositions, helper calls, branches, loops, while, recursion."""
    points = [(f, (x,)) for f, xs in tg.UNARY_CASES for x in xs]
    points += [(f, tuple(args)) for f, args in tg.BINARY_CASES + tg.COMPOSED + tg.HELPERS]
    points += [
        (cf.piecewise, (2.5,)), (cf.piecewise, (-0.7,)),
        (cf.elif_chain, (-3.0, 1.7)), (cf.elif_chain, (3.0, 1.7)),
        (cf.mixed_int_float_in_branches, (0.7, 5)),
        (cf.several_carried, (0.3, 1.1, 4)), (cf.several_carried, (0.3, 1.1, 0)),
        (cf.stepped_range, (1.3, 10, -3, -3)), (cf.runtime_step, (0.4, -4)),
        (cf.nested_loops, (0.6, 5)), (cf.loop_calls_helper, (0.4, 6)),
        (cf.loop_calls_looping_helper, (0.4, 5)),
        (cf.loop_with_branch, (0.3, 7)), (cf.loop_with_branch, (0.3, 3000)),
        (cf.halve_until_small, (37.0,)), (cf.early_return_in_loop, (1.1, 5)),
        (cf.break_and_continue, (0.3,)), (cf.while_with_break, (3.0,)),
        (cf.return_in_nested_loop, (0.3, 4)),
        (cf.power_rec, (1.3, 6)), (cf.even_part, (0.4, 7)), (cf.tree_rec, (0.7, 6)),
        (cf.recursion_in_a_loop, (0.3, 5)), (cf.chain_rec, (0.5, 800)),
        # ints and bools cross the C interface: floor division and remainder
        # with Python's signs, promotion, comparisons, an i1 argument
        (tg.int_floordiv_mod, (0.5, -7, 2)), (tg.int_promotion, (0.75, -3)),
        (tg.int_unary, (0.5, -3)), (tg.bool_arg, (2.0, True)), (tg.bool_arg, (-1.5, False)),
        (tg.int_comparisons, (2.0, 3)), (tg.int_only_path, (1.5, 10)),
    ]
    return points


POINTS = _program_points()


def _id(point):
    f, args = point
    return f"{f.__name__}{args}"


def _agree(native_value, python_value, what):
    assert type(native_value) is type(python_value), f"{what}: {native_value!r} vs {python_value!r}"
    assert native_value == pytest.approx(python_value, rel=1e-12, abs=1e-13), what


@needs_native
@pytest.mark.parametrize("point", POINTS, ids=map(_id, POINTS))
def test_both_backends_agree_and_match_finite_differences(point):
    f, args = point
    wrt = tg.float_positions(args)
    value, grads = irad.value_and_grad(f, argnums=wrt, backend="native")(*args)
    ref_value, ref_grads = irad.value_and_grad(f, argnums=wrt)(*args)
    _agree(value, ref_value, f"value of {f.__name__}")
    for i, g, ref in zip(wrt, grads, ref_grads):
        _agree(g, ref, f"d{f.__name__}/d arg {i}")
        scale = max(1.0, abs(ref_value))
        fd = five_point_difference(f, args, i)
        assert g == pytest.approx(fd, rel=1e-6, abs=1e-8 * scale), f"d{f.__name__}/d arg {i} vs fd"


@needs_native
@pytest.mark.parametrize("point", fw.POINTS)
@pytest.mark.parametrize("f", [fw.smooth, fw.branchy, fw.calls_helpers], ids=lambda f: f.__name__)
def test_forward_mode_agrees(f, point):
    for tangents in [(1.0, 0.0), (0.3, -2.0)]:
        out, tangent = irad.jvp(f, point, tangents, backend="native")
        ref_out, ref_tangent = irad.jvp(f, point, tangents)
        _agree(out, ref_out, "jvp value")
        _agree(tangent, ref_tangent, "jvp tangent")


def float_vector(x, y, n):
    a, b, _, d = fw.vector(x, y, n)
    return a, b, d


@needs_native
def test_jacobians_and_hessians_agree():
    for jac in (irad.jacfwd, irad.jacrev):
        native_jac = jac(float_vector, argnums=(0, 1), backend="native")(0.7, 1.3, 3)
        python_jac = jac(float_vector, argnums=(0, 1))(0.7, 1.3, 3)
        assert fw.flat(native_jac) == pytest.approx(fw.flat(python_jac), rel=1e-12)
    # forward over reverse through a loop's tape (shadow memrefs in native code)
    h = irad.hessian(cf.loop_with_branch, backend="native")(0.3, 7)
    assert h == pytest.approx(irad.hessian(cf.loop_with_branch)(0.3, 7), rel=1e-12)
    # a value with an int result: i64 comes back through the C interface
    out, tangent = irad.jvp(fw.vector, (0.7, 1.3, 3), (1.0, 0.5, None), backend="native")
    assert out == irad.jvp(fw.vector, (0.7, 1.3, 3), (1.0, 0.5, None))[0]
    assert type(out[2]) is int and tangent[2] is None


@needs_native
def test_vjp_pullback_runs_again_and_frees_the_tape_with_the_pullback():
    out, pullback = irad.vjp(cf.loop_with_branch, 0.3, 6, backend="native")
    assert out == cf.loop_with_branch(0.3, 6)
    (dx, dn) = pullback(2.0)
    assert dn is None
    assert dx == pytest.approx(2.0 * five_point_difference(cf.loop_with_branch, (0.3, 6), 0), rel=1e-6)
    assert pullback(1.0)[0] == pytest.approx(dx / 2.0, rel=1e-12)
    tapes = [pullback.residuals]
    buffers = [b.descriptor.owner for t in tapes for b in t if isinstance(b, native.NativeMemRef)]
    assert len(buffers) == 1
    free = buffers[0].free
    assert free.alive
    del pullback, tapes, buffers
    gc.collect()
    assert not free.alive  # libc free ran


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@needs_native
@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_gradients_of_loops_do_not_leak_their_tape():
    # 20,000 iterations record ~0.5 MB of tape per call: 200 leaked calls would be 100 MB
    g = irad.grad(cf.loop_with_branch, backend="native")
    g(0.3, 20_000)
    before = _resident_bytes()
    for _ in range(200):
        g(0.3, 20_000)
    assert _resident_bytes() - before < 20 * 2**20


def cached_program(x, n):
    return x * n + math.cos(x)


@pytest.fixture
def lowered(monkeypatch, tmp_path) -> list[str]:
    """The modules the native backend lowers from now on, with an empty API
    cache and an empty object cache (a hit would lower nothing)."""
    monkeypatch.setattr(compiled, "_CACHE", {})
    monkeypatch.setenv("IRAD_NATIVE_CACHE", str(tmp_path / "objects"))
    modules: list[str] = []
    real = native.lower_to_llvm_ir
    monkeypatch.setattr(native, "lower_to_llvm_ir",
                        lambda text, passes, **options: modules.append(text) or real(text, passes, **options))
    return modules


@needs_native
def test_compiled_once_per_signature(lowered):
    g = irad.grad(cached_program, backend="native")
    assert g(0.5, 2) == pytest.approx(2 - math.sin(0.5))
    assert g(1.5, 3) == pytest.approx(3 - math.sin(1.5))
    assert irad.grad(cached_program, backend="native")(2.5, 4) == pytest.approx(4 - math.sin(2.5))
    assert len(lowered) == 1
    g(0.5, True)  # a bool is another signature
    irad.grad(cached_program)(0.5, 2)  # the Python backend is another cache entry
    assert len(lowered) == 2


def _parse(text: str):
    from xdsl.parser import Parser

    from xdsl.dialects.memref import MemRef

    context = make_context()  # linalg and tensor are registered there, memref is not
    if "memref" not in context.registered_dialect_names:
        context.load_dialect(MemRef)
    return Parser(context, text).parse_module()


TENSOR_PROGRAM = """
  func.func @f(%a: tensor<200x100xf64>, %v: tensor<100x1xf64>, %s: f64)
      -> (tensor<200x1xf64>, f64, tensor<200x100xf64>) {
    %e = tensor.empty() : tensor<200x1xf64>
    %z = arith.constant 0.0 : f64
    %init = linalg.fill ins(%z : f64) outs(%e : tensor<200x1xf64>) -> tensor<200x1xf64>
    %mv = linalg.matmul ins(%a, %v : tensor<200x100xf64>, tensor<100x1xf64>)
                        outs(%init : tensor<200x1xf64>) -> tensor<200x1xf64>
    %ex = math.exp %mv : tensor<200x1xf64>
    %sq = arith.mulf %a, %a : tensor<200x100xf64>
    %c0 = arith.constant 0 : index
    %first = tensor.extract %ex[%c0, %c0] : tensor<200x1xf64>
    %r = arith.mulf %first, %s : f64
    func.return %ex, %r, %sq : tensor<200x1xf64>, f64, tensor<200x100xf64>
  }"""


@needs_native
def test_tensors_cross_as_numpy_arrays_and_results_are_numpys():
    # bufferization, linalg, and the trampoline that passes numpy arrays in place
    f = native.compile_module(_parse(TENSOR_PROGRAM)).function("f")
    rng = np.random.default_rng(0)
    a = 0.01 * rng.normal(size=(200, 100))
    v = rng.normal(size=(100, 1))
    a_before = a.copy()
    ex, r, sq = f(a, v, 2.0)
    assert np.array_equal(a, a_before)  # %sq is not computed in place of the argument
    assert ex == pytest.approx(np.exp(a @ v), rel=1e-12)
    assert r == pytest.approx(2.0 * np.exp(a @ v)[0, 0], rel=1e-12)
    assert np.array_equal(sq, a * a)
    assert f(a.T.copy().T, v, 2.0)[1] == r  # a Fortran-ordered array is passed as a C copy
    with pytest.raises(irad.BackendError, match=r"shape \(100, 1\).*got \(1, 100\)"):
        f(a, v.T, 2.0)
    # computed into arrays numpy allocated and owns (destination passing)
    assert sq.flags.owndata and ex.flags.owndata and sq.flags.c_contiguous
    if os.path.exists("/proc/self/statm"):  # 300 leaked calls would be 48 MB
        before = _resident_bytes()
        for _ in range(300):
            f(a, v, 2.0)
        assert _resident_bytes() - before < 16 * 2**20


# ---- numpy arrays -------------------------------------------------------------------
ARRAY_CASES = [(f, make()) for f, make in ta.CASES]


def _float_positions(args):
    return tuple(
        i for i, a in enumerate(args)
        if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f")
    )


@needs_native
@pytest.mark.parametrize("point", ARRAY_CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(ARRAY_CASES)])
def test_array_programs_agree_on_both_backends(point):
    f, args = point
    wrt = _float_positions(args)
    value, grads = irad.value_and_grad(f, wrt, backend="native")(*args)
    ref_value, ref_grads = irad.value_and_grad(f, wrt)(*args)
    _agree(value, ref_value, f"value of {f.__name__}")
    for i, g, ref in zip(wrt, grads, ref_grads):
        assert type(g) is type(ref) and np.shape(g) == np.shape(ref), f"d/d arg {i}: {g!r} vs {ref!r}"
        assert getattr(g, "dtype", None) == getattr(ref, "dtype", None), f"d/d arg {i}"
        np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-13, err_msg=f"d/d arg {i}")
        if np.size(args[i]) <= 64:  # finite differences cost two primal calls per element
            np.testing.assert_allclose(g, ta.central_difference(f, args, i), rtol=1e-5, atol=1e-7)


@needs_native
def test_arrays_through_a_loop_tape_do_not_leak():
    # the LSTM as a Python loop: tensors on the tape, MLIR's deallocation
    # pipeline frees the tape and every temporary
    f = BENCH_ARRAYS["make_lstm_loop"](np)
    rng = np.random.default_rng(1)
    batch, inputs, hidden, steps = 16, 10, 20, 40
    args = (0.1 * rng.normal(size=(inputs, 4 * hidden)), 0.1 * rng.normal(size=(hidden, 4 * hidden)),
            0.1 * rng.normal(size=4 * hidden), rng.normal(size=(steps, batch, inputs)))
    g = irad.grad(f, (0, 1, 2), backend="native")
    for got, want in zip(g(*args), irad.grad(f, (0, 1, 2))(*args)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    before = _resident_bytes()
    for _ in range(100):  # ~0.3 MB of tape and temporaries a call
        g(*args)
    assert _resident_bytes() - before < 16 * 2**20


@needs_native
def test_vjp_of_an_array_loop_runs_again():
    f = BENCH_ARRAYS["make_lstm_loop"](np)
    rng = np.random.default_rng(2)
    args = (0.1 * rng.normal(size=(4, 32)), 0.1 * rng.normal(size=(8, 32)), 0.1 * rng.normal(size=32),
            rng.normal(size=(5, 2, 4)))
    out, pullback = irad.vjp(f, *args, backend="native")
    ref_out, ref_pullback = irad.vjp(f, *args)
    assert out == pytest.approx(ref_out, rel=1e-12)
    for scale in (1.0, -2.0):
        for got, want in zip(pullback(scale), ref_pullback(scale)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@needs_native
def test_calling_convention_for_every_scalar_type():
    # f32, i1, i32, index and several results, one result, none: both backends agree
    module = _parse("""
      func.func @many(%x: f32, %b: i1, %n: i32, %k: index) -> (f32, i1, i32, index, f64) {
        %y = arith.mulf %x, %x : f32
        %nb = arith.xori %b, %b : i1
        %m = arith.muli %n, %n : i32
        %c = arith.constant 3 : index
        %kk = arith.addi %k, %c : index
        %w = arith.extf %y : f32 to f64
        func.return %y, %nb, %m, %kk, %w : f32, i1, i32, index, f64
      }
      func.func @one(%x: f32) -> i1 {
        %z = arith.constant 0.0 : f32
        %p = arith.cmpf ogt, %x, %z : f32
        func.return %p : i1
      }
      func.func @none(%x: f64) {
        func.return
      }""")
    compiled = native.compile_module(module)
    reference = python_backend.compile_module(module)
    for name, args in [("many", (1.1, True, -7, 40)), ("one", (-0.5,)), ("one", (0.5,)), ("none", (2.0,))]:
        got, want = compiled.function(name)(*args), reference.function(name)(*args)
        assert got == want and list(map(type, got)) == list(map(type, want)), name


MLIR_22_OPS = """
func.func @scalars(%x: f64, %y: f64, %z: f64, %n: i32, %w: f32)
    -> (f64, f64, f64, f64, f64, f64, f64, f64, f64, f32, f32, i1, i1, i1, i1, i1) {
  %erfc = math.erfc %x : f64
  %s, %c = math.sincos %x : f64
  %clamp = math.clampf %x to [%y, %z] : f64
  %pow = math.fpowi %x, %n : f64, i32
  %fma = math.fma %x, %y, %z : f64
  %acosh = math.acosh %z : f64
  %atanh = math.atanh %s : f64
  %rem = arith.remf %z, %x : f64
  %s32, %c32 = math.sincos %w : f32
  %finite = math.isfinite %x : f64
  %inf = math.isinf %y : f64
  %nan = math.isnan %z : f64
  %normal = math.isnormal %x : f64
  %normal32 = math.isnormal %w : f32
  func.return %erfc, %s, %c, %clamp, %pow, %fma, %acosh, %atanh, %rem, %s32, %c32, %finite, %inf, %nan, %normal, %normal32
    : f64, f64, f64, f64, f64, f64, f64, f64, f64, f32, f32, i1, i1, i1, i1, i1
}
func.func @tensors(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi1>, tensor<3xi1>) {
  %s, %c = math.sincos %x : tensor<3xf64>
  %clamp = math.clampf %x to [%y, %s] : tensor<3xf64>
  %inf = math.isinf %y : tensor<3xf64>
  %normal = math.isnormal %y : tensor<3xf64>
  func.return %s, %c, %clamp, %inf, %normal : tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xi1>, tensor<3xi1>
}
"""


@needs_native
def test_the_mlir_22_ops_xdsl_lacks_run_natively_as_in_python():
    """math.erfc, sincos, clampf (MLIR 22.1's maximumf(minimumf(x, lo), hi)),
    the class tests (isinf and isnormal expanded by irad), arith.remf, and the
    ops xDSL had without a derivative before (fpowi, fma, acosh, atanh)."""
    module = _parse(MLIR_22_OPS)
    compiled, reference = native.compile_module(module), python_backend.compile_module(module)
    for args in [(0.7, 0.4, 1.9, 3, 0.25), (-1.3, math.inf, math.nan, -2, 1e-40), (0.0, -0.5, 0.1, 0, 2.0)]:
        got, want = compiled.function("scalars")(*args), reference.function("scalars")(*args)
        for g, w in zip(got, want):
            assert type(g) is type(w) and (g == pytest.approx(w, rel=1e-15, nan_ok=True)), (args, got, want)
    x = np.array([0.3, -1.2, 2.0])
    y = np.array([math.inf, 1e-310, -0.5])
    for g, w in zip(compiled.function("tensors")(x, y), reference.function("tensors")(x, y)):
        np.testing.assert_allclose(g, w, rtol=1e-15)


# Result tuples whose C struct has padding in it: an i64 after an i32 or a
# narrower field is at the next multiple of 8, as C lays it out.
MIXED_RESULTS = [
    ("i64", "i32", "index", "index"),
    ("i8", "f64", "i1", "f32", "index", "i16"),
    ("f32", "i64", "i1", "i1", "i32", "f64", "i8"),
    ("i16", "i32", "i8", "index", "f32", "f32", "f64", "i1", "i64"),
]
_MIXED_VALUES = {"i1": True, "i8": -100, "i16": -30000, "i32": -2_000_000_000, "index": 3 << 40, "i64": -(5 << 50),
                 "f32": 1.5, "f64": -2.0 ** -30}


def _mixed_program(types, with_array: bool) -> str:
    """@f returns each argument changed (so a misplaced field cannot pass as
    right): ints + 1, floats * 4, i1 negated; with an array, its sum too."""
    lines, results = [], []
    for i, t in enumerate(types):
        if t == "i1":
            lines.append(f"%t{i} = arith.constant true\n%r{i} = arith.xori %a{i}, %t{i} : i1")
        elif t.startswith("f"):
            lines.append(f"%c{i} = arith.constant 4.0 : {t}\n%r{i} = arith.mulf %a{i}, %c{i} : {t}")
        else:
            lines.append(f"%c{i} = arith.constant 1 : {t}\n%r{i} = arith.addi %a{i}, %c{i} : {t}")
        results.append((f"%r{i}", t))
    params = [f"%a{i}: {t}" for i, t in enumerate(types)]
    if with_array:
        params.append("%v: tensor<2xf64>")
        lines.append("%z = arith.constant dense<0.0> : tensor<f64>\n"
                     "%s = linalg.reduce ins(%v : tensor<2xf64>) outs(%z : tensor<f64>) dimensions = [0]\n"
                     "  (%x: f64, %y: f64) { %xy = arith.addf %x, %y : f64\n linalg.yield %xy : f64 }\n"
                     "%sum = tensor.extract %s[] : tensor<f64>")
        results.append(("%sum", "f64"))
    names, kinds = ", ".join(v for v, _ in results), ", ".join(t for _, t in results)
    body = "\n".join(lines)
    return f"func.func @f({', '.join(params)}) -> ({kinds}) {{\n{body}\nfunc.return {names} : {kinds}\n}}"


@needs_native
@pytest.mark.parametrize("with_array", [False, True], ids=["scalars", "with an array"])
@pytest.mark.parametrize("types", MIXED_RESULTS, ids=["-".join(t) for t in MIXED_RESULTS])
def test_mixed_scalar_results_come_back_in_place(types, with_array):
    module = _parse(_mixed_program(types, with_array))
    args = [_MIXED_VALUES[t] for t in types] + ([np.array([0.25, 0.5])] if with_array else [])
    expected = [(not a) if t == "i1" else a * 4.0 if t.startswith("f") else a + 1 for t, a in zip(types, args)]
    got = native.compile_module(module).function("f")(*args)
    assert list(got) == expected + ([0.75] if with_array else [])
    assert list(got) == list(python_backend.compile_module(module).function("f")(*args))


# ---- export ---------------------------------------------------------------------
def _runner_utils() -> str | None:
    runner = mlir_tools.find_tool("mlir-runner")
    if runner is None:
        return None
    found = glob.glob(os.path.join(os.path.dirname(runner), "..", "lib", "libmlir_c_runner_utils.so*"))
    return found[0] if found else None


@needs_native
@pytest.mark.mlir
@pytest.mark.skipif(_runner_utils() is None, reason="needs mlir-runner and libmlir_c_runner_utils")
def test_export_runs_in_mlir_runner(tmp_path):
    path = tmp_path / "grad.mlir"
    irad.export(cf.loop_calls_looping_helper, 0.4, 5, path=path, kind="value_and_grad", main=True)
    lowered = subprocess.run(
        [mlir_tools.find_tool("mlir-opt"), *native.LOWERING, str(path)], capture_output=True, text=True, check=True
    ).stdout
    run = subprocess.run(
        [mlir_tools.find_tool("mlir-runner"), "-e", "main", "--entry-point-result=void",
         f"--shared-libs={_runner_utils()}"],
        input=lowered, capture_output=True, text=True, check=True,
    )
    printed = [float(line) for line in run.stdout.split()]
    assert all(len(line.replace("-", "").replace(".", "").lstrip("0")) >= 15 for line in run.stdout.split())
    value, gradient = irad.value_and_grad(cf.loop_calls_looping_helper, backend="native")(0.4, 5)
    assert printed == pytest.approx([value, gradient], rel=1e-14)  # %.17g: every digit


@needs_native
@pytest.mark.mlir
@pytest.mark.skipif(mlir_tools.find_tool("mlir-runner") is None, reason="needs mlir-runner")
def test_export_main_prints_an_f32_gradient(tmp_path):
    path = tmp_path / "cubic.mlir"
    irad.export(_triple_square, np.float32(0.5), path=path, main=True)
    lowered = subprocess.run(
        [mlir_tools.find_tool("mlir-opt"), *native.LOWERING, str(path)], capture_output=True, text=True, check=True
    ).stdout
    run = subprocess.run(
        [mlir_tools.find_tool("mlir-runner"), "-e", "main", "--entry-point-result=void"],
        input=lowered, capture_output=True, text=True, check=True,
    )
    assert run.stdout.split() == ["3"]  # d/dx 3 x^2 at 0.5, exact in f32, printed as a double


def _triple_square(x):
    return x * x * 3.0


@needs_native
def test_export_loads_in_llvmlite(tmp_path):
    path = tmp_path / "grad.mlir"
    text = irad.export(tg.comp_trig, 0.7, -1.3, path=path, argnums=(1, 0))
    assert path.read_text() == text
    assert "func.func @comp_trig.grad" in text and "llvm.emit_c_interface" in text
    jit = JitModule(native.lower_to_llvm_ir(path.read_text()))

    class Gradients(ctypes.Structure):
        _fields_ = [("dy", ctypes.c_double), ("dx", ctypes.c_double)]

    c_grad = ctypes.CFUNCTYPE(None, ctypes.POINTER(Gradients), ctypes.c_double, ctypes.c_double)(
        jit.address("_mlir_ciface_comp_trig.grad")
    )
    out = Gradients()
    c_grad(ctypes.byref(out), 0.7, -1.3)
    assert (out.dy, out.dx) == irad.grad(tg.comp_trig, argnums=(1, 0))(0.7, -1.3)


def test_export_of_a_vjp_has_both_halves():
    text = irad.export(cf.loop_with_branch, 0.3, 7, kind="vjp")
    assert "func.func @loop_with_branch.augmented.dc" in text
    assert "func.func @loop_with_branch.pullback.dc" in text


@needs_native
def test_export_of_an_array_gradient_lowers(tmp_path):
    f = BENCH_ARRAYS["make_gmm"](np)
    rng = np.random.default_rng(3)
    args = (rng.normal(size=3), rng.normal(size=(3, 2)), 0.1 * rng.normal(size=(3, 2)), rng.normal(size=(10, 2)))
    text = irad.export(f, *args, argnums=(0, 1, 2))
    assert "--one-shot-bufferize" in text.splitlines()[1]  # the header names the tensor pipeline
    assert "define" in native.lower_to_llvm_ir(text, native.BUFFERIZATION + native.LOWERING)
    with pytest.raises(irad.IradError, match="arrays are not supported there"):
        irad.export(f, *args, main=True)


def array_map(x, w):
    return np.tanh(w @ x) * np.sum(x * x)


@needs_native
def test_array_jacobians_and_jvp_agree(lowered):
    rng = np.random.default_rng(4)
    x, w = rng.normal(size=3), rng.normal(size=(2, 3))
    for jac in (irad.jacfwd, irad.jacrev):
        lowered.clear()
        got = jac(array_map, argnums=(0, 1), backend="native")(x, w)
        assert lowered, f"{jac.__name__} of arrays did not run natively"
        want = jac(array_map, argnums=(0, 1))(x, w)
        for g, r in zip(got, want):
            np.testing.assert_allclose(g, r, rtol=1e-12, atol=1e-13)
    direction = (rng.normal(size=3), rng.normal(size=(2, 3)))
    out, tangent = irad.jvp(array_map, (x, w), direction, backend="native")
    ref_out, ref_tangent = irad.jvp(array_map, (x, w), direction)
    np.testing.assert_allclose(out, ref_out, rtol=1e-12)
    np.testing.assert_allclose(tangent, ref_tangent, rtol=1e-12, atol=1e-13)


def main(n):  # recursive, so the inliner keeps it
    return 0 if n <= 0 else main(n - 1) + 2


def calls_main(x, n):
    return x * main(n)


def test_export_main_does_not_shadow_a_function_named_main():
    assert "func.func private @irad.main(" in irad.export(calls_main, 1.0, 3)  # renamed apart (native.symbol)
    text = irad.export(calls_main, 1.0, 3, main=True)
    assert "func.func private @irad.main(" in text and "func.func @main()" in text


# ---- errors -----------------------------------------------------------------------
def test_missing_mlir_opt_names_the_package(monkeypatch):
    monkeypatch.setattr(compiled, "_CACHE", {})
    # undone before the conftest fixture runs mlir-opt at teardown
    with monkeypatch.context() as patch:
        patch.setenv("IRAD_MLIR_OPT", "/nonexistent/mlir-opt")
        patch.setenv("PATH", "/nonexistent")
        patch.setattr(mlir_tools, "LLVM_BIN", "/nonexistent")
        with pytest.raises(irad.BackendError, match="mlir-22-tools") as info:
            irad.grad(cached_program, backend="native")(0.5, 2)
    assert "IRAD_MLIR_OPT" in str(info.value)


@needs_native
def test_bad_opt_level_is_named(monkeypatch):
    monkeypatch.setenv("IRAD_NATIVE_OPT_LEVEL", "fast")
    with pytest.raises(irad.BackendError, match="IRAD_NATIVE_OPT_LEVEL must be a whole number from 0 to 3, not 'fast'"):
        JitModule("define i32 @f() {\n  ret i32 0\n}\n")


def test_unknown_backend():
    with pytest.raises(irad.BackendError, match="unknown backend 'c'") as info:
        irad.grad(cached_program, backend="c")
    assert "use one of 'python', 'native'" in str(info.value)


FAILING_MODULE = """
  func.func private @f(%x: f64) -> f64 { func.return %x : f64 }
  func.func @g(%x: f64) -> f64 {
    %d = irad.grad @f(%x) {wrt = [0]} : (f64) -> f64
    func.return %d : f64
  }"""


def _saved_modules() -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), "irad-native-*.mlir")))


@needs_native
def test_lowering_failure_reports_diagnostics_and_writes_no_file(monkeypatch):
    # an irad.grad request op left in a module: upstream MLIR does not know it
    monkeypatch.delenv("IRAD_KEEP_FAILED_MODULES", raising=False)
    before = _saved_modules()
    with pytest.raises(irad.BackendError, match="mlir-opt failed") as info:
        native.compile_module(_parse(FAILING_MODULE))
    message = str(info.value)
    assert "irad.grad" in message and "saved" not in message
    assert "set IRAD_KEEP_FAILED_MODULES=1" in message
    assert _saved_modules() == before


@needs_native
def test_lowering_failure_keeps_the_module_when_asked(switches):
    switches(keep_failed_modules=True)
    with pytest.raises(irad.BackendError, match="mlir-opt failed") as info:
        native.compile_module(_parse(FAILING_MODULE))
    message = str(info.value)
    assert "irad.grad" in message
    saved = message.split("the module is saved in ")[1].split()[0]
    kept = open(saved).read()  # what mlir-opt was given: the generic form
    assert '"irad.grad"(' in kept and "<{callee = @irad.f," in kept
    os.remove(saved)
