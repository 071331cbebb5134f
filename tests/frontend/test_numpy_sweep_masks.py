"""Every entry of the numpy table on bool and int arguments: numpy's value, or a refusal.

The float sweep (test_numpy_sweep.py) checks each function's value and
derivative on floats. numpy treats bools and ints apart: a bool's `+` is `or`,
np.diff of bools is `!=`, np.pad keeps the dtype, some functions raise on bools
(np.ptp subtracts), and ints stay ints. Here each of a function's first cases
runs with every float argument replaced by a random bool array (a Python bool
for a number), and again by a small int array (a Python int), and irad's
result (python backend) must be numpy's:

* numpy raises: irad raises too (a refusal or another error), never a value;
* irad refuses (UnsupportedError): allowed, counted; a floor keeps it honest;
* both give a value: the same shape and values (NaN where numpy's is), and a
  bool where numpy's is a bool, a float where numpy's is a float; where numpy's
  is an int, irad may hold it as a float (irad/frontend/held_ints.py).

Each deviation this sweep found was silently wrong before: np.diff of a mask
subtracted, np.pad of a mask filled with ints, the python backend held a bool
splat as the int 0 (np.diag, np.triu of masks gave ints), np.convolve of masks
counted, np.trapezoid of a mask added them, np.ptp and np.cross of masks gave
values where numpy raises."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import irad
from tests.frontend.test_numpy_sweep import CASES, INDEX, SWEEP, _flat, _name
from tests.reference import BACKENDS

CASES_PER_FUNCTION = 2
KINDS = {"bool": lambda rng, shape: rng.uniform(size=shape) < 0.5,
         "int": lambda rng, shape: rng.integers(-3, 4, size=shape)}


def _argument(rng, shape, kind):
    value = KINDS[kind](rng, shape)
    return value.item() if shape == () else value


def _numpy(f, xs):
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            return f(*xs), None
    except Exception as error:  # noqa: BLE001 - numpy refusing these dtypes: irad must not give a value
        return None, error


def _same(got, want, label):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), label
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (label, g.shape, w.shape)
        if w.dtype.kind == "b":
            assert g.dtype.kind == "b", (label, "numpy's result is a bool", g.dtype)
        if w.dtype.kind == "f":
            assert g.dtype.kind == "f", (label, "numpy's result is a float", g.dtype)
        close = 1e-3 if w.dtype == np.float16 else 1e-9  # numpy's float16 of bools and int8s: irad's float64
        np.testing.assert_allclose(g.astype(np.float64), w.astype(np.float64), rtol=close, atol=close,
                                   equal_nan=True, err_msg=label)


def _outcome(fn, kind) -> tuple[int, int, list[str]]:
    """(values, refusals, deviations) of `fn`'s first cases on `kind` arguments."""
    rng = np.random.default_rng(sum(map(ord, _name(fn) + kind)))
    values, refusals, deviations = 0, 0, []
    for j, case in enumerate(SWEEP[fn][:CASES_PER_FUNCTION]):
        f = getattr(CASES, f"case_{INDEX[id(fn)]}_{j}")
        label = f"{case.label()} on {kind}s"
        xs = [_argument(rng, shape, kind) for shape, _ in case.args.values()]
        want, raised = _numpy(f, xs)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                got = irad.vjp(f, *xs)[0]
        except irad.UnsupportedError:
            refusals += 1
            continue
        except Exception as error:  # noqa: BLE001 - a run-time check failing where numpy raised
            if raised is None:
                deviations.append(f"{label}: irad raised {error!r} where numpy gives a value")
            continue
        if raised is not None:
            deviations.append(f"{label}: numpy raises {raised!r}, irad gave {got!r}")
            continue
        try:
            _same(got, want, label)
            values += 1
        except AssertionError as error:
            deviations.append(f"{label}: {error}")
    return values, refusals, deviations


@pytest.mark.parametrize("kind", list(KINDS))
def test_numpy_functions_of_masks_and_ints(kind):
    """One test per kind over the whole table, so that the floor counts every case."""
    values, refusals, deviations = 0, 0, []
    for fn in SWEEP:
        v, r, d = _outcome(fn, kind)
        values, refusals, deviations = values + v, refusals + r, deviations + d
    assert not deviations, "\n".join(deviations)
    assert values >= 150, (values, refusals)  # refusing everything cannot pass


def weighted(x, w):
    return np.average(x, axis=0, weights=w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_weights_summing_to_zero_raise_as_numpy(backend):
    """numpy raises ZeroDivisionError; irad gave inf (found by the int sweep above)."""
    x, w = np.ones((2, 3)), np.array([1.5, -1.5])
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        weighted(x, w)
    with pytest.raises(ZeroDivisionError, match="Weights sum to zero"):
        irad.vjp(weighted, x, w, backend=backend)
    np.testing.assert_allclose(irad.vjp(weighted, x, np.array([1.0, 3.0]), backend=backend)[0], np.ones(3))


def python_bools_subtracted(x, y):
    return ((x > 0) - (y > 0)) * x + (True - (x > y)) * y  # Python's bools count: no numpy TypeError


@pytest.mark.parametrize("backend", BACKENDS)
def test_operators_on_python_bools_are_pythons(backend):
    for args in ((1.0, -1.0), (-1.0, 2.0)):
        value, grads = irad.value_and_grad(python_bools_subtracted, (0, 1), backend=backend)(*args)
        assert value == python_bools_subtracted(*args)
