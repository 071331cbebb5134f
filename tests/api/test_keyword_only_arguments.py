"""Keyword-only parameters (`def f(x, *, scale=1.0)`) called by keyword inside a
program, on both backends against closed forms; at the top level, through
functools.partial (the refusal's rewrite); bad calls name the keyword."""

import functools

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_refused


def scaled(x, *, scale=1.0, shift):
    return scale * np.sum(x * x) + shift


def calls_by_keyword(x, s):
    return scaled(x, scale=s, shift=1.0) + scaled(x, shift=2.0)


def misspelt(x):
    return scaled(x, shift=1.0, scal=2.0)  # <- refused


def missing(x):
    return scaled(x)  # <- refused


X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_only_parameters_at_a_call(backend):
    value, (gx, gs) = irad.value_and_grad(calls_by_keyword, argnums=(0, 1), backend=backend)(X, 3.0)
    assert value == pytest.approx(4.0 * X @ X + 3.0, rel=1e-14)
    np.testing.assert_allclose(gx, 2 * (3.0 + 1.0) * X, rtol=1e-14)
    assert gs == pytest.approx(X @ X, rel=1e-14)


def test_at_the_top_level_through_partial():
    with pytest.raises(irad.UnsupportedError, match="functools.partial"):
        irad.grad(scaled)(X, scale=3.0, shift=1.0)
    np.testing.assert_allclose(irad.grad(functools.partial(scaled, scale=3.0, shift=1.0))(X), 6.0 * X, rtol=1e-14)


def test_a_wrong_or_missing_keyword_is_named():
    check_refused(misspelt, (X,), "unexpected keyword argument 'scal'")
    check_refused(missing, (X,), "missing a required argument: 'shift'")
