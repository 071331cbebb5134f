"""Sums of slices written into zeros, joined into concatenations
(passes/join_slice_sums.py, in irad-optimize): gradients of programs that read a
tensor in slices, checked against central differences in float64 on both
backends, and the IR inspected for which sums became a `tensor.concat`."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import tensor

import irad
from tests.backends.test_backend_native import BENCH_ARRAYS
from tests.frontend.test_joins import BACKENDS
from tests.reference import central_difference


def check(f, args, argnums, backend):
    got = irad.grad(f, argnums=argnums, backend=backend)(*args)
    for i, g in zip(argnums, got):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-7)


def concats(f, args, argnums) -> int:
    module = irad.grad(f, argnums=argnums).lower(*args)
    return sum(isinstance(op, tensor.ConcatOp) for op in module.walk())


def gates(w, x):
    """Four gates read as column blocks of one product, as an LSTM reads them."""
    z = x @ w
    n = w.shape[1] // 4
    a = 1.0 / (1.0 + np.exp(-z[:, 0:n]))
    b = np.tanh(z[:, n:2 * n])
    c = np.cos(z[:, 2 * n:3 * n])
    d = np.sin(z[:, 3 * n:4 * n])
    return np.sum(a * b + c * d)


def rows(v):
    """Row blocks of a vector, in an order other than their offsets'."""
    return np.sum(np.exp(v[2:5])) + np.sum(v[0:2] * v[0:2]) + np.sum(np.sin(v[5:6]))


def gap(v):
    """Slices that leave v[2:3] out: the zeros stay."""
    return np.sum(v[0:2] * v[0:2]) + np.sum(np.exp(v[3:6]))


def overlap(v):
    """Overlapping slices: their cotangents add where they meet."""
    return np.sum(v[0:4] * v[0:4]) + np.sum(np.exp(v[2:6]))


lstm_loop = BENCH_ARRAYS["make_lstm_loop"](np)  # make bench's LSTM loop: four gates, column blocks of one sum


rng = np.random.default_rng(0)
GATES = (0.5 * rng.normal(size=(3, 8)), rng.normal(size=(2, 3)))
VECTOR = (rng.normal(size=6),)
LSTM = (0.3 * rng.normal(size=(3, 16)), 0.3 * rng.normal(size=(4, 16)), 0.1 * rng.normal(size=16),
        rng.normal(size=(3, 2, 3)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("f", "args", "argnums", "joined"), [
    (gates, GATES, (0, 1), 1),
    (rows, VECTOR, (0,), 1),
    (gap, VECTOR, (0,), 0),
    (overlap, VECTOR, (0,), 0),
    (lstm_loop, LSTM, (0, 1, 2, 3), 1),
])
def test_gradients(f, args, argnums, joined, backend):
    check(f, args, argnums, backend)
    assert concats(f, args, argnums) == joined


def test_a_chain_of_slices_deeper_than_the_recursion_limit_is_joined():
    """An unrolled loop's gradient (a list appended 1500 times, say) sums one slice
    per iteration in a chain deeper than Python's recursion limit."""
    from xdsl.context import Context
    from xdsl.dialects import arith, builtin, func

    from irad.passes.join_slice_sums import JoinSliceSumsPass
    from irad.ir import tensor as T

    n = 1500  # beyond Python's recursion limit
    block = builtin.Block(arg_types=[builtin.TensorType(builtin.f64, [1])] * n)
    em = block.add_op
    zeros = arith.ConstantOp(builtin.DenseIntOrFPElementsAttr.from_list(builtin.TensorType(builtin.f64, [n]), [0.0]))
    em(zeros)
    total = None
    for k, piece in enumerate(block.args):
        inserted = tensor.InsertSliceOp.get(piece, zeros.result, [1], static_offsets=[k], static_strides=[1])
        em(inserted)
        if total is None:
            total = inserted.result
        else:
            add = arith.AddfOp(total, inserted.result)
            em(add)
            total = add.result
    em(func.ReturnOp(total))
    module = builtin.ModuleOp([func.FuncOp("chain", ([a.type for a in block.args], [total.type]),
                                           builtin.Region(block))])
    JoinSliceSumsPass().apply(Context(), module)
    (concat,) = [op for op in module.walk() if isinstance(op, tensor.ConcatOp)]
    assert list(concat.operands) == list(block.args) and T.shape(concat.result) == (n,)
