"""Cheap array producers recomputed into each consumer (irad/backends/native/fusion.py).

Gradients whose forward intermediates are copied per use, so MLIR fuses them
into their consumers, are checked against central differences of the program
run as numpy in float64; the copies must be made (else these tests would not
exercise the mechanism) and must remove the large intermediates from the
lowered code.
"""

from __future__ import annotations

import re
import subprocess

import numpy as np
import pytest

import irad
from irad.backends.native import compile as native
from irad.backends.native import fusion as native_fusion
from tests.backends.test_backend_native import ARRAY_CASES, BENCH_ARRAYS, _float_positions, needs_native
from tests.frontend import test_arrays as ta
from tests.reference import central_difference

pytestmark = [pytest.mark.native, needs_native]

RNG = np.random.default_rng(7)
N, K, D = 400, 8, 6  # N*K*D = 19,200 elements: above native_fusion.MIN_ELEMENTS
GMM = BENCH_ARRAYS["make_gmm"](np)
GMM_ARGS = (RNG.normal(size=K), RNG.normal(size=(K, D)), 0.1 * RNG.normal(size=(K, D)), RNG.normal(size=(N, D)))
MECHANISMS = {"recompute": native_fusion.recompute_cheap_producers,
              "materialise": native_fusion.materialise_before_broadcasts}


def _switch(monkeypatch, mechanism: str, on: bool) -> None:
    """The native compiles that follow with `mechanism` of native/fusion.py on,
    or a no-op in its place (what the lowered code was without it)."""
    function = MECHANISMS[mechanism]
    monkeypatch.setattr(native_fusion, function.__name__, function if on else lambda module: 0)


def pairwise(x, y, w):
    """A broadcast difference used twice (square and plain), weighted by a broadcast."""
    diff = x[:, None, :] - y[None, :, :]
    return np.sum(diff**2 * w[None, :, :]) + 0.5 * np.sum(diff * w[None, :, :])


def ratios(a, b):
    """A division and a maximum, each used twice."""
    q = a / b
    top = np.maximum(a, b)
    return np.sum(q * q + q) + np.sum(top * a) - np.sum(top * b)


def outer(u, v):
    """A broadcast product used by two reductions along different axes."""
    p = u[:, None] * v[None, :]
    return np.sum(np.sum(p, axis=0) ** 2) + np.sum(np.sum(p * p, axis=1))


def pairwise_gradient(x, y, w):
    diff = x[:, None, :] - y[None, :, :]
    g = 2.0 * diff * w + 0.5 * w  # d f / d diff
    return np.sum(g, axis=1), -np.sum(g, axis=0), np.sum(diff**2 + 0.5 * diff, axis=0)


def ratios_gradient(a, b):
    q, top = a / b, np.maximum(a, b)  # no ties in the data
    return (2 * q + 1) / b + (a > b) * (a - b) + top, -(2 * q + 1) * a / b**2 + (b > a) * (a - b) - top


def outer_gradient(u, v):
    su, su2, sv2 = np.sum(u), np.sum(u * u), np.sum(v * v)
    return 2 * su * sv2 + 2 * u * sv2, 2 * su**2 * v + 2 * su2 * v


def central_differences(f):
    def differences(*args):
        return [central_difference(f, args, i) for i in range(3)]

    return differences


# (program, arguments, argnums, its gradient: closed form, or central differences in
# float64 where the sums are small enough for them to be accurate)
PROGRAMS = [
    (GMM, GMM_ARGS, (0, 1, 2), central_differences(GMM)),
    (pairwise, (RNG.normal(size=(300, 9)), RNG.normal(size=(7, 9)), RNG.uniform(0.5, 2.0, size=(7, 9))), (0, 1, 2),
     pairwise_gradient),
    (ratios, (RNG.normal(size=(130, 130)), RNG.uniform(1.0, 2.0, size=(130, 130))), (0, 1), ratios_gradient),
    (outer, (RNG.normal(size=150), RNG.normal(size=120)), (0, 1), outer_gradient),
]
IDS = ["gmm", "pairwise", "ratios", "outer"]


def _native_gradient(f, args, argnums, recompute: bool, monkeypatch):
    """The gradient compiled afresh, with producers recomputed or not."""
    _switch(monkeypatch, "recompute", recompute)
    module = irad.grad(f, argnums, backend="native").lower(*args)
    compiled = native.NativeModule(module)
    (name,) = compiled.functions
    return compiled.function(name)


@pytest.mark.parametrize("f, args, argnums, expected", PROGRAMS, ids=IDS)
def test_recomputed_producers_give_the_right_gradient(f, args, argnums, expected, monkeypatch):
    module = irad.grad(f, argnums, backend="native").lower(*args)
    assert native_fusion.recompute_cheap_producers(module.clone()) > 0, "nothing was recomputed"
    grads = _native_gradient(f, args, argnums, True, monkeypatch)(*args)
    tolerance = 1e-6 if expected.__name__ == "differences" else 1e-10  # central differences are good to ~1e-7
    for i, g, e in zip(argnums, grads, expected(*args)):
        np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance, err_msg=f"d/d arg {i}")


@pytest.mark.parametrize("f, args, argnums, expected", PROGRAMS, ids=IDS)
def test_recomputing_changes_no_bit(f, args, argnums, expected, monkeypatch):
    fused = _native_gradient(f, args, argnums, True, monkeypatch)(*args)
    materialised = _native_gradient(f, args, argnums, False, monkeypatch)(*args)
    for a, b in zip(fused, materialised):
        np.testing.assert_array_equal(a, b)


def _allocated_shapes(module, monkeypatch, recompute: bool) -> set[str]:
    _switch(monkeypatch, "recompute", recompute)
    ready, passes = native.for_mlir_opt(module, tracked=True, destinations=True)
    upto = passes.index("--convert-linalg-to-loops")
    proc = subprocess.run([native.require_tool("mlir-opt"), *passes[:upto]], input=str(ready),
                          capture_output=True, text=True, check=True)
    return set(re.findall(r"memref\.alloc\(\)(?: \{[^}]*\})? : memref<([0-9x]+)xf64>", proc.stdout))


def test_the_gmm_gradient_materialises_no_point_by_component_by_dimension_array(monkeypatch):
    module = irad.grad(GMM, (0, 1, 2), backend="native").lower(*GMM_ARGS)
    large = f"{N}x{K}x{D}"
    assert large in _allocated_shapes(module, monkeypatch, recompute=False)  # what the mechanism removes
    assert large not in _allocated_shapes(module, monkeypatch, recompute=True)


def test_expensive_and_small_producers_are_not_copied():
    def f(x, s):
        e = np.exp(x)  # exp: computed once, whatever its uses
        small = s * s  # 10 elements: below MIN_ELEMENTS
        return np.sum(e * e) + np.sum(e) + np.sum(small * s) + np.sum(small)

    module = irad.lower(f, np.ones((200, 200)), np.ones(10))
    assert native_fusion.recompute_cheap_producers(module) == 0


@pytest.mark.parametrize("point", ARRAY_CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in enumerate(ARRAY_CASES)])
def test_every_array_program_with_every_cheap_producer_recomputed(point, monkeypatch):
    """The array programs of the native backend's tests are small: with the
    size threshold at 1, every cheap producer used twice is copied, and the
    gradients must still match central differences."""
    f, args = point
    wrt = _float_positions(args)
    if not wrt:
        pytest.skip("no float argument")
    monkeypatch.setattr(native_fusion, "MIN_ELEMENTS", 1)
    module = irad.grad(f, wrt, backend="native").lower(*args)
    if native_fusion.recompute_cheap_producers(module.clone()) == 0:
        pytest.skip("no cheap producer used twice")
    compiled = native.NativeModule(module)
    (name,) = compiled.functions
    grads = compiled.function(name)(*args)
    reference = irad.grad(f, wrt)(*args)  # the numpy backend, for arguments too large for differences
    reference = reference if len(wrt) > 1 else (reference,)
    for i, g, ref in zip(wrt, grads, reference):
        if np.size(args[i]) <= 64:  # central differences cost two calls per element
            np.testing.assert_allclose(g, ta.central_difference(f, args, i), rtol=1e-5, atol=1e-7, err_msg=f"d/d arg {i}")
        else:
            np.testing.assert_allclose(g, ref, rtol=1e-12, atol=1e-13, err_msg=f"d/d arg {i}")


# ---- expensive producers materialised before a broadcast --------------------------
def weighted_sum(x, w):
    """tanh(w) broadcast over the rows of x: the gradient in x is that broadcast, times 3."""
    return 3.0 * np.sum(np.tanh(w)[None, :] * x)


def _materialised(module, monkeypatch) -> int:
    """How many arrays the module mlir-opt is given materialises before a broadcast."""
    _switch(monkeypatch, "materialise", True)
    return str(native.for_mlir_opt(module)[0]).count("bufferization.alloc_tensor")


def _fused(module, monkeypatch, materialise: bool) -> str:
    """The module after MLIR's elementwise fusion (the passes up to bufferization)."""
    _switch(monkeypatch, "materialise", materialise)
    ready, passes = native.for_mlir_opt(module, tracked=True, destinations=True)
    upto = passes.index("--eliminate-empty-tensors")
    return subprocess.run([native.require_tool("mlir-opt"), *passes[:upto]], input=str(ready),
                          capture_output=True, text=True, check=True).stdout


def _generics_with_exp(fused: str, reading: str = "") -> list[int]:
    """For each linalg.generic that computes an exp (and whose operands
    include `reading`): how many loops it has."""
    depths = []
    for match in re.finditer(r"linalg\.generic \{[^\n]*iterator_types = \[([^\]]*)\][^\n]*\n(.*?)linalg\.yield", fused, re.S):
        if "math.exp" in match.group(2) and reading in match.group(0).split("\n")[0]:
            depths.append(match.group(1).count('"') // 2)
    return depths


def test_the_gmm_primal_computes_its_inverse_variances_once(monkeypatch):
    """exp(-2 log_sigmas), (K, d), has one use in the primal: a broadcast over
    the N points. Fused into it, it ran N times; materialised, once."""
    assert _materialised(irad.lower(GMM, *GMM_ARGS), monkeypatch) == 1
    # log_sigmas is the third argument (%arg2); the sum over the points is blocked
    # (backends/blocked_sums.py), so the per-point generics have more loops than (N, K)
    assert 3 in _generics_with_exp(_fused(irad.lower(GMM, *GMM_ARGS), monkeypatch, materialise=False))  # the defect
    assert max(_generics_with_exp(_fused(irad.lower(GMM, *GMM_ARGS), monkeypatch, materialise=True), "%arg2")) == 2


def _native_primal(f, args, monkeypatch, materialise: bool):
    _switch(monkeypatch, "materialise", materialise)
    compiled = native.NativeModule(irad.lower(f, *args))
    (name,) = compiled.functions
    return compiled.function(name)(*args)[0]


def test_materialising_changes_no_bit_of_the_gmm_primal(monkeypatch):
    value = _native_primal(GMM, GMM_ARGS, monkeypatch, materialise=True)
    assert value == _native_primal(GMM, GMM_ARGS, monkeypatch, materialise=False)
    assert value == pytest.approx(GMM(*GMM_ARGS), rel=1e-12)


def test_a_broadcast_tanh_in_a_gradient_is_materialised_and_right(monkeypatch):
    x, w = RNG.normal(size=(300, 60)), RNG.normal(size=60)
    module = irad.grad(weighted_sum, 0, backend="native").lower(x, w)
    assert _materialised(module.clone(), monkeypatch) == 1
    _switch(monkeypatch, "materialise", True)
    compiled = native.NativeModule(module)
    (name,) = compiled.functions
    (grad,) = compiled.function(name)(x, w)
    np.testing.assert_allclose(grad, 3.0 * np.broadcast_to(np.tanh(w), x.shape), rtol=1e-14, atol=0)


def test_cheap_or_shared_producers_of_a_broadcast_are_left_to_fuse(monkeypatch):
    def f(x, w, v):
        e = np.exp(v)  # two uses: MLIR keeps it materialised anyway
        return np.sum(x * (2.0 * w)[None, :]) + np.sum(x * e[None, :]) + np.sum(e)

    assert _materialised(irad.lower(f, np.ones((200, 20)), np.ones(20), np.ones(20)), monkeypatch) == 0
