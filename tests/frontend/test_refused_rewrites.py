"""Constructs irad refuses, each by name with why and the rewrite (issue 32): numpy
functions whose result's length depends on the data (np.unique, np.nonzero, a
run-time boolean mask), ones that call a Python function per element or row
(np.frompyfunc, np.piecewise), np.histogram, generator
functions, `global`, and f-strings of run-time values in print.

Every refusal names its file:line; every rewrite its hint gives runs here, on
both backends, against numpy's value of the refused program and central
differences (irad/frontend/library_refusals.py lists the numpy ones)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_against_numpy, check_refused, refused_line

X = np.array([0.3, -1.2, 2.0, 0.7, 0.3, 2.0])
M = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


# ---- refused, with the program numpy runs --------------------------------------------------------
def mask_indexing(x):
    """A reduction takes x[m] (test_masked_reads.py); np.sort does not."""
    return np.sort(x[x > 0]).mean()  # <- refused


def nonzero_sum(x):
    return x[np.nonzero(x > 0)].sum()  # <- refused


def argwhere_count(x):
    return np.argwhere(x > 0).shape[0] * x[0]  # <- refused


def unique_sum(x):
    return np.unique(x).sum()  # <- refused


def histogram_weighted(x):
    counts, _ = np.histogram(x, bins=3)  # <- refused
    return np.sum(counts * np.arange(3.0)) * np.sum(x)


def _square_or_negate(v):
    return v * v if v > 0 else -v


def frompyfunc_sum(x):
    return np.frompyfunc(_square_or_negate, 1, 1)(x).astype(float).sum()  # <- refused


def _row_energy(r):
    return np.sum(r * r) + r[0]


def along_rows(m):
    return np.apply_along_axis(_row_energy, 1, m).sum()  # runs since programs3 (irad/numpy_python.py)


def piecewise_sum(x):
    return np.piecewise(x, [x < 0, x >= 0], [lambda v: -v, lambda v: v * v]).sum()  # <- refused


def _doubled(x):
    for i in range(3):
        yield x[i] * 2.0  # <- refused


def generator_sum(x):
    return sum(_doubled(x))


def first_sufficient_step(x):
    g = 2.0 * x
    t = 1.0
    for _ in range(20):
        candidate = x - t * g
        if np.sum(candidate ** 2) <= 0.9 * np.sum(x ** 2):
            break
        t = t * 0.5
    else:
        raise ValueError("no sufficient decrease")
    return np.sum(candidate ** 2) + t  # runs now (control_flow.assigned_first); the rewrite still gives its value


def nonlocal_total(x):  # runs now (irad/frontend/nonlocal_writes.py); its rewrite still gives its value
    total = 0.0

    def add(v):
        nonlocal total
        total += v

    for i in range(3):
        add(x[i] * x[i])
    return total


CALLS = 0


def global_count(x):
    global CALLS  # <- refused
    CALLS = 3
    return x.sum() * CALLS


def filtered(x):
    return sum(filter(lambda v: v > 0, x))  # <- refused


def fsum(x):
    return math.fsum(x)  # <- refused


def printed(x):
    s = x.sum()
    print(f"s = {s:.3f}")  # <- refused
    return s


REFUSED = [
    (mask_indexing, X, "indexing with a boolean mask computed at run time"),
    (nonzero_sum, X, "numpy.nonzero is not supported: its result's length depends on the data"),
    (argwhere_count, X, "numpy.argwhere is not supported: its result's length depends on the data"),
    (unique_sum, X, "numpy.unique is not supported: its result's length depends on the data"),
    (histogram_weighted, X, "numpy.histogram is not supported"),
    (frompyfunc_sum, X, "numpy.frompyfunc is not supported"),
    (piecewise_sum, X, "numpy.piecewise is not supported"),
    (generator_sum, X, "a generator function \\(`yield`\\) is not supported"),
    (global_count, X, "a `global` statement \\(a write to a module's variable"),
    (printed, X, "an f-string formats values known while lowering"),
    (filtered, X, "filter is not supported: its result's length depends on what the predicate says"),
    (fsum, X, "math.fsum is not supported: its sum is correctly rounded"),
]


@pytest.mark.parametrize("f, x, message", REFUSED, ids=[c[0].__name__ for c in REFUSED])
def test_refusal_names_the_line_and_the_rewrite(f, x, message):
    if f is generator_sum:  # the refused line is the generator's
        with pytest.raises(irad.UnsupportedError, match=message) as info:
            irad.lower(f, x)
        assert f"test_refused_rewrites.py:{refused_line(_doubled)}:" in str(info.value)
        return
    check_refused(f, (x,), message)


# ---- the rewrites the hints give, each with the refused program's value ---------------------------
def mask_rewritten(x):
    m = x > 0
    return np.sum(np.where(m, x, 0.0)) / np.sum(m)


def nonzero_rewritten(x):
    return np.sum(np.where(x > 0, x, 0.0))


def argwhere_rewritten(x):
    return np.sum(x > 0) * x[0]


def unique_rewritten(x):
    s = np.sort(x)
    first = np.concatenate((np.array([True]), s[1:] != s[:-1]))
    return np.sum(np.where(first, s, 0.0))


def histogram_rewritten(x):
    edges = np.linspace(np.min(x), np.max(x), 4)
    upper = np.concatenate((edges[1:-1], np.array([np.inf])))
    counts = np.sum((x[:, None] >= edges[:-1]) & (x[:, None] < upper), axis=0)
    return np.sum(counts * np.arange(3.0)) * np.sum(x)


def vectorize_rewritten(x):
    return np.sum(irad.vmap(_square_or_negate)(x))


def vectorize_by_numpy(x):
    return np.sum(np.vectorize(_square_or_negate, otypes=[float])(x))


def vectorize_rewritten_matrix(m):
    return np.sum(np.reshape(irad.vmap(_square_or_negate)(np.ravel(m)), m.shape) * np.arange(6.0).reshape(2, 3))


def along_rows_rewritten(m):
    return np.sum(irad.vmap(_row_energy)(m))


def along_columns_rewritten(m):
    return np.sum(irad.vmap(_row_energy)(m.T))


def piecewise_rewritten(x):
    return np.sum(np.where(x < 0, -x, x * x))


def _doubled_list(x):
    out = []
    for i in range(3):
        out.append(x[i] * 2.0)
    return out


def generator_rewritten(x):
    return sum(_doubled_list(x))


def generator_expression_rewritten(x):
    return sum(x[i] * 2.0 for i in range(3))


def first_sufficient_step_rewritten(x):
    g = 2.0 * x
    t = 1.0
    candidate = x  # assigned before the loop, so the loop carries it
    for _ in range(20):
        candidate = x - t * g
        if np.sum(candidate ** 2) <= 0.9 * np.sum(x ** 2):
            break
        t = t * 0.5
    else:
        raise ValueError("no sufficient decrease")
    return np.sum(candidate ** 2) + t


def nonlocal_rewritten(x):
    total = 0.0

    def add(total, v):
        return total + v

    for i in range(3):
        total = add(total, x[i] * x[i])
    return total


def _counted(x):
    return x.sum() * 3, 3


def filter_rewritten(x):
    return sum(v for v in x if v > 0)


def filter_rewritten_masked(x):
    return np.sum(np.where(x > 0, x, 0.0))


def fsum_rewritten(x):
    return sum(x)


def printed_rewritten(x):
    s = x.sum()
    print("s =", s)
    return s


REWRITES = [
    (mask_rewritten, X, mask_indexing), (nonzero_rewritten, X, nonzero_sum), (argwhere_rewritten, X, argwhere_count),
    (unique_rewritten, X[:4], unique_sum), (histogram_rewritten, X, histogram_weighted),
    (histogram_rewritten, np.random.default_rng(1).normal(size=200), histogram_weighted),
    (vectorize_rewritten, X, frompyfunc_sum), (vectorize_by_numpy, X, frompyfunc_sum),
    (vectorize_rewritten_matrix, M, lambda m: np.sum(np.frompyfunc(_square_or_negate, 1, 1)(m).astype(float)
                                                     * np.arange(6.0).reshape(2, 3))),
    (along_rows_rewritten, M, along_rows),
    (along_columns_rewritten, M, lambda m: np.apply_along_axis(_row_energy, 0, m).sum()),
    (piecewise_rewritten, X, piecewise_sum), (generator_rewritten, X, generator_sum),
    (generator_expression_rewritten, X, generator_sum), (nonlocal_rewritten, X, nonlocal_total),
    (first_sufficient_step_rewritten, X, first_sufficient_step),
    (filter_rewritten, X, filtered), (filter_rewritten_masked, X, filtered), (fsum_rewritten, X, fsum),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", REWRITES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(REWRITES)])
def test_the_rewrite_gives_the_refused_programs_value(case, backend):
    rewritten, x, refused = case
    np.testing.assert_allclose(rewritten(x.copy()), refused(x.copy()), rtol=1e-13)
    check_against_numpy(rewritten, (x,), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_unique_rewritten_with_repeated_values(backend):
    """X repeats 0.3 and 2.0: a value, where central differences see a jump."""
    assert irad.value_and_grad(unique_rewritten, backend=backend)(X)[0] == pytest.approx(np.unique(X).sum(), rel=1e-14)


def test_global_rewritten_assigns_around_the_call():
    global CALLS
    value, CALLS = irad.value_and_grad(_counted, has_aux=True)(X)[0]
    assert CALLS == 3 and value == pytest.approx(X.sum() * 3)


def test_print_rewritten_prints_the_run_time_value(capsys):
    irad.grad(printed_rewritten, backend="python")(X)
    assert capsys.readouterr().out == f"s = {X.sum()}\n"
