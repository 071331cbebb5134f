"""Jacobians against their size (issue 34): jacfwd, jacrev and hessian of an
Rⁿ→Rⁿ function (a scalar function's Hessian) at n = 16, 64, 256, 1024, on
irad's native and Python backends beside JAX's jit; and the Jacobian of a
bundle-adjustment residual vector (a few hundred entries).

Run: .venv/bin/python bench/jacobians.py   (needs JAX; results in docs/benchmarks.md;
     --bundle: the bundle adjustment's table alone)

Each Jacobian is a vmapped jvp (jacfwd) or vjp (jacrev) over the identity
basis, so its compile time should not grow with n. "first" is the first call
of a new Jacobian in a running process (lowering, passes, compile, one run:
for native, its -O0 tier), "steady" the median call once optimised (-O2).
Every result is checked against JAX's before it is timed. t(4n)/t(n) is the
native compile's growth per step of n. Last, the native compile at n = 1024
with and without irad.config's `native_split_loops` (large loop nests run on
two threads): the step where the compile time grows.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("IRAD_NATIVE_CACHE", "0")  # first calls compile: no object code from an earlier run

import numpy as np  # noqa: E402
from timing import median_call_seconds, optimised, optional  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import split_loops as native_split_loops, tiers  # noqa: E402
from irad.base import config  # noqa: E402
from irad.pipeline import options, transformation_module  # noqa: E402

SIZES = (16, 64, 256, 1024)
COMPILE_REPEATS = 3
BACKENDS = ("native", "python")


def functions(xp):
    """The benchmarked functions on the array module `xp` (numpy for irad, jax.numpy for JAX)."""

    def layer(x, A):
        return xp.tanh(A @ x) * x

    def energy(x, A):
        return xp.sum(xp.tanh(A @ x) * x)

    def residuals(cams, points, cam_index, point_index, observed):
        """Reprojection errors: each observation's point rotated (Rodrigues' formula,
        cams[:, :3]), translated (cams[:, 3:6]) and projected with a focal length (cams[:, 6])."""
        c = cams[cam_index]
        p = points[point_index]
        w = c[:, :3]
        theta = xp.sqrt(xp.sum(w * w, axis=1, keepdims=True))
        k = w / theta
        cos, sin = xp.cos(theta), xp.sin(theta)
        kdp = xp.sum(k * p, axis=1, keepdims=True)
        rotated = p * cos + xp.cross(k, p) * sin + k * kdp * (1.0 - cos)
        q = rotated + c[:, 3:6]
        return (c[:, 6:7] * (q[:, :2] / q[:, 2:3]) - observed).ravel()

    return {"layer": layer, "energy": energy, "residuals": residuals}


FUNCTIONS = functions(np)
layer, energy, residuals = FUNCTIONS["layer"], FUNCTIONS["energy"], FUNCTIONS["residuals"]


def bundle(n_cams: int = 8, n_points: int = 40, n_obs: int = 150, seed: int = 0):
    """Cameras (rotation, translation, focal), points and observations: 2 * n_obs residuals."""
    rng = np.random.default_rng(seed)
    cams = np.concatenate([rng.normal(0, 0.3, (n_cams, 3)), rng.normal(0, 0.5, (n_cams, 2)),
                           rng.uniform(4, 6, (n_cams, 1)), rng.uniform(0.8, 1.2, (n_cams, 1))], axis=1)
    points = rng.normal(0, 1, (n_points, 3))
    return (cams, points, rng.integers(0, n_cams, n_obs), rng.integers(0, n_points, n_obs),
            rng.normal(0, 0.3, (n_obs, 2)))


def compile_seconds(fn, args, repeats: int = 1) -> float:
    """Lowering, irad's passes and the backend's compile of the irad
    transformation `fn` for `args` (for native, its -O0 tier), without
    running it: what its first call spends before it runs. The least of
    `repeats`, each once the background compiles before it are done (they
    would share the cores with it)."""
    times = []
    for _ in range(repeats):
        tiers.wait_all()
        start = time.perf_counter()
        module, entry, _, _ = transformation_module(fn, fn._arguments(args, {})[1], options(fn.backend))
        fn.backend.compile(module).function(entry)
        times.append(time.perf_counter() - start)
    tiers.wait_all()
    return min(times)


def first_and_steady(fn, args, irad_function: bool = True) -> tuple[float, float, float, object]:
    """The first call, the compile (`compile_seconds`, the least of
    COMPILE_REPEATS, measured apart before it; 0 for JAX), and the steady
    call (-O2), seconds; and the result."""
    compile_ = compile_seconds(fn, args, COMPILE_REPEATS) if irad_function else 0.0
    start = time.perf_counter()
    got = fn(*args)
    first = time.perf_counter() - start
    optimised(fn)
    return first, compile_, median_call_seconds(fn, args, budget=0.3), got


def check(got, want, what: str) -> None:
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-9, atol=1e-10, err_msg=what)


def split_loops_share(n: int = 1024, repeats: int = 3) -> None:
    """The native compile (`compile_seconds`, the least of `repeats`) with and
    without the splitting of large loop nests, which only nests of 2^19
    elements or more get (n >= 724 here)."""
    print(f"\nnative compile s at n = {n} (the least of {repeats}), by native_split_loops\n")
    print("| transformation | split on | split off |")
    print("|---|---:|---:|")
    rng = np.random.default_rng(n)
    args = (rng.normal(size=n), rng.normal(size=(n, n)) / np.sqrt(n))
    saved = config.read("native_split_loops")
    try:
        for kind, f in (("jacfwd", layer), ("jacrev", layer), ("hessian", energy)):
            times = []
            for split in (True, False):
                config.update("native_split_loops", split)
                times.append(compile_seconds(getattr(irad, kind)(f, backend="native"), args, repeats))
            print(f"| {kind} | {times[0]:.2f} | {times[1]:.2f} |", flush=True)
    finally:
        config.update("native_split_loops", saved)


def size_rows(jax, reference) -> None:
    """The Rⁿ→Rⁿ rows: jacfwd, jacrev and hessian at each n, native and Python beside JAX."""
    kinds = {"jacfwd": layer, "jacrev": layer, "hessian": energy}
    rows = []
    for kind, f in kinds.items():
        for n in SIZES:
            rng = np.random.default_rng(n)
            args = (rng.normal(size=n), rng.normal(size=(n, n)) / np.sqrt(n))
            row = {"kind": kind, "n": n}
            want = None
            if jax is not None:
                jitted = jax.jit(getattr(jax, kind)(reference[f.__name__]))
                row["jax"] = first_and_steady(lambda *a: jitted(*a).block_until_ready(), args, False)[:3]
                want = jitted(*args)
            for backend in BACKENDS:
                *times, got = first_and_steady(getattr(irad, kind)(f, backend=backend), args)
                if want is not None:
                    check(got, want, f"{kind} {backend} n={n}")
                row[backend] = times
            rows.append(row)
            print(kind, n, {k: v for k, v in row.items() if k not in ("kind", "n")}, flush=True)
    print("\nJacobians of x -> tanh(A @ x) * x and Hessian of sum(tanh(A @ x) * x), float64; seconds (s), "
          "milliseconds (ms); compile: lowering, passes and the backend's compile, apart from the first call\n")
    print("| transformation | n | native first s | native compile s | compile t(4n)/t(n) | native steady ms | "
          "python first s | python steady ms | JAX jit first s | JAX jit steady ms | native steady / JAX |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, row in enumerate(rows):
        before = rows[i - 1] if i and rows[i - 1]["kind"] == row["kind"] else None
        growth = f"{row['native'][1] / before['native'][1]:.2f}" if before else "-"
        (first, compile_, steady), jax_row = row["native"], row.get("jax")
        print(f"| {row['kind']} | {row['n']} | {first:.2f} | {compile_:.2f} | {growth} | {steady * 1e3:.3f} | "
              f"{row['python'][0]:.2f} | {row['python'][2] * 1e3:.3f} | "
              + (f"{jax_row[0]:.2f} | {jax_row[2] * 1e3:.3f} | {steady / jax_row[2]:.2f}x |"
                 if jax_row else "- | - | - |"))


def bundle_rows(jax, reference) -> None:
    """The bundle adjustment's jacfwd and jacrev, native and Python beside JAX."""
    args = bundle()
    print(f"\nbundle adjustment: Jacobian of {2 * len(args[2])} residuals with respect to "
          f"{args[0].shape[0]} cameras and {args[1].shape[0]} points (argnums=(0, 1))\n")
    print("| transformation | system | first s | steady ms | / JAX-jit |")
    print("|---|---|---:|---:|---:|")
    for kind in ("jacfwd", "jacrev"):
        systems = {}
        want = None
        if jax is not None:
            jitted = jax.jit(getattr(jax, kind)(reference["residuals"], argnums=(0, 1)))
            systems["JAX jit"] = first_and_steady(lambda *a: jax.block_until_ready(jitted(*a)), args, False)[:3]
            want = jitted(*args)
        for backend in BACKENDS:
            *times, got = first_and_steady(getattr(irad, kind)(residuals, argnums=(0, 1), backend=backend), args)
            if want is not None:
                check(got, want, f"bundle {kind} {backend}")
            systems[f"irad {backend}"] = times
        anchor = systems.get("JAX jit", (None, None, None))[2]
        for name, (first, _, steady) in systems.items():
            ratio = f"{steady / anchor:.2f}x" if anchor else "-"
            print(f"| {kind} | {name} | {first:.2f} | {steady * 1e3:.3f} | {ratio} |", flush=True)


def main() -> None:
    """Every table; `--bundle`: the bundle adjustment's alone."""
    print(f"load average at the start: {' '.join(f'{x:.1f}' for x in os.getloadavg())}", flush=True)
    jax = optional("jax")
    reference = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        reference = functions(jnp)
    irad.jacfwd(layer, backend="native")(np.ones(3), np.ones((3, 3)))  # the process's one-time native set-up,
    native_split_loops.pipeline_marker()  # with the helper thread's module (large loop nests split over threads)
    if "--bundle" not in sys.argv:
        size_rows(jax, reference)
    bundle_rows(jax, reference)
    if "--bundle" not in sys.argv:
        split_loops_share()
    print(f"\nload average at the end: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
