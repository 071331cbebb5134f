"""How the native backend should run a matrix product: the choice behind
irad/backends/native/blas.py, measured side by side in one run.

Three ways to compile `a @ b` natively, for square and MLP-shaped products:

* loops: MLIR's linalg lowering to scalar loops (what the native backend did
  before, and still does below the threshold);
* MLIR vector: the matmul tiled on tensors (tile_using_for, TILE) and
  vectorised by MLIR's transform dialect in mlir-opt 22
  (vectorize_children_and_apply_patterns, contractions lowered to outer
  products and FMAs), then the usual lowering plus vector-to-llvm;
* BLAS: cblas_dgemm from the OpenBLAS irad loads (native/blas.py).

Each column is the median of 7 repeats of the native primal (the product
and its result's allocation); numpy's `a @ b` is printed for reference.
The crossover size where BLAS beats loops sets the default of irad.config's
`native_blas_min_flops`.

With `--workloads`, the rows of `make bench` (bench/native.py) whose time
goes into matrix products instead: the native gradient and primal with the
products as loops (before BLAS) and through BLAS, against JAX jit, all in one
run (the threshold is read when a module is compiled).

Run: .venv/bin/python bench/matmul_lowering.py [--workloads]
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # as bench/native.py

import numpy as np  # noqa: E402
from timing import median_seconds  # noqa: E402
from xdsl.dialects import func  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402

# (M, N, K) tile of the vectorised variant; [8, 8, 8] was about the best of the
# few tried ([4, 8, 1], [8, 8, 1], [4, 8, 4], [8, 8, 8]) at 64 and 256; $TILE chooses another.
TILE = os.environ.get("TILE", "8, 8, 8")

SCHEDULE = """
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %mm = transform.structured.match ops{["linalg.matmul"]} in %root : (!transform.any_op) -> !transform.any_op
    %t, %l:3 = transform.structured.tile_using_for %mm tile_sizes [TILE]
      : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %f = transform.structured.match ops{["func.func"]} in %root : (!transform.any_op) -> !transform.any_op
    %v = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %v {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
"""


def _vectorising(text: str, passes) -> str:
    """lower_to_llvm_ir with the matmul tiled and vectorised first."""
    opt = native.require_tool("mlir-opt")
    head, rest = text.split("{", 1)
    scheduled = head + "attributes {transform.with_named_sequence} {" + rest.rstrip().rstrip("}") + SCHEDULE.replace("TILE", TILE) + "}\n"
    vectorised = native._run_tool([opt, "--transform-interpreter"], scheduled, "the transform interpreter")
    lines = vectorised.splitlines()
    start = next(i for i, line in enumerate(lines) if "transform.named_sequence" in line)
    stripped = "\n".join(lines[:start] + ["}"])
    passes = list(passes)
    passes.insert(passes.index("--convert-linalg-to-loops"), "--convert-vector-to-scf")
    passes.insert(passes.index("--finalize-memref-to-llvm=use-generic-functions"), "--convert-vector-to-llvm")
    passes.insert(passes.index("--reconcile-unrealized-casts"), "--convert-ub-to-llvm")
    return _real_lower(stripped, passes)


_real_lower = native.lower_to_llvm_ir


def compiled(variant: str, a, b):
    matmul = lambda x, y: x @ y  # noqa: E731
    module = irad.lower(matmul, a, b)
    (public,) = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.sym_visibility is None]
    native.lower_to_llvm_ir = _vectorising if variant == "MLIR vector" else _real_lower
    try:
        with irad.config.overriding(native_blas_min_flops=0 if variant == "BLAS" else 10**18):
            run = native.compile_module(module).function(public)
    finally:
        native.lower_to_llvm_ir = _real_lower
    (out,) = run(a, b)
    assert np.allclose(out, a @ b), variant
    return run


SHAPES = [(n, n, n) for n in (8, 16, 24, 32, 48, 64, 128, 256)] + [(256, 128, 64), (4096, 128, 64), (256, 10, 128)]
VARIANTS = ("loops", "MLIR vector", "BLAS")


WORKLOADS = ("GMM d=10 K=25 N=1000", "MLP 256×", "MLP 4096×", "LSTM h=32 T=20", "attention 64×32")


def workloads() -> None:
    """Before and after BLAS on bench/native.py's rows, side by side."""
    import jax
    import jax.numpy as jnp
    import native as rows

    jax.config.update("jax_enable_x64", True)
    print("| workload | JAX jit µs | native loops µs | native BLAS µs | loops / JAX | BLAS / JAX "
          "| loops / loops primal | BLAS / BLAS primal |")
    print("|" + "---|" * 8)
    for label, (make, args, argnums) in rows.WORKLOADS.items():
        if not label.startswith(WORKLOADS):
            continue
        jitted = jax.jit(jax.grad(make(jnp), argnums=argnums))
        jitted(*args)
        jax_time = median_seconds(lambda *a: [v.block_until_ready() for v in jitted(*a)], *args)
        times = {}
        for variant, threshold in (("loops", 10**18), ("BLAS", irad.config.default("native_blas_min_flops"))):
            with irad.config.overriding(native_blas_min_flops=threshold):  # compiled at the first calls
                f = make(np)
                grad = irad.grad(f, argnums, backend="native")
                primal = rows.native_primal(f, args)
                times[variant] = (median_seconds(grad, *args), median_seconds(primal, *args))
        (lg, lp), (bg, bp) = times["loops"], times["BLAS"]
        cells = [label, f"{jax_time * 1e6:.0f}", f"{lg * 1e6:.0f}", f"{bg * 1e6:.0f}", f"{lg / jax_time:.2f}",
                 f"{bg / jax_time:.2f}", f"{lg / lp:.2f}", f"{bg / bp:.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)


def main() -> None:
    if "--workloads" in sys.argv[1:]:
        return workloads()
    rng = np.random.default_rng(0)
    print("| M×N×K | numpy µs | " + " | ".join(f"{v} µs" for v in VARIANTS) + " | loops / BLAS | MLIR vector / BLAS |")
    print("|" + "---|" * (len(VARIANTS) + 4))
    for m, n, k in SHAPES:
        a, b = rng.normal(size=(m, k)), rng.normal(size=(k, n))
        times = {v: median_seconds(compiled(v, a, b), a, b) for v in VARIANTS}
        reference = median_seconds(np.matmul, a, b)
        cells = [f"{m}×{n}×{k}", f"{reference * 1e6:.1f}", *(f"{times[v] * 1e6:.1f}" for v in VARIANTS),
                 f"{times['loops'] / times['BLAS']:.2f}", f"{times['MLIR vector'] / times['BLAS']:.2f}"]
        print("| " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
