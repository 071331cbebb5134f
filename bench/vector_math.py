"""exp, log and tanh over arrays, natively: accuracy in ulp and speed.

Run: .venv/bin/python bench/vector_math.py   (make bench installs mpmath and JAX;
SLEEF's column appears where Debian's libsleef3 is installed)

The native backend calls glibc's libmvec for these loops
(irad/backends/native/vector_math.py); irad.config's native_vector_math=0 keeps
libm's scalar functions. The bench adds SLEEF's GNU-ABI build (same function
names) to the module's table where it is installed, and chooses the library
(and whether tanh is irad's own) by replacing vector_math's choice, and
compares, in one run:

- accuracy: the error in ulp of each result against the correctly rounded
  value (mpmath, 128 bits), max and median, for each library (native), libm
  (native, vector math off) and numpy, in float64 and float32, over a
  sample that covers each function's whole domain (uniform in the exponent),
  the ranges where it is steep or flat, and the special values (signed
  zeros, subnormals, infinities, NaN, overflow, underflow); "≠ libm" counts
  the special inputs whose result differs from libm's (bitwise, any NaN equal
  to any NaN). In float32, MLIR's polynomial approximations
  (`--test-math-polynomial-approximation`, which rewrites f32 only; "approx")
  are a column too, and for tanh irad's own (irad/backends/native/tanh_ir.py; "irad").
- speed: the median time of `f(x)` on 1e3 to 1e6 float64 elements, native
  (libm, each library, and irad's defaults: libmvec with irad's own tanh)
  against numpy and JAX-jit (on device arrays).
- workloads: the gradient of bench/native.py's rows where transcendentals
  over arrays matter, natively in three configurations, interleaved in
  rounds in this one process (medians of the rounds): as before this change
  (LLVM's generic x86-64 target, libm), this CPU's target with libm, and this
  CPU's target with the vector math library, and with irad's own tanh
  (the default since 2026-12-04); JAX-jit beside them.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from irad.backends.native import llvm_jit  # noqa: E402
from irad.backends.native import compile as native
from irad.backends.native import vector_math
from timing import median_seconds, optional  # noqa: E402


def exp_array(x):  # not `exp`: a public function named so would shadow libm's (see docs/backends/native.md)
    return np.exp(x)


def log_array(x):
    return np.log(x)


def tanh_array(x):
    return np.tanh(x)


FUNCTIONS = {"exp": exp_array, "log": log_array, "tanh": tanh_array}
APPROXIMATION = "--test-math-polynomial-approximation"
vector_math.LIBRARIES.setdefault("sleef", "sleefgnuabi")  # measured, not used by irad


@contextlib.contextmanager
def loops_calling(library: str | None, own_tanh: bool):
    """Native code compiled in the block calls `library` (None: libm) in loops,
    and irad's own tanh if `own_tanh`, else the library's: vector_math's
    choice replaced (SLEEF is no choice of irad's, and a library's own tanh
    has no switch), with the object cache off (its key cannot tell)."""
    saved = vector_math.choice, vector_math.own_tanh
    vector_math.choice = lambda: library
    if not own_tanh:
        vector_math.own_tanh = lambda features: False
    try:
        with irad.config.overriding(native_cache="0"):
            yield
    finally:
        vector_math.choice, vector_math.own_tanh = saved


def compiled(f, x, library: str):
    """f natively on arrays like x, calling `library` (a vector math library,
    "libm", "approx" for libm and MLIR's polynomial approximations, or "irad"
    for irad's defaults: libmvec, and irad's own tanh). A library's column
    is the library's own tanh too."""
    saved_lowering = native.LOWERING
    if library == "approx":
        native.LOWERING = (APPROXIMATION, *native.LOWERING)
    chosen = "libmvec" if library == "irad" else library if library in vector_math.LIBRARIES else None
    try:
        with loops_calling(chosen, own_tanh=library == "irad"):
            module = irad.lower(f, x)
            run = native.compile_module(module).function(f.__name__)
    finally:
        native.LOWERING = saved_lowering
    call = lambda a: run(a)[0]  # noqa: E731
    call.native_module = run.native_module  # so that median_seconds times its -O2 code, not tier 0's
    return call


def libraries() -> list[str]:
    """The vector math libraries installed here."""
    return [name for name in vector_math.LIBRARIES if vector_math.available(name)]


# ---- samples --------------------------------------------------------------------
def sample(name: str, dtype, n: int, rng) -> tuple[np.ndarray, int]:
    """n inputs over the whole domain of `name`, then its special values, and how many those are."""
    info = np.finfo(dtype)
    big, tiny = np.log10(info.max), np.log10(info.smallest_subnormal)

    def wide(lo, hi, k):  # |x| uniform in the exponent, both signs
        return rng.choice([-1.0, 1.0], k) * 10.0 ** rng.uniform(lo, hi, k)

    k = n // 4
    if name == "exp":
        top, bottom = np.log(info.max), np.log(info.smallest_subnormal)
        parts = [rng.uniform(bottom, top, k), rng.uniform(-1, 1, k), wide(tiny, 0, k), rng.uniform(bottom, np.log(info.tiny), k)]
        special = [0.0, -0.0, np.inf, -np.inf, np.nan, top, np.nextafter(top, np.inf, dtype=dtype), 1000.0, -1000.0, bottom,
                   np.nextafter(bottom, -np.inf, dtype=dtype), info.smallest_subnormal, info.max, -info.max]
    elif name == "log":
        parts = [10.0 ** rng.uniform(tiny, big, k), rng.uniform(0.5, 2.0, k), 1.0 + wide(-16 if dtype == np.float64 else -7, -1, k),
                 rng.uniform(0, 1, k) * info.tiny]
        special = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, info.smallest_subnormal, info.tiny, info.max, -info.tiny]
    else:
        parts = [rng.uniform(-25, 25, k), rng.uniform(-1, 1, k), wide(tiny, 0, k), wide(0, big, k)]
        special = [0.0, -0.0, np.inf, -np.inf, np.nan, info.smallest_subnormal, -info.smallest_subnormal, info.max, -info.max]
    return np.concatenate([np.concatenate(parts).astype(dtype), np.array(special, dtype=dtype)]), len(special)


# ---- errors -----------------------------------------------------------------------
def correctly_rounded_error(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """|y - f(x)| in ulp of the exact f(x), for finite exact results (mpmath)."""
    import mpmath

    mpmath.mp.prec = 128
    exact = {"exp": mpmath.exp, "log": mpmath.log, "tanh": mpmath.tanh}[name]
    digits, lowest = (53, -1074) if x.dtype == np.float64 else (24, -149)
    errors = []
    for xi, yi in zip(x.tolist(), y.tolist()):
        if not np.isfinite(xi) or (name == "log" and xi <= 0) or not np.isfinite(yi):
            continue
        r = exact(mpmath.mpf(xi))
        if r == 0:
            continue
        _, e = mpmath.frexp(r)
        ulp = mpmath.ldexp(1, max(e - digits, lowest))
        errors.append(float(abs(mpmath.mpf(yi) - r) / ulp))
    return np.array(errors)


def same(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Elementwise: bitwise equal, or both NaN."""
    bits = {np.float64: np.int64, np.float32: np.int32}[a.dtype.type]
    return (a.view(bits) == b.view(bits)) | (np.isnan(a) & np.isnan(b))


def accuracy(rng, n: int) -> list[str]:
    columns = [*libraries(), "libm", "numpy", "approx", "irad"]
    lines = ["| function | dtype | " + " | ".join(f"{c} max / median ulp" for c in columns)
             + " | " + " | ".join(f"{c} ≠ libm on specials" for c in columns if c not in ("libm", "numpy")) + " |",
             "|---|---|" + "---|" * (2 * len(columns) - 2)]
    for name, f in FUNCTIONS.items():
        for dtype in (np.float64, np.float32):
            x, n_special = sample(name, dtype, n, rng)
            results = {c: compiled(f, x, c)(x) for c in columns
                       if c != "numpy" and (c != "approx" or dtype == np.float32) and (c != "irad" or name == "tanh")}
            with np.errstate(all="ignore"):
                results["numpy"] = f(x)
            cells = [name, dtype.__name__]
            for key in columns:
                if key not in results:
                    cells.append("—")
                    continue
                err = correctly_rounded_error(name, x, results[key])
                cells.append(f"{err.max():.2f} / {np.median(err):.2f}")
            special = slice(len(x) - n_special, None)
            for key in columns:
                if key in ("libm", "numpy"):
                    continue
                if key not in results:
                    cells.append("—")
                    continue
                differ = ~same(results[key][special], results["libm"][special])
                cells.append(f"{differ.sum()} of {n_special}" + (f": x = {x[special][differ].tolist()}" if differ.any() else ""))
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def speed(rng, jax) -> list[str]:
    columns = ["libm", *libraries(), "irad"]
    lines = ["| function | n | numpy µs | JAX-jit µs | " + " | ".join(f"native {c} µs" for c in columns)
             + " | " + " | ".join(f"libm / {c}" for c in columns[1:]) + " | numpy / libmvec |",
             "|---|---|---|---|" + "---|" * (2 * len(columns))]
    for name, f in FUNCTIONS.items():
        for n in (1_000, 10_000, 100_000, 1_000_000):
            x = rng.uniform(0.1, 5.0, n)
            times = {"numpy": median_seconds(f, x)}
            if jax is not None:
                jf, jx = jax.jit(getattr(jax.numpy, name)), jax.device_put(x)
                times["jax"] = median_seconds(lambda a: jf(a).block_until_ready(), jx)
            for c in columns:
                times[c] = median_seconds(compiled(f, x, c), x)
            cells = [name, f"{n:.0e}"] + [f"{times[k] * 1e6:.1f}" if k in times else "—" for k in ("numpy", "jax", *columns)]
            cells += [f"{times['libm'] / times[c]:.1f}×" for c in columns[1:]]
            cells += [f"{times['numpy'] / times['libmvec']:.1f}×"]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


WORKLOADS = ("MLP 256×64-128-10, tanh, softmax-xent", "attention 64×32", "LSTM h=32 T=20 (loop)",
             "logistic regression N=5000 d=50", "GMM d=10 K=25 N=1000 (vectorised)")


def _generic_target():
    return "", "", {}  # LLVM's default x86-64 (SSE2), no CPU features: libm only


CONFIGURATIONS = {  # name -> (target, vector math library (None: libm), irad's own tanh)
    "generic x86-64, libm (before)": (_generic_target, None, False),
    "this CPU, libm": (llvm_jit._host, None, False),
    "this CPU, libmvec": (llvm_jit._host, "libmvec", False),
    "this CPU, libmvec, irad's tanh": (llvm_jit._host, "libmvec", True),
}


def workloads(jax, rounds: int = 3) -> list[str]:
    import importlib.util

    spec = importlib.util.spec_from_file_location("native_bench", Path(__file__).parent / "native.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    lines = ["| workload | " + " | ".join(f"{c} µs" for c in CONFIGURATIONS) + " | JAX-jit µs | before / after | after / JAX |",
             "|---|" + "---|" * (len(CONFIGURATIONS) + 3)]
    host = llvm_jit._host
    for label in WORKLOADS:
        make, args, argnums = bench.WORKLOADS[label]
        gradients = {}
        try:
            for name, (target, library, own_tanh) in CONFIGURATIONS.items():
                llvm_jit._host = target
                with loops_calling(library, own_tanh):
                    gradients[name] = irad.grad(make(np), argnums, backend="native")  # a new function: compiled anew
                    gradients[name](*args)
        finally:
            llvm_jit._host = host
        reference = irad.grad(make(np), argnums)(*args)
        for name, g in gradients.items():
            error = max(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))) for a, b in zip(g(*args), reference))
            assert error < 1e-9, f"{label}, {name}: native and Python gradients differ by {error}"
        runs = {name: [] for name in [*gradients, "jax"]}
        if jax is not None:
            grad = jax.jit(jax.grad(make(jax.numpy), argnums=argnums))
            grad(*args)
        for _ in range(rounds):
            for name, g in gradients.items():
                runs[name].append(median_seconds(g, *args))
            if jax is not None:
                runs["jax"].append(median_seconds(lambda *a: [v.block_until_ready() for v in grad(*a)], *args))
        t = {name: float(np.median(r)) if r else float("nan") for name, r in runs.items()}
        before, after = t["generic x86-64, libm (before)"], t["this CPU, libmvec, irad's tanh"]
        cells = [label, *(f"{t[name] * 1e6:.0f}" for name in gradients), f"{t['jax'] * 1e6:.0f}",
                 f"{before / after:.2f}×", f"{after / t['jax']:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def main() -> None:
    if not native.native_tools_available():
        sys.exit(f"bench/vector_math.py needs mlir-opt and mlir-translate 22: {native.INSTALL_HINT}")
    if not vector_math.available("libmvec"):
        sys.exit("bench/vector_math.py needs glibc's libmvec (x86-64)")
    if optional("mpmath") is None:
        sys.exit("bench/vector_math.py needs mpmath for the correctly rounded reference: pip install mpmath")
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(0)
    print(f"{time.strftime('%Y-%m-%d')}, {os.uname().machine}\n")
    print("\n".join(accuracy(rng, int(os.environ.get("SAMPLE", "20000")))))
    print()
    print("\n".join(speed(rng, jax)))
    print()
    print("\n".join(workloads(jax)))


if __name__ == "__main__":
    main()
