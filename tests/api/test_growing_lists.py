"""A list grown over a run-time trip count (issue 32): refused at the loop's
line, saying the trip count is run-time and where it became so (the chain of
calls), with the two rewrites, each of which then runs: a preallocated array
written row by row, and the trip count made static."""

import re

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, refused_line

T_MAX = 8
X = np.array([0.1, 0.2])


def grown(x, n):
    hs = []
    h = x
    for _ in range(n):  # <- refused
        h = np.tanh(h * 0.9)
        hs.append(h)
    return np.stack(hs)


def through_a_helper(x, n):
    return np.sum(grown(x, n * 2))


def grown_in_a_while(x, n):
    hs = []
    t = 0
    while t < n:  # <- refused
        hs.append(x * t)
        t += 1
    return np.sum(np.stack(hs))


def preallocated(x, n):
    hs = np.zeros((T_MAX, 2))
    h = x
    for t in range(n):
        h = np.tanh(h * 0.9)
        hs[t] = h
    return np.sum(hs)


def rows(x, n):
    return np.sum(grown(x, n))


def test_the_refusal_names_the_chain_and_the_rewrites():
    with pytest.raises(irad.UnsupportedError) as info:
        irad.grad(through_a_helper)(X, 3)
    text = str(info.value)
    assert re.match(rf"\S*test_growing_lists\.py:{refused_line(grown)}:\d+: this loop changes the list 'hs'", text)
    assert "known only at run time" in text
    assert f"'n' is passed to {__name__}.grown at" in text and "argument 1 of the entry function" in text
    assert "static_argnums=(1,)" in text and "np.zeros((T_MAX, n))" in text


def test_a_while_loop_is_refused_with_its_rewrites():
    with pytest.raises(irad.UnsupportedError, match=r"`while` loop changes the list 'hs'") as info:
        irad.grad(grown_in_a_while)(X, 3)
    assert "np.zeros((T_MAX, n))" in str(info.value) and "for t in range(T)" in str(info.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_rewrites_run(backend):
    expected = central_difference(rows, (X, 3), 0)
    np.testing.assert_allclose(irad.grad(preallocated, backend=backend)(X, 3), expected, rtol=1e-8)
    np.testing.assert_allclose(irad.grad(rows, static_argnums=1, backend=backend)(X, 3), expected, rtol=1e-8)
