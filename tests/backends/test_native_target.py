"""The target machine native code is compiled for (irad/backends/native/llvm_jit.py):
this CPU, with LLVM's gathers and scatters turned off (the default of
irad.config's `native_tuning`), and IRAD_NATIVE_TUNING to change that.

The GMM gradient at d = 10 is the case that mattered: with AVX-512, LLVM
vectorised its fused loops through 8-lane gathers. Its gradients, with
and without them, are checked against central differences in float64.
"""

from __future__ import annotations

import numpy as np
import pytest

import irad
from irad import config
from irad.backends.native import llvm_jit
from irad.backends.native import compile as native
from irad.base.errors import BackendError
from tests.backends.test_backend_native import BENCH_ARRAYS, needs_native
from tests.reference import central_difference

pytestmark = [pytest.mark.native, needs_native]

RNG = np.random.default_rng(3)
GMM = BENCH_ARRAYS["make_gmm"](np)
N, K, D = 40, 25, 10  # bench/native.py's d and K; fewer points
GMM_ARGS = (RNG.normal(size=K), RNG.normal(size=(K, D)), 0.1 * RNG.normal(size=(K, D)), RNG.normal(size=(N, D)))
TUNING = config.switch("native_tuning")
x86 = pytest.mark.skipif(not llvm_jit._llvm().get_default_triple().startswith("x86_64"), reason="TUNING is x86-64's")


def _gradient(monkeypatch, tuning: str | None):
    """The GMM gradient compiled afresh under IRAD_NATIVE_TUNING=`tuning` (None: unset)."""
    if tuning is None:
        monkeypatch.delenv(TUNING.variable, raising=False)
    else:
        monkeypatch.setenv(TUNING.variable, tuning)
    return native.NativeModule(irad.grad(GMM, (0, 1, 2), backend="native").lower(*GMM_ARGS))


@x86
def test_no_gathers_or_scatters_by_default(monkeypatch):
    ir = _gradient(monkeypatch, None).jit.optimised_ir()
    assert "llvm.masked.gather" not in ir and "llvm.masked.scatter" not in ir


@x86
def test_the_tuning_is_what_llvm_is_told(monkeypatch):
    monkeypatch.delenv(TUNING.variable, raising=False)
    assert llvm_jit._host()[1].endswith("," + TUNING.default)
    monkeypatch.setenv(TUNING.variable, "")
    assert llvm_jit._host()[1] == llvm_jit._detected()[1]
    monkeypatch.setenv(TUNING.variable, " +prefer-256-bit , -prefer-no-gather")
    assert llvm_jit._host()[1].endswith(",+prefer-256-bit,-prefer-no-gather")


@x86
def test_avx512_gathers_come_back_without_the_tuning(monkeypatch):
    """What TUNING prevents, on a CPU with AVX-512 (else LLVM needs a fast-gather CPU to use them)."""
    if not llvm_jit._detected()[2].get("avx512f"):
        pytest.skip("no AVX-512 here")
    assert "llvm.masked.gather" in _gradient(monkeypatch, "").jit.optimised_ir()


@pytest.mark.parametrize("tuning", [None, ""], ids=["default", "llvm-chooses"])
def test_gmm_gradient_matches_central_differences(monkeypatch, tuning):
    compiled = _gradient(monkeypatch, tuning)
    (name,) = compiled.functions
    grads = compiled.function(name)(*GMM_ARGS)
    for i, g in enumerate(grads):
        expected = central_difference(GMM, GMM_ARGS, i)
        np.testing.assert_allclose(g, expected, rtol=1e-6, atol=1e-6, err_msg=f"d/d arg {i}")


@pytest.mark.parametrize("value", ["avx2", "+", "prefer-no-gather,+avx2"])
def test_a_malformed_tuning_is_a_clear_error(monkeypatch, value):
    monkeypatch.setenv(TUNING.variable, value)
    if not llvm_jit._llvm().get_default_triple().startswith("x86_64"):
        pytest.skip("TUNING is x86-64's")
    with pytest.raises(BackendError, match="IRAD_NATIVE_TUNING must be LLVM target features"):
        llvm_jit._host()
