"""Per-call overhead of native gradients: what a call costs beyond its arithmetic.

Run: .venv/bin/python bench/call_overhead.py [--before TREE]

Each workload is a gradient whose machine code takes a few nanoseconds, so the
median time of a call (`irad.grad(f, backend="native")(*args)`, everything a
user pays) is its overhead. `k arrays` differentiates the sum of k squared
4-vectors with respect to all of them: k array arguments and k array results,
so a line fitted through k = 1, 2, 4, 8 gives the fixed cost and the cost per
array argument or result. The 4×6 tanh layer is the small-array example of
issue 16.

With `--before TREE` (a checkout of irad, e.g. `git archive <commit> | tar -x
-C TREE`), every workload is timed in that tree and in this one, alternately,
each in a fresh process, three rounds; the table gives the medians. Without
it, only this tree is timed.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
SIZES = (1, 2, 4, 8)
# The machine's speed in the same run: on the shared bench machine it varies
# several-fold with load, so the overhead is also given in these units.
CALIBRATION = "a Python function call (for scale)"


def _import_tree(tree: Path) -> None:
    """Import irad from `tree`, its `passes/` as irad.passes (as installed)."""

    class Passes(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "irad.passes":
                return None
            init = tree / "passes" / "__init__.py"
            return importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])

    sys.path.insert(0, str(tree))
    sys.meta_path.insert(0, Passes())


def squares_1(x0):
    return np.sum(x0 * x0)


def squares_2(x0, x1):
    return np.sum(x0 * x0) + np.sum(x1 * x1)


def squares_4(x0, x1, x2, x3):
    return np.sum(x0 * x0) + np.sum(x1 * x1) + np.sum(x2 * x2) + np.sum(x3 * x3)


def squares_8(x0, x1, x2, x3, x4, x5, x6, x7):
    return (np.sum(x0 * x0) + np.sum(x1 * x1) + np.sum(x2 * x2) + np.sum(x3 * x3)
            + np.sum(x4 * x4) + np.sum(x5 * x5) + np.sum(x6 * x6) + np.sum(x7 * x7))


def scalar(x, y):
    return x * y + np.sin(x)


def tanh_layer(w, x):
    return np.sum(np.tanh(x @ w))


def _workloads():
    squares = {1: squares_1, 2: squares_2, 4: squares_4, 8: squares_8}
    work = {"scalar (2 floats in, 2 out)": (scalar, (0.7, -1.3), (0, 1))}
    for k in SIZES:
        work[f"{k} arrays (k={k}: {k} in, {k} out)"] = (
            squares[k], tuple(np.linspace(0.5, 1.5, 4) + i for i in range(k)), tuple(range(k))
        )
    rng = np.random.default_rng(0)
    work["4×6 tanh layer (2 arrays in, 1 out)"] = (tanh_layer, (rng.normal(size=(6, 3)), rng.normal(size=(4, 6))), 0)
    return work


def measure() -> dict[str, float]:
    """Median seconds per call of each workload's native gradient, in this process."""
    from timing import median_seconds

    import irad

    times = {}
    for label, (f, args, argnums) in _workloads().items():
        g = irad.grad(f, argnums, backend="native")
        python = irad.grad(f, argnums)(*args)
        got = g(*args)
        for a, b in zip(got if isinstance(got, tuple) else [got], python if isinstance(python, tuple) else [python]):
            np.testing.assert_allclose(a, b, rtol=1e-12)
        times[label] = median_seconds(g, *args, budget=0.5)
    times[CALIBRATION] = median_seconds(_noop, 0.7, -1.3, budget=0.5)
    return times


def _noop(x, y):
    return x, y


def _fit(times: dict[str, float]) -> tuple[float, float]:
    """Fixed cost and cost per array argument or result (least squares over k)."""
    xs = [2 * k for k in SIZES]
    ys = [times[label] for label in times if "arrays (k=" in label]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def _child(tree: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--measure", str(tree)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an irad tree to compare against")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if options.measure:
        _import_tree(options.measure)
        print(json.dumps(measure()))
        return
    trees = {"after": HERE.parent} if options.before is None else {"before": options.before, "after": HERE.parent}
    rounds = {name: [] for name in trees}
    for _ in range(3 if options.before else 1):
        for name, tree in trees.items():
            rounds[name].append(_child(tree))
    medians = {name: {k: statistics.median(r[k] for r in runs) for k in runs[0]} for name, runs in rounds.items()}
    names = list(trees)
    header = ["workload"] + [f"{n} µs" for n in names] + (["before/after"] if len(names) == 2 else [])
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for label in medians[names[-1]]:
        cells = [f"{medians[n][label] * 1e6:.2f}" for n in names]
        if len(names) == 2:
            cells.append(f"{medians['before'][label] / medians['after'][label]:.1f}×")
        print(f"| {label} | " + " | ".join(cells) + " |")
    for n in names:
        fixed, per_array = _fit(medians[n])
        # in units of the same process's Python function call, which cancels its load
        scaled = {k: statistics.median(r[k] / r[CALIBRATION] for r in rounds[n]) for k in rounds[n][0]}
        calls, calls_per_array = _fit(scaled)
        print(f"\n{n}: fixed {fixed * 1e6:.2f} µs + {per_array * 1e6:.2f} µs per array argument or result;"
              f" {calls:.0f} + {calls_per_array:.1f} Python function calls")


if __name__ == "__main__":
    main()
