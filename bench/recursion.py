"""Gradient of a linearly recursive function at depths 100, 200 and 400.

Run: .venv/bin/python bench/recursion.py

The generated functions of a recursive primal call each other recursively and
share one tape: each level pushes its own residuals, and the pullback of level
k reads them back without re-running any forward sweep below it. The gradient
should therefore cost O(depth): doubling the depth should double the time
(ratios near 2.0). A pullback that re-ran the augmented primal of the levels
below it would cost O(depth^2) and show ratios near 4.0.

Also timed: the primal (plain Python) and a loop with the same body, whose
reverse sweep reads per-iteration records from the same kind of tape.
Medians of 7 repeats, all measured side by side in one run.
"""

from __future__ import annotations

import math
import statistics
import sys
import timeit
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import irad  # noqa: E402
from irad.base.recursion import deep_recursion  # noqa: E402

DEPTHS = (100, 200, 400)


def chain(x, n):
    if n <= 0:
        return x
    return math.sin(chain(x, n - 1)) * 0.9 + 0.1 * x


def chain_loop(x, n):
    y = x
    for i in range(n):
        y = math.sin(y) * 0.9 + 0.1 * x
    return y


def median_seconds(fn, repeat: int = 7) -> float:
    number = 1
    while True:  # calls per sample so that one sample takes >= 20 ms
        t = timeit.timeit(fn, number=number)
        if t >= 0.02:
            break
        number *= 2
    return statistics.median(timeit.repeat(fn, number=number, repeat=repeat)) / number


def main() -> None:
    grad_rec = irad.grad(chain)
    grad_loop = irad.grad(chain_loop)
    rows = []
    with deep_recursion():
        for n in DEPTHS:
            assert math.isclose(grad_rec(0.5, n), grad_loop(0.5, n), rel_tol=1e-12)
            rows.append(
                (
                    n,
                    median_seconds(lambda: chain(0.5, n)),
                    median_seconds(lambda: grad_rec(0.5, n)),
                    median_seconds(lambda: grad_loop(0.5, n)),
                )
            )
    print("| depth n | primal µs | irad grad (recursion) µs | grad/primal | "
          "t(n)/t(n/2) | irad grad (loop) µs | t(n)/t(n/2) |")
    print("|---|---|---|---|---|---|---|")
    previous = None
    for n, primal, rec, loop in rows:
        ratio_rec = f"{rec / previous[2]:.2f}" if previous else "–"
        ratio_loop = f"{loop / previous[3]:.2f}" if previous else "–"
        print(f"| {n} | {primal * 1e6:.1f} | {rec * 1e6:.1f} | {rec / primal:.1f}× | "
              f"{ratio_rec} | {loop * 1e6:.1f} | {ratio_loop} |")
        previous = (n, primal, rec, loop)


if __name__ == "__main__":
    main()
