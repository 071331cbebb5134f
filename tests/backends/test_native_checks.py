"""Failed checks and runaway recursion raise, natively as on the Python backend,
and the process carries on (irad/backends/native/checks.py).

A failed check natively used to abort the process (cf.assert lowers to
abort) and runaway recursion was a SIGSEGV. Both backends now raise
RuntimeCheckError with the same message; natively the next call runs and gives
the right value. Values are checked against closed forms and central
differences. tests/backends/test_native_memory.py checks that a failed call
frees its buffers, and reruns the failures under glibc's heap checks.
"""

from __future__ import annotations

import inspect
import math
import re
import threading

import numpy as np
import pytest
from xdsl.dialects import cf, func

import irad
from irad.backends.native import compile as native
from irad.backends.native import checks as native_checks
from irad.base.errors import RuntimeCheckError
from tests.backends.test_backend_native import _parse, needs_native
from tests.frontend.test_joins import BACKENDS
from tests.reference import five_point_difference


# ---- runaway recursion ---------------------------------------------------------------
def power(x, n):
    return 1.0 if n == 0 else x * power(x, n - 1)


def is_even_part(x, n):
    if n == 0:
        return x
    return is_odd_part(x * 1.01, n - 1)


def is_odd_part(x, n):
    if n == 0:
        return -x
    return is_even_part(x * 0.99, n - 1)


def sines(x, n):
    if n == 0:
        return x
    return np.sin(sines(x, n - 1)) + 0.1 * x


def sum_of_sines(x, n):
    return np.sum(sines(x, n))


def def_line(fn) -> int:
    return inspect.getsourcelines(fn)[1]


def recursion_error(*functions) -> str:
    """The message for runaway recursion in one of `functions`, at its `def`."""
    either = "|".join(rf"{def_line(f)}:\d+: maximum recursion depth exceeded in {f.__name__}" for f in functions)
    return rf"^\S*test_native_checks\.py:({either}): its calls nest deeper than the stack allows"


@pytest.mark.parametrize("backend", BACKENDS)
def test_runaway_recursion_is_a_checked_error(backend):
    g = irad.grad(power, backend=backend)
    with pytest.raises(RuntimeCheckError, match=recursion_error(power)):
        g(1.5, -1)
    assert g(1.5, 6) == pytest.approx(6 * 1.5**5, rel=1e-14)  # the next call runs


@pytest.mark.parametrize("backend", BACKENDS)
def test_runaway_mutual_recursion_names_a_function_of_the_cycle(backend):
    g = irad.grad(is_even_part, backend=backend)
    with pytest.raises(RuntimeCheckError, match=recursion_error(is_even_part, is_odd_part)):
        g(0.7, -3)
    assert g(0.7, 5) == pytest.approx(five_point_difference(is_even_part, (0.7, 5), 0), rel=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_runaway_recursion_on_arrays(backend):
    x = np.array([0.3, -0.2, 1.1])
    g = irad.grad(sum_of_sines, backend=backend)
    with pytest.raises(RuntimeCheckError, match=recursion_error(sines)):
        g(x, -1)
    expected = [five_point_difference(lambda t, i=i: sum_of_sines(np.where(np.arange(3) == i, t, x), 4), (x[i],), 0)
                for i in range(3)]
    np.testing.assert_allclose(g(x, 4), expected, rtol=1e-7)


@pytest.mark.native
@needs_native
def test_runaway_recursion_in_forward_mode_and_in_a_vjp():
    with pytest.raises(RuntimeCheckError, match=recursion_error(power)):
        irad.jvp(power, (1.5, -1), (1.0,), argnums=0, backend="native")
    with pytest.raises(RuntimeCheckError, match=recursion_error(power)):
        irad.vjp(power, 1.5, -1, backend="native")
    out, pullback = irad.vjp(power, 1.5, 4, backend="native")
    assert out == 1.5**4 and pullback(1.0)[0] == pytest.approx(4 * 1.5**3, rel=1e-14)


@pytest.mark.native
@needs_native
def test_deep_recursion_still_runs_natively():
    """The stack check leaves the stack to recursion: 20,000 calls deep is well
    within 8 MiB (and within the Python backend's 60,000 frames)."""
    assert irad.grad(power, backend="native")(1.0001, 20_000) == pytest.approx(20_000 * 1.0001**19_999, rel=1e-12)


@pytest.mark.native
@needs_native
def test_the_stack_floor_is_each_threads_own():
    """A thread with a small stack (1 MiB) gets a check, not a SIGSEGV, and the
    main thread's deeper recursion still runs."""
    g = irad.grad(power, backend="native")
    outcomes = []

    def run():
        for n in (-1, 1000, 400_000):
            try:
                outcomes.append(g(1.0, n))
            except RuntimeCheckError as e:
                outcomes.append(str(e).split(":")[3].strip())

    old = threading.stack_size(1 << 20)
    try:
        thread = threading.Thread(target=run)
        thread.start()
        thread.join()
    finally:
        threading.stack_size(old)
    exceeded = "maximum recursion depth exceeded in power"
    assert outcomes == [exceeded, 1000.0, exceeded]
    assert g(1.0, 20_000) == 20_000.0


# ---- failed checks -------------------------------------------------------------------
def checked(x, n, d, step):
    """One program with every kind of check."""
    y = np.array([x, 2.0 * x, 3.0 * x])
    s = y[n] * (7 // d)  # an index, and a division by zero
    for i in range(0, 3, step):  # a range step
        s = s + x * (n * 4611686018427387904)  # an int overflow (n > 1)
    return s + x * math.floor(x)  # a float -> int conversion


FINE = (0.5, 0, 1, 1)
CHECK_FAILURES = [
    ((0.5, 5, 1, 1), "index out of bounds for an axis of size 3"),
    ((0.5, 1, 0, 1), "integer division or modulo by zero"),
    ((0.5, 1, 1, 0), r"range\(\) arg 3 must not be zero"),
    ((0.5, 2, 1, 1), r"integer overflow in `\*`"),
    ((math.inf, 1, 1, 1), "cannot convert float infinity or NaN to integer"),
]


@pytest.mark.native
@needs_native
def test_every_failed_check_raises_as_on_the_python_backend():
    native_grad, python_grad = irad.grad(checked, backend="native"), irad.grad(checked)
    for args, message in CHECK_FAILURES:
        with pytest.raises(RuntimeCheckError, match=message) as on_python:
            python_grad(*args)
        with pytest.raises(RuntimeCheckError) as natively:
            native_grad(*args)
        assert str(natively.value) == str(on_python.value)
        assert native_grad(*FINE) == pytest.approx(five_point_difference(checked, FINE, 0), rel=1e-7)


def logarithm(x):
    return math.log(x)


@pytest.mark.native
@needs_native
def test_a_nan_result_is_a_nan_after_a_failed_check():
    """A float result stands in NaN for a failed check (native/checks.py): a
    genuine NaN right after a failure is still a NaN, not a stale error."""
    failing, nan = irad.grad(checked, backend="native"), irad.value_and_grad(logarithm, backend="native")
    with pytest.raises(RuntimeCheckError):
        failing(0.5, 1, 0, 1)
    value, _ = nan(-1.0)
    assert math.isnan(value)
    assert failing(*FINE) == pytest.approx(five_point_difference(checked, FINE, 0), rel=1e-7)


@pytest.mark.native
@needs_native
def test_threads_fail_and_succeed_independently():
    g = irad.grad(checked, backend="native")
    expected = five_point_difference(checked, FINE, 0)
    errors, values = [], []

    def run():
        for _ in range(200):
            try:
                g(0.5, 1, 0, 1)
            except RuntimeCheckError as e:
                errors.append(str(e))
            values.append(g(*FINE))

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(errors) == 800 and all("integer division or modulo by zero" in e for e in errors)
    assert values == pytest.approx([expected] * 800, rel=1e-7)


# ---- the three ways an entry reports a failure ---------------------------------------
CONVENTIONS = """
func.func @status(%n: i64) {
  %zero = arith.constant 0 : i64
  %ok = arith.cmpi sge, %n, %zero : i64
  cf.assert %ok, "status: n is negative"
  func.return
}
func.func @out(%n: i64) -> i64 {
  %zero = arith.constant 0 : i64
  %ok = arith.cmpi sge, %n, %zero : i64
  cf.assert %ok, "out: n is negative"
  func.return %n : i64
}
func.func @flag(%n: i64) -> i1 {
  %zero = arith.constant 0 : i64
  %ok = arith.cmpi sge, %n, %zero : i64
  cf.assert %ok, "flag: n is negative"
  func.return %ok : i1
}
func.func @nan(%x: f64) -> f64 {
  %zero = arith.constant 0.0 : f64
  %ok = arith.cmpf uge, %x, %zero : f64
  cf.assert %ok, "nan: x is negative"
  func.return %x : f64
}
func.func @nan32(%x: f32) -> f32 {
  %zero = arith.constant 0.0 : f32
  %ok = arith.cmpf uge, %x, %zero : f32
  cf.assert %ok, "nan32: x is negative"
  func.return %x : f32
}
"""


@pytest.mark.native
@needs_native
def test_every_result_convention_reports_a_failure():
    module = native.compile_module(_parse(CONVENTIONS))
    for name, fine, bad, value in [("status", 3, -3, ()), ("out", 3, -3, (3,)), ("flag", 3, -3, (True,)),
                                   ("nan", 2.5, -2.5, (2.5,)), ("nan32", 2.5, -2.5, (2.5,))]:
        call = module.function(name)
        with pytest.raises(RuntimeCheckError, match=rf"^{name}: \w is negative$"):
            call(bad)
        assert call(fine) == value
    assert math.isnan(module.function("nan")(math.nan)[0])  # a NaN that passed its check


# ---- the rewrite ---------------------------------------------------------------------
RECURSIVE = """
func.func @entry(%x: f64, %n: i64) -> f64 {
  %r = func.call @rec(%x, %n) : (f64, i64) -> f64
  %s = func.call @leaf(%r) : (f64) -> f64
  func.return %s : f64
}
func.func private @rec(%x: f64, %n: i64) -> f64 {
  %zero = arith.constant 0 : i64
  %done = arith.cmpi eq, %n, %zero : i64
  %r = scf.if %done -> (f64) {
    scf.yield %x : f64
  } else {
    %one = arith.constant 1 : i64
    %m = arith.subi %n, %one : i64
    %y = func.call @rec(%x, %m) : (f64, i64) -> f64
    scf.yield %y : f64
  }
  func.return %r : f64
}
func.func private @leaf(%x: f64) -> f64 {
  %ok = arith.cmpf oge, %x, %x : f64
  cf.assert %ok, "leaf: x is NaN"
  func.return %x : f64
}
"""


def test_the_rewrite_leaves_no_assert_and_guards_only_the_cycle():
    module = _parse(RECURSIVE)
    guards = native_checks.guard(module)
    messages = guards.messages
    assert guards.depth_checked
    assert messages[0] == "leaf: x is NaN" and "maximum recursion depth exceeded in rec" in messages[1]
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    assert not any(isinstance(op, cf.AssertOp) for op in module.walk())

    def callees(name):
        return [op.callee.root_reference.data for op in functions[name].walk() if isinstance(op, func.CallOp)]

    assert callees("rec") == [native_checks.STACK_FLOOR, "rec.stack"]  # asks for the floor once
    assert callees("rec.stack") == [native_checks.STACK_CHECK, "rec.stack"]  # passes it on
    assert callees("entry") == ["rec", "leaf"]
    assert native_checks.STACK_CHECK not in callees("leaf")
    module.verify()


@pytest.mark.mlir
def test_the_rewritten_module_parses_in_mlir_opt():
    from irad.backends.native.mlir_tools import mlir_opt_parses, find_tool

    if find_tool("mlir-opt") is None:
        pytest.skip("needs mlir-opt")
    module = _parse(RECURSIVE)
    native_checks.guard(module)
    ok, diagnostics = mlir_opt_parses(str(module))
    assert ok, diagnostics


def test_a_second_specialisation_is_named_as_its_python_function():
    """is_odd_part calls is_even_part with numbers of either kind, not the entry's
    Python ones: a second specialisation, @is_even_part_1. Runaway recursion in it
    names is_even_part, and so do the functions generated from it."""
    from irad.ir.locations import recursion_message
    from irad.ir.metadata import PULLBACK, mark_generated

    module = irad.lower(is_even_part, 0.7, 3)
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    assert "is_even_part_1" in functions
    second = functions["is_even_part_1"]
    pullback = func.FuncOp("is_even_part_1.pullback", ([], []))
    mark_generated(pullback, second, PULLBACK)
    for fn in (*functions.values(), pullback):
        message = recursion_message(fn)
        assert "_1" not in message and re.search(r"exceeded in is_(even|odd)_part:", message), message
