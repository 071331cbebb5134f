"""Calls under a vmap mask: a helper called in an arm of a branch on a batched
condition, or in the body of a loop whose trip count varies along the batch,
takes the mask (BatchBuilder.call), so that its checks (assert, raise, and
those of the helpers it calls) hold only for the elements that take the path
of the call, as in a Python loop over the batch; values and gradients are
checked against that loop and central differences in float64."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import IradError
from irad.vmapping import explain_vmap


def check_pos(v):
    assert v > 0, "v must be positive"
    return np.log(v)


def logged(x):
    if x > 0:
        return check_pos(x)
    return x


def root_or_log(v):  # its own branch, and a nested helper with a check
    if v > 1.0:
        return np.sqrt(v - 1.0) + check_pos(v)
    return check_pos(v) * 0.5


def nested(x):
    if x > 0:
        return 2.0 * root_or_log(x)
    return -x


def item(v, n):
    if n < 0:
        raise ValueError("n must not be negative")
    assert n < len(v), "n out of range"
    return v[n]


def tail(v, n):  # its own loop, from a batched start, calling a checked helper
    s = 0.0
    for j in range(n, len(v)):
        s = s + item(v, j) * j
    return s


def looped(v, n):
    s = 0.0
    for i in range(n):  # a trip count per element: the body runs under a mask
        s = s + item(v, i) * check_pos(v[i] * v[i] + 1.0)
    return s


def guarded_tail(v, n):
    if n >= 0:
        return tail(v, n)
    return 0.0


def checked_only(x):  # a call made for its check alone (an arm without results)
    if x > 0.0:
        check_pos(x)
    return x * x


def while_calls(x):
    s = x
    while s < 10.0:
        s = s + 1.0 + check_pos(s)
    return s


def central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


XS = np.array([1.2, -2.0, 3.0, 0.5, 1.3, -0.7])  # away from the kinks, for differences
V = np.array([0.5, -1.0, 2.0, 1.5])
NS = np.array([0, 4, 2, -1, 3])


def close(got, expected):
    np.testing.assert_allclose(got, expected, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("f", [logged, nested, checked_only])
def test_helpers_with_checks_in_batched_arms(f):
    """An element that does not take the arm fails the helper's check on its
    own values; the check holds for the others, and so do the gradients."""
    close(irad.vmap(f)(XS), [f(x) for x in XS])
    expected = [central(f, x) for x in XS]
    close(irad.vmap(irad.grad(f))(XS), expected)
    close(irad.grad(lambda x: np.sum(irad.vmap(f)(x)))(XS), expected)


def test_helpers_in_masked_loops_and_with_their_own_loops():
    for f in (looped, guarded_tail):
        close(irad.vmap(f, in_axes=(None, 0))(V, NS), [f(V, n) for n in NS])
        grads = irad.vmap(irad.grad(f), in_axes=(None, 0))(V, NS)
        for g, n in zip(grads, NS):
            close(g, [central(lambda t: f(np.where(np.arange(4) == j, t, V), n), V[j]) for j in range(4)])
    xs = np.array([1.5, 2.0, 20.0])
    close(irad.vmap(while_calls)(xs), [while_calls(x) for x in xs])
    close(irad.vmap(irad.grad(while_calls))(xs), [central(while_calls, x) for x in xs])


def test_a_taking_element_that_fails_the_check_raises():
    """The mask narrows the check to the elements that take the arm: one of
    them failing it still raises, as the loop over the batch does."""
    def f(x, y):
        if x > 0:
            return check_pos(y)
        return y

    close(irad.vmap(f)(np.array([1.0, -1.0]), np.array([2.0, -3.0])), [np.log(2.0), -3.0])
    with pytest.raises(Exception, match="v must be positive"):
        irad.vmap(f)(np.array([1.0, 1.0]), np.array([2.0, -3.0]))


def test_the_masked_callee_takes_the_mask():
    """Only a callee that reaches a check is specialised: @check_pos takes the
    caller's mask, a helper without checks keeps its batched copy."""
    notes = explain_vmap(nested, np.array([1.0, -2.0]))
    assert "@root_or_log.vmap.b.masked (v batched, under the caller's mask)" in notes
    assert "@check_pos.vmap.b.masked (v batched, under the caller's mask)" in notes


def factorial(n):
    assert n >= 0, "n must not be negative"
    if n <= 1:
        return 1.0
    return n * factorial(n - 1)


def scaled_factorial(x, n):
    if x > 0:
        return x * factorial(n)
    return x


def test_recursion_on_shared_arguments_under_a_mask():
    """A call whose arguments the batch shares stays a plain call under a mask
    (its checks hold for every element or none, and the arm runs only where
    some element takes it): recursion on them works; on batched arguments it
    is refused by name, masked or not."""
    xs = np.array([1.0, -2.0, 3.0])
    close(irad.vmap(scaled_factorial, in_axes=(0, None))(xs, 4), [scaled_factorial(x, 4) for x in xs])
    with pytest.raises(IradError, match="calls itself with batched arguments"):
        irad.vmap(scaled_factorial)(xs, np.array([4, 2, 3]))


@seed(20261207)
@settings(max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(xs=st.lists(st.floats(-3.0, 3.0), min_size=1, max_size=4), ns=st.lists(st.integers(-1, 4), min_size=1,
                                                                                max_size=4))
def test_random_batches_against_a_loop(xs, ns):
    xs, ns = np.array(xs), np.array(ns)
    for f in (logged, nested, checked_only):
        close(irad.vmap(f)(xs), [f(x) for x in xs])
    for f in (looped, guarded_tail):
        try:
            expected = [f(V, n) for n in ns]
        except (AssertionError, ValueError, IndexError):  # the loop raises: irad must raise too
            with pytest.raises((IradError, AssertionError, ValueError, IndexError, RuntimeError)):
                irad.vmap(f, in_axes=(None, 0))(V, ns)
            continue
        close(irad.vmap(f, in_axes=(None, 0))(V, ns), expected)


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_masked_calls_natively():
    close(irad.vmap(nested, backend="native")(XS), [nested(x) for x in XS])
    close(irad.vmap(irad.grad(checked_only), backend="native")(XS), 2.0 * XS)
    close(irad.vmap(looped, in_axes=(None, 0), backend="native")(V, NS), [looped(V, n) for n in NS])
    close(irad.vmap(guarded_tail, in_axes=(None, 0), backend="native")(V, NS), [guarded_tail(V, n) for n in NS])
