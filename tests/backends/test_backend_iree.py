"""backend="iree" on IREE's llvm-cpu target: the scalar, loop and array test
programs the native backend runs must agree with the Python backend and with
central finite differences (elif_chain(3.0, 1.7) included, which IREE's VM
once got wrong); a Hessian through a loop's tape agrees; what IREE cannot
compile (recursion, a tape grown in nested loops) is refused with an error
naming it.

Skipped, with the reason, without the extra (pip install -e '.[iree]').
No GPU was available: every test here runs on llvm-cpu.
"""

from __future__ import annotations

import math
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import irad
from irad.backends.iree import compile as iree
from irad.base.errors import BackendError, RuntimeCheckError
from tests.api import test_gradients as tg
from tests.backends.test_backend_native import (
    ARRAY_CASES,
    BENCH_ARRAYS,
    POINTS,
    _agree,
    _float_positions,
    _id,
    float_vector,
)
from tests.frontend import test_arrays as ta
from tests.passes import test_control_flow as cf
from tests.passes import test_forward as fw
from tests.reference import central_difference, central_jacobian, five_point_difference

IREE_MISSING = iree.unavailable_reason()
pytestmark = pytest.mark.iree
needs_iree = pytest.mark.skipif(IREE_MISSING is not None, reason=IREE_MISSING or "")

# What IREE 3.13 cannot run is refused with an error naming it (none of these
# is a silent wrong answer). Its compiler does not return on a recursive call
# graph; it cannot size a tape grown in a nest of loops whose inner trip counts
# vary; and its llvm-cpu code generator fails on some reductions of a
# reshaped, stacked or transposed array (vector.contract). (The scalar math
# its VM lacks is written with ops it has: test_iree_forms.py.)
REFUSED = {
    **dict.fromkeys(["power_rec", "even_part", "tree_rec", "recursion_in_a_loop", "chain_rec"],
                    "cannot compile recursion: @"),
    **dict.fromkeys(["nested_loops", "return_in_nested_loop", "loop_calls_looping_helper"],
                    "IREE cannot size the tape"),
    **dict.fromkeys(["s_reshape", "s_stack", "la_transpose"], "see its diagnostics"),
}
@needs_iree
@pytest.mark.parametrize("point", POINTS, ids=map(_id, POINTS))
def test_scalar_programs_agree_and_match_finite_differences(point):
    f, args = point
    wrt = tg.float_positions(args)
    g = irad.value_and_grad(f, argnums=wrt, backend="iree")
    if f.__name__ in REFUSED:
        with pytest.raises(BackendError, match=REFUSED[f.__name__]):
            g(*args)
        return
    value, grads = g(*args)
    ref_value, ref_grads = irad.value_and_grad(f, argnums=wrt)(*args)
    _agree(value, ref_value, f"value of {f.__name__}")
    for i, got, ref in zip(wrt, grads, ref_grads):
        _agree(got, ref, f"d{f.__name__}/d arg {i}")
        fd = five_point_difference(f, args, i)
        assert got == pytest.approx(fd, rel=1e-6, abs=1e-8 * max(1.0, abs(ref_value))), f"d/d arg {i} vs fd"


@needs_iree
@pytest.mark.parametrize("point", ARRAY_CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(ARRAY_CASES)])
def test_array_programs_agree_and_match_finite_differences(point):
    f, args = point
    wrt = _float_positions(args)
    g = irad.value_and_grad(f, wrt, backend="iree")
    if f.__name__ in REFUSED:
        with pytest.raises(BackendError, match=REFUSED[f.__name__]):
            g(*args)
        return
    value, grads = g(*args)
    ref_value, ref_grads = irad.value_and_grad(f, wrt)(*args)
    _agree(value, ref_value, f"value of {f.__name__}")
    for i, got, ref in zip(wrt, grads, ref_grads):
        assert type(got) is type(ref) and np.shape(got) == np.shape(ref), f"d/d arg {i}: {got!r} vs {ref!r}"
        assert getattr(got, "dtype", None) == getattr(ref, "dtype", None), f"d/d arg {i}"
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-13, err_msg=f"d/d arg {i}")
        if np.size(args[i]) <= 64:
            np.testing.assert_allclose(got, ta.central_difference(f, args, i), rtol=1e-5, atol=1e-7)


@needs_iree
@pytest.mark.parametrize("f", [fw.smooth, fw.branchy, fw.calls_helpers], ids=lambda f: f.__name__)
def test_forward_mode_agrees(f):
    if f.__name__ in REFUSED:
        with pytest.raises(BackendError, match=REFUSED[f.__name__]):
            irad.jvp(f, fw.POINTS[0], (1.0, 0.0), backend="iree")
        return
    for point in fw.POINTS:
        for tangents in [(1.0, 0.0), (0.3, -2.0)]:
            out, tangent = irad.jvp(f, point, tangents, backend="iree")
            ref_out, ref_tangent = irad.jvp(f, point, tangents)
            _agree(out, ref_out, "jvp value")
            _agree(tangent, ref_tangent, "jvp tangent")


@needs_iree
def test_jacobians_and_hessians_agree():
    for jac in (irad.jacfwd, irad.jacrev):
        got = jac(float_vector, argnums=(0, 1), backend="iree")(0.7, 1.3, 3)
        assert fw.flat(got) == pytest.approx(fw.flat(jac(float_vector, argnums=(0, 1))(0.7, 1.3, 3)), rel=1e-12)
    h = irad.hessian(fw.smooth, argnums=(0, 1), backend="iree")(0.7, 1.3)
    assert fw.flat(h) == pytest.approx(fw.flat(irad.hessian(fw.smooth, argnums=(0, 1))(0.7, 1.3)), rel=1e-12)
    # an int result crosses IREE's ABI as an int
    out, tangent = irad.jvp(fw.vector, (0.7, 1.3, 3), (1.0, 0.5, None), backend="iree")
    assert out == irad.jvp(fw.vector, (0.7, 1.3, 3), (1.0, 0.5, None))[0]
    assert type(out[2]) is int and tangent[2] is None


@needs_iree
@pytest.mark.parametrize("point", [(0.3, 7), (1.4, 3), (-0.8, 0)])
def test_hessian_through_a_loop_tape_agrees(point):
    """The inner gradient's tensor tape, differentiated again in forward mode."""
    got = irad.hessian(cf.loop_with_branch, backend="iree")(*point)
    assert got == pytest.approx(irad.hessian(cf.loop_with_branch)(*point), rel=1e-12)
    x, n = point
    h = 1e-4 * max(1.0, abs(x))
    fd = (five_point_difference(cf.loop_with_branch, (x + h, n), 0) - five_point_difference(cf.loop_with_branch, (x - h, n), 0)) / (2 * h)
    assert got == pytest.approx(fd, rel=1e-5, abs=1e-7)


@needs_iree
def test_array_jacobians_agree():
    for f, make in ta.CASES[:6]:
        args = make()
        wrt = _float_positions(args)
        if not wrt:
            continue
        for jac in (irad.jacfwd, irad.jacrev):
            got, want = jac(f, wrt[0], backend="iree")(*args), jac(f, wrt[0])(*args)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-13, err_msg=f"{jac.__name__} of {f.__name__}")


@needs_iree
def test_vjp_of_an_array_loop_runs_again_with_its_tensor_tape():
    f = BENCH_ARRAYS["make_lstm_loop"](np)
    rng = np.random.default_rng(2)
    args = (0.1 * rng.normal(size=(4, 32)), 0.1 * rng.normal(size=(8, 32)), 0.1 * rng.normal(size=32),
            rng.normal(size=(5, 2, 4)))
    out, pullback = irad.vjp(f, *args, backend="iree")
    ref_out, ref_pullback = irad.vjp(f, *args)
    assert out == pytest.approx(ref_out, rel=1e-12)
    for scale in (1.0, -2.0):
        for got, want in zip(pullback(scale), ref_pullback(scale)):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@needs_iree
def test_float32_program():
    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    rng = np.random.default_rng(0)
    w, x = rng.normal(size=(8, 4)).astype(np.float32), rng.normal(size=(16, 8)).astype(np.float32)
    got = irad.grad(loss, backend="iree")(w, x)
    assert got.dtype == np.float32
    want = irad.grad(loss)(w.astype(np.float64), x.astype(np.float64))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@needs_iree
def test_results_share_memory_with_nothing():
    def f(x):
        return np.sum(np.exp(x))

    x = np.linspace(0.0, 1.0, 5)
    out, pullback = irad.vjp(f, x, backend="iree")
    first = pullback(1.0)[0]
    first[:] = 0.0  # must not change what the pullback computes
    np.testing.assert_allclose(pullback(1.0)[0], np.exp(x), rtol=1e-14)
    gx, gy = irad.grad(lambda_free_sum, (0, 1), backend="iree")(x, x.copy())
    assert not np.shares_memory(gx, gy)
    np.testing.assert_allclose(gx, gy)


def lambda_free_sum(x, y):
    return np.sum(np.sin(x + y))


@needs_iree
def test_failed_check_is_a_runtime_check_error():
    def pick(x, i):
        return np.sum(np.sin(x)) * x[i]

    g = irad.grad(pick, backend="iree")
    with pytest.raises(RuntimeCheckError, match="index out of bounds for an axis of size 3"):
        g(np.ones(3), 7)
    np.testing.assert_allclose(g(np.ones(3), 1), irad.grad(pick)(np.ones(3), 1), rtol=1e-12)


@needs_iree
def test_compiled_once_per_signature_and_target(monkeypatch):
    def f(x):
        return math.sin(x) * x

    compiles = []
    real = iree.compile_to_vmfb
    monkeypatch.setattr(iree, "compile_to_vmfb", lambda *a: compiles.append(a[1]) or real(*a))
    g = irad.grad(f, backend="iree")
    assert g(0.3) == pytest.approx(math.sin(0.3) + 0.3 * math.cos(0.3), rel=1e-14)
    g(0.4), irad.grad(f, backend="iree")(0.5)
    assert compiles == ["llvm-cpu"]
    assert irad.grad(f, backend=irad.IREE(device="local-task"))(0.3) == g(0.3)
    assert compiles == ["llvm-cpu", "llvm-cpu"]  # the device is part of the key


@needs_iree
def test_an_unknown_device_is_an_error_naming_it():
    # the target and its options are checked without IREE: tests/backends/test_backend_objects.py
    with pytest.raises(BackendError, match="no device 'nonesuch'"):
        irad.grad(fw.smooth, backend=irad.IREE(device="nonesuch"))(0.1, 0.2)


@needs_iree
def test_export_writes_a_vmfb_that_iree_run_module_runs(tmp_path):
    def energy(x, y):
        return math.exp(-x * y) + x * math.sin(y)

    path = tmp_path / "energy.vmfb"
    data = irad.export(energy, 0.5, 1.2, argnums=(0, 1), kind="iree", path=path)
    assert path.read_bytes() == data
    tool = shutil.which("iree-run-module") or str(Path(sys.executable).parent / "iree-run-module")
    run = subprocess.run(
        [tool, f"--module={path}", "--device=local-sync", "--function=energy.grad", "--input=0.5", "--input=1.2"],
        capture_output=True, text=True, check=True,
    )
    got = [float(line.split("=")[-1]) for line in run.stdout.splitlines() if line.startswith("result[")]
    assert len(got) == 2, run.stdout
    want = irad.grad(energy, (0, 1))(0.5, 1.2)
    assert got == pytest.approx(list(want), rel=1e-6)


def test_without_the_extra_the_error_names_it(monkeypatch):
    def f(x):  # compiled nowhere else, so the cache cannot answer
        return math.cos(x) * x

    monkeypatch.setitem(sys.modules, "iree.compiler", None)  # import fails as if not installed
    with pytest.raises(BackendError, match=r"pip install -e '\.\[iree\]'"):
        irad.grad(f, backend="iree")(0.1)


def _gmm_rows(means, X, logw):
    """A GMM objective as a loop over rows with np.max and a log-sum-exp: IREE
    once gave an all-zero gradient of the means (docs/backends/iree.md)."""
    total = 0.0
    for i in range(X.shape[0]):
        d = X[i] - means
        ll = logw - 0.5 * np.sum(d * d, axis=1)
        m = np.max(ll)
        total = total + m + np.log(np.sum(np.exp(ll - m)))
    return -total


@needs_iree
def test_scalar_cotangents_broadcast_in_a_loop_are_not_lost():
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(3, 2)), rng.normal(size=(5, 2)), np.log(np.full(3, 1 / 3)))
    got = irad.grad(_gmm_rows, argnums=(0, 2), backend="iree")(*args)
    for g, i in zip(got, (0, 2)):
        np.testing.assert_allclose(g, central_difference(_gmm_rows, args, i), rtol=1e-6, atol=1e-8)


@needs_iree
def test_a_float32_scalar_argument_compiles():
    def f(x, s):
        return np.sum(x) * s

    x, s = np.array([1.0, 2.0, 3.5]), np.float32(2.0)
    gx, gs = irad.grad(f, argnums=(0, 1), backend="iree")(x, s)
    np.testing.assert_allclose(gx, np.full(3, 2.0))
    assert gs == pytest.approx(6.5)


@needs_iree
def test_linalg_is_refused_by_name():
    def f(a, b):
        return np.sum(np.linalg.solve(a, b))

    with pytest.raises(BackendError, match=r"cannot compile a call to irad\.linalg\.solve.*\n  hint: use backend='native'"):
        irad.grad(f, backend="iree")(np.eye(3) * 2.0, np.ones(3))


# ---- cumulative sums and products (irad/ir/scan.py's blocked forms) -----------------------
def scans(x, x32, n):
    return (np.cumsum(x, axis=1), np.cumprod(x, axis=0), np.cumsum(x32, axis=0), np.cumprod(x32, axis=0),
            np.cumsum(n, axis=0), np.cumprod(n, axis=1))


@needs_iree
def test_cumsum_and_cumprod_values_against_numpy():
    """float64 to rounding; float32 within 16 times numpy's own float32 error
    or 16 roundings of the terms' size (the blocked sums' bound); ints exactly.
    Long enough for two levels of blocks, zeros included."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0.5, 1.5, (300, 3)) * rng.choice([-1.0, 1.0], (300, 3))
    x[[4, 120], [0, 2]] = 0.0
    x32, n = x.astype(np.float32), rng.integers(-2, 3, (300, 3))
    got, _ = irad.vjp(scans, x, x32, n, backend="iree")
    want = scans(x, x32, n)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], want[i], rtol=1e-12, atol=1e-12 * np.max(np.abs(want[i])))
    exact = scans(x, x32.astype(np.float64), n)
    eps = np.finfo(np.float32).eps
    for i, scale in ((2, np.cumsum(np.abs(x32.astype(np.float64)), axis=0)), (3, np.abs(exact[3]))):
        assert got[i].dtype == np.float32
        bound = 16 * np.maximum(np.abs(want[i] - exact[i]), eps * scale)
        assert np.all(np.abs(got[i] - exact[i]) <= bound), i
    for i in (4, 5):
        np.testing.assert_array_equal(got[i], want[i])


def weighted_cumsum(w, x):
    return np.sum(w * np.cumsum(x))


def squared_cumprod(x):
    return np.sum(np.cumprod(x, axis=0) ** 2)


@needs_iree
def test_cumsum_and_cumprod_gradients():
    """d sum(w cumsum x)/dx is the reversed cumsum of w; cumprod's gradient,
    with a zero, against central differences and the Python backend's."""
    rng = np.random.default_rng(1)
    w, x = rng.normal(size=100), rng.normal(size=100)
    np.testing.assert_allclose(irad.grad(weighted_cumsum, argnums=1, backend="iree")(w, x),
                               np.cumsum(w[::-1])[::-1], rtol=1e-12, atol=1e-12)
    y = rng.uniform(0.7, 1.3, (40, 3))
    y[5, 1] = 0.0
    got = irad.grad(squared_cumprod, backend="iree")(y)
    np.testing.assert_allclose(got, irad.grad(squared_cumprod, backend="python")(y), rtol=1e-11, atol=1e-12)
    np.testing.assert_allclose(got, central_difference(squared_cumprod, (y,), 0), rtol=1e-6, atol=1e-8)


# ---- vmap and the vmapped Jacobians -------------------------------------------------------
def mixing(x, B):
    return np.tanh(B @ x) * np.sum(x)


def energy(x, B):
    return np.sum(np.sin(B @ x) * x)


def per_example_loss(params, x, y):
    W, b = params
    return np.sum((np.tanh(W @ x + b) - y) ** 2)


@needs_iree
@pytest.mark.parametrize("kind", ["jacfwd", "jacrev", "hessian"])
def test_vmapped_jacobians_against_the_python_backend(kind):
    """Jacobians are vmapped jvps/vjps over the basis; checked against the Python
    backend's (itself checked against JAX in tests/api/test_vmapped_jacobians.py)
    and central differences."""
    rng = np.random.default_rng(2)
    x, B = rng.normal(size=6), rng.normal(size=(6, 6)) / 3
    f = mixing if kind != "hessian" else energy
    got = getattr(irad, kind)(f, backend="iree")(x, B)
    np.testing.assert_allclose(got, getattr(irad, kind)(f, backend="python")(x, B), rtol=1e-11, atol=1e-12)
    if kind != "hessian":
        np.testing.assert_allclose(got, central_jacobian(f, (x, B), 0), rtol=1e-6, atol=1e-8)


@needs_iree
def test_per_example_gradients():
    """vmap(grad(loss), in_axes=(None, 0, 0)) against a Python loop of grads."""
    rng = np.random.default_rng(3)
    params = (rng.normal(size=(3, 4)) / 2, rng.normal(size=3))
    xs, ys = rng.normal(size=(8, 4)), rng.normal(size=(8, 3))
    got = irad.vmap(irad.grad(per_example_loss), in_axes=(None, 0, 0), backend="iree")(params, xs, ys)
    loop = [irad.grad(per_example_loss, backend="python")(params, x, y) for x, y in zip(xs, ys)]
    for leaf in (0, 1):
        np.testing.assert_allclose(got[leaf], np.stack([g[leaf] for g in loop]), rtol=1e-12, atol=1e-13)
