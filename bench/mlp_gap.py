"""Where the MLP gradient's time goes, natively and in JAX-jit (issue 16's one
missed target: native <= JAX on the MLP from batch 1024).

Run: .venv/bin/python bench/mlp_gap.py   (needs JAX)

For the MLP of `make bench` (batch × 64-128-10, tanh, softmax cross-entropy,
the gradient with respect to all four weights) at batch 1024 and 4096:

1. The whole gradient, native (irad's defaults: BLAS on one thread, products
   of 2**22 multiply-adds or more split with a helper thread, narrow ones in blocks, native/split.py;
   large loop nests split by rows with the same helper, native/split_loops.py; the same with the loops
   unsplit, irad.config's native_split_loops off; `--one-core` turns the split off with the second core) and
   JAX-jit: wall time and CPU time per call (getrusage, all threads), medians
   of 7 blocks taken in turns; then which of JAX's threads ran and their share
   of its CPU time (/proc/self/task, Linux).
2. Its parts, each alone: the five matrix products, as the native gradient
   calls them (irad's OpenBLAS `cblas_dgemm` through ctypes, row-major, the
   same transpose flags) and as JAX-jit computes them, with GFLOP/s; and
   `sum(tanh(z))` over the (batch, 128) hidden layer (native: irad's compiled
   code, irad's own tanh, native/tanh_ir.py; JAX: XLA's; a scalar result, so
   neither allocates an array). CPU time, medians of 7 blocks in turns.

(Earlier runs also timed both with libmvec's `tanh` in loops, through the
switch IRAD_NATIVE_TANH=libmvec, since retired: docs/benchmarks.md keeps
those tables.)

`--jax-one-thread` reruns the whole in a child process with XLA's CPU backend
on one thread (`XLA_FLAGS=--xla_cpu_multi_thread_eigen=false
intra_op_parallelism_threads=1`, read when JAX starts; in JAX 0.10.2 its
XLAEigen threads still run), `--one-core` pins the process to one core
(sched_setaffinity: every thread of JAX and native code shares it). `--loop SECONDS`
only calls the native gradient at batch 4096 over and over (at -O2), for a
profiler: `perf record -g -- .venv/bin/python bench/mlp_gap.py --loop 10`.
"""

from __future__ import annotations

import ctypes
import glob
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's; before numpy loads

import numpy as np  # noqa: E402
from arrays import make_mlp  # noqa: E402
from native import _mlp_arguments, native_primal, prepare  # noqa: E402
from timing import in_turns, optional  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import lapack  # noqa: E402

ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
ROW_MAJOR, NO_TRANS, TRANS = 101, 111, 112


def _thread_ticks() -> dict[str, tuple[str, int]]:
    ticks = {}
    for stat in glob.glob(f"/proc/{os.getpid()}/task/*/stat"):
        text = open(stat).read()
        fields = text[text.rindex(")") + 2:].split()
        ticks[stat.split("/")[-2]] = (text[text.index("(") + 1:text.rindex(")")], int(fields[11]) + int(fields[12]))
    return ticks


def dgemm(address: int | None = None):
    """irad's OpenBLAS cblas_dgemm (or the function at `address`, which takes
    the same arguments), and c = op(a) @ op(b) with it (row-major)."""
    library = lapack.find()
    if address is None:
        address = ctypes.cast(getattr(ctypes.CDLL(library.path), library.symbol("cblas_dgemm")), ctypes.c_void_p).value
    integer = ctypes.c_int64 if library.int_bits == 64 else ctypes.c_int32
    pointer = ctypes.c_void_p
    gemm = ctypes.CFUNCTYPE(None, *[ctypes.c_int32] * 3, *[integer] * 3, ctypes.c_double, pointer, integer, pointer,
                            integer, ctypes.c_double, pointer, integer)(address)

    def product(a, ta, b, tb, c):
        m, n = c.shape
        k = a.shape[0] if ta else a.shape[1]
        gemm(ROW_MAJOR, TRANS if ta else NO_TRANS, TRANS if tb else NO_TRANS, m, n, k, 1.0, a.ctypes.data, a.shape[1],
             b.ctypes.data, b.shape[1], 0.0, c.ctypes.data, n)

    return product


def whole(n: int, jax) -> None:
    import jax.numpy as jnp

    args = _mlp_arguments(np.random.default_rng(1), n, 64, 128, 10)

    def compiled_gradient(**switches):
        with irad.config.overriding(**switches):  # native code reads its switches when a module is compiled
            gradient = irad.grad(make_mlp(np), (0, 1, 2, 3), backend="native")
            gradient(*args)  # compiled now: the gradient keeps this code
            gradient.wait_optimised()
        return gradient

    native = compiled_gradient()
    unsplit = compiled_gradient(native_split_loops=False)  # loop nests on the calling thread alone
    compiled = jax.jit(jax.grad(make_mlp(jnp), argnums=(0, 1, 2, 3)))
    run_jax = lambda *a: [v.block_until_ready() for v in compiled(*a)]  # noqa: E731
    row = in_turns({"native": (native, args), "unsplit": (unsplit, args), "jax": (run_jax, args)})
    (nw, nc), (uw, uc), (jw, jc) = row["native"], row["unsplit"], row["jax"]
    before, start, calls = _thread_ticks(), time.perf_counter(), 0
    while time.perf_counter() - start < 1.0:
        run_jax(*args)
        calls += 1
    after = _thread_ticks()
    ran = sorted((after[t][1] - before.get(t, ("", 0))[1], after[t][0]) for t in after)
    ran = [(ticks, name) for ticks, name in ran if ticks > 0]
    total = sum(ticks for ticks, _ in ran) or 1
    shares = ", ".join(f"{name} {ticks / total:.0%}" for ticks, name in reversed(ran))
    print(f"| {n} | {nw * 1e6:.0f} | {uw * 1e6:.0f} | {jw * 1e6:.0f} | {nw / jw:.2f} | {uw / jw:.2f} "
          f"| {nc * 1e6:.0f} | {uc * 1e6:.0f} | {jc * 1e6:.0f} | {nc / jc:.2f} "
          f"| {nc / uc:.2f} | {len(ran)}: {shares} |")


def parts(n: int, jax) -> None:
    import jax.numpy as jnp

    rng = np.random.default_rng(0)
    x, w1, w2 = rng.normal(size=(n, 64)), rng.normal(size=(64, 128)), rng.normal(size=(128, 10))
    h, d, dz = np.tanh(x @ w1), rng.normal(size=(n, 10)), rng.normal(size=(n, 128))
    gemm = dgemm()
    # label: (a, transpose a, b, transpose b), as the native gradient calls them
    products = {
        "x @ w1": (x, False, w1, False), "h @ w2": (h, False, w2, False), "dlogits @ w2.T": (d, False, w2, True),
        "h.T @ dlogits": (h, True, d, False), "x.T @ dz": (x, True, dz, False),
    }
    for label, (a, ta, b, tb) in products.items():
        m, k = (a.shape[1], a.shape[0]) if ta else a.shape
        out = np.empty((m, b.shape[0] if tb else b.shape[1]))
        jitted = jax.jit(lambda u, v, ta=ta, tb=tb: (u.T if ta else u) @ (v.T if tb else v))
        ja, jb = jnp.asarray(a), jnp.asarray(b)
        row = in_turns({"blas": (gemm, (a, ta, b, tb, out)),
                         "jax": (lambda u, v: jitted(u, v).block_until_ready(), (ja, jb))})
        flops = 2.0 * out.size * k
        (_, bc), (_, jc) = row["blas"], row["jax"]
        print(f"| {n} | {label} ({m}×{out.shape[1]}×{k}) | {bc * 1e6:.0f} | {flops / bc / 1e9:.1f} | "
              f"{jc * 1e6:.0f} | {flops / jc / 1e9:.1f} |")
    z = x @ w1
    tanh = native_primal(sum_of_tanh, (z,))  # a scalar: no result array to allocate
    tanh(z)
    tanh.native_module.wait_optimised()  # -O2 code, vectorised
    jitted = jax.jit(lambda v: jnp.sum(jnp.tanh(v)))
    row = in_turns({"native": (tanh, (z,)), "jax": (lambda v: jitted(v).block_until_ready(), (jnp.asarray(z),))})
    print(f"| {n} | sum(tanh(z)) ({n}×128) | {row['native'][1] * 1e6:.0f} | – | {row['jax'][1] * 1e6:.0f} | – |")


def sum_of_tanh(v):
    return np.sum(np.tanh(v))


def loop(seconds: float) -> None:
    args = _mlp_arguments(np.random.default_rng(1), 4096, 64, 128, 10)
    native = irad.grad(make_mlp(np), (0, 1, 2, 3), backend="native")
    native(*args)
    native.wait_optimised()
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        native(*args)


def main() -> None:
    if "--loop" in sys.argv:
        return loop(float(sys.argv[sys.argv.index("--loop") + 1]))
    if "--one-core" in sys.argv:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})  # before JAX starts its threads
    if "--jax-one-thread" in sys.argv:
        env = {**os.environ, "XLA_FLAGS": ONE_THREAD}
        sys.exit(subprocess.call([sys.executable, __file__], env=env))
    jax = optional("jax")
    if jax is None:
        sys.exit("bench/mlp_gap.py needs JAX (make bench installs it)")
    prepare(jax)
    print(f"XLA_FLAGS={os.environ.get('XLA_FLAGS', '')!r}, irad's BLAS threads: {lapack.get_threads(lapack.find())}, "
          f"cores: {sorted(os.sched_getaffinity(0))}")
    print("| batch | native wall µs | loops unsplit wall µs | JAX wall µs | native / JAX, wall "
          "| unsplit / JAX, wall | native CPU µs | loops unsplit CPU µs "
          "| JAX CPU µs | native / JAX, CPU | native / unsplit, CPU "
          "| JAX's threads that ran: share of its CPU time |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in (1024, 4096):
        whole(n, jax)
    print()
    print("| batch | part | native CPU µs | native GFLOP/s | JAX CPU µs | JAX GFLOP/s |")
    print("|---|---|---|---|---|---|")
    for n in (1024, 4096):
        parts(n, jax)


if __name__ == "__main__":
    main()
