"""NaN, inf and -inf through numpy functions: numpy's values, on both backends.

Each of these gave another value before; the sweep of every numpy-table entry on
special values (test_numpy_sweep_masks.py, kind "special") found the last four:
- np.sign(NaN) was 0 (its comparisons are false for NaN), numpy's is NaN;
- np.logaddexp and np.logaddexp2 of (-inf, -inf) and (inf, inf) were NaN
  (inf - inf inside), numpy's are -inf and inf;
- np.einsum('ii', x) multiplied by an identity mask, so an inf off the
  diagonal made the trace NaN;
- np.polyval started from the first coefficient, numpy's Horner from 0, whose
  0 * inf is its NaN at x = inf;
- np.interp multiplied by a one-hot of the interval, so an inf in any other
  interval made every result NaN."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS

INF, NAN = np.inf, np.nan


def sign_of(x):
    return np.sign(x)


def logaddexps(x, y):
    return np.stack([np.logaddexp(x, y), np.logaddexp2(x, y)])


def traces(a):
    return np.stack([np.einsum("ii", a), np.sum(np.einsum("ii->i", a)), np.einsum("iij->j", a[:, :, None] * 1.0)[0]])


def polynomial(p, x):
    return np.polyval(p, x)


def interpolated(x, fp):
    return np.interp(x, np.array([-1.0, 0.0, 0.5, 2.0]), fp)


CASES = [
    (sign_of, (np.array([NAN, -0.0, 0.0, INF, -INF, -2.0]),)),
    (logaddexps, (np.array([-INF, INF, -INF, NAN, 1.0, INF]), np.array([-INF, INF, 1.0, 1.0, -INF, -INF]))),
    (traces, (np.array([[1.0, INF, 2.0], [NAN, 3.0, -INF], [0.5, 1.0, 4.0]]),)),
    (polynomial, (np.array([0.0, 1.5, -2.0, 3.0]), np.array([INF, -INF, NAN, 2.0, 0.0]))),
    (interpolated, (np.array([-0.5, 0.25, 1.0, 3.0]), np.array([1.0, 2.0, 3.0, INF]))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("f, args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_special_values_give_numpys(f, args, backend):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        want = f(*args)
        got = irad.vjp(f, *args, backend=backend)[0]
    np.testing.assert_array_equal(got, want)  # NaN where numpy's is NaN
    assert np.array_equal(np.signbit(got), np.signbit(want))
