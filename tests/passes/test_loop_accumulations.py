"""Accumulations sunk out of reversed loops (passes/sink_accumulations.py,
irad-sink-accumulations) and the constant trip counts of reversed loops
(passes/ad/reverse_loops.py, `static_trip_count`) that let it fire: every gradient is
checked against central differences in float64 on both backends, for trip
counts 0, 1, 3 and 5, unknown trip counts (an int argument, a while loop),
nested loops, accumulators the loop reads, and accumulators of a shape no
product makes. The IR is inspected to show which loops the rewrite took."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects import scf
from xdsl.dialects.linalg.ops import MatmulOp

import irad
from tests.frontend.test_joins import BACKENDS
from tests.reference import central_difference


def check(f, args, argnums, backend, rtol=1e-6):
    got = irad.grad(f, argnums=argnums, backend=backend)(*args)
    for i, g in zip(argnums, got):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=rtol, atol=1e-7)


def rnn(wx, wh, b, xs):
    """h_t = tanh(x_t Wx + h_{t-1} Wh + b): the reversed loop accumulates dWx,
    dWh (products of depth = batch) and db (a column sum)."""
    h = np.zeros((xs.shape[1], wh.shape[0]))
    for t in range(xs.shape[0]):
        h = np.tanh(xs[t] @ wx + h @ wh + b)
    return np.sum(h * h)


def rnn_args(steps, batch=2, inputs=3, hidden=4, seed=0):
    rng = np.random.default_rng(seed)
    return (0.5 * rng.normal(size=(inputs, hidden)), 0.5 * rng.normal(size=(hidden, hidden)),
            0.1 * rng.normal(size=hidden), rng.normal(size=(steps, batch, inputs)))


def pullback_loops(f, args, argnums) -> list[scf.ForOp]:
    module = irad.grad(f, argnums=argnums).lower(*args)
    return [op for op in module.walk() if isinstance(op, scf.ForOp) and "irad.tape_copy" not in op.attributes]


def products_inside(loop: scf.ForOp) -> int:
    return sum(isinstance(op, MatmulOp) for op in loop.body.walk())


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("steps", [0, 1, 3, 5])
def test_constant_trip_counts(steps, backend):
    check(rnn, rnn_args(steps), (0, 1, 2), backend)


def test_the_products_leave_the_reversed_loop():
    """The forward loop keeps its two products; the reversed one keeps only
    the one its carried cotangent needs (dh Whᵀ): dWx and dWh are one product
    each after it."""
    args = rnn_args(5)
    loops = pullback_loops(rnn, args, (0, 1, 2))
    assert [products_inside(loop) for loop in loops] == [2, 1]
    module = irad.grad(rnn, argnums=(0, 1, 2)).lower(*args)
    stacked = [op for op in module.walk() if op.name == "tensor.insert_slice" and op.parent_op() is loops[1]]
    assert len(stacked) == 3  # x_t, h_t and the gates' cotangent (shared by dWx, dWh and db)


def rnn_unknown(wx, wh, b, xs, n):
    h = np.zeros((xs.shape[1], wh.shape[0]))
    for t in range(n):
        h = np.tanh(xs[t] @ wx + h @ wh + b)
    return np.sum(h * h)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 3])
def test_unknown_trip_count(n, backend):
    """An int argument as the bound: the count is only known at run time, and
    the accumulations stay in the loop."""
    args = (*rnn_args(3), n)
    check(rnn_unknown, args, (0, 1, 2), backend)
    assert [products_inside(loop) for loop in pullback_loops(rnn_unknown, args, (0, 1, 2))] == [2, 3]


def rnn_while(wx, wh, b, xs):
    h = np.zeros((xs.shape[1], wh.shape[0]))
    t = 0
    while t < xs.shape[0]:
        h = np.tanh(xs[t] @ wx + h @ wh + b)
        t = t + 1
    return np.sum(h * h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop(backend):
    check(rnn_while, rnn_args(3), (0, 1, 2), backend)


def nested(w, xs):
    """An inner loop whose reversal accumulates dW, inside an outer one."""
    h = np.ones((xs.shape[1], w.shape[0]))
    for i in range(2):
        for t in range(xs.shape[0]):
            h = np.tanh(h @ w + xs[t])
        h = 0.5 * h
    return np.sum(h * h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nested_loops(backend):
    rng = np.random.default_rng(1)
    check(nested, (0.4 * rng.normal(size=(3, 3)), rng.normal(size=(4, 2, 3))), (0, 1), backend)


def read_inside(w, xs):
    """The weight's cotangent is read inside the loop (a product that is also
    the carried value's): nothing can be sunk that the loop reads."""
    a = np.eye(w.shape[0])
    for t in range(xs.shape[0]):
        a = a + a @ (w * xs[t])
    return np.sum(a * a)


@pytest.mark.parametrize("backend", BACKENDS)
def test_accumulator_read_inside(backend):
    rng = np.random.default_rng(2)
    check(read_inside, (0.3 * rng.normal(size=(3, 3)), rng.normal(size=(4, 3, 3))), (0, 1), backend)


def elementwise_weights(w, v, xs):
    """Accumulators of a shape no product makes: dw is a sum of elementwise
    products (stays in the loop), dv a column sum (sunk)."""
    h = np.zeros(xs.shape[1:])
    for t in range(xs.shape[0]):
        h = np.sin(h * w + xs[t]) + v
    return np.sum(h * h)


@pytest.mark.parametrize("backend", BACKENDS)
def test_accumulators_of_other_shapes(backend):
    rng = np.random.default_rng(3)
    check(elementwise_weights, (rng.normal(size=(2, 3)), rng.normal(size=3), rng.normal(size=(5, 2, 3))),
          (0, 1), backend)


@settings(max_examples=15, deadline=None)
@given(steps=st.integers(0, 6), batch=st.integers(1, 3), hidden=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_sunk_products_match_central_differences(steps, batch, hidden, seed):
    check(rnn, rnn_args(steps, batch, 2, hidden, seed), (0, 1, 2), "python")


def left_weight(w, xs):
    """h_t = tanh(W h_{t-1} + x_t): dW += g_t h_{t-1}ᵀ, whose left factor is no
    transpose, so the stack holds g_t side by side (columns)."""
    h = np.ones(xs.shape[1:])
    for t in range(xs.shape[0]):
        h = np.tanh(w @ h + xs[t])
    return np.sum(h * h)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("steps", [1, 4])
def test_left_factor_stacked_in_columns(steps, backend):
    rng = np.random.default_rng(4)
    args = (0.4 * rng.normal(size=(3, 3)), rng.normal(size=(steps, 3, 2)))
    check(left_weight, args, (0, 1), backend)
    if steps > 1:  # (one trip: canonicalization inlines a loop body)
        assert [products_inside(loop) for loop in pullback_loops(left_weight, args, (0, 1))] == [1, 1]
