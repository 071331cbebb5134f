"""Math functions that MLIR 22 lowers inaccurately, computed natively as libm
computes them: log1p (`--convert-math-to-llvm` would make it log(1 + x)) and
expm1 (exp(x) - 1), which lose the digits they exist for when |x| is small.

Values are checked against libm called through ctypes, gradients against
central finite differences."""

from __future__ import annotations

import ctypes
import ctypes.util
import math

import numpy as np
import pytest

import irad
from irad.backends.native import compile as native
from tests.backends.test_backend_native import needs_native

pytestmark = [pytest.mark.native, needs_native]

LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
SMALL = [1e-300, -1e-300, 5e-324, 1e-20, -1e-20, 1e-10, -3e-9, 1e-5, 0.3, -0.7, 2.5, 0.0, -0.0]


def libm(name: str, x, c_type=ctypes.c_double) -> float:
    fn = getattr(LIBM, name)
    fn.restype, fn.argtypes = c_type, [c_type]
    return fn(x)


def native_function(f, *args):
    return native.compile_module(irad.lower(f, *args)).function(f.__name__)


def bits(values) -> list[bytes]:
    return [np.asarray(v).tobytes() for v in values]


def scalar_program(x):
    return math.log1p(x), math.expm1(x)


def array_program(x):
    return np.log1p(x), np.expm1(x)


def test_scalars_as_libm():
    run = native_function(scalar_program, 0.5)
    for x in SMALL:
        assert bits(run(x)) == bits([libm("log1p", x), libm("expm1", x)]), x  # signed zeros too


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_arrays_as_libm(dtype):
    x = np.array(SMALL, dtype=dtype)
    log1p, expm1 = native_function(array_program, x)(x)
    c_type, suffix = (ctypes.c_double, "") if dtype == np.float64 else (ctypes.c_float, "f")
    want_log1p = np.array([libm("log1p" + suffix, v, c_type) for v in x.tolist()], dtype=dtype)
    want_expm1 = np.array([libm("expm1" + suffix, v, c_type) for v in x.tolist()], dtype=dtype)
    assert log1p.tobytes() == want_log1p.tobytes()
    assert expm1.tobytes() == want_expm1.tobytes()


def small_loss(x):
    return np.sum(np.log(np.expm1(x) + np.log1p(x)))


def test_gradient_at_small_arguments_matches_finite_differences():
    """log(expm1(x) + log1p(x)) ~ log(2x): exp(x) - 1 and log(1 + x) would give
    log(0) = -inf at x = 1e-17, and a wrong value well beyond."""
    x = np.array([1e-17, 3e-12, 1e-6, 0.2])
    value, grad = irad.value_and_grad(small_loss, backend="native")(x)
    assert value == pytest.approx(sum(math.log(math.expm1(v) + math.log1p(v)) for v in x.tolist()), rel=1e-14)
    h = x * 1e-6
    fd = [(math.log(math.expm1(v + d) + math.log1p(v + d)) - math.log(math.expm1(v - d) + math.log1p(v - d))) / (2 * d)
          for v, d in zip(x.tolist(), h.tolist())]
    np.testing.assert_allclose(grad, fd, rtol=1e-6)

