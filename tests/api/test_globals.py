"""Global arrays are read at each call (hidden arguments, irad/frontend/globals.py):
after `W[:] = new` or `W = other`, every transformation computes with the new
values, on both backends.

Values are checked against the programs run by numpy, gradients and Jacobians
against central finite differences of the programs in float64, pullbacks and
Hessians against closed forms. Each test gets fresh globals (the `fresh`
fixture), so mutating them is safe.
"""

from __future__ import annotations

import ctypes
import re
import shlex
import subprocess
import sys
import types

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f64

import irad
from irad import compiled, pipeline
from irad.backends.native import mlir_tools
from irad.backends.native import compile as native
from irad.backends.native.llvm_jit import JitModule
from irad.base.errors import UnsupportedError
from tests.backends.test_backend_native import _runner_utils, needs_native
from tests.reference import central_difference, central_jacobian, relative_step

BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]
THIS = sys.modules[__name__]

W = np.array([1.0, 2.0, 3.0])
K = np.array([0.5, -0.5, 0.25])
CFG = types.SimpleNamespace(w=np.array([0.1, 0.2, 0.3]))
PAIR = (np.array([1.0, -1.0, 2.0]), np.array([3.0, 4.0, 5.0]))
SHIFT = np.array(0.5)  # 0-d: a number that can still be written in place
IDX = np.array([2, 0, 1])
MASK = np.array([True, False, True])
DEFAULT_W = np.array([0.5, 1.5, -1.0])
X = np.array([0.3, -0.2, 0.7])


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    """Fresh copies of the globals for every test, restored afterwards."""
    for name in ("W", "K", "SHIFT", "IDX", "MASK"):
        monkeypatch.setattr(THIS, name, np.array(getattr(THIS, name)))
    monkeypatch.setattr(THIS, "CFG", types.SimpleNamespace(w=np.array(CFG.w)))
    monkeypatch.setattr(THIS, "PAIR", tuple(np.array(p) for p in PAIR))
    DEFAULT_W[:] = [0.5, 1.5, -1.0]


def lowerings(monkeypatch) -> list:
    """Records each lowering of a Python function (a compile) from now on, with
    an empty compile cache."""
    monkeypatch.setattr(compiled, "_CACHE", {})
    seen = []
    lower = pipeline.lower_function

    def counting(fn, *args, **kwargs):
        seen.append(fn)
        return lower(fn, *args, **kwargs)

    monkeypatch.setattr(pipeline, "lower_function", counting)
    return seen


STEP = relative_step(1e-6)  # central differences with steps relative to x


def check(f, x, backend, rtol=1e-6):
    """value_and_grad(f) at x agrees with numpy and central differences."""
    value, g = irad.value_and_grad(f, backend=backend)(x)
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(g, central_difference(f, (x,), 0, STEP), rtol=rtol, atol=1e-8)


# ---- programs ------------------------------------------------------------------------
def dot_w(x):
    return np.sum(np.sin(x) * W)


def helper(x):
    return np.sum(np.sin(x) * W)


def calls_helper(x):
    return helper(x) * np.sum(K * x)


def recursive(x, n):
    if n == 0:
        return np.sum(x * x * K)
    return recursive(x, n - 1) * 0.5 + np.sum(np.cos(x) * W)


def calls_recursive(x):
    return recursive(x, 3)


def in_loop(x):
    acc = 0.0
    for i in range(W.shape[0]):
        acc = acc * np.tanh(x[i] * W[i]) + x[i] * K[i]
    k = 0
    while k < 2:
        acc = acc + np.sum(x * W) * 0.25
        k += 1
    return acc


def make_closure(v):
    def closure(x):
        return np.sum(np.exp(x * v))

    def rebind(new):
        nonlocal v
        v = new

    return closure, rebind


def attribute_item_default_0d(x):
    return np.sum(x * CFG.w) + np.sum(x * x * PAIR[1]) + uses_default(x) + SHIFT * np.sum(x)


def uses_default(x, w=DEFAULT_W):
    return np.sum(np.sin(x) * w)


def int_and_bool_arrays(x):
    return np.sum(np.where(MASK, x[IDX] * x, 0.0))


def scalar_in(s):
    return np.sum(np.sin(s * W)) + s * np.sum(K)


def vector_out(x):
    return np.sin(x) * W + K


# ---- mutation, rebinding, reuse ----------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_mutation_in_place_is_seen(backend):
    check(dot_w, X, backend)
    W[:] = [-2.0, 0.5, 4.0]
    check(dot_w, X, backend)
    np.testing.assert_allclose(irad.grad(dot_w, backend=backend)(X), np.cos(X) * [-2.0, 0.5, 4.0], rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rebinding_reuses_the_compiled_code_for_the_same_shape_and_compiles_for_another(backend, monkeypatch):
    seen = lowerings(monkeypatch)
    g = irad.grad(dot_w, backend=backend)
    g(X)
    monkeypatch.setattr(THIS, "W", np.array([3.0, -1.0, 0.5]))  # same dtype and shape
    np.testing.assert_allclose(g(X), np.cos(X) * W, rtol=1e-14)
    assert len(seen) == 1
    monkeypatch.setattr(THIS, "W", np.array([3.0, -1.0, 0.5, 2.0]))  # another shape
    x4 = np.array([0.1, 0.2, 0.3, 0.4])
    check(dot_w, x4, backend)
    assert len(seen) == 2
    monkeypatch.setattr(THIS, "W", np.array([1.0, 1.0, 1.0], np.float32))  # another dtype
    np.testing.assert_allclose(g(X), np.cos(X), rtol=1e-14)
    assert len(seen) == 3
    monkeypatch.setattr(THIS, "W", np.array([2.0, 2.0, 2.0]))  # back to the first: reused
    np.testing.assert_allclose(g(X), 2.0 * np.cos(X), rtol=1e-14)
    assert len(seen) == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_helpers_recursion_loops_and_closures_see_new_values(backend):
    closure, rebind = make_closure(np.array([0.5, -1.0, 2.0]))
    programs = [calls_helper, calls_recursive, in_loop, closure, attribute_item_default_0d, int_and_bool_arrays]
    for f in programs:
        check(f, X, backend)
    W[:] = [0.25, -3.0, 1.5]
    K[:] = [2.0, 1.0, -1.0]
    closure.__closure__[0].cell_contents[:] = [1.0, 0.1, -0.3]  # the closure's array, in place
    CFG.w[:] = [-1.0, 2.0, 0.0]
    PAIR[1][:] = [0.5, 0.5, -2.0]
    DEFAULT_W[:] = [3.0, -2.0, 1.0]
    SHIFT[...] = -4.0
    IDX[:] = [1, 1, 0]
    MASK[:] = [False, True, True]
    for f in programs:
        check(f, X, backend)
    rebind(np.array([0.2, 0.2, 0.2]))  # the cell rebound
    CFG.w = np.array([5.0, 5.0, 5.0])  # the attribute rebound
    for f in (closure, attribute_item_default_0d):
        check(f, X, backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("checkpoint", [False, True])
def test_a_global_read_in_a_loop_with_its_tape(backend, checkpoint):
    got = irad.grad(in_loop, checkpoint=checkpoint, backend=backend)(X)
    np.testing.assert_allclose(got, central_difference(in_loop, (X,), 0, STEP), rtol=1e-6, atol=1e-8)
    W[:] = [1.5, 0.5, -0.5]
    got = irad.grad(in_loop, checkpoint=checkpoint, backend=backend)(X)
    np.testing.assert_allclose(got, central_difference(in_loop, (X,), 0, STEP), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_global_passed_as_the_argument_too_is_not_differentiated(backend):
    """d/dx sum(sin(x) * W) at x = W: the global stays a constant (numpy's partial)."""
    np.testing.assert_allclose(irad.grad(dot_w, backend=backend)(W), np.cos(W) * W, rtol=1e-14)


# ---- every transformation ---------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_pullback_uses_the_values_read_at_vjp_time(backend):
    out, pullback = irad.vjp(calls_helper, X, backend=backend)
    expected = central_difference(calls_helper, (X,), 0, STEP)
    np.testing.assert_allclose(out, calls_helper(X), rtol=1e-12)
    W[:] = [9.0, 9.0, 9.0]  # after the vjp, before its pullback
    K[:] = [-9.0, 9.0, -9.0]
    (got,) = pullback(2.0)
    np.testing.assert_allclose(got, 2.0 * expected, rtol=1e-6, atol=1e-8)
    out, pullback = irad.vjp(calls_helper, X, backend=backend)  # a new vjp reads the new values
    np.testing.assert_allclose(out, calls_helper(X), rtol=1e-12)
    np.testing.assert_allclose(pullback(1.0)[0], central_difference(calls_helper, (X,), 0, STEP), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_jacfwd_jacrev_hessian_and_grad_of_grad_see_new_values(backend):
    for values in ([1.0, 2.0, 3.0], [-0.5, 0.25, 2.0]):
        W[:] = values
        s = 0.7
        expected = np.sum(W * np.cos(s * W)) + np.sum(K)
        second = -np.sum(W * W * np.sin(s * W))
        value, tangent = irad.jvp(scalar_in, (s,), (2.0,), backend=backend)
        np.testing.assert_allclose([value, tangent], [scalar_in(s), 2.0 * expected], rtol=1e-13)
        np.testing.assert_allclose(irad.jacfwd(scalar_in, backend=backend)(s), expected, rtol=1e-13)
        np.testing.assert_allclose(irad.jacrev(scalar_in, backend=backend)(s), expected, rtol=1e-13)
        np.testing.assert_allclose(irad.hessian(scalar_in, backend=backend)(s), second, rtol=1e-13)
        np.testing.assert_allclose(irad.grad(irad.grad(scalar_in), backend=backend)(s), second, rtol=1e-13)
        for jacobian in (irad.jacfwd, irad.jacrev):
            got = jacobian(vector_out, backend=backend)(X)
            np.testing.assert_allclose(got, central_jacobian(vector_out, (X,), 0, STEP), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(
            irad.hessian(dot_w, backend=backend)(X), np.diag(-np.sin(X) * W), rtol=1e-13, atol=1e-15
        )


def scaled_by_shift(s):
    return np.sin(s * SHIFT)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("jacobian", [irad.jacfwd, irad.jacrev])
def test_a_jacobian_follows_a_global_that_turns_its_output_into_an_array(backend, jacobian, monkeypatch):
    """SHIFT 0-d makes a float output, SHIFT of shape (2,) an array output."""
    j = jacobian(scaled_by_shift, backend=backend)
    for shift in (np.array(2.0), np.array([1.0, -3.0]), np.array(0.5)):
        monkeypatch.setattr(THIS, "SHIFT", shift)
        np.testing.assert_allclose(j(0.3), np.cos(0.3 * shift) * shift, rtol=1e-13)


def calls_grad_of_scalar_in(s):
    return irad.grad(scalar_in)(s) * s


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_calling_a_derivative_passes_its_globals(backend):
    for values in ([1.0, 2.0, 3.0], [0.5, -1.0, 0.0]):
        W[:] = values
        s = 0.4
        first = np.sum(W * np.cos(s * W)) + np.sum(K)
        value, g = irad.value_and_grad(calls_grad_of_scalar_in, backend=backend)(s)
        np.testing.assert_allclose(value, first * s, rtol=1e-13)
        np.testing.assert_allclose(g, first - s * np.sum(W * W * np.sin(s * W)), rtol=1e-13)


# ---- the IR, export ----------------------------------------------------------------------
def test_lower_shows_the_hidden_arguments():
    assert "func.func @dot_w(%x: tensor<3xf64>, %W: tensor<3xf64>)" in str(irad.lower(dot_w, X))
    text = str(irad.grad(calls_helper).lower(X))
    assert "@calls_helper.grad(%x: tensor<3xf64>, %W: tensor<3xf64>, %K: tensor<3xf64>)" in text


def test_export_takes_the_global_arrays_after_the_arguments():
    text = irad.export(scalar_in, 0.7)
    assert "take these global arrays after f's arguments: W, K" in text
    assert re.search(r"func.func @scalar_in.grad\(%s: f64, %W: tensor<3xf64>[^,]*, %K: tensor<3xf64>[^,]*\)", text), text


def _scalar_in_derivative(s: float) -> float:
    return float(np.sum(W * np.cos(s * W)) + np.sum(K))


def _descriptor_of(array: np.ndarray) -> ctypes.Structure:
    """The memref descriptor of a contiguous 1-d float64 array, as a C caller builds it."""
    d = native.c_type(TensorType(f64, [len(array)]))()
    d.allocated = d.aligned = array.ctypes.data
    d.offset, d.sizes[0], d.strides[0] = 0, len(array), 1
    return d


@pytest.mark.native
@needs_native
def test_an_exported_gradient_takes_the_arrays_through_its_c_interface():
    text = irad.export(scalar_in, 0.7)
    passes = shlex.split(text.splitlines()[1].removeprefix("//"))[1:]
    jit = JitModule(native.lower_to_llvm_ir(text, passes))
    descriptor = ctypes.POINTER(native.c_type(TensorType(f64, [3])))
    c_grad = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, descriptor, descriptor)(
        jit.address("_mlir_ciface_scalar_in.grad")
    )
    for values in ([1.0, 2.0, 3.0], [-1.5, 0.5, 2.5]):
        W[:] = values
        to_c = [_descriptor_of(a) for a in (W, K)]
        np.testing.assert_allclose(c_grad(0.7, *to_c), _scalar_in_derivative(0.7), rtol=1e-13)


@pytest.mark.native
@needs_native
@pytest.mark.mlir
@pytest.mark.skipif(_runner_utils() is None, reason="needs mlir-runner and libmlir_c_runner_utils")
def test_export_main_passes_the_arrays_as_they_are_at_export(tmp_path):
    for values in ([1.0, 2.0, 3.0], [-1.5, 0.5, 2.5]):
        W[:] = values
        text = irad.export(scalar_in, 0.7, kind="value_and_grad", main=True)
        passes = shlex.split(text.splitlines()[1].removeprefix("//"))[1:]
        lowered = subprocess.run([mlir_tools.find_tool("mlir-opt"), *passes], input=text,
                                 capture_output=True, text=True, check=True).stdout
        run = subprocess.run(
            [mlir_tools.find_tool("mlir-runner"), "-e", "main", "--entry-point-result=void",
             f"--shared-libs={_runner_utils()}"],
            input=lowered, capture_output=True, text=True, check=True,
        )
        printed = [float(line) for line in run.stdout.split()]
        assert printed == pytest.approx([scalar_in(0.7), _scalar_in_derivative(0.7)], rel=1e-5)  # 6 digits


# ---- errors -------------------------------------------------------------------------------
def test_a_global_rebound_to_a_non_array_is_an_error_naming_it(monkeypatch):
    g = irad.grad(calls_helper)
    g(X)
    line = helper.__code__.co_firstlineno + 1
    for value, what in ((2.0, "float 2.0, not a numpy array"),
                        ([1.0, 2.0, 3.0], "list [1.0, 2.0, 3.0], not a numpy array"),
                        (np.array([1j, 2j, 3j]), "an array of dtype complex128, which irad cannot lower")):
        monkeypatch.setattr(THIS, "W", value)
        with pytest.raises(UnsupportedError) as info:
            g(X)
        text = str(info.value)
        assert re.match(rf"{re.escape(__file__)}:{line}:\d+: the global 'W', an array when ", text), text
        assert what in text and "hint:" in text
    monkeypatch.delattr(THIS, "W")
    with pytest.raises(UnsupportedError, match="the global 'W', an array .* reads, is no longer defined"):
        g(X)


SETTINGS = {"scales": np.array([2.0, 3.0])}


def scaled_by_item(settings, x):
    return x * settings["scales"][0] + x ** 2 * settings["scales"][1:].sum()


def test_an_item_of_a_global_array_reached_through_a_dict_a_helper_is_given():
    g = irad.grad(lambda x: scaled_by_item(SETTINGS, x))
    assert g(1.5) == pytest.approx(2.0 + 2 * 1.5 * 3.0, rel=1e-14)
    SETTINGS["scales"][0] = 5.0  # read at each call, as a global array is
    try:
        assert g(1.5) == pytest.approx(5.0 + 2 * 1.5 * 3.0, rel=1e-14)
    finally:
        SETTINGS["scales"][0] = 2.0
