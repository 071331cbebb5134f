"""The gradient of a 10^6-element cumsum loss against numpy's cumsum (the
primal), natively and on the Python backend. np.cumsum is one `irad.cumsum`
op (irad/ir/scan.py): one loop natively, and its adjoint the reversed
cumulative sum, one loop too. np.cumprod likewise (`irad.linear_scan`, its
adjoint the recurrence run backwards).

Run: .venv/bin/python bench/cumsum_gradient.py

Loss: np.sum(np.cumsum(x, axis) ** 2) (a total-variation-like loss's scan), x
float64: 10^6 values, and a 1000x1000 array along either axis; the primal is
np.cumsum along the same axis. Then np.cumprod over 10^6 values near 1. Medians of steady-state calls (bench/timing.py),
side by side in one process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from timing import median_seconds  # noqa: E402

N = 10**6
CASES = ((np.cumsum, (N,), None), (np.cumsum, (1000, 1000), 1), (np.cumsum, (1000, 1000), 0),
         (np.cumprod, (N,), None))


def _gradient(scan, axis, backend: str, shape):
    def loss(x):
        return np.sum(scan(x, axis=axis) ** 2)

    g = irad.grad(loss, backend=backend)  # a new function per case: compiled apart
    g(np.zeros(shape))
    g.wait_optimised()
    return g


def main() -> None:
    print("| scan | x | axis | numpy ms | native gradient ms | / numpy | python gradient ms | / numpy |")
    print("|---|---|---|---|---|---|---|---|")
    for scan, shape, axis in CASES:
        x = np.random.default_rng(0).random(shape) * 1e-3
        x = x if scan is np.cumsum else 1 + x * 1e-3  # products that stay near 1
        primal = median_seconds(lambda x: scan(x, axis=axis), x)
        native = median_seconds(_gradient(scan, axis, "native", shape), x)
        python = median_seconds(_gradient(scan, axis, "python", shape), x)
        print(f"| {scan.__name__} | {'x'.join(map(str, shape))} | {axis} | {primal * 1e3:.2f} | {native * 1e3:.2f} | "
              f"{native / primal:.1f} | {python * 1e3:.2f} | {python / primal:.1f} |")


if __name__ == "__main__":
    main()
