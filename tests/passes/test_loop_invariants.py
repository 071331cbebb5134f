"""irad-hoist-loop-invariants (passes/hoist_loop_invariants.py): a loop's invariant
array code is computed once, before it. The gradients of loops whose reversed
and augmented steps have such code are checked against central differences in
float64 on both backends, and the code left in the loops is inspected."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import scf

import irad
from tests.frontend.test_joins import BACKENDS
from tests.reference import central_difference


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def recurrent(wx, wh, b, xs):
    """A small LSTM-like loop: the broadcast of b (augmented primal) and the
    transpose of wh (`g @ whᵀ` in the reversed step) are loop-invariant."""
    n = wh.shape[0]
    h = np.zeros((xs.shape[1], n))
    c = np.zeros((xs.shape[1], n))
    for t in range(xs.shape[0]):
        gates = xs[t] @ wx + h @ wh + b
        c = sigmoid(gates[:, 0:n]) * c + np.tanh(gates[:, n:2 * n])
        h = sigmoid(gates[:, 2 * n:3 * n]) * np.tanh(c)
    return np.sum(h * h)


def runtime_count(w, b, xs, n):
    """A loop of a count known only at run time, which may be 0: the hoisted
    broadcast is computed for nothing then, and the gradient is still right."""
    h = np.zeros(w.shape[1])
    for t in range(n):
        h = np.tanh(xs[t] @ w + b + h)
    return np.sum(h) + np.sum(b * b)


RNG = np.random.default_rng(3)
N, INPUTS, STEPS, BATCH = 3, 2, 4, 2
ARGS = (0.4 * RNG.normal(size=(INPUTS, 3 * N)), 0.4 * RNG.normal(size=(N, 3 * N)), 0.1 * RNG.normal(size=3 * N),
        RNG.normal(size=(STEPS, BATCH, INPUTS)))


def check(f, args, argnums, backend):
    got = irad.grad(f, argnums=argnums, backend=backend)(*args)
    for i, g in zip(argnums, got):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_recurrent_loop(backend):
    check(recurrent, ARGS, (0, 1, 2, 3), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loop_of_a_runtime_count(backend, n):
    w, b, xs = 0.5 * RNG.normal(size=(2, 3)), 0.1 * RNG.normal(size=3), RNG.normal(size=(3, 2))
    check(runtime_count, (w, b, xs, n), (0, 1), backend)


def test_no_broadcast_or_transpose_is_left_in_a_loop():
    module = irad.grad(recurrent, (0, 1, 2)).lower(*ARGS)
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp)]
    assert loops
    inside = {inner.name for loop in loops for inner in loop.body.walk()}
    assert "linalg.transpose" not in inside and "linalg.broadcast" not in inside
    assert "linalg.transpose" in {op.name for op in module.walk()}  # whᵀ, once
