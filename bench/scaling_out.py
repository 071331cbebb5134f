"""Scaling out: the figures behind docs/scaling-out.md.

Run: .venv/bin/python bench/scaling_out.py [ship] [dask] [pool] [native-cache]
(all sections by default; needs dask and distributed, native rows llvmlite and mlir-22-tools)

    ship          the size and time of pickling a gradient (before and after
                  its first call; a script's function by value, with
                  cloudpickle) and of unpickling it; the first call in a
                  worker (which compiles) against the next
    dask          seconds per epoch of examples/dask_data_parallel.py's
                  training step (value_and_grad over 4 shards, tree-reduced)
                  in this process and on a LocalCluster of 1 and of 2 worker
                  processes: wall clock, and the CPU seconds of the busiest
                  worker's tasks (what the epoch would take with a free core
                  per worker, less scheduling)
    pool          the same step on a spawn-based ProcessPoolExecutor of 1 and 2
    native-cache  a native gradient's first call in a fresh process, with the
                  machine-code cache (irad/backends/native/object_cache.py)
                  empty and then filled by an earlier process: what shipping
                  object code to a worker would save

Wall-clock medians; the machine is shared, so compare rows of one run (and
see the load average it prints: two workers need two free cores).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import pickle
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# one BLAS thread, as Dask gives its workers: on a loaded machine spinning BLAS threads
# would make this process's own figures meaningless
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

import irad  # noqa: E402
import dask_data_parallel as example  # noqa: E402

BACKENDS = ["python"] + (["native"] if irad.Native().unavailable_reason() is None else [])
SAMPLES, FEATURES, HIDDEN, SHARDS, EPOCHS = 400_000, 16, 32, 4, 6


def params(rng=np.random.default_rng(1)):
    return (rng.normal(size=(FEATURES, HIDDEN)) / 4, np.zeros(HIDDEN), rng.normal(size=HIDDEN) / 6)


def median_time(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def ship() -> None:
    import cloudpickle

    X, y = example.data(1000, FEATURES)
    p = params()
    print("== shipping a gradient: value_and_grad(shard_loss)")
    g = irad.value_and_grad(example.shard_loss)
    before = pickle.dumps(g)
    g(p, X, y)
    after = pickle.dumps(g)
    print(f"pickle.dumps, module function: {len(before)} bytes before the first call, {len(after)} after; "
          f"{median_time(lambda: pickle.dumps(g), 2000) * 1e6:.1f} µs; "
          f"pickle.loads {median_time(lambda: pickle.loads(after), 2000) * 1e6:.1f} µs")
    main = runpy.run_path(str(ROOT / "examples" / "dask_data_parallel.py"), run_name="script")  # no importable module
    by_value = irad.value_and_grad(main["shard_loss"])
    text = cloudpickle.dumps(by_value)
    print(f"cloudpickle.dumps, a script's function (by value, its source along): {len(text)} bytes; "
          f"{median_time(lambda: cloudpickle.dumps(by_value), 200) * 1e6:.0f} µs")
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster, \
            Client(cluster) as client:
        for backend in BACKENDS:
            g = irad.value_and_grad(example.shard_loss, backend=backend)
            times = []
            for _ in range(3):
                start = time.perf_counter()
                client.submit(g, p, X, y, pure=False).result()
                times.append(time.perf_counter() - start)
            print(f"{backend}: a worker's first call {times[0]:.2f} s (compiles), then {min(times[1:]) * 1e3:.1f} ms")


def epochs(run_step, n: int = EPOCHS) -> float:
    """Median seconds per epoch after the first (which compiles)."""
    times = []
    for _ in range(n):
        start = time.perf_counter()
        run_step()
        times.append(time.perf_counter() - start)
    return statistics.median(times[1:])


def _timed(step, p, X, y):
    """step's result, the CPU seconds it took, and the worker that ran it."""
    from distributed import get_worker

    start = time.process_time()
    result = step(p, X, y)
    return result, time.process_time() - start, get_worker().address


def _first(timed):
    return timed[0]


def dask() -> None:
    from distributed import Client, LocalCluster

    X, y = example.data(SAMPLES, FEATURES)
    print(f"== Dask: one epoch over {SAMPLES} samples in {SHARDS} shards (MLP {FEATURES}-{HIDDEN}-1)")
    for backend in BACKENDS:
        step = irad.value_and_grad(example.shard_loss, backend=backend)
        shards = [(np.ascontiguousarray(X[i::SHARDS]), y[i::SHARDS].copy()) for i in range(SHARDS)]
        step(params(), *shards[0])
        step.wait_optimised(120)
        start = time.process_time()
        local = epochs(lambda: [step(params(), *shard) for shard in shards], 3)
        row = [f"in this process {local:.3f} s (CPU {(time.process_time() - start) / 3:.3f} s)"]
        for workers in (1, 2):
            with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                              dashboard_address=":0") as cluster, Client(cluster) as client:
                Xs = client.scatter([X[i::SHARDS] for i in range(SHARDS)])
                ys = client.scatter([y[i::SHARDS] for i in range(SHARDS)])
                busiest = []

                def one():
                    timed = client.map(_timed, [step] * SHARDS, [params()] * SHARDS, Xs, ys, pure=False)
                    firsts = client.map(_first, timed)
                    example.tree_reduce(client, firsts, example.add).result()
                    by_worker = {}
                    for _, seconds, worker in client.gather(timed):
                        by_worker[worker] = by_worker.get(worker, 0.0) + seconds
                    busiest.append(max(by_worker.values()))

                epochs(one, 2)  # every worker compiles (native: and its -O2 code)
                time.sleep(5 if backend == "native" else 0)
                wall = epochs(one)
                row.append(f"{workers} worker{'s' * (workers > 1)} {wall:.3f} s (busiest worker's CPU "
                           f"{statistics.median(busiest[-EPOCHS + 1:]):.3f} s)")
        print(f"{backend}: " + ", ".join(row))


def _pool_step(step, p, X, y):
    return step(p, X, y)


def pool() -> None:
    X, y = example.data(SAMPLES, FEATURES)
    shards = [(X[i::SHARDS], y[i::SHARDS]) for i in range(SHARDS)]
    print(f"== spawn ProcessPoolExecutor: the same epoch (the shards are sent with each task)")
    for backend in BACKENDS:
        step = irad.value_and_grad(example.shard_loss, backend=backend)
        row = []
        for workers in (1, 2):
            with concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as ex:
                def one():
                    results = list(ex.map(_pool_step, [step] * SHARDS, [params()] * SHARDS, *zip(*shards)))
                    total = results[0]
                    for r in results[1:]:
                        total = example.add(total, r)

                epochs(one, 2)  # every worker compiles
                row.append(f"{workers} worker{'s' * (workers > 1)} {epochs(one):.3f} s")
        print(f"{backend}: " + ", ".join(row))


FIRST_CALL = """
import time, numpy as np, irad, dask_data_parallel as example
X, y = example.data(1000, 16)
rng = np.random.default_rng(1)
p = (rng.normal(size=(16, 32)), np.zeros(32), rng.normal(size=32))
start = time.perf_counter()
irad.value_and_grad(example.shard_loss, backend="native")(p, X, y)
print(time.perf_counter() - start)
"""


def native_cache() -> None:
    if "native" not in BACKENDS:
        print("== native cache: the native backend is not available here")
        return
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "IRAD_NATIVE_CACHE": cache, "PYTHONPATH": str(ROOT / "examples")}
        times = [float(subprocess.run([sys.executable, "-c", FIRST_CALL], env=env, check=True, capture_output=True,
                                      text=True).stdout) for _ in range(3)]
    print(f"== native first call in a fresh process: {times[0]:.2f} s with an empty machine-code cache, "
          f"{min(times[1:]):.2f} s with the code cached by an earlier process")


if __name__ == "__main__":
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    sections = {"ship": ship, "dask": dask, "pool": pool, "native-cache": native_cache}
    for name in sys.argv[1:] or sections:
        sections[name]()
