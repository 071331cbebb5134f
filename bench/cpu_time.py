"""Native gradient against JAX-jit's in CPU time as well as wall time, for a loaded machine.

Run: .venv/bin/python bench/cpu_time.py   (needs JAX)

On a machine shared with other work, wall-clock medians swing by 2x from run
to run (a process waits for a core as long as it computes), and the ratios
of `bench/scaling.py` with them. The CPU time a process is charged
(getrusage: user + system, all threads) is much steadier. For each point of
`bench/scaling.py`'s sweeps this prints, per gradient call, irad native's and
JAX-jit's wall time and CPU time, each the median of 5 blocks of calls taken
in turns (native, JAX, native, ...), and the two ratios. JAX may use more
than one thread: its CPU time is then the sum over them.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as in bench/native.py; before numpy loads

import numpy as np  # noqa: E402
from native import prepare  # noqa: E402
from scaling import SWEEPS  # noqa: E402
from timing import optimised, optional  # noqa: E402

import irad  # noqa: E402


def _block(fn, args, calls: int) -> tuple[float, float]:
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(calls):
        fn(*args)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall / calls, cpu / calls


def measure(make, args, argnums, jax) -> dict[str, tuple[float, float]]:
    import jax.numpy as jnp

    native = irad.grad(make(np), argnums, backend="native")
    compiled = jax.jit(jax.grad(make(jnp), argnums=argnums))
    systems = {"native": native, "jax": lambda *a: [v.block_until_ready() for v in compiled(*a)]}
    calls = {}
    for name, fn in systems.items():
        fn(*args)
        optimised(fn)  # native: timed at -O2, not tier 0's code (tiered compilation)
        start = time.perf_counter()
        fn(*args)
        calls[name] = max(1, int(0.1 / max(time.perf_counter() - start, 1e-6)))
    blocks = {name: [] for name in systems}
    for _ in range(5):
        for name, fn in systems.items():
            blocks[name].append(_block(fn, args, calls[name]))
    return {name: (statistics.median(w for w, _ in b), statistics.median(c for _, c in b)) for name, b in blocks.items()}


def main() -> None:
    jax = optional("jax")
    if jax is None:
        sys.exit("bench/cpu_time.py needs JAX (make bench installs it)")
    prepare(jax)
    print("| workload | size | native wall µs | JAX wall µs | native / JAX, wall | native CPU µs | JAX CPU µs | native / JAX, CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for title, (_, sizes, workload) in SWEEPS.items():
        for n in sizes:
            make, args, argnums = workload(n)
            row = measure(make, args, argnums, jax)
            (nw, nc), (jw, jc) = row["native"], row["jax"]
            print(f"| {title} | {n} | {nw * 1e6:.0f} | {jw * 1e6:.0f} | {nw / jw:.2f} | {nc * 1e6:.0f} | {jc * 1e6:.0f} | {nc / jc:.2f} |")


if __name__ == "__main__":
    main()
