"""First calls in a running process: the native backend's first gradient of a
new function against JAX's `jit(grad)` and irad's numpy backend (issue 34).

Run: .venv/bin/python bench/first_call.py [substring of a row ...]   (make bench installs JAX)

One process: it first takes one irad gradient on each backend and one JAX
gradient (imports and one-time set-up are not first-call latency), then, for
each of bench/native.py's issue rows (GMM, MLP, logistic regression, LSTM
loop, attention), times REPEATS (default 3) first calls of a *fresh* function
object (the workload's builder called again, so no cache of irad's or JAX's
holds it): `irad.grad(f, backend="native")(*args)` (mlir-opt and
mlir-translate started by the compile before, irad/backends/native/warm_tools.py),
the same with the tools started cold (the waiting pair ended first, as for a
process's first compile), the same with the numpy backend, and `jax.jit(jax.grad(f))(*args)` until its result is ready. Each
column is the median wall time; the native object cache is off
(IRAD_NATIVE_CACHE=0: a cache hit is not a first call). Between two
measurements the native backend's background -O2 compile (tiers.py) is
waited for, so it never shares the cores with a measured call; it and the
next compile's tools start once the first call has returned
(tiers.Deferred): the time stops as they begin to start.

"native stages" splits the native first call by the `irad` logger's stage
records (irad.config's `log_compile`; docs/backends/native.md, "First calls:
warm tools and progress logging"): lowering, differentiation, optimisation,
preparing for mlir-opt, mlir-opt and mlir-translate (with, since
2026-12-07, tier 0's compile of the runtime, done meanwhile), LLVM parse
and link, LLVM -O0 (tier 0); medians, wall ms. The rest of a first call (the entry,
the call itself, starting the background -O2 compile) is not in a stage.
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("IRAD_NATIVE_CACHE", "0")

import numpy as np  # noqa: E402
from native import WORKLOADS, prepare  # noqa: E402
from timing import optional  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import tiers, warm_tools  # noqa: E402

REPEATS = int(os.environ.get("REPEATS", "3"))
ROWS = ("GMM d=10 K=25 N=1000", "MLP 256×64", "logistic regression N=5000", "LSTM h=32", "attention 64×32")


class Stages(logging.Handler):
    """Collects the seconds of each stage the `irad` logger reports."""

    def __init__(self):
        super().__init__(logging.DEBUG)
        self.seconds: dict[str, float] = {}

    def emit(self, record: logging.LogRecord) -> None:
        stage = getattr(record, "irad_stage", None)
        if stage is not None:
            self.seconds[stage] = self.seconds.get(stage, 0.0) + record.irad_seconds


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(label: str, make, args, argnums, jax, stages: Stages) -> dict:
    import jax.numpy as jnp

    times: dict[str, list[float]] = {"native": [], "native cold": [], "python": [], "jax": []}
    split: list[dict[str, float]] = []
    for _ in range(REPEATS):
        stages.seconds = {}
        times["native"].append(timed(lambda: irad.grad(make(np), argnums, backend="native")(*args)))
        split.append(stages.seconds)
        stages.seconds = {}  # (the cold call's stages are not kept)
        tiers.wait_all()
        warm_tools.discard()  # the tools started by the call, as a process's first compile does
        times["native cold"].append(timed(lambda: irad.grad(make(np), argnums, backend="native")(*args)))
        tiers.wait_all()
        times["python"].append(timed(lambda: irad.grad(make(np), argnums, backend="python")(*args)))
        times["jax"].append(timed(lambda: [v.block_until_ready() for v in jax.jit(jax.grad(make(jnp), argnums))(*args)]))
    row = {"workload": label, **{k: statistics.median(v) for k, v in times.items()}}
    row["stages"] = {k: statistics.median(s.get(k, 0.0) for s in split) for k in split[0]}
    return row


def table(rows: list[dict]) -> list[str]:
    ms = lambda s: f"{s * 1e3:.0f}"  # noqa: E731
    lines = ["| workload | native ms | native, tools cold ms | numpy backend ms | JAX jit(grad) ms | native / JAX | "
             "tools cold / JAX | numpy backend / JAX | native stages ms |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        stages = ", ".join(f"{k} {ms(v)}" for k, v in r["stages"].items() if "background" not in k)
        lines.append(f"| {r['workload']} | {ms(r['native'])} | {ms(r['native cold'])} | {ms(r['python'])} | "
                     f"{ms(r['jax'])} | {r['native'] / r['jax']:.2f} | {r['native cold'] / r['jax']:.2f} | "
                     f"{r['python'] / r['jax']:.2f} | {stages} |")
    return lines


def main() -> None:
    jax = optional("jax")
    if jax is None:
        sys.exit("bench/first_call.py compares with JAX: pip install jax (make bench installs it)")
    prepare(jax)
    import jax.numpy as jnp

    jax.jit(jax.grad(lambda x: jnp.sum(x * x)))(np.ones(3)).block_until_ready()  # JAX's one-time set-up
    stages = Stages()
    logger = logging.getLogger("irad")
    logger.addHandler(stages)
    logger.setLevel(logging.DEBUG)
    wanted = sys.argv[1:]
    rows = []
    with irad.config.overriding(log_compile=True):
        for label, (make, args, argnums) in WORKLOADS.items():
            if any(label.startswith(r) for r in ROWS) and (not wanted or any(w in label for w in wanted)):
                rows.append(measure(label, make, args, argnums, jax, stages))
                tiers.wait_all()
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
