"""Timing and reporting shared by the benchmarks: medians of repeats, optional
anchors (autograd, JAX), and the markdown table docs/benchmarks.md records."""

from __future__ import annotations

import importlib
import resource
import statistics
import time
import timeit


def optimised(fn) -> None:
    """Wait until native code runs at -O2: its first call ran code compiled at
    -O0 while -O2 compiled in the background (tiered compilation,
    docs/backends/native.md). A gradient has `wait_optimised`; a compiled native
    function, its `native_module`'s."""
    wait = getattr(fn, "wait_optimised", None) or getattr(getattr(fn, "native_module", None), "wait_optimised", None)
    if wait is not None:
        wait()


def median_seconds(fn, *args, budget: float = 0.2) -> float:
    """Median seconds of a call, steady state: after the first call, and at -O2."""
    fn(*args)
    optimised(fn)
    number = max(1, int(budget / max(timeit.timeit(lambda: fn(*args), number=1), 1e-7) / 5))
    runs = timeit.repeat(lambda: fn(*args), number=number, repeat=7)
    return statistics.median(runs) / number


def median_call_seconds(fn, args, budget: float = 0.1) -> float:
    """The median time of one call: each call timed alone, so that a call the
    scheduler interrupts (the machine is shared) is one outlier among many,
    not a share of a batch's mean."""
    clock = time.perf_counter
    fn(*args)
    start = clock()
    fn(*args)
    calls = min(20000, max(30, int(budget / max(clock() - start, 1e-7))))
    times = []
    for _ in range(calls):
        start = clock()
        fn(*args)
        times.append(clock() - start)
    return statistics.median(times)


def wall_and_cpu(fn, args, calls: int) -> tuple[float, float]:
    """Seconds per call of `calls` calls in a row: wall time, and the CPU time
    the process was charged (getrusage, user + system, all its threads)."""
    before, start = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
    for _ in range(calls):
        fn(*args)
    wall, after = time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF)
    return wall / calls, ((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)) / calls


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def settle_until_idle(least: float, step: float = 0.02, most: float = 2.0) -> None:
    """Sleep `least` seconds, then on until this process's threads are idle
    (less than 5% of a `step` of CPU time in a step), at most `most` seconds.
    A thread a system leaves spinning after its calls would take a core from
    the next system's block: OpenBLAS's idle workers spin about 0.1 s of wall
    time (2**28 time-stamp cycles), and a fixed sleep of 0.1 s let them run
    into the block after, JAX's, whose threads then shared the two cores with
    it (bench/blas_threads.py timed JAX at 7-10 ms where bench/native.py, with
    no such neighbour, timed 4.5-5.4 ms; docs/benchmarks.md)."""
    time.sleep(least)
    end = time.perf_counter() + most
    while time.perf_counter() < end:
        before = cpu_seconds()
        time.sleep(step)
        if cpu_seconds() - before < 0.05 * step:
            return


def in_turns(systems: dict, blocks: int = 7, budget: float = 0.05, settle: float = 0.0,
             until_idle: bool = True) -> dict[str, tuple[float, float]]:
    """name -> (fn, args), each run in blocks of about `budget` seconds taken in
    turns (a, b, a, b, ...): name -> (median wall, median CPU) seconds per call.
    With `settle` > 0, before each block at least `settle` seconds of sleep and
    then on until the process is idle (settle_until_idle): threads a system
    leaves spinning after its calls (OpenBLAS's, XLA's) stop before the next
    block, whose wall time and CPU time (all threads) they would inflate.
    `until_idle=False`: exactly `settle` seconds (as before, for comparison)."""
    calls = {}
    for name, (fn, args) in systems.items():
        fn(*args)
        start = time.perf_counter()
        fn(*args)
        calls[name] = max(1, int(budget / max(time.perf_counter() - start, 1e-6)))
    times = {name: [] for name in systems}
    for _ in range(blocks):
        for name, (fn, args) in systems.items():
            if settle and until_idle:
                settle_until_idle(settle)
            elif settle:
                time.sleep(settle)
            times[name].append(wall_and_cpu(fn, args, calls[name]))
    return {name: (statistics.median(w for w, _ in t), statistics.median(c for _, c in t)) for name, t in times.items()}


def interleaved_samples(calls: dict, rounds: int, sample_seconds: float) -> dict[object, list[float]]:
    """Seconds per call of each of `calls` (key -> a callable of no
    arguments), sampled in `rounds` interleaved rounds of runs about
    `sample_seconds` long, each round starting one key further on, so that
    load falls on all of them alike."""
    numbers = {key: max(1, int(sample_seconds / (timeit.timeit(call, number=5) / 5))) for key, call in calls.items()}
    keys, samples = list(calls), {key: [] for key in calls}
    for r in range(rounds):
        for key in keys[r % len(keys):] + keys[:r % len(keys)]:
            samples[key].append(timeit.timeit(calls[key], number=numbers[key]) / numbers[key])
    return samples


def low(samples: list[float]) -> float:
    """The 10% quantile: load only adds time."""
    return sorted(samples)[len(samples) // 10]


def optional(name):
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def print_table(rows: list[dict], primal_label: str, digits: int) -> None:
    """One row per workload: primal and irad times, the anchors, and the ratios."""
    anchors = [k for k in ("autograd", "jax jit") if k in rows[0]]
    header = ["workload", f"{primal_label} µs", "irad grad µs", "irad/primal"]
    header += [f"{a} µs" for a in anchors] + [f"{a}/irad" for a in anchors] + ["irad first call ms"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for r in rows:
        cells = [r["workload"], f"{r['primal'] * 1e6:.{digits}f}", f"{r['irad'] * 1e6:.{digits}f}",
                 f"{r['irad'] / r['primal']:.1f}×"]
        cells += [f"{r[a] * 1e6:.1f}" for a in anchors]
        cells += [f"{r[a] / r['irad']:.1f}×" for a in anchors]
        cells += [f"{r['irad compile'] * 1e3:.0f}"]
        print("| " + " | ".join(cells) + " |")
