"""irad/ir/scan.py and the ops irad.cumsum and irad.linear_scan: np.cumsum's
and np.cumprod's values against numpy's, their gradients (the scans run the
other way) against central differences and closed forms, on the Python and
native backends; the reversed ops, the IREE form (tensor ops) and the
mlir-opt form (one loop nest) against numpy and the sequential recurrence;
cumprod's derivative where elements are 0."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType, f32, f64, i64
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

import irad
from irad.backends.iree.compile import check_supported
from irad.backends.iree.forms import for_iree
from irad.base.errors import BackendError
from irad.backends.native import compile as native
from irad.backends.native.compile import unavailable_reason
from irad.backends.python import arrays as python_arrays
from irad.backends.python.translate import compile_module
from irad.ir import scan as S
from irad.ir.builder import IRBuilder
from irad.ir.dialect import CumsumOp, make_context
from irad.ir.mlir_ops import expand_for_llvm
from tests.reference import central_difference

NATIVE_MISSING = unavailable_reason()
needs_native = pytest.mark.skipif(NATIVE_MISSING is not None, reason=NATIVE_MISSING or "")


# ---- the op ------------------------------------------------------------------------------
TEXT = """func.func @f(%x: tensor<3x4xf64>) -> tensor<3x4xf64> {
  %y = irad.cumsum %x {axis = 1 : i64} : tensor<3x4xf64>
  %r = irad.cumsum %y {axis = 0 : i64, reverse} : tensor<3x4xf64>
  %h = irad.linear_scan %y, %r {axis = 1 : i64, reverse} : tensor<3x4xf64>
  func.return %h : tensor<3x4xf64>
}"""


def test_the_op_prints_parses_and_verifies():
    module = Parser(make_context(), TEXT).parse_module()
    module.verify()
    assert str(module).count("irad.cumsum") == 2 and "{axis = 0 : i64, reverse}" in str(module)
    assert "irad.linear_scan %y, %r {axis = 1 : i64, reverse} : tensor<3x4xf64>" in str(module)
    with pytest.raises(VerifyException, match="axis 2 is not an axis of tensor<3x4xf64>"):
        Parser(make_context(), TEXT.replace("axis = 1", "axis = 2")).parse_module().verify()


def _module(types, axis: int, reverse: bool) -> ModuleOp:
    """@f(x) = irad.cumsum(x) on each of `types`."""
    block = Block(arg_types=types)
    b = IRBuilder(block)
    results = [S.cumsum(b, x, axis, reverse) for x in block.args]
    block.add_op(func.ReturnOp(*results))
    return ModuleOp([func.FuncOp("f", FunctionType.from_lists(types, [r.type for r in results]), Region(block))])


def _want(x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
    if not reverse:
        return np.cumsum(x, axis=axis)
    return np.flip(np.cumsum(np.flip(x, axis), axis=axis), axis)


TYPES = [TensorType(f64, [5, 7]), TensorType(f32, [5, 7]), TensorType(i64, [5, 7])]


def _inputs(rng):
    return [rng.normal(size=(5, 7)), rng.normal(size=(5, 7)).astype(np.float32), rng.integers(-9, 9, (5, 7))]


def _check_forms(forms, axis, reverse, rng):
    xs = _inputs(rng)
    for label, code in forms:
        for got, x in zip(code.function("f")(*xs), xs):
            want = _want(x, axis, reverse)
            assert got.dtype == want.dtype, label
            # the loop nest sums in numpy's order: equal to the last bit, float32 too
            exact = label != "iree form"
            if exact or x.dtype == np.int64:
                np.testing.assert_array_equal(got, want, err_msg=f"{label} axis {axis} reverse {reverse}")
            else:
                np.testing.assert_allclose(got, want, rtol=1e-5, err_msg=f"{label} axis {axis} reverse {reverse}")


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_python_backend_and_iree_form_against_numpy(axis, reverse):
    """np.cumsum on the Python backend; the blocked tensor ops IREE gets, run
    on the Python backend (IREE itself is an optional extra)."""
    module = _module(TYPES, axis, reverse)
    iree_form = for_iree(module)
    assert not any(isinstance(op, CumsumOp) for op in iree_form.walk())
    _check_forms([("python", compile_module(module)), ("iree form", compile_module(iree_form))],
                 axis, reverse, np.random.default_rng(axis))


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("length", [40, 300])
def test_cumsums_blocked_iree_form_against_numpy(length, reverse):
    """Lengths of one and two levels of blocks, a last block partly filled,
    forward and reversed (the reversed scan runs the other way: no reversed copy)."""
    types = [TensorType(f64, [length, 3]), TensorType(f32, [length, 3]), TensorType(i64, [length, 3])]
    iree_form = for_iree(_module(types, 0, reverse))
    assert not any(isinstance(op, CumsumOp) for op in iree_form.walk())
    rng = np.random.default_rng(length)
    xs = [rng.normal(size=(length, 3)), rng.normal(size=(length, 3)).astype(np.float32), rng.integers(-9, 9, (length, 3))]
    for got, x in zip(compile_module(iree_form).function("f")(*xs), xs):
        want = _want(x, 0, reverse)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if x.dtype == np.float32 else 1e-12,
                                   atol=1e-4 if x.dtype == np.float32 else 1e-11)


@pytest.mark.parametrize("reverse", [False, True])
def test_loop_nest_against_numpy_on_the_python_backend(reverse):
    """The scf.for nest the native backend lowers, run by the Python backend."""
    module = _module(TYPES, 1, reverse)
    expand_for_llvm(module)
    assert not any(isinstance(op, CumsumOp) for op in module.walk())
    _check_forms([("loops", compile_module(module))], 1, reverse, np.random.default_rng(2))


@needs_native
@pytest.mark.native
def test_native_forward_and_reversed_in_one_module():
    block = Block(arg_types=TYPES)
    b = IRBuilder(block)
    results = [S.cumsum(b, x, axis, reverse) for x in block.args for axis in (0, 1) for reverse in (False, True)]
    results += [S.linear_scan(b, x, x, axis, reverse) for x in block.args for axis in (0, 1) for reverse in (False, True)]
    block.add_op(func.ReturnOp(*results))
    module = ModuleOp([func.FuncOp("f", FunctionType.from_lists(TYPES, [r.type for r in results]), Region(block))])
    xs = _inputs(np.random.default_rng(3))
    got = iter(native.compile_module(module).function("f")(*xs))
    for x in xs:
        for axis in (0, 1):
            for reverse in (False, True):
                np.testing.assert_array_equal(next(got), _want(x, axis, reverse), err_msg=f"{x.dtype} {axis} {reverse}")
    for x in xs:
        for axis in (0, 1):
            for reverse in (False, True):
                want = _recurrence(x, x, axis, reverse)
                np.testing.assert_array_equal(next(got), want, err_msg=f"linear {x.dtype} {axis} {reverse}")


def _recurrence(a, b, axis: int, reverse: bool) -> np.ndarray:
    """h[k] = a[k] h[k-1] + b[k], one element after the other (in a's dtype)."""
    a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
    order = range(len(a) - 1, -1, -1) if reverse else range(len(a))
    h, previous = np.empty_like(b), np.zeros_like(b[0])
    for k in order:
        previous = a[k] * previous + b[k]
        h[k] = previous
    return np.moveaxis(h, 0, axis)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
def test_linear_scan_on_the_python_backend_and_as_loops(axis, reverse):
    """The Python backend's blocks (to rounding) and the loop nest (to the
    bit, run by the Python backend) against the recurrence, with zeros in a."""
    block = Block(arg_types=TYPES)
    b = IRBuilder(block)
    block.add_op(func.ReturnOp(*[S.linear_scan(b, x, x, axis, reverse) for x in block.args]))
    module = ModuleOp([func.FuncOp("f", FunctionType.from_lists(TYPES, TYPES), Region(block))])
    xs = _inputs(np.random.default_rng(9))
    for x in xs:
        x[2, 3] = 0
    python = compile_module(module).function("f")(*xs)
    expand_for_llvm(module)
    loops = compile_module(module).function("f")(*xs)
    for x, numpy_form, loop_form in zip(xs, python, loops):
        want = _recurrence(x, x, axis, reverse)
        np.testing.assert_array_equal(loop_form, want)
        tolerance = 1e-5 if x.dtype == np.float32 else 1e-14
        np.testing.assert_allclose(numpy_form, want, rtol=tolerance, atol=tolerance)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("length", [7, 16, 40, 300])
def test_linear_scans_iree_form_against_the_recurrence(length, axis, reverse):
    """The blocked scan on pairs IREE gets (run by the Python backend), with
    zeros in a, on lengths within one block, of whole blocks, with a last
    block partly filled and of two levels of blocks: equal within rounding
    (its products run in another order)."""
    shape = (length, 3) if axis == 0 else (3, length)
    types = [TensorType(f64, shape), TensorType(f32, shape), TensorType(i64, shape)]
    block = Block(arg_types=types * 2)
    b = IRBuilder(block)
    block.add_op(func.ReturnOp(*[S.linear_scan(b, a, x, axis, reverse) for a, x in zip(block.args[:3], block.args[3:])]))
    module = ModuleOp([func.FuncOp("f", FunctionType.from_lists(types * 2, types), Region(block))])
    check_supported(module)
    iree_form = for_iree(module)
    assert not any(op.name == "irad.linear_scan" for op in iree_form.walk())
    rng = np.random.default_rng(length)
    a = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
    a[1, 2] = a[-2, 0] = 0.0
    x = rng.normal(size=shape)
    n = rng.integers(-3, 4, shape)
    got = compile_module(iree_form).function("f")(a, a.astype(np.float32), n, x, x.astype(np.float32), n)
    for (tolerance, factors, terms), value in zip([(1e-13, a, x), (2e-6, np.float32(a), np.float32(x)), (0, n, n)], got):
        want = _recurrence(factors, terms, axis, reverse)
        assert value.dtype == want.dtype
        np.testing.assert_allclose(value, want, rtol=tolerance, atol=tolerance * np.max(np.abs(want)))


@pytest.mark.parametrize("length", [7, 40, 300])
def test_cumprods_iree_form_keeps_numpys_infinities_and_nans(length):
    """np.cumprod through the IREE form with zeros and infinities: inf where
    numpy has inf (a stretch's product times a partial sum of 0 is not
    formed), NaN where numpy multiplies a 0 by an infinity, in the first
    block (where the recurrence starts) and in later ones."""
    rows = np.full((4, length), 1.25)
    rows[0, 2] = np.inf  # inf from there on
    rows[1, 1], rows[1, min(5, length - 1)] = 0.0, -np.inf  # 0, then NaN from the infinity on
    rows[2, length - 3] = np.inf
    rows[3, length // 2], rows[3, length - 1] = 0.0, np.inf
    rows[:, 0] = -2.0
    block = Block(arg_types=[TensorType(f64, rows.shape)])
    block.add_op(func.ReturnOp(S.cumprod(IRBuilder(block), block.args[0], 1)))
    module = ModuleOp([func.FuncOp("f", FunctionType.from_lists([TensorType(f64, rows.shape)], [TensorType(f64, rows.shape)]),
                                   Region(block))])
    (got,) = compile_module(for_iree(module)).function("f")(rows)
    with np.errstate(invalid="ignore", over="ignore"):
        want = np.cumprod(rows, axis=1)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-13)


# ---- np.cumsum through the API --------------------------------------------------------------
def cumsums(x, x32, n):
    return (np.cumsum(x), np.cumsum(x, axis=0), np.cumsum(x, axis=1), np.cumsum(x, axis=-1),
            np.cumsum(x32, axis=1), np.cumsum(n, axis=0), np.cumsum(x[0]),
            np.cumprod(x), np.cumprod(x, axis=0), np.cumprod(x32, axis=-1), np.cumprod(n, axis=1))


def loss(x):
    return (np.sum(np.sin(np.cumsum(x, axis=1)) * np.cumsum(x, axis=0)) + np.sum(np.cumsum(x) ** 2)
            + np.sum(np.cumprod(x, axis=1)))


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[needs_native, pytest.mark.native])])
def test_np_cumsum_values_and_gradient(backend):
    """axis None, 0, 1, -1 (float64, float32, int64): numpy's values to the
    last bit (the Python backend's cumprod to rounding); the gradient against
    central differences."""
    rng = np.random.default_rng(4)
    x, n = rng.normal(size=(4, 6)), rng.integers(-5, 5, (4, 6))
    x32 = rng.normal(size=(4, 6)).astype(np.float32)
    got, _ = irad.vjp(cumsums, x, x32, n, backend=backend)
    for i, (g, w) in enumerate(zip(got, cumsums(x, x32, n))):
        assert np.asarray(g).dtype == w.dtype
        if backend == "python" and i in (7, 8, 9):  # products in blocks
            np.testing.assert_allclose(g, w, rtol=1e-5 if w.dtype == np.float32 else 1e-14)
        else:
            np.testing.assert_array_equal(g, w)
    value, grad = irad.value_and_grad(loss, backend=backend)(x)
    assert value == pytest.approx(loss(x), rel=1e-12)
    np.testing.assert_allclose(grad, central_difference(loss, (x,), 0), rtol=1e-6, atol=1e-8)


def cumsum_of_sum(x):
    return np.sum(np.cumsum(x))


def test_gradient_closed_form_and_float32():
    """d sum(cumsum(x)) / dx_i = n - i; float32 stays float32."""
    x = np.linspace(-1.0, 1.0, 9)
    np.testing.assert_array_equal(irad.grad(cumsum_of_sum)(x), np.arange(9, 0, -1.0))
    g32 = irad.grad(cumsum_of_sum)(x.astype(np.float32))
    assert g32.dtype == np.float32
    np.testing.assert_array_equal(g32, np.arange(9, 0, -1.0, dtype=np.float32))


def cumsum_rows(x):
    return np.cumsum(x, axis=1)


def test_forward_mode_is_the_cumsum_of_the_tangent():
    rng = np.random.default_rng(5)
    x, t = rng.normal(size=(3, 5)), rng.normal(size=(3, 5))
    value, tangent = irad.jvp(cumsum_rows, (x,), (t,))
    np.testing.assert_allclose(value, np.cumsum(x, axis=1), rtol=1e-15)
    np.testing.assert_allclose(tangent, np.cumsum(t, axis=1), rtol=1e-15)


def per_row(x):
    return np.sum(np.cumsum(x) ** 2)


def test_vmap_of_the_gradient_against_a_loop():
    rng = np.random.default_rng(6)
    xs = rng.normal(size=(3, 8))
    got = irad.vmap(irad.grad(per_row))(xs)
    np.testing.assert_allclose(got, np.stack([irad.grad(per_row)(x) for x in xs]), rtol=1e-14)


@settings(max_examples=15, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=40))
def test_the_gradient_is_the_reversed_cumsum(values):
    """d sum(w * cumsum(x)) / dx = reversed cumsum of w, exactly as numpy computes it."""
    x = np.array(values)
    w = np.cos(np.arange(len(values)))
    got = irad.grad(weighted)(x, w)
    np.testing.assert_array_equal(got, np.cumsum(w[::-1])[::-1])


def weighted(x, w):
    return np.sum(w * np.cumsum(x))


# ---- cumprod: zeros ------------------------------------------------------------------------
def product_loss(x):
    return np.sum(np.cumprod(x))


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[needs_native, pytest.mark.native])])
@pytest.mark.parametrize("zeros", [[], [3], [3, 7], [0, 1, 2]])
def test_cumprod_gradient_with_zeros(zeros, backend):
    """Exact where elements are 0 (no 0/0): d sum(cumprod x)/dx_j = sum_{k>=j} prod_{i<=k, i!=j} x_i."""
    x = np.random.default_rng(7).uniform(0.5, 1.5, 10)
    x[zeros] = 0.0
    want = np.array([sum(np.prod(np.delete(x[:k + 1], j)) for k in range(j, 10)) for j in range(10)])
    got = irad.grad(product_loss, backend=backend)(x)
    assert np.all(np.isfinite(got))
    np.testing.assert_allclose(got, want, rtol=1e-13, atol=1e-15)


def cubes(x):
    return np.sum(np.cumsum(x, axis=0) ** 3)


def test_hessian_is_the_closed_form():
    """sum(c^3) with c = L x per column: the Hessian is L^T diag(6 c) L per column."""
    x = np.random.default_rng(8).normal(size=(3, 2))
    c, lower = np.cumsum(x, axis=0), np.tril(np.ones((3, 3)))
    want = np.zeros((3, 2, 3, 2))
    for column in range(2):
        want[:, column, :, column] = lower.T @ np.diag(6 * c[:, column]) @ lower
    np.testing.assert_allclose(irad.hessian(cubes)(x), want, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize("n", [0, 1])
def test_axes_of_no_and_one_element(n):
    value, grad = irad.value_and_grad(per_row)(np.full(n, 3.0))
    assert value == 9.0 * n and grad.shape == (n,)
    np.testing.assert_array_equal(grad, np.full(n, 6.0))


def products(x):
    return np.sum(np.cumprod(x, axis=0) ** 2)


def test_cumprod_forward_mode_and_vmap():
    rng = np.random.default_rng(10)
    x, t = rng.uniform(0.5, 1.5, (4, 3)), rng.normal(size=(4, 3))
    x[1, 0] = 0.0
    _, tangent = irad.jvp(products, (x,), (t,))
    gradient = irad.grad(products)(x)
    assert tangent == pytest.approx(np.sum(gradient * t), rel=1e-13)
    np.testing.assert_allclose(gradient, central_difference(products, (x,), 0), rtol=1e-6, atol=1e-8)
    batch = rng.uniform(0.5, 1.5, (3, 4, 3))
    np.testing.assert_allclose(irad.vmap(irad.grad(products))(batch),
                               np.stack([irad.grad(products)(b) for b in batch]), rtol=1e-14)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([0.0, 0.5, -1.0, 1.5, 2.0, -0.25]), min_size=1, max_size=60),
       st.booleans())
def test_python_backends_blocks_against_the_recurrence(factors, reverse):
    """The Python backend's blocked recurrence, zeros in a included, on lengths
    that leave a last block partly filled, against the sequential one."""
    a = np.array(factors)
    b = np.cos(np.arange(len(factors)))
    np.testing.assert_allclose(python_arrays.linear_scan(a, b, 0, reverse), _recurrence(a, b, 0, reverse),
                               rtol=1e-13, atol=1e-13)


def signs(x):
    return np.cumprod(x)


@pytest.mark.parametrize("backend", ["python", pytest.param("native", marks=[needs_native, pytest.mark.native])])
def test_cumprod_keeps_numpys_signs_of_zero(backend):
    x = np.array([-1.0, 0.0, 2.0, -3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0])  # beyond the Python backend's first block
    got, _ = irad.vjp(signs, x, backend=backend)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.cumprod(x)))
    np.testing.assert_array_equal(got, np.cumprod(x))
