"""What the loop rewrites of issue 16 buy: each array workload of `make bench`
(bench/native.py) differentiated with and without them, on the numpy backend
and natively, side by side in one process, against each backend's primal.

Run: .venv/bin/python bench/loop_records.py [substring of a row ...]

"before" compiles the gradient with the last stop's work (h-loopstack)
switched off: a reversed `scf.for` with constant bounds reads its trip count
from the tape rather than knowing it (`static_trip_count` in
passes/ad/reverse_loops.py), and irad-sink-accumulations leaves the per-iteration
products and column sums where they are (`sink_accumulations` in
passes/sink_accumulations.py). The earlier lean-tape work (docs/benchmarks.md,
"Lean loop gradients") is in both. The run checks that before and after give
the same gradient (rtol 1e-9). Each time is the middle of three medians of 7
repeats, primal, before and after interleaved per row and backend, so load on
the machine hits them alike.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
import native  # noqa: E402  (sets OPENBLAS_NUM_THREADS=1 before numpy loads)
import numpy as np  # noqa: E402
from timing import median_seconds  # noqa: E402

import irad  # noqa: E402
from irad.passes import sink_accumulations as loop_accumulations  # noqa: E402
from irad.passes.ad import reverse_loops as loops


@contextmanager
def before_loop_rewrites():
    with mock.patch.object(loops, "static_trip_count", lambda op: None), \
            mock.patch.object(loop_accumulations, "sink_accumulations", lambda loop: False):
        yield


def measure(label, make, args, argnums, backend: str) -> dict:
    with before_loop_rewrites():
        before = irad.grad(make(np), argnums, backend=backend)  # a new function: compiled apart
        expected = before(*args)
    after = irad.grad(make(np), argnums, backend=backend)
    for a, b in zip(after(*args), expected):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12, err_msg=label)
    primal = make(np) if backend == "python" else native.native_primal(make(np), args)
    systems = {"primal": primal, "before": before, "after": after}
    row = {name: [] for name in systems}
    for _ in range(3):
        for name, fn in systems.items():
            row[name].append(median_seconds(fn, *args))
    return {k: sorted(v)[1] for k, v in row.items()}


def main() -> None:
    wanted = sys.argv[1:]
    print("| workload | backend | primal µs | before µs | after µs | before / primal | after / primal | before / after |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (make, args, argnums) in native.WORKLOADS.items():
        if not any(isinstance(a, np.ndarray) for a in args) or (wanted and not any(w in label for w in wanted)):
            continue
        for backend in ("python", "native"):
            r = measure(label, make, args, argnums, backend)
            us = lambda key: f"{r[key] * 1e6:.0f}"  # noqa: E731
            ratio = lambda a, b: f"{r[a] / r[b]:.2f}"  # noqa: E731
            print(f"| {label} | {'numpy' if backend == 'python' else backend} | {us('primal')} | {us('before')} | "
                  f"{us('after')} | {ratio('before', 'primal')} | {ratio('after', 'primal')} | "
                  f"{ratio('before', 'after')} |", flush=True)


if __name__ == "__main__":
    main()
