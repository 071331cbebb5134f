"""Array residuals a reversed loop recomputes instead of recording
(passes/ad/reverse_loops.py, `_recompute_cheap`): a tensor made by one elementwise
`arith` op, a splat, a slice or a reshape from values the reversed iteration
has anyway (residuals recorded anyway, constants, values from outside the
loop no larger than the records they save). Every gradient is checked against central
differences in float64, on both backends, and the tape is measured."""

from __future__ import annotations

import numpy as np
import pytest

import irad
from tests.frontend.test_joins import BACKENDS
from tests.passes.test_control_flow import _tape_length
from tests.reference import central_difference


def check(f, args, argnums, backend):
    got = irad.grad(f, argnums=argnums, backend=backend)(*args)
    for i, g in zip(argnums, got):
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-6, atol=1e-8)


def sigmoid_loop(w, u, xs, n):
    """A carried array through sigmoid = 1 / (1 + exp(-x)): 1 + e and the
    quotient are one op each from exp's residual, and recomputed."""
    h = np.zeros(w.shape)
    for t in range(n):
        h = 1.0 / (1.0 + np.exp(-(xs[t] * w + h * u)))
    return np.sum(h * h)


def two_carried(w, xs, n):
    """Two carried arrays, a splat made inside the loop, a tanh and a product
    whose residuals are recorded, and squares recomputed from them."""
    c = np.ones(w.shape)
    h = np.zeros(w.shape)
    for t in range(n):
        g = np.tanh(xs[t] * w + h)
        s = g * g
        c = 0.5 * c + s * g
        h = c * (2.0 - s)
    return np.sum(h) + np.sum(c * c)


def nested(w, m, n):
    """A reversed loop inside a reversed loop: the inner body's sums are one
    op from the outer iteration's carried array."""
    a = w
    for i in range(m):
        b = a * 0.5
        for j in range(n):
            e = np.exp(-b * a)
            b = b / (1.0 + e)
        a = a + b * w
    return np.sum(a * a)


def sliced_rows(w, x, n):
    """x[t] is a slice of an argument that is a residual anyway (the last
    line uses it), so the slice is taken again in the reversed iteration."""
    h = w
    for t in range(n):
        h = np.sin(h * x[t]) + x[t] * w
    return np.sum(h) + np.sum(x * w)


def while_break(w, limit):
    """An scf.while whose body breaks on an array value."""
    h = w
    k = 0
    while k < 10:
        h = 1.0 / (1.0 + np.exp(-(h * w)))
        k = k + 1
        if np.sum(h) > limit:
            break
    return np.sum(h * w)


RNG = np.random.default_rng(7)
W, U, XS = 0.5 * RNG.normal(size=4), 0.5 * RNG.normal(size=4), RNG.normal(size=(5, 4))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 3, 5])
def test_sigmoid_loop(backend, n):
    check(sigmoid_loop, (W, U, XS, n), (0, 1), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 4])
def test_two_carried_arrays(backend, n):
    check(two_carried, (W, XS, n), (0, 1), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("m,n", [(0, 2), (1, 0), (1, 1), (2, 3)])
def test_nested_loops(backend, m, n):
    check(nested, (W, m, n), (0,), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n", [0, 1, 5])
def test_slices_of_a_residual_argument(backend, n):
    check(sliced_rows, (W, XS, n), (0, 1), backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("limit", [-100.0, 2.0, 100.0])  # breaks after 1 trip, a few, never
def test_while_with_a_break(backend, limit):
    check(while_break, (W, limit), (0,), backend)


def test_sigmoid_records_exp_the_carried_array_and_the_row():
    # per iteration, 4 slots each: exp's result, the carried h and xs[t] (a
    # row of an array not kept otherwise); 1 + e and the quotient are
    # recomputed from exp's result, the splat of 1.0 is made again (before:
    # five arrays, 20 slots)
    per_iteration = [_tape_length(sigmoid_loop, (W, U, XS, n), False) for n in (2, 4)]
    assert (per_iteration[1] - per_iteration[0]) // 2 == 3 * 4


def test_a_large_outside_array_is_not_read_for_a_slice():
    # xs (5x4) is not a residual otherwise: its slice xs[t] (4 numbers) stays
    # recorded rather than xs being kept for the reversed loop
    def f(w, xs, n):
        h = w
        for t in range(n):
            h = np.sin(h * xs[t])
        return np.sum(h)

    per_iteration = [_tape_length(f, (W, XS, n), False) for n in (2, 4)]
    assert (per_iteration[1] - per_iteration[0]) // 2 == 2 * 4  # h and xs[t]; sin's cos is no residual
    check(f, (W, XS, 3), (0, 1), "python")


def rows_of_an_argument(w, xs):
    """A loop over every row of xs, by a constant count: xs[t] is not
    recorded, xs is kept once and the reversed iteration takes its row again."""
    h = w
    for t in range(5):
        h = np.sin(h * xs[t]) + xs[t]
    return np.sum(h * h)


def test_the_rows_of_an_array_a_loop_runs_over_are_read_again():
    # per iteration h alone (4 slots); then the function's own record: the
    # last h, the loop's end and xs (20 slots), kept once. Before, every
    # iteration recorded xs[t] too: 5 x 8 slots + 5, where now 5 x 4 + 25.
    from tests.passes.test_control_flow import _augmented_tape

    tape, end = _augmented_tape(rows_of_an_argument, (W, XS), False)
    assert end == 5 * 4 + 4 + 1 + XS.size
    assert [tape[4 * t].shape for t in range(6)] == [(4,)] * 6
    np.testing.assert_array_equal(tape[25], XS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_rows_of_an_argument(backend):
    check(rows_of_an_argument, (W, XS), (0, 1), backend)
