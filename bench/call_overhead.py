"""Per-call overhead of gradients on both backends: what a call costs beyond its arithmetic.

Run: .venv/bin/python bench/call_overhead.py [--before TREE] [--processes 3] [--rounds 25]

Each workload is a gradient whose arithmetic takes a few nanoseconds natively,
so the median time of a native call (`irad.grad(f, backend="native")(*args)`,
everything a user pays) is its overhead. `k arrays` differentiates the sum of
k squared 4-vectors with respect to all of them: k array arguments and k array
results, so a line fitted through k = 1, 2, 4, 8 gives the fixed cost and the
cost per array argument or result. The 4×6 tanh layer is the small-array
example of issue 16. Every workload is also timed on the numpy backend (where
the numpy calls themselves are most of a call), and the small MLP and
logistic regression of `make bench` against autograd (issue 16's target: the
numpy backend at least 10× faster at small sizes), if autograd is installed.
The run also counts the Python functions one call enters (`sys.setprofile`
'call' events, numpy's own Python code included).

Timing is built to be read under load: each process calibrates a run of
calls per workload (about SAMPLE_SECONDS long), then goes `--rounds` times
over all workloads in turn, one sample each; `--processes` fresh processes
(per tree, alternating) repeat that. The table gives, per workload, the 10% quantile
of every round of every process (load only adds time, and under heavy load
more than half the samples carry a preemption, which moves the median; the
median is given beside it); the fit goes through those quantiles, and its
spread is that of the same fit over the rounds resampled with replacement,
also in units of the same round's Python function call, which cancels much
of the load. The 1-minute load average is printed at the start and the end.

With `--before TREE` (a checkout of irad, e.g. `git archive <commit> | tar -x
-C TREE`), every workload is timed in that tree and in this one, alternately,
each in fresh processes. Without it, only this tree is timed.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import json
import os
import random
import statistics
import subprocess
import sys
import timeit
import types
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


# Values read from outside the function, baked in and checked at each call
# (guards, docs/python-subset.md#values-read-from-outside): eight of them, of
# every kind of place, against `scalar`'s none.
SCALE, SHIFT, TIMES = 1.5, -0.25, 2
CFG = {"rate": 0.5, "inner": {"mode": "sin"}}
PARAMS = types.SimpleNamespace(weight=2.0, terms=[1.0, 2.0])


def make_guarded():
    bias = 0.125

    def scalar_guarded(x, y):
        v = x * y * SCALE * CFG["rate"] * PARAMS.weight + SHIFT + bias + TIMES
        if CFG["inner"]["mode"] == "sin":
            v = v + np.sin(x)
        return v * len(PARAMS.terms)

    return scalar_guarded


def tanh_layer(w, x):
    return np.sum(np.tanh(x @ w))


def make_logistic(m):
    def logistic(w, b, x, y):
        return m.mean(m.log(1.0 + m.exp(-y * (x @ w + b))))

    return logistic


def _small_workloads():
    """make bench's small MLP and logistic regression (bench/native.py), as
    factories of the numpy module they use."""
    from arrays import make_mlp

    rng = np.random.default_rng(1)
    samples, features, width, classes = 8, 4, 16, 3
    mlp_args = (0.2 * rng.normal(size=(features, width)), np.zeros(width), 0.2 * rng.normal(size=(width, classes)),
                np.zeros(classes), rng.normal(size=(samples, features)),
                np.eye(classes)[rng.integers(0, classes, size=samples)])
    logistic_args = (0.1 * rng.normal(size=4), 0.1, rng.normal(size=(10, 4)), np.sign(rng.normal(size=10)))
    return {
        "MLP 8×4-16-3, softmax-xent": (make_mlp, mlp_args, (0, 1, 2, 3)),
        "logistic regression N=10 d=4": (make_logistic, logistic_args, (0, 1)),
    }


def _workloads():
    squares = {1: squares_1, 2: squares_2, 4: squares_4, 8: squares_8}
    work = {"scalar (2 floats in, 2 out)": (scalar, (0.7, -1.3), (0, 1)),
            "scalar reading 8 guarded values": (make_guarded(), (0.7, -1.3), (0, 1))}
    for k in SIZES:
        work[f"{k} arrays (k={k}: {k} in, {k} out)"] = (
            squares[k], tuple(np.linspace(0.5, 1.5, 4) + i for i in range(k)), tuple(range(k))
        )
    rng = np.random.default_rng(0)
    work["4×6 tanh layer (2 arrays in, 1 out)"] = (tanh_layer, (rng.normal(size=(6, 3)), rng.normal(size=(4, 6))), 0)
    return work


NATIVE, NUMPY, AUTOGRAD = "native", "numpy backend", "autograd"
SAMPLE_SECONDS = 0.001  # each sample times this long a run of calls of one workload
# Load only ever adds time, and under heavy load more than half the samples may
# carry a preemption, which moves the median: the table and the fits read
# this quantile of each workload's samples (the median is printed beside it).
QUANTILE = 0.1
BOOTSTRAP = 300  # resamplings of the rounds, for the fits' spread


def measure(rounds: int) -> dict:
    """Seconds per call of each workload's gradient on each backend (and
    autograd's on the small ones), keys `backend: workload`, one sample per
    round: the rounds go over every workload in turn (each round starting
    one workload further), so a burst of load on the machine falls on all of
    them alike instead of on one. Also the Python functions one call enters."""
    from timing import optimised, optional

    import irad

    autograd = optional("autograd")
    timed, frames = {}, {}
    small = _small_workloads()
    work = {**_workloads(), **{label: (make(np), args, nums) for label, (make, args, nums) in small.items()}}
    for label, (f, args, argnums) in work.items():
        native = irad.grad(f, argnums, backend="native")
        python = irad.grad(f, argnums)
        expected = python(*args)
        got = native(*args)
        optimised(native)  # timed at -O2, not tier 0's code (tiered compilation)
        for a, b in zip(got if isinstance(got, tuple) else [got], expected if isinstance(expected, tuple) else [expected]):
            np.testing.assert_allclose(a, b, rtol=1e-9)
        for name, g in ((NATIVE, native), (NUMPY, python)):
            timed[f"{name}: {label}"] = (g, args)
        if autograd is not None and label in small:
            ag = autograd.grad(small[label][0](optional("autograd.numpy")), argnums)
            for a, b in zip(ag(*args), expected):
                np.testing.assert_allclose(a, b, rtol=1e-9)
            timed[f"{AUTOGRAD}: {label}"] = (ag, args)
    timed[CALIBRATION] = (_noop, (0.7, -1.3))
    runs = {key: [(lambda g=g, a=args: g(*a))] for key, (g, args) in timed.items()}
    for key, (run,) in runs.items():
        run()
        once = timeit.timeit(run, number=3) / 3
        runs[key].append(max(1, int(SAMPLE_SECONDS / max(once, 1e-8))))
    keys, samples = list(runs), {key: [] for key in runs}
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            run, number = runs[key]
            samples[key].append(timeit.timeit(run, number=number) / number)
    for key, (g, args) in timed.items():  # after many calls: with their call entries (entry.py) installed
        frames[key] = _python_frames(g, args)
    return {"samples": samples, "frames": frames, "load": os.getloadavg()[0]}


def _noop(x, y):
    return x, y


def _python_frames(g, args) -> int:
    """How many Python functions one call enters (numpy's own Python code included)."""
    entered = []
    sys.setprofile(lambda frame, event, arg: entered.append(1) if event == "call" else None)
    try:
        g(*args)
    finally:
        sys.setprofile(None)
    return len(entered)


def _fit(times: dict[str, float], backend: str) -> tuple[float, float]:
    """Fixed cost and cost per array argument or result (least squares over k)."""
    xs = [2 * k for k in SIZES]
    ys = [times[f"{backend}: {label}"] for label in _array_labels()]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
    return my - slope * mx, slope


def _array_labels() -> list[str]:
    return [label for label in _workloads() if "arrays (k=" in label]


def _quantile(values: list[float], q: float = QUANTILE) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _estimates(rounds: list[dict[str, float]], q: float = QUANTILE) -> dict[str, float]:
    """Each workload's quantile `q` over the rounds."""
    return {k: _quantile([r[k] for r in rounds], q) for k in rounds[0]}


def _spread(values: list[float]) -> str:
    """Median and the range of the middle 80% (10th to 90th percentile)."""
    return f"{statistics.median(values):.2f} [{_quantile(values, 0.1):.2f}, {_quantile(values, 0.9):.2f}]"


def _bootstrap_fits(rounds: list[dict[str, float]], backend: str, scale: bool) -> list[tuple[float, float]]:
    """The fit of the estimates, over rounds drawn with replacement (fixed seed)."""
    rng = random.Random(0)
    fits = []
    for _ in range(BOOTSTRAP):
        drawn = [rng.choice(rounds) for _ in rounds]
        if scale:
            drawn = [{k: v / r[CALIBRATION] for k, v in r.items()} for r in drawn]
        fits.append(_fit(_estimates(drawn), backend))
    return fits


def _child(tree: Path, rounds: int) -> dict:
    out = subprocess.run([sys.executable, __file__, "--measure", str(tree), "--rounds", str(rounds)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="an irad tree to compare against")
    parser.add_argument("--processes", type=int, default=3, help="fresh processes per tree (alternating)")
    parser.add_argument("--rounds", type=int, default=60, help="rounds over every workload per process")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    sys.path.insert(0, str(HERE))
    if options.measure:
        _import_tree(options.measure)
        print(json.dumps(measure(options.rounds)))
        return
    load = [os.getloadavg()[0]]
    trees = {"after": HERE.parent} if options.before is None else {"before": options.before, "after": HERE.parent}
    processes = {name: [] for name in trees}
    for _ in range(options.processes):
        for name, tree in trees.items():
            processes[name].append(_child(tree, options.rounds))
    load.append(os.getloadavg()[0])
    # every round of every process: {key: seconds per call}
    rounds = {name: [{k: v[r] for k, v in run["samples"].items()} for run in runs for r in range(options.rounds)]
              for name, runs in processes.items()}
    low = {name: _estimates(rs) for name, rs in rounds.items()}
    medians = {name: _estimates(rs, 0.5) for name, rs in rounds.items()}
    names = list(trees)
    backends = [NATIVE, NUMPY]
    header = ["workload"] + [f"{b} {n} µs" for b in backends for n in names]
    if len(names) == 2:
        header += [f"{b} before/after" for b in backends]
    print(f"load average (1 min) {load[0]:.2f} at the start, {load[1]:.2f} at the end;"
          f" {options.processes} processes per tree × {options.rounds} rounds; each cell: the {QUANTILE:.0%} quantile"
          " of all rounds (median)\n")
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    labels = [key.partition(": ")[2] for key in low[names[-1]] if key.startswith(NATIVE + ":")]
    for label in labels:
        cells = [f"{low[n][f'{b}: {label}'] * 1e6:.2f} ({medians[n][f'{b}: {label}'] * 1e6:.2f})" for b in backends for n in names]
        if len(names) == 2:
            cells += [f"{low['before'][f'{b}: {label}'] / low['after'][f'{b}: {label}']:.1f}×" for b in backends]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("\nPython functions one call enters:\n")
    header = ["workload"] + [f"{b} {n}" for b in backends for n in names]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for label in labels:
        print(f"| {label} | " + " | ".join(f"{processes[n][0]['frames'][f'{b}: {label}']}" for b in backends for n in names) + " |")
    print(f"\n{CALIBRATION}: " + ", ".join(f"{n} {low[n][CALIBRATION] * 1e6:.3f} µs ({medians[n][CALIBRATION] * 1e6:.3f})"
                                           for n in names))
    print(f"\nFits (least squares over k = 1, 2, 4, 8) of the {QUANTILE:.0%} quantiles, with the median and 10th-90th"
          f" percentile of the same fit over {BOOTSTRAP} resamplings of the rounds; then in units of each round's"
          " Python function call:\n")
    for n in names:
        for b in backends:
            fixed, per_array = _fit(low[n], b)
            fits = _bootstrap_fits(rounds[n], b, scale=False)
            calls = _bootstrap_fits(rounds[n], b, scale=True)
            print(f"- {n}, {b}: fixed {fixed * 1e6:.2f} µs + {per_array * 1e6:.2f} µs per array argument or result"
                  f" (resampled: {_spread([f * 1e6 for f, _ in fits])} µs + {_spread([a * 1e6 for _, a in fits])} µs);"
                  f" {_spread([f for f, _ in calls])} + {_spread([a for _, a in calls])} Python function calls")
        for label in _small_workloads():
            if f"{AUTOGRAD}: {label}" in low[n]:
                ratio = low[n][f"{AUTOGRAD}: {label}"] / low[n][f"{NUMPY}: {label}"]
                print(f"- {n}, {label}: autograd {low[n][f'{AUTOGRAD}: {label}'] * 1e6:.1f} µs,"
                      f" numpy backend {low[n][f'{NUMPY}: {label}'] * 1e6:.1f} µs: {ratio:.1f}× faster than autograd")


if __name__ == "__main__":
    main()
