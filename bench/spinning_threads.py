"""Threads a system leaves running after its calls: the CPU time this process
burns while its main thread sleeps, in successive 50 ms windows after ten
calls of the MLP gradient (batch 4096) by each system of
bench/blas_threads.py. A system timed right after one whose threads still
spin shares the cores with them (timing.settle_until_idle waits them out).
Then, with JAX, five rounds of: JAX's wall time per call in turns with one
thread and every core (as bench/blas_threads.py), after a fixed 0.1 s pause
and after the pause and until the process is idle; and JAX alone
(timing.median_seconds, as bench/native.py). Medians over the rounds.

Run: .venv/bin/python bench/spinning_threads.py   (JAX optional)
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's; before numpy loads

import numpy as np  # noqa: E402
from arrays import make_mlp  # noqa: E402
from blas_threads import _gradient  # noqa: E402
from native import _mlp_arguments, prepare  # noqa: E402
from timing import cpu_seconds, in_turns, median_seconds, optional  # noqa: E402

from irad.backends.native import lapack  # noqa: E402

WINDOW, WINDOWS = 0.05, 4


def after_calls(fn, args) -> list[float]:
    """Milliseconds of CPU time in each window of sleep after ten calls."""
    for _ in range(10):
        fn(*args)
    burnt = []
    for _ in range(WINDOWS):
        before = cpu_seconds()
        time.sleep(WINDOW)
        burnt.append((cpu_seconds() - before) * 1e3)
    return burnt


def main() -> None:
    jax = optional("jax")
    prepare(jax)
    args = _mlp_arguments(np.random.default_rng(1), 4096, 64, 128, 10)
    library, cores = lapack.find(), len(os.sched_getaffinity(0))
    whole, split = (_gradient(make_mlp, args, (0, 1, 2, 3), s) for s in (False, True))
    systems = {
        "1 thread": lambda *a: (lapack.set_threads(library, 1), whole(*a))[1],
        "split": lambda *a: (lapack.set_threads(library, 1), split(*a))[1],
        f"{cores} threads": lambda *a: (lapack.set_threads(library, cores), whole(*a))[1],
    }
    if jax is not None:
        import jax.numpy as jnp

        compiled = jax.jit(jax.grad(make_mlp(jnp), argnums=(0, 1, 2, 3)))
        systems["JAX"] = lambda *a: [v.block_until_ready() for v in compiled(*a)]
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| after | " + " | ".join(f"CPU ms, {i * WINDOW * 1e3:.0f}-{(i + 1) * WINDOW * 1e3:.0f} ms" for i in range(WINDOWS)) + " |")
    print("|---|" + "---|" * WINDOWS)
    for _ in range(2):
        for name, fn in systems.items():
            print(f"| {name} | " + " | ".join(f"{ms:.1f}" for ms in after_calls(fn, args)) + " |")
    if jax is not None:
        rounds = {"fixed 0.1 s pause": [], "until idle": [], "alone": []}
        turns = {name: (systems[name], args) for name in ("1 thread", f"{cores} threads", "JAX")}
        for _ in range(5):
            for label, idle in (("fixed 0.1 s pause", False), ("until idle", True)):
                rounds[label].append(in_turns(turns, settle=0.1, until_idle=idle)["JAX"][0])
            lapack.set_threads(library, 1)
            rounds["alone"].append(median_seconds(systems["JAX"], *args))
        print("| JAX wall µs per call | " + " | ".join(rounds) + " |")
        print("|---|" + "---|" * len(rounds))
        print("| median of 5 rounds | " + " | ".join(f"{statistics.median(t) * 1e6:.0f}" for t in rounds.values()) + " |")
    lapack.set_threads(library, lapack.threads() or cores)
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
