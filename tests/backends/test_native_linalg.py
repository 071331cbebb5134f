"""The native backend's linear algebra: the LAPACK library it finds
(irad/backends/native/lapack.py) and the definitions it links for irad.linalg's
declarations (irad/backends/native/linalg.py). Gradients and values are checked
in tests/frontend/test_numpy_linalg.py on both backends."""

import ctypes
import math

import numpy as np
import pytest

import irad
from irad.backends.native import lapack
from irad.backends.native import linalg as native_linalg
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import BackendError

NATIVE_MISSING = unavailable_reason()


def test_the_library_has_lapacke_under_the_name_it_reports():
    library = lapack.find()
    handle = ctypes.CDLL(library.path)
    assert hasattr(handle, library.symbol("LAPACKE_dgesv"))
    assert hasattr(handle, library.symbol("LAPACKE_sgesdd"))
    assert library.int_bits in (32, 64)


def test_the_first_library_with_lapacke_is_chosen(monkeypatch):
    good = lapack.find()
    monkeypatch.setattr(lapack, "_candidates", lambda: [("/nonexistent/libnothing.so", "test"), (good.path, "here")])
    lapack.find.cache_clear()
    try:
        assert lapack.find().path == good.path and lapack.find().origin == "here"
        monkeypatch.setattr(lapack, "_candidates", lambda: [("/nonexistent/libnothing.so", "test")])
        lapack.find.cache_clear()
        with pytest.raises(BackendError, match=r"no LAPACK library.*libnothing.*\n  hint: pip install scipy-openblas64"):
            lapack.find()
    finally:
        lapack.find.cache_clear()


def inverses(a):
    b = np.linalg.inv(a)
    c = np.linalg.inv(2.0 * a)
    return np.sum(b * a) + np.sum(c) + np.sum(np.linalg.cholesky(a @ a.T) * a) + np.linalg.det(a)


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
def test_lapack_works_on_copies_arguments_and_constants_stay():
    """LAPACK overwrites its operands: bufferization must have copied the
    caller's array and the identity constant inv solves against."""
    a = np.random.default_rng(0).normal(size=(3, 3)) + 3.0 * np.eye(3)
    before = a.copy()
    grad = irad.value_and_grad(inverses, backend="native")
    results = [grad(a) for _ in range(3)]
    assert np.array_equal(a, before)
    for value, g in results:
        assert value == results[0][0] and np.array_equal(g, results[0][1])
    np.testing.assert_allclose(results[0][0], inverses(a), rtol=1e-12)


def eigen_and_singular(a):
    w, v = np.linalg.eigh(a @ np.transpose(a, (0, 2, 1)))
    u, s, vt = np.linalg.svd(a, full_matrices=False)
    q, r = np.linalg.qr(a)
    return np.sum(w) + np.sum(v ** 4) + np.sum(s) + np.sum(u ** 4) + np.sum(q ** 4) + np.sum(r)


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_each_routine_agrees_with_numpy(dtype):
    a = np.random.default_rng(1).normal(size=(2, 4, 3)).astype(dtype)
    value, g = irad.value_and_grad(eigen_and_singular, backend="native")(a)
    expected, g_python = irad.value_and_grad(eigen_and_singular)(a)
    assert g.dtype == dtype
    tolerance = 1e-10 if dtype == np.float64 else 1e-3
    np.testing.assert_allclose(value, expected, rtol=tolerance)
    np.testing.assert_allclose(g, g_python, rtol=tolerance, atol=tolerance)


def test_the_glue_module_calls_lapacke_per_declaration():
    module = irad.grad(inverses).lower(np.eye(3) * 2.0)
    text = native_linalg.glue_module(module)
    library = lapack.find()
    for routine in ("dgesv", "dgetrf", "dpotrf", "dgesdd"):
        assert f"llvm.func @{library.symbol('LAPACKE_' + routine)}(" in text
    assert text.count("func.func @") == len(native_linalg.python_declarations(module))


def erfc_twice(x):
    return 2.0 * math.erfc(x)


@pytest.mark.native
@pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))
def test_a_python_function_without_source_is_a_native_error(rule_table):
    @irad.rrule(math.erfc)
    def erfc_rule(x):
        def pullback(dy):
            return -dy * 1.1283791670955126 * math.exp(-x * x)

        return math.erfc(x), pullback

    assert irad.grad(erfc_twice)(0.3) == pytest.approx(-2.0 * 1.1283791670955126 * math.exp(-0.09))
    with pytest.raises(BackendError, match=r"cannot call the Python function math:erfc.*\n  hint: use backend='python'"):
        irad.grad(erfc_twice, backend="native")(0.3)
