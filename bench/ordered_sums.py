"""Sums of vector functions natively, with LLVM's ordered reductions on and off.

Run: .venv/bin/python bench/ordered_sums.py

A loop that sums a fused `tanh`, `exp` or `log` is vectorised with the sum
kept in order (irad/backends/native/llvm_build.py, `options()`); without it, such a
loop stays scalar and calls libmvec's vector function once per element. Each
program is compiled natively (no differentiation) and timed at -O2, medians
of 7; the elementwise `np.tanh` (a vectorised loop either way) is the
reference. Then the native gradients of the rows of `make bench`
(bench/native.py) whose programs sum a fused exp, log or tanh. The switch is process-wide, so each setting runs in a child
process (IRAD_NATIVE_ORDERED_SUMS=0, then on), three times in turns; the
table has the median of the three medians, and checks that both settings
give the same bits.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("IRAD_NATIVE_CACHE", "0")  # each setting compiles its own code

import numpy as np  # noqa: E402
from native import WORKLOADS, native_primal  # noqa: E402
from timing import median_seconds  # noqa: E402

import irad  # noqa: E402

GRADIENTS = ("GMM d=10 K=25 N=1000 (vectorised)", "MLP 256×64-128-10, tanh, softmax-xent",
             "MLP 4096×64-128-10, tanh, softmax-xent", "logistic regression N=5000 d=50", "attention 64×32",
             "GMM n=1000 d=5 K=10")


def sum_of_tanh(z):
    return np.sum(np.tanh(z))


def row_log_sum_exp(z):
    return np.log(np.sum(np.exp(z), axis=1))


def mean_log_loss(z):
    return np.mean(np.log(1.0 + np.exp(-z)))


def tanh(z):
    return np.tanh(z)


PROGRAMS = {"np.sum(np.tanh(z))": sum_of_tanh, "np.log(np.sum(np.exp(z), axis=1))": row_log_sum_exp,
            "np.mean(np.log(1 + np.exp(-z)))": mean_log_loss, "np.tanh(z) (elementwise)": tanh}


def child() -> None:
    z = np.random.default_rng(0).normal(size=(4096, 128))
    out = {}
    for label, f in PROGRAMS.items():
        run = native_primal(f, (z,))
        value = np.asarray(run(z))
        out[label] = (median_seconds(run, z), value.tobytes().hex()[:64] + str(value.size))
    for label in GRADIENTS:
        make, args, argnums = WORKLOADS[label]
        gradient = irad.grad(make(np), argnums, backend="native")
        value = np.concatenate([np.ravel(g) for g in gradient(*args)])
        out[f"gradient: {label}"] = (median_seconds(gradient, *args), value.tobytes().hex())
    print(json.dumps(out))


def main() -> None:
    if "--child" in sys.argv:
        return child()
    runs = {"0": [], "1": []}
    for _ in range(3):
        for setting in runs:
            env = {**os.environ, "IRAD_NATIVE_ORDERED_SUMS": setting}
            done = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True, check=True)
            runs[setting].append(json.loads(done.stdout.strip().splitlines()[-1]))
    print("| program (z 4096×128), or native gradient | ordered sums off µs | on µs | off / on | same bits |")
    print("|---|---|---|---|---|")
    for label in runs["0"][0]:
        off = statistics.median(r[label][0] for r in runs["0"]) * 1e6
        on = statistics.median(r[label][0] for r in runs["1"]) * 1e6
        same = {r[label][1] for r in runs["0"] + runs["1"]}
        print(f"| {label if label.startswith('gradient') else f'`{label}`'} | {off:.0f} | {on:.0f} | {off / on:.2f} | {'yes' if len(same) == 1 else 'NO'} |")


if __name__ == "__main__":
    main()
