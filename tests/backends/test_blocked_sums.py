"""Blocked sums (irad/backends/blocked_sums.py), natively and on IREE: long
float sums, in the primal and in the adjoint, are within numpy's kind of error
bound, not the n * eps of one in-order chain; the rewrite leaves no long chain,
and takes no memory in proportion to the data (its partial sums start from
zeros filled in, not a dense constant).

Values are checked against math.fsum of the float64 elements (exact but for
one rounding), with uniform inputs in [0, 1), for which one in-order float32
chain of 10^6 elements is off by about 7e-6 (bench/float32_sums.py).
"""

import math
import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad.backends import blocked_sums
from irad.backends.iree import compile as iree
from irad.backends.native import compile as native
from tests.reference import NATIVE_MISSING

IREE_MISSING = iree.unavailable_reason()


NATIVE = [pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))]
IREE = [pytest.mark.iree, pytest.mark.skipif(IREE_MISSING is not None, reason=str(IREE_MISSING))]


EPS32 = float(np.finfo(np.float32).eps)
# (SEQUENTIAL + 15 per level) roundings, a level per factor of 2 at worst
BOUND = (blocked_sums.SEQUENTIAL + 15 * 24) * EPS32


def sums(a, b, c, d):
    """A full sum with a tail (10^6 + 3 is prime), a sum over rows with a
    tail, a row sum that blocks evenly, and a sum over two adjacent axes."""
    return np.sum(a), np.sum(b, axis=0), np.sum(c, axis=1), np.sum(d, axis=(1, 2))


def _exact(x, axes):
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axes, range(-len(axes), 0))
    flat = x.reshape(*x.shape[:x.ndim - len(axes)], -1)
    return np.vectorize(math.fsum, signature="(n)->()")(flat), np.sum(np.abs(flat), axis=-1)


COMPILERS = [pytest.param(native.compile_module, id="native", marks=NATIVE),
             pytest.param(iree.compile_module, id="iree", marks=IREE)]


@pytest.mark.parametrize("compile_module", COMPILERS)
def test_long_float32_sums_are_within_a_logarithmic_bound(compile_module):
    rng = np.random.default_rng(3)
    args = [rng.random(shape).astype(np.float32) for shape in [(1_000_003,), (3001, 5), (3, 4096), (2, 30, 50)]]
    got = compile_module(irad.lower(sums, *args)).function("sums")(*args)
    for value, x, axes in zip(got, args, [(0,), (0,), (1,), (1, 2)]):
        exact, magnitude = _exact(x, axes)
        assert np.all(np.abs(np.asarray(value, dtype=np.float64) - exact) <= BOUND * magnitude)
    # the in-order chain is far outside numpy's bound here (7e-6 relative): the test tells them apart
    assert abs(float(got[0]) - _exact(args[0], (0,))[0]) < 1e-6 * _exact(args[0], (0,))[0]


def weighted(w, x):
    return np.mean(np.sin(x) * w)


@pytest.mark.parametrize("backend", [pytest.param("native", marks=NATIVE), pytest.param("iree", marks=IREE)])
def test_a_long_sum_in_the_adjoint_is_blocked_too(backend):
    """The gradient of w, broadcast over 200,000 rows, is a column sum of the
    cotangent (the adjoint of the broadcast); the mean's value is a long sum."""
    rng = np.random.default_rng(4)
    x = rng.random((200_000, 3)).astype(np.float32)
    w = np.array([0.5, 1.0, 2.0], dtype=np.float32)
    value, g = irad.value_and_grad(weighted, backend=backend)(w, x)
    s = np.sin(x.astype(np.float64))
    columns = np.array([math.fsum(c) for c in s.T]) / x.size
    assert g.dtype == np.float32
    assert np.all(np.abs(g - columns) <= 1e-6 * columns)
    exact = math.fsum((s * w.astype(np.float64)).ravel()) / x.size
    assert abs(value - exact) <= 1e-6 * exact


def _sum_lengths(module):
    return [int(np.prod([op.input.type.get_shape()[a] for a in op.dimensions.get_values()]))
            for op in module.walk() if blocked_sums._is_sum(op)]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 3000), min_size=1, max_size=3), st.data())
def test_no_sum_is_left_longer_than_the_in_order_block(dims, data):
    """Whatever the shape and the adjacent axes summed, the rewritten module
    verifies, and every remaining sum adds at most SEQUENTIAL elements."""
    first = data.draw(st.integers(0, len(dims) - 1))
    last = data.draw(st.integers(first, len(dims) - 1))
    x = np.broadcast_to(np.float32(0), dims)  # only its dtype and shape matter: no memory
    module = irad.lower(lambda x: np.sum(x, axis=tuple(range(first, last + 1))), x)
    blocked_sums.block_sums(module)
    module.verify()
    assert max(_sum_lengths(module)) <= blocked_sums.SEQUENTIAL


def test_the_partial_sums_start_from_zeros_that_take_no_memory():
    """Zeros filled in, not a dense constant, which xDSL holds element by
    element: the property test above lowers sums of up to 2.7 * 10^10
    elements, whose partial sums (1/16 to 1/2 of them) took up to 15 GB
    in the compiler, and a test worker was killed for memory."""
    x = np.broadcast_to(np.float32(0), (4096, 4096))  # partial sums: 256 x 4096 float32, 4 MB
    module = irad.lower(lambda x: np.sum(x, axis=0), x)
    tracemalloc.start()
    try:
        blocked_sums.block_sums(module)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert max(_sum_lengths(module)) <= blocked_sums.SEQUENTIAL
