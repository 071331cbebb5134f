"""Native gradients with irad's BLAS on one thread (the default) and on every
core (OpenBLAS's own default, irad's before), beside JAX-jit.

Run: .venv/bin/python bench/blas_threads.py   (JAX optional)

One process: the thread count of irad's copy of OpenBLAS is switched between
blocks of calls (irad.backends.lapack.set_threads), so both counts run on the
same compiled code, taken in turns (one thread, every core, JAX, one thread,
...). Per gradient call: wall time and the CPU time the process was charged
(getrusage, all threads), each the median of 7 blocks. The gradients of the
two counts are checked to be equal bit for bit. numpy's own BLAS, which
irad does not use, runs on one thread (as in bench/native.py). Run it at
the default nice level: on a shared machine, a process other users run at
nice 10 is what a second BLAS thread waits for.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's; before numpy loads

import numpy as np  # noqa: E402
from native import _mlp_arguments, make_attention, prepare  # noqa: E402
from arrays import make_mlp  # noqa: E402
from timing import in_turns, optional  # noqa: E402

import irad  # noqa: E402
from irad.backends import lapack  # noqa: E402


def workloads() -> dict:
    rng = np.random.default_rng(1)
    rows = {f"MLP {n}×64-128-10": (make_mlp, _mlp_arguments(rng, n, 64, 128, 10), (0, 1, 2, 3)) for n in (256, 1024, 4096)}
    rows["attention 64×32"] = (make_attention, tuple(0.2 * rng.normal(size=(32, 32)) for _ in range(3))
                               + (rng.normal(size=(64, 32)),), (0, 1, 2))
    return rows


def measure(make, args, argnums, jax, cores: int) -> dict[str, tuple[float, float]]:
    library = lapack.find()
    native = irad.grad(make(np), argnums, backend="native")
    native(*args)
    native.wait_optimised()
    counts = {"1 thread": 1, f"{cores} threads": cores}
    systems = {}
    for name, count in counts.items():
        systems[name] = (lambda count: lambda *a: (lapack.set_threads(library, count), native(*a)))(count)
    if jax is not None:
        import jax.numpy as jnp

        compiled = jax.jit(jax.grad(make(jnp), argnums=argnums))
        systems["JAX"] = lambda *a: [v.block_until_ready() for v in compiled(*a)]
    gradients = [systems[name](*args)[-1] for name in counts]
    assert all(np.array_equal(a, b) for a, b in zip(*gradients)), "the gradient depends on the BLAS thread count"
    row = in_turns({name: (fn, args) for name, fn in systems.items()})
    lapack.set_threads(library, lapack.threads() or cores)
    return row


def main() -> None:
    jax = optional("jax")
    prepare(jax)
    cores = len(os.sched_getaffinity(0))
    names = ["1 thread", f"{cores} threads"] + (["JAX"] if jax is not None else [])
    header = [f"{n} wall µs" for n in names] + [f"{n} CPU µs" for n in names] + [f"{cores} threads / 1, wall"]
    print("| workload | " + " | ".join(header) + " |")
    print("|---|" + "---|" * len(header))
    for label, (make, args, argnums) in workloads().items():
        row = measure(make, args, argnums, jax, cores)
        cells = [f"{row[n][0] * 1e6:.0f}" for n in names] + [f"{row[n][1] * 1e6:.0f}" for n in names]
        cells.append(f"{row[names[1]][0] / row[names[0]][0]:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
