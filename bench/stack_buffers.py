"""Native gradient against native primal on small arrays, with and without stack temporaries.

Run: .venv/bin/python bench/stack_buffers.py [--rounds 100] [ROW ...]

For each row (the small rows of `make bench`; substrings of their labels
select some), the native primal and gradient are compiled twice in one
process: with small static-shape temporaries on the stack
(irad/backends/native/stack.py, the default) and with none
(irad.config's `native_stack_kb` 0, as before). The four are then timed in
interleaved rounds of 1 ms samples, so load falls on all of them alike; each
figure is the 10% quantile of the samples (load only adds time), the median
beside it. The gradients must be equal bit for bit.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402
from native import WORKLOADS, native_primal  # noqa: E402
from timing import interleaved_samples, low, optimised  # noqa: E402

ROWS = ("GMM n=100 d=2 K=3", "small: tanh layer 4×6", "small: MLP 8×4-16-3, softmax-xent",
        "small: logistic regression N=10 d=4", "GMM n=1000 d=5 K=10")
SAMPLE_SECONDS = 0.001


def _with_budget(kilobytes: int, build):
    with irad.config.overriding(native_stack_kb=kilobytes):
        return build()


def _gradient(f, args, argnums):
    compiled = native.NativeModule(irad.grad(f, argnums, backend="native").lower(*args))
    (name,) = compiled.functions
    return compiled.function(name)


def measure(label: str, rounds: int) -> str:
    make, args, argnums = WORKLOADS[label]
    f = make(np)
    variants = {}
    for name, kilobytes in (("stack", irad.config.default("native_stack_kb")), ("heap", 0)):
        variants[f"primal, {name}"] = _with_budget(kilobytes, lambda: native_primal(f, args))
        variants[f"gradient, {name}"] = _with_budget(kilobytes, lambda: _gradient(f, args, argnums))
    for fn in variants.values():
        optimised(fn)  # timed at -O2, not tier 0's code (tiered compilation)
    for a, b in zip(variants["gradient, stack"](*args), variants["gradient, heap"](*args)):
        np.testing.assert_array_equal(a, b)
    samples = interleaved_samples({key: (lambda fn=fn: fn(*args)) for key, fn in variants.items()}, rounds, SAMPLE_SECONDS)
    quantile = {key: low(s) for key, s in samples.items()}
    cells = [f"{quantile[key] * 1e6:.2f} ({statistics.median(samples[key]) * 1e6:.2f})" for key in samples]
    before = quantile["gradient, heap"] / quantile["primal, heap"]
    after = quantile["gradient, stack"] / quantile["primal, stack"]
    return f"| {label} | " + " | ".join(cells) + f" | {before:.2f} | {after:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("rows", nargs="*", help="substrings of the rows to run (all if none)")
    options = parser.parse_args()
    if not native.native_tools_available():
        sys.exit(f"the benchmark needs mlir-opt and mlir-translate 22: {native.INSTALL_HINT}")
    print(f"load average (1 min) {os.getloadavg()[0]:.2f} at the start")
    print("| workload | primal, stack µs | gradient, stack µs | primal, heap µs | gradient, heap µs"
          " | gradient / primal, heap (before) | gradient / primal, stack (after) |")
    print("|---|---|---|---|---|---|---|")
    for label in ROWS:
        if not options.rows or any(w in label for w in options.rows):
            print(measure(label, options.rounds), flush=True)
    print(f"load average (1 min) {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
