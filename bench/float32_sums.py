"""Long float32 sums natively and on IREE (where its extra is installed):
blocked (irad/backends/blocked_sums.py) against one in-order chain (as
before), and numpy's pairwise sum: time and relative error.

Run: .venv/bin/python bench/float32_sums.py

For n = 10^6 and 2^22 float32 elements in [0, 1): the primal `np.sum(x)`, and
the native value and gradient of `np.mean(np.tanh(x) ** 2)` (a fused producer, a sum, the
gradient's broadcast back), each compiled twice per backend in this process: with
blocked sums (the default) and with the rewrite off (`blocked_sums.SEQUENTIAL`
set above n, for this measurement only), and numpy's. Times are medians
(bench/timing.py), taken side by side; errors are |got - exact| / exact,
exact from float64 (math.fsum). A column sum of a 4096×256 float32 array
(a bias gradient's reduction over the batch) is the third row.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from irad.backends import blocked_sums  # noqa: E402
from irad.backends.iree import compile as iree  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402
from timing import median_seconds  # noqa: E402


def total(x):
    return np.sum(x)


def mean_square_tanh(x):
    return np.mean(np.tanh(x) ** 2)


def column_sums(x):
    return np.sum(x, axis=0)


COMPILERS = {"native": native.compile_module, "iree": iree.compile_module}


def _compiled(backend: str, f, x, blocked: bool):
    saved = blocked_sums.SEQUENTIAL
    blocked_sums.SEQUENTIAL = saved if blocked else 1 << 62
    try:
        module = COMPILERS[backend](irad.lower(f, x))
        fn = module.function(f.__name__)
        fn(x)
        module.wait_optimised()  # -O2 code natively, as in steady state
        return lambda x: fn(x)[0]
    finally:
        blocked_sums.SEQUENTIAL = saved


def _gradient(backend: str, x, blocked: bool):
    saved = blocked_sums.SEQUENTIAL
    blocked_sums.SEQUENTIAL = saved if blocked else 1 << 62
    try:
        # a new function object per variant: compiled code is cached per function
        g = irad.value_and_grad(lambda x: mean_square_tanh(x), backend=backend)
        g(x)
        g.wait_optimised()
        return g
    finally:
        blocked_sums.SEQUENTIAL = saved


def _error(got, exact) -> float:
    got = np.asarray(got, dtype=np.float64)
    return float(np.max(np.abs(got - exact) / np.abs(exact)))


def main() -> None:
    for backend in ("native", "iree"):
        if backend == "iree" and iree.unavailable_reason():
            print(f"iree: skipped ({iree.unavailable_reason()})")
            continue
        print(f"\n{backend}:")
        _table(backend)


def _table(backend: str) -> None:
    rng = np.random.default_rng(0)
    rows = []
    for n in (10**6, 1 << 22):
        x = rng.random(n).astype(np.float32)
        x64 = x.astype(np.float64)
        exact = math.fsum(x64)
        times, errors = [], []
        for fn in (_compiled(backend, total, x, True), _compiled(backend, total, x, False), total):
            times.append(median_seconds(fn, x))
            errors.append(_error(fn(x), exact))
        rows.append((f"np.sum(x), n={n}", times, errors))
        t = np.tanh(x64)
        exact_grad = 2 * t * (1 - t * t) / n
        times, errors = [], []
        for g in (_gradient(backend, x, True), _gradient(backend, x, False)):
            times.append(median_seconds(g, x))
            value, grad = g(x)
            errors.append(max(_error(value, math.fsum(t * t) / n), _error(grad, exact_grad)))
        times.append(median_seconds(mean_square_tanh, x))  # numpy's primal, for scale
        errors.append(_error(mean_square_tanh(x), math.fsum(t * t) / n))
        rows.append((f"value and gradient of np.mean(np.tanh(x)**2), n={n} (numpy: primal)", times, errors))
    X = rng.random((4096, 256)).astype(np.float32)
    exact = np.array([math.fsum(c) for c in X.astype(np.float64).T])
    times, errors = [], []
    for fn in (_compiled(backend, column_sums, X, True), _compiled(backend, column_sums, X, False), column_sums):
        times.append(median_seconds(fn, X))
        errors.append(_error(fn(X), exact))
    rows.append(("np.sum(X, axis=0), X 4096×256", times, errors))
    print("| float32 | blocked µs | in order µs | numpy µs | blocked / numpy | error blocked | in order | numpy |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (tb, ts, tn), (eb, es, en) in rows:
        print(f"| {name} | {tb * 1e6:.0f} | {ts * 1e6:.0f} | {tn * 1e6:.0f} | {tb / tn:.2f} | {eb:.1e} | {es:.1e} | {en:.1e} |")


if __name__ == "__main__":
    main()
