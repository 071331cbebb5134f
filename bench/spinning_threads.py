"""Threads a system leaves running after its calls: the CPU time this process
burns while its main thread sleeps, in successive 50 ms windows after ten
calls of the MLP gradient (batch 4096) by each system of
bench/blas_threads.py. A system timed right after one whose threads still
spin shares the cores with them (timing.settle_until_idle waits them out).

Run: .venv/bin/python bench/spinning_threads.py   (JAX optional)
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's; before numpy loads

import numpy as np  # noqa: E402
from arrays import make_mlp  # noqa: E402
from blas_threads import _gradient  # noqa: E402
from native import _mlp_arguments, prepare  # noqa: E402
from timing import cpu_seconds, optional  # noqa: E402

from irad.backends import lapack  # noqa: E402

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
    lapack.set_threads(library, lapack.threads() or cores)


if __name__ == "__main__":
    main()
