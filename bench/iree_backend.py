"""The IREE backend (llvm-cpu) against the native and Python backends, at large sizes.

Run: .venv/bin/python bench/iree_backend.py   (needs the extra: pip install -e '.[iree]')

Workloads (from bench/arrays.py): the GMM objective at N = 10,000 points, an
MLP with softmax cross-entropy at batch 4096, and an LSTM as a Python loop
(its arrays go on the tape, a tensor on IREE). Every column is measured side
by side in one run; each is the median of 7 repeats (bench/timing.py).
"first call" is everything before the first result (lowering,
differentiation, optimisation and the backend's compiler). The ratio is
IREE's gradient time / native's: above 1, IREE is slower.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from arrays import make_gmm, make_lstm_loop, make_mlp  # noqa: E402
from timing import median_seconds  # noqa: E402

import irad  # noqa: E402
from irad.backends.iree import compile as iree  # noqa: E402
from irad.backends.native import compile as native


def workloads():
    rng = np.random.default_rng(0)
    n, d, k = 10_000, 8, 10
    gmm = (rng.normal(size=k), rng.normal(size=(k, d)), 0.1 * rng.normal(size=(k, d)), rng.normal(size=(n, d)))
    samples, features, width, classes = 4096, 32, 64, 10
    mlp = (0.2 * rng.normal(size=(features, width)), np.zeros(width), 0.2 * rng.normal(size=(width, classes)),
           np.zeros(classes), rng.normal(size=(samples, features)),
           np.eye(classes)[rng.integers(0, classes, size=samples)])
    steps, batch, inputs, hidden = 20, 64, 32, 64
    lstm = (0.3 * rng.normal(size=(inputs, 4 * hidden)), 0.3 * rng.normal(size=(hidden, 4 * hidden)),
            0.1 * rng.normal(size=4 * hidden), rng.normal(size=(steps, batch, inputs)))
    return {
        f"GMM (N={n:,}, d={d}, K={k})": (make_gmm(np), gmm, (0, 1, 2)),
        f"MLP (batch {samples}, {features}→{width}→{classes})": (make_mlp(np), mlp, (0, 1, 2, 3)),
        f"LSTM loop ({steps} steps, batch {batch}, {inputs}→{hidden})": (make_lstm_loop(np), lstm, (0, 1, 2)),
    }


def main() -> None:
    reason = iree.unavailable_reason()
    if reason:
        print(f"skipped: {reason}")
        return
    backends = ["python", "iree"] + ([] if native.unavailable_reason() else ["native"])
    header = ["workload", *(f"{b} µs" for b in backends), *(f"{b} first call s" for b in backends[1:])]
    if "native" in backends:
        header.append("iree/native")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for label, (f, args, argnums) in workloads().items():
        times, first = {}, {}
        reference = None
        for b in backends:
            t0 = time.perf_counter()
            g = irad.grad(f, argnums=argnums, backend=b)
            got = g(*args)
            first[b] = time.perf_counter() - t0
            if reference is None:
                reference = got
            for r, x in zip(reference, got):
                np.testing.assert_allclose(x, r, rtol=1e-9, atol=1e-11)
            times[b] = median_seconds(g, *args)
        cells = [label, *(f"{times[b] * 1e6:,.0f}" for b in backends), *(f"{first[b]:.2f}" for b in backends[1:])]
        if "native" in backends:
            cells.append(f"{times['iree'] / times['native']:.2f}")
        print("| " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
