"""The numpy backend against issue 16's two targets for it: gradient ≤ 3× the
numpy primal at medium sizes, and ≥ 10× faster than autograd at small sizes.

Run: .venv/bin/python bench/numpy_backend.py [--before TREE] [--rounds N] [--all] [--native] [substring of a row ...]

Rows are `make bench`'s (bench/native.py): by default the ones the targets were
missed or nearly missed on (the array and the scalar reprojection, the small
tanh layer, MLP and logistic regression), with `--all` every row but the
loops'. Each round runs every tree (this one, and with `--before TREE` a
checkout of irad, e.g. `git archive main | tar -x -C TREE`) in a fresh process,
alternately. In a process, each row's numpy primal, numpy-backend gradient and
(for the small rows) autograd gradient are timed interleaved, three times
each (`median_call_seconds`: the median of single calls, which an interrupted
call barely moves, where a batch's mean takes all of it in), so load on the machine hits all of them alike;
the ratios are taken within a process and the table gives, per tree, the
median over rounds of each time and each ratio. Both irad gradients are
checked against autograd's (small rows) or against each other. With
`--native`, the native primal and gradient are timed too, in the same turns,
once their -O2 code is loaded (issue 16's other bound: native gradient ≤ 3×
the native primal).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as make bench

DEFAULT_ROWS = (
    "reprojection arrays, N=1000",
    "reprojection, N=100",
    "small: tanh layer 4×6",
    "small: MLP 8×4-16-3, softmax-xent",
    "small: logistic regression N=10 d=4",
)
LOOPS = ("(loop)", "as a loop", "LSTM, T=")  # another benchmark's subject (loop gradients)


def _rows(workloads, wanted: list[str], every: bool) -> list[str]:
    if wanted:
        return [label for label in workloads if any(w in label for w in wanted)]
    if every:
        return [label for label in workloads if not any(s in label for s in LOOPS)]
    return list(DEFAULT_ROWS)


def measure(tree: Path, wanted: list[str], every: bool, natively: bool = False) -> dict:
    """Medians (seconds) and ratios of each row, in this process, irad from `tree`."""
    sys.path.insert(0, str(HERE))
    from call_overhead import _import_tree

    _import_tree(tree)
    import irad  # before native.py, which would put this tree's irad first

    assert Path(irad.__file__).resolve().is_relative_to(tree.resolve()), irad.__file__
    import native
    import numpy as np
    from timing import median_call_seconds, optimised, optional

    autograd = optional("autograd")
    out = {}
    for label in _rows(native.WORKLOADS, wanted, every):
        make, args, argnums = native.WORKLOADS[label]
        arrays = any(isinstance(a, np.ndarray) for a in args)
        f = make(np if arrays else math)
        systems = {"primal": f, "numpy backend": irad.grad(f, argnums)}
        if natively:
            systems["native primal"] = native.native_primal(f, args)
            systems["native"] = irad.grad(f, argnums, backend="native")
            for name in ("native primal", "native"):
                systems[name](*args)
                optimised(systems[name])
            for a, b in zip(systems["native"](*args), systems["numpy backend"](*args)):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=label)
        if autograd is not None and label.startswith("small"):
            import autograd.numpy as anp

            systems["autograd"] = autograd.grad(make(anp), argnum=argnums)
            for a, b in zip(systems["autograd"](*args), systems["numpy backend"](*args)):
                np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-12, err_msg=label)
        times = {name: [] for name in systems}
        for _ in range(3):
            for name, fn in systems.items():
                times[name].append(median_call_seconds(fn, args))
        row = {name: statistics.median(ts) for name, ts in times.items()}
        out[label] = row
    return out


def _child(tree: Path, options) -> dict:
    command = [sys.executable, __file__, "--measure", str(tree), *options.rows] + (["--all"] if options.all else [])
    command += ["--native"] if options.native else []
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode:
        sys.exit(done.stderr)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="*", help="substrings of the rows to run")
    parser.add_argument("--before", type=Path, help="an irad tree to compare against")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--all", action="store_true", help="every row of make bench but the loops")
    parser.add_argument("--native", action="store_true", help="also the native primal and gradient")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        print(json.dumps(measure(options.measure, options.rows, options.all, options.native)))
        return
    trees = {"after": HERE.parent} if options.before is None else {"before": options.before, "after": HERE.parent}
    runs = {name: [] for name in trees}
    for _ in range(options.rounds):
        for name, tree in trees.items():
            runs[name].append(_child(tree, options))

    def median(name, label, f):
        return statistics.median(f(r[label]) for r in runs[name])

    names = list(trees)
    header = ["workload", "numpy primal µs"] + [f"numpy backend {n} µs" for n in names]
    header += [f"{n}: backend / primal" for n in names] + ["autograd µs"] + [f"{n}: autograd / backend" for n in names]
    if options.native:
        header += ["native primal µs"] + [f"native {n} µs" for n in names] + [f"{n}: native / native primal" for n in names]
    print("| " + " | ".join(header) + " |\n|" + "---|" * len(header))
    for label in runs[names[-1]][0]:
        cells = [label, f"{median(names[-1], label, lambda r: r['primal']) * 1e6:.1f}"]
        cells += [f"{median(n, label, lambda r: r['numpy backend']) * 1e6:.1f}" for n in names]
        cells += [f"{median(n, label, lambda r: r['numpy backend'] / r['primal']):.2f}" for n in names]
        has_autograd = "autograd" in runs[names[-1]][0][label]
        cells.append(f"{median(names[-1], label, lambda r: r['autograd']) * 1e6:.0f}" if has_autograd else "–")
        cells += [f"{median(n, label, lambda r: r['autograd'] / r['numpy backend']):.1f}" if has_autograd else "–"
                  for n in names]
        if options.native:
            cells.append(f"{median(names[-1], label, lambda r: r['native primal']) * 1e6:.1f}")
            cells += [f"{median(n, label, lambda r: r['native']) * 1e6:.1f}" for n in names]
            cells += [f"{median(n, label, lambda r: r['native'] / r['native primal']):.2f}" for n in names]
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
