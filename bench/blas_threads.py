"""Native gradients with irad's BLAS on one thread (the default), with large
products split between the caller and irad's helper thread
(native/split.py, the default; "split anywhere": with the helper free to
run on the caller's CPU, as before it was kept off), and on every
core through OpenBLAS's own threads (irad's behaviour before), beside JAX-jit
and the numpy primal (the function itself).

Run: .venv/bin/python bench/blas_threads.py [--no-jax] [--spin CYCLES] [workload substrings]   (JAX optional)

`--spin CYCLES`: the helper watches for the next product, and a caller for
the helper's last chunk, that many time-stamp-counter cycles before sleeping
(native_split.HELPER_SPIN and CALLER_SPIN, 0 by default).

One process, the same gradient compiled twice: with products split
(irad.config's native_split_products on) and without (off). The code without runs with
irad's copy of OpenBLAS on one thread and on every core (switched between
blocks of calls, irad.backends.native.lapack.set_threads); the split code with the
helper kept off the caller's CPU and not (native_split.set_keep_off, between
blocks), and with narrow products in one call per chunk ("split, unblocked":
native_split.set_blocks(False)). All are taken in turns (one thread, split, split anywhere, split unblocked,
every core, JAX, numpy primal, one thread, ...), each block after the process is
idle (timing.settle_until_idle: OpenBLAS's idle threads spin 0.1 s after
the every-core block and took a core from JAX's). Per gradient call: wall
time and the CPU time the process was charged (getrusage, all threads), each
the median of 7 blocks; then the share of the split products' chunks the
helper ran (the rest: taken back by the caller). The gradients of one thread
and every core are checked to be equal bit for bit, the split's to be the
same bits from call to call and within 1e-12 of one thread's. numpy's own
BLAS, which irad does not use, runs on one thread (as in bench/native.py).
Run it at the default nice level: on a shared machine, a process other users
run at nice 10 is what a second thread waits for.
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
from irad.backends.native import lapack  # noqa: E402
from irad.backends.native import split as native_split


SETTLE = 0.1  # seconds at least between blocks, then until the process is idle (timing.settle_until_idle)


def workloads() -> dict:
    rng = np.random.default_rng(1)
    rows = {f"MLP {n}×64-128-10": (make_mlp, _mlp_arguments(rng, n, 64, 128, 10), (0, 1, 2, 3)) for n in (256, 1024, 4096)}
    rows["attention 64×32"] = (make_attention, tuple(0.2 * rng.normal(size=(32, 32)) for _ in range(3))
                               + (rng.normal(size=(64, 32)),), (0, 1, 2))
    return rows


def _gradient(make, args, argnums, split: bool):
    """The native gradient compiled with products split or not (the switch is
    read when a module compiles; the gradient keeps that code)."""
    with irad.config.overriding(native_split_products=split):
        native = irad.grad(make(np), argnums, backend="native")
        native(*args)
        native.wait_optimised()
    return native


def measure(make, args, argnums, jax, cores: int) -> tuple[dict[str, tuple[float, float]], float]:
    library = lapack.find()
    whole, split = (_gradient(make, args, argnums, s) for s in (False, True))
    threaded = f"{cores} threads"
    placement = [None]

    blocking = [None]

    def keep_off(on: bool) -> None:  # switched once per block, not per call
        if placement[0] is not on:
            native_split.set_keep_off(on)
            placement[0] = on

    def blocks(on: bool) -> None:
        if blocking[0] is not on:
            native_split.set_blocks(on)
            blocking[0] = on

    systems = {
        "1 thread": lambda *a: (lapack.set_threads(library, 1), blocks(True), whole(*a))[-1],
        "split": lambda *a: (lapack.set_threads(library, 1), keep_off(True), blocks(True), split(*a))[-1],
        "split anywhere": lambda *a: (lapack.set_threads(library, 1), keep_off(False), blocks(True), split(*a))[-1],
        "split, unblocked": lambda *a: (lapack.set_threads(library, 1), keep_off(True), blocks(False), split(*a))[-1],
        threaded: lambda *a: (lapack.set_threads(library, cores), whole(*a))[1],
    }
    if jax is not None:
        import jax.numpy as jnp

        compiled_jax = jax.jit(jax.grad(make(jnp), argnums=argnums))
        systems["JAX"] = lambda *a: [v.block_until_ready() for v in compiled_jax(*a)]
    systems["numpy primal"] = make(np)  # the function itself, numpy's BLAS on one thread
    one, many, halves, again = (systems[name](*args) for name in ("1 thread", threaded, "split", "split"))
    assert all(np.array_equal(a, b) for a, b in zip(one, many)), "the gradient depends on the BLAS thread count"
    assert all(np.array_equal(a, b) for a, b in zip(halves, again)), "the split gradient changed from call to call"
    assert all(np.allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(a).max()) for a, b in zip(one, halves)), \
        "the split gradient is not within 1e-12 of the whole products'"
    before = native_split.counts()
    row = in_turns({name: (fn, args) for name, fn in systems.items()}, settle=SETTLE)
    after = native_split.counts()
    helper, caller = after.helper_chunks - before.helper_chunks, after.caller_chunks - before.caller_chunks
    lapack.set_threads(library, lapack.threads() or cores)
    native_split.set_keep_off(True)  # the defaults
    native_split.set_blocks(True)
    return row, helper / max(helper + caller, 1)


def main() -> None:
    if "--spin" in sys.argv:  # before the split products' module is compiled
        native_split.HELPER_SPIN = native_split.CALLER_SPIN = int(sys.argv[sys.argv.index("--spin") + 1])
    jax = None if "--no-jax" in sys.argv else optional("jax")  # its threads spin on after a call
    prepare(jax)
    cores = len(os.sched_getaffinity(0))
    names = ["1 thread", "split", "split anywhere", "split, unblocked", f"{cores} threads"]
    names += (["JAX"] if jax is not None else []) + ["numpy primal"]
    header = ([f"{n} wall µs" for n in names] + [f"{n} CPU µs" for n in names]
              + ["split / 1 thread, wall", "split anywhere / 1 thread, wall", "split / split unblocked, wall",
                 f"{cores} threads / 1, wall"]
              + (["split / JAX, wall", "split anywhere / JAX, wall", "1 thread / JAX, wall"] if jax is not None else [])
              + ["split / numpy primal, wall", "chunks the helper ran"])
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| workload | " + " | ".join(header) + " |")
    print("|---|" + "---|" * len(header))
    wanted = [a for a in sys.argv[1:] if not a.startswith("--") and not a.isdigit()]
    for label, (make, args, argnums) in workloads().items():
        if wanted and not any(w in label for w in wanted):
            continue
        row, helped = measure(make, args, argnums, jax, cores)
        cells = [f"{row[n][0] * 1e6:.0f}" for n in names] + [f"{row[n][1] * 1e6:.0f}" for n in names]
        cells += [f"{row[n][0] / row['1 thread'][0]:.2f}" for n in names[1:3]]
        cells += [f"{row['split'][0] / row['split, unblocked'][0]:.2f}", f"{row[names[4]][0] / row['1 thread'][0]:.2f}"]
        if jax is not None:
            cells += [f"{row[n][0] / row['JAX'][0]:.2f}" for n in ("split", "split anywhere", "1 thread")]
        cells += [f"{row['split'][0] / row['numpy primal'][0]:.2f}", f"{helped:.0%}"]
        print(f"| {label} | " + " | ".join(cells) + " |")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
