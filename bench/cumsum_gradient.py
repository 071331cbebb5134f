"""The gradient of a 10^6-element cumsum loss against numpy's cumsum (the
primal), natively and on the Python backend. np.cumsum is one `irad.cumsum`
op (irad/ir/scan.py): one loop natively, and its adjoint the reversed
cumulative sum, one loop too.

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
from timing import median_seconds  # noqa: E402

N = 10**6


def loss(x):
    return np.sum(np.cumsum(x) ** 2)


def _gradient(backend: str):
    g = irad.grad(loss, backend=backend)
    g(np.zeros(N))
    g.wait_optimised()
    return g


def main() -> None:
    x = np.random.default_rng(0).random(N) * 1e-3
    primal = median_seconds(np.cumsum, x)
    native = median_seconds(_gradient("native"), x)
    python = median_seconds(_gradient("python"), x)
    print("| n | numpy cumsum ms | native gradient ms | / numpy | python gradient ms | / numpy |")
    print("|---|---|---|---|---|---|")
    print(f"| {N} | {primal * 1e3:.2f} | {native * 1e3:.2f} | {native / primal:.1f} | {python * 1e3:.2f} | "
          f"{python / primal:.1f} |")


if __name__ == "__main__":
    main()
