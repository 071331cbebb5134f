"""The native gradient of a 10^6-element cumsum loss against numpy's cumsum
(the primal), with the blocked scan (irad/frontend/numpy_statistics.py,
blocks of 16) and with one Hillis-Steele scan over the whole axis (as before;
SCAN_BLOCK set above n for this measurement only).

Run: .venv/bin/python bench/cumsum_gradient.py

Loss: np.sum(np.cumsum(x) ** 2) (a total-variation-like loss's scan), x float64.
Medians of steady-state calls (bench/timing.py), side by side in one process.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from irad.frontend import numpy_statistics  # noqa: E402
from timing import median_seconds  # noqa: E402

N = 10**6


def loss(x):
    return np.sum(np.cumsum(x) ** 2)


def _gradient(block: int):
    saved = numpy_statistics.SCAN_BLOCK
    numpy_statistics.SCAN_BLOCK = block
    try:
        g = irad.grad(lambda x: loss(x), backend="native")  # a new function: compiled apart
        g(np.zeros(N))
        g.wait_optimised()
        return g
    finally:
        numpy_statistics.SCAN_BLOCK = saved


def main() -> None:
    x = np.random.default_rng(0).random(N) * 1e-3
    primal = median_seconds(np.cumsum, x)
    blocked = median_seconds(_gradient(numpy_statistics.SCAN_BLOCK), x)
    whole = median_seconds(_gradient(1 << 62), x)
    print("| n | numpy cumsum ms | gradient, blocked scan ms | / numpy | gradient, one scan ms | / numpy |")
    print("|---|---|---|---|---|---|")
    print(f"| {N} | {primal * 1e3:.2f} | {blocked * 1e3:.2f} | {blocked / primal:.1f} | {whole * 1e3:.2f} | "
          f"{whole / primal:.1f} |")


if __name__ == "__main__":
    main()
