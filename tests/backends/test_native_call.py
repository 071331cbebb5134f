"""The native call path of functions with arrays (irad/backends/native/call.py):
numpy arrays read in place by a trampoline that checks them, the arrays it
refuses converted by Python, array results computed into numpy's arrays.

Values are checked against numpy computing the same thing."""

from __future__ import annotations

import ctypes
import pickle
import re
import threading

import numpy as np
import pytest

import irad
from irad.backends.native import compile as native
from irad.backends.native import call as native_call
from irad.base.errors import BackendError
from tests.backends.test_backend_native import _parse, needs_native

pytestmark = [pytest.mark.native, needs_native]

PROGRAM = """
  func.func @f(%a: tensor<3x4xf64>, %s: f64, %b: tensor<4xf64>) -> (f64, tensor<3xf64>, tensor<3x4xf64>) {
    %e = tensor.empty() : tensor<3x4xf64>
    %bb = linalg.broadcast ins(%b : tensor<4xf64>) outs(%e : tensor<3x4xf64>) dimensions = [0]
    %p = arith.mulf %a, %bb : tensor<3x4xf64>
    %z = arith.constant dense<0.0> : tensor<3xf64>
    %mv = linalg.reduce ins(%p : tensor<3x4xf64>) outs(%z : tensor<3xf64>) dimensions = [1]
      (%x: f64, %y: f64) {
        %xy = arith.addf %x, %y : f64
        linalg.yield %xy : f64
      }
    %sq = arith.mulf %a, %a : tensor<3x4xf64>
    %c1 = arith.constant 1 : index
    %m1 = tensor.extract %mv[%c1] : tensor<3xf64>
    %r = arith.mulf %m1, %s : f64
    func.return %r, %mv, %sq : f64, tensor<3xf64>, tensor<3x4xf64>
  }"""

A = np.arange(12.0).reshape(3, 4) / 7.0
B = np.array([0.5, -1.0, 2.0, 0.25])


@pytest.fixture(scope="module")
def program():
    return native.compile_module(_parse(PROGRAM))


def _expected(a, s, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return (a @ b)[1] * s, a @ b, a * a


def _big_endian(x):
    return x.astype(">f8")


def _misaligned(x):
    raw = np.zeros(x.nbytes + 1, np.uint8)
    view = np.frombuffer(raw.data[1:], np.float64).reshape(x.shape)
    view[...] = x
    return view


class _Subclass(np.ndarray):
    pass


# What a caller may pass for a float64 array: each is refused in place
# (not exactly a C-contiguous, aligned ndarray of native float64) but taken.
REFUSED = {
    "list": lambda x: x.tolist(),
    "fortran order": np.asfortranarray,
    "strided view": lambda x: np.repeat(x, 2, axis=-1)[..., ::2],
    "big-endian": _big_endian,
    "misaligned": _misaligned,
    "subclass": lambda x: x.view(_Subclass),
    "int64": lambda x: np.round(x * 8).astype(np.int64),
    "float32": lambda x: x.astype(np.float32),
}
# Taken in place, though numpy made another dtype object for them.
IN_PLACE = {
    "array": lambda x: x.copy(),
    "unpickled": lambda x: pickle.loads(pickle.dumps(x)),
    "with metadata": lambda x: x.astype(np.dtype(np.float64, metadata={"unit": "m"})),
    "read-only": lambda x: np.frombuffer(x.tobytes(), np.float64).reshape(x.shape),
}


def _trampoline(program, name="f"):
    """The ctypes function of the trampoline itself, to read its status."""
    sig = program.signatures[name]
    outputs = program.functions[name].function_type.outputs.data
    results = native._results(outputs)
    # the tuple of the arguments and the result arrays, then the scalars again
    argtypes = [ctypes.POINTER(results), ctypes.py_object] + [
        native.c_type(t) for t in sig.inputs if not isinstance(t, native_call.ArraySpec)
    ]
    function = ctypes.PYFUNCTYPE(ctypes.c_int32, *argtypes)(program.jit.address(native_call.TRAMPOLINE_PREFIX + name))

    def status(a, s, b):
        return function(results(), (a, s, b, np.empty(3), np.empty((3, 4))), s)

    return status


@pytest.mark.parametrize("make", IN_PLACE.values(), ids=IN_PLACE.keys())
def test_arrays_the_trampoline_takes_in_place(program, make):
    a, b = make(A), make(B)
    assert _trampoline(program)(a, 2.0, b) == 0
    for got, want in zip(program.function("f")(a, 2.0, b), _expected(a, 2.0, b)):
        np.testing.assert_allclose(got, want, rtol=1e-14)


@pytest.mark.parametrize("make", REFUSED.values(), ids=REFUSED.keys())
def test_arrays_the_trampoline_refuses_are_converted(program, make):
    status = _trampoline(program)
    assert status(make(A), 2.0, B) == -1
    assert status(A, 2.0, make(B)) == (0 if make is np.asfortranarray else -3)  # 1-d: C order too
    for a, b in ((make(A), B), (A, make(B)), (make(A), make(B))):
        before = [np.array(a, copy=True), np.array(b, copy=True)]
        for got, want in zip(program.function("f")(a, 2.0, b), _expected(a, 2.0, b)):
            np.testing.assert_allclose(got, want, rtol=1e-14)
        np.testing.assert_array_equal(np.asarray(a), before[0])  # the caller's arrays are untouched
        np.testing.assert_array_equal(np.asarray(b), before[1])


@pytest.mark.parametrize("bad, position", [(np.ones(4), 0), (np.ones((4, 3)), 0), (np.ones(5), 2)])
def test_a_wrong_shape_is_an_error_naming_it(program, bad, position):
    args = [A, 2.0, B]
    args[position] = bad
    with pytest.raises(BackendError, match=rf"@f expected an array of shape .* for argument {position}, got {re.escape(str(bad.shape))}"):
        program.function("f")(*args)


def test_a_scalar_where_an_array_belongs_is_an_error(program):
    with pytest.raises(BackendError, match=r"argument 0, got \(\)"):
        program.function("f")(1.0, 2.0, B)


def test_results_are_new_arrays_each_call(program):
    f = program.function("f")
    first = f(A, 2.0, B)
    second = f(A, 2.0, B)
    assert not np.shares_memory(first[2], second[2]) and not np.shares_memory(first[2], A)


def test_the_layout_reads_an_array(program):
    layout = native_call.numpy_layout()
    x = np.arange(6.0).reshape(2, 3)[:, 1:]
    assert ctypes.c_void_p.from_address(id(x) + layout.data).value == x.__array_interface__["data"][0]
    assert ctypes.c_int.from_address(id(x) + layout.nd).value == 2


def test_threads_call_one_function_at_once(program):
    # the GIL is released while the machine code runs; each call has its own frame
    f = program.function("f")
    rng = np.random.default_rng(1)
    inputs = [(rng.normal(size=(3, 4)), float(i), rng.normal(size=4)) for i in range(8)]
    errors = []

    def work(a, s, b):
        for _ in range(200):
            for got, want in zip(f(a, s, b), _expected(a, s, b)):
                if not np.allclose(got, want, rtol=1e-14):
                    errors.append((got, want))

    threads = [threading.Thread(target=work, args=args) for args in inputs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def ints_and_bools(x, n, flags):
    return np.sum(x * n) + np.sum(np.where(flags, x, 0.0))


def test_int_and_bool_arrays_cross_too():
    x = np.array([1.0, 2.0, 3.0])
    n = np.array([2, -1, 4])
    flags = np.array([True, False, True])
    for backend in ("native", "python"):
        got = irad.grad(ints_and_bools, backend=backend)(x, n, flags)
        np.testing.assert_allclose(got, n + flags, rtol=1e-15)
