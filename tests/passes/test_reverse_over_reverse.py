"""Reverse over reverse through the tape: loops, while loops, recursion and
checkpointing, differentiated twice by reverse mode (shadow tapes,
passes/ad/derivatives/tape.py).

Each second derivative is checked against central differences of irad's own
gradient (first order, itself checked against finite differences elsewhere),
against forward over reverse (irad.hessian), and where there is one against a
closed form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import irad
from irad.testing import central_difference
from tests.passes import test_control_flow as CF
from tests.passes.test_forward import CONTROL_FLOW, _floats

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.native)]


def sin_sum(x):
    s = 0.0
    for i in range(1, 6):
        s = s + math.sin(x * i)
    return s


def sin_sum_second(x):
    return sum(-(i * i) * math.sin(x * i) for i in range(1, 6))


def sin_sum_third(x):
    return sum(-(i**3) * math.cos(x * i) for i in range(1, 6))


def _close(a, b, rel=1e-9):
    return a == pytest.approx(b, rel=rel, abs=rel)


@pytest.mark.parametrize("f, args", CONTROL_FLOW, ids=lambda v: getattr(v, "__name__", ""))
def test_grad_of_grad_through_control_flow(f, args):
    """One Hessian row per float argument: grad(grad(f, i), wrt)."""
    wrt = tuple(_floats(args))
    h = irad.hessian(f, wrt)(*args)
    rows = h if isinstance(h, tuple) else (h,)
    for i in wrt:
        inner = irad.grad(f, i)
        row = irad.grad(inner, wrt)(*args)
        by_forward = rows[wrt.index(i)]
        by_forward = by_forward if isinstance(by_forward, tuple) else (by_forward,)
        for j, value, other in zip(wrt, row, by_forward):
            assert value == pytest.approx(central_difference(inner, args, j, [1.0]), rel=1e-5, abs=1e-6)
            assert _close(value, other)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("x", [0.7, -1.3])
def test_second_and_third_derivative_of_a_loop_closed_form(x, backend):
    assert _close(irad.grad(irad.grad(sin_sum), backend=backend)(x), sin_sum_second(x))
    third = irad.grad(irad.grad(irad.grad(sin_sum)), backend=backend)(x)
    assert _close(third, sin_sum_third(x))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    "f, args",
    [(CF.power_rec, (1.1, 5)), (CF.newton_sqrt, (2.5,)), (CF.tree_rec, (0.8, 4)), (CF.recursion_in_a_loop, (0.6, 3))],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_recursion_and_while_loops_on_both_backends(f, args, backend):
    inner = irad.grad(f)
    got = irad.grad(inner, backend=backend)(*args)
    assert got == pytest.approx(central_difference(inner, args, 0, [1.0]), rel=1e-5, abs=1e-6)


@pytest.mark.parametrize("inner_checkpoint, outer_checkpoint", [(True, False), (False, True), (True, True)])
def test_checkpointed_loops(inner_checkpoint, outer_checkpoint):
    for f, args in [(CF.nested_loops, (0.3, 4)), (CF.several_carried, (0.7, 1.1, 5))]:
        inner = irad.grad(f, checkpoint=inner_checkpoint)
        got = irad.grad(inner, checkpoint=outer_checkpoint)(*args)
        assert got == pytest.approx(central_difference(inner, args, 0, [1.0]), rel=1e-5, abs=1e-6)
    got = irad.grad(irad.grad(sin_sum, checkpoint=inner_checkpoint), checkpoint=outer_checkpoint)(0.7)
    assert _close(got, sin_sum_second(0.7))


@pytest.mark.parametrize(
    "compose",
    [
        lambda f: irad.jacrev(irad.jacrev(f)),
        lambda f: irad.jacrev(irad.grad(f)),
        lambda f: irad.grad(irad.jacrev(f)),
        lambda f: irad.jacfwd(irad.jacrev(f)),
    ],
    ids=["jacrev-jacrev", "jacrev-grad", "grad-jacrev", "jacfwd-jacrev"],
)
def test_jacobians_of_jacobians_through_a_loop(compose):
    assert _close(compose(sin_sum)(0.7), sin_sum_second(0.7))


def looped_tanh(a, n):
    s = 0.0
    v = a
    for _ in range(n):
        v = np.tanh(v * 1.1)
        s = s + np.sum(v * v)
    return s


WEIGHTS = np.array([1.0, 2.0, 3.0])


def weighted_gradient(a):
    return np.sum(irad.grad(looped_tanh)(a, 3) * WEIGHTS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_arrays_on_the_tape(backend):
    """The records hold tensors: their shadows are tensors too. grad of
    w . grad(f) is the Hessian-vector product H w."""
    a = np.array([0.3, -0.2, 0.5])
    got = irad.grad(weighted_gradient, backend=backend)(a)
    h = irad.hessian(looped_tanh)(a, 3)
    np.testing.assert_allclose(got, h @ WEIGHTS, rtol=1e-10, atol=1e-12)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1e-6
        fd = (weighted_gradient(a + e) - weighted_gradient(a - e)) / 2e-6
        assert got[k] == pytest.approx(fd, rel=1e-5, abs=1e-6)


def gradient_in_a_loop(x):
    total = 0.0
    for k in range(3):
        total = total + irad.grad(sin_sum)(x * (k + 1))
    return total


def test_a_program_calling_a_gradient_in_a_loop():
    """Each call's tape gets a shadow of its own."""
    got = irad.grad(gradient_in_a_loop)(0.4)
    want = sum((k + 1) * sin_sum_second(0.4 * (k + 1)) for k in range(3))
    assert _close(got, want)


@pytest.mark.native
def test_shadow_tapes_do_not_leak_natively():
    """Each call allocates tapes and shadows of ~0.5 MB: 100 leaked calls would be
    well over 50 MB of resident memory."""
    import os

    from irad.backends.native.mlir_tools import find_tool

    if find_tool("mlir-opt") is None or not os.path.exists("/proc/self/statm"):
        pytest.skip("needs mlir-opt and /proc")

    def resident() -> int:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    second = irad.grad(irad.grad(CF.loop_with_branch), backend="native")
    want = second(0.3, 20_000)
    before = resident()
    for _ in range(100):
        assert second(0.3, 20_000) == want
    assert resident() - before < 20 * 2**20


# ---- at the IR level: the pass applied to its own output --------------------------
SIN_SUM_IR = """
func.func @f(%x: f64, %n: index) -> f64 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f64
  %one = arith.constant 1.0 : f64
  %s = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %k = arith.addf %fi, %one : f64
    %xk = arith.mulf %x, %k : f64
    %sn = math.sin %xk : f64
    %next = arith.addf %acc, %sn : f64
    scf.yield %next : f64
  }
  func.return %s : f64
}
func.func @df(%x: f64, %n: index) -> f64 {
  %g = irad.grad @f(%x, %n) {wrt = [0]} : (f64, index) -> f64
  func.return %g : f64
}
"""

SECOND_REQUEST = """
func.func @d2(%x: f64, %n: index) -> f64 {
  %h = irad.grad @df(%x, %n) {wrt = [0]} : (f64, index) -> f64
  func.return %h : f64
}
"""


def test_the_pass_applied_to_its_own_output():
    """irad-differentiate, then a request on the gradient it generated, then
    irad-differentiate again: the second run differentiates the tape ops."""
    from xdsl.parser import Parser

    from irad.backends.python.translate import compile_module
    from irad.ir.dialect import make_context
    from irad.pipeline import run

    module = Parser(make_context(), SIN_SUM_IR).parse_module()
    run(module, "irad-differentiate")
    assert any(op.name == "irad.tape_push" for op in module.walk())
    second = Parser(make_context(), SECOND_REQUEST).parse_module()
    for op in list(second.ops):
        op.detach()
        module.body.block.add_op(op)
    run(module, "irad-differentiate")
    assert any(op.name == "irad.shadow_add" for op in module.walk())
    run(module, "irad-lower-tape,irad-optimize")
    module.verify()
    d2 = compile_module(module).function("d2")
    for x in (0.7, -1.3):
        assert _close(d2(x, 5)[0], sin_sum_second(x))
