"""Where the time of the MLP gradient's split products goes: a timeline of
each product, from the split module itself (irad/backends/native/split.py).

Run: .venv/bin/python bench/split_timeline.py [--spin CYCLES] [batch] [rounds]   (default 4096, 30)

`--spin CYCLES`: as in bench/blas_threads.py, the helper watches for the
next product (and the caller for the helper's last chunk) that long before
sleeping (native_split.HELPER_SPIN, CALLER_SPIN).

The process-wide split module is built with marks added to its IR (this
script only): the time-stamp counter and the CPU (sched_getcpu) when the
caller posts a product, when the helper attaches to it, when each chunk
starts and ends and who runs it, and when the caller is done. The MLP
gradient of `make bench` (batch × 64-128-10, every product split) then runs
in three ways, one call each in turns, `rounds` times:

* "one thread": every product's two chunks on the caller (a flag in the
  instrumented module), the reference;
* "kept off": split, the helper kept off the caller's CPU (the default);
* "anywhere": split, the helper free to run on the caller's CPU
  (native_split.set_keep_off(False), the behaviour before).

Per product, medians over the rounds: its wall time (post to done), the
helper's delay to attach, how often both chunks ran on the same CPU when the
helper ran one; a chunk's time alone and side by side with the other (if
the two slow each other down, the second core brings less: shared execution
units, memory bandwidth); the time between products (the elementwise loops);
per call, the gradient's wall time. Everything is one process and one compiled
gradient, so the ratios within a row are what to read on a loaded machine.
"""

from __future__ import annotations

import ctypes
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's; before numpy loads

import numpy as np  # noqa: E402
from arrays import make_mlp  # noqa: E402
from native import _mlp_arguments  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import lapack  # noqa: E402
from irad.backends.native import split as native_split

irad.config.update("native_split_min_flops", 0)  # every product split, whatever the threshold

SLOTS = 1 << 20  # i64 slots of the trace: (time, event + 1000 * cpu) pairs
POST, ATTACH, DONE, ALONE, ALONE_DONE = 1, 2, 50, 60, 61
CALLER, HELPER = 10, 30  # + chunk: its start; + 10 + chunk: its end
PRODUCTS = ["x @ w1", "h @ w2", "dlogits @ w2ᵀ", "hᵀ @ dlogits", "xᵀ @ dz"]
MODES = ("one thread", "kept off", "anywhere")

TRACE_IR = f"""
@irad_trace = global [{SLOTS} x i64] zeroinitializer, align 64
@irad_trace_n = global i64 0, align 64
@irad_trace_alone = global i32 0, align 64
define void @irad_mark(i64 %event) {{
  %t = call i64 @llvm.readcyclecounter()
  %i = atomicrmw add ptr @irad_trace_n, i64 2 monotonic
  %j = and i64 %i, {SLOTS - 2}
  %p = getelementptr i64, ptr @irad_trace, i64 %j
  store i64 %t, ptr %p
  %cpu = call i32 @sched_getcpu()
  %cpu64 = sext i32 %cpu to i64
  %on = mul i64 %cpu64, 1000
  %e = add i64 %event, %on
  %q = getelementptr i64, ptr %p, i64 1
  store i64 %e, ptr %q
  ret void
}}
define ptr @irad_trace_at() {{ ret ptr @irad_trace }}
define ptr @irad_trace_count() {{ ret ptr @irad_trace_n }}
define ptr @irad_trace_flag() {{ ret ptr @irad_trace_alone }}
"""


def _around_run(text: str, base: int) -> str:
    """Marks around the one `call void %run(...)` of a function's text."""
    call = "  call void %run(ptr %task, i32 %i)\n"
    assert text.count(call) == 1
    return text.replace(call, f"  %ki = sext i32 %i to i64\n  %ks = add i64 %ki, {base}\n  call void @irad_mark(i64 %ks)\n"
                              f"{call}  %ke = add i64 %ki, {base + 10}\n  call void @irad_mark(i64 %ke)\n")


def _edit(text: str, old: str, new: str) -> str:
    assert text.count(old) == 1, old
    return text.replace(old, new)


def traced_ir(plain):
    def ir(library) -> str:
        functions = plain(library).split("\ndefine ")
        for n, f in enumerate(functions):
            if f.startswith("internal ptr @irad_helper("):
                f = _edit(_around_run(f, HELPER), "attach:\n", f"attach:\n  call void @irad_mark(i64 {ATTACH})\n")
            elif f.startswith("internal void @irad_run_all("):
                f = _around_run(f, CALLER)
            elif f.startswith("void @irad_parallel("):
                f = _around_run(f, CALLER)
                f = _edit(f, "  call i32 @pthread_cond_signal(ptr %posted)\n",
                          f"  call void @irad_mark(i64 {POST})\n  call i32 @pthread_cond_signal(ptr %posted)\n")
                f = _edit(f, "\ndone:\n", f"\ndone:\n  call void @irad_mark(i64 {DONE})\n")
                f = _edit(f, "\nalone:\n", f"\nalone:\n  call void @irad_mark(i64 {ALONE})\n")
                f = _edit(f, "  call void @irad_run_all(ptr %run, ptr %task, i32 %n)\n",
                          f"  call void @irad_run_all(ptr %run, ptr %task, i32 %n)\n  call void @irad_mark(i64 {ALONE_DONE})\n")
                f = _edit(f, "entry:\n", "entry:\n  %one = load atomic i32, ptr @irad_trace_alone monotonic, align 4\n"
                                         "  %on_one = icmp ne i32 %one, 0\n  br i1 %on_one, label %alone, label %split\nsplit:\n")
            functions[n] = f
        return "\ndefine ".join(functions) + TRACE_IR

    return ir


class Trace:
    def __init__(self, module):
        def pointer(name: str) -> int:
            return ctypes.CFUNCTYPE(ctypes.c_void_p)(module.address(name))()

        self.slots, self.count = pointer("irad_trace_at"), ctypes.c_int64.from_address(pointer("irad_trace_count"))
        self.alone = ctypes.c_int32.from_address(pointer("irad_trace_flag"))

    def events(self, call) -> np.ndarray:
        """(time, event, cpu) rows of what `call()` did."""
        self.count.value = 0
        call()
        n = self.count.value
        assert n < SLOTS
        pairs = np.ctypeslib.as_array((ctypes.c_int64 * n).from_address(self.slots)).reshape(-1, 2)
        return np.stack([pairs[:, 0], pairs[:, 1] % 1000, pairs[:, 1] // 1000], axis=1)


def products(events: np.ndarray) -> list[dict]:
    """Each product of one call: its wall time in cycles, the helper's delay
    to attach, who ran which chunk and on which CPU, and its start and end."""
    t, e, cpu = events.T
    starts, ends = np.where((e == POST) | (e == ALONE))[0], np.where((e == DONE) | (e == ALONE_DONE))[0]
    found = []
    for s, d in zip(starts, ends):
        part = slice(s, d + 1)
        pe, pt, pc = e[part], t[part], cpu[part]
        attached = pt[pe == ATTACH]
        runners = {}
        for chunk in range(native_split.CHUNKS):
            for who, base in (("caller", CALLER), ("helper", HELPER)):
                if (pe == base + chunk).any():
                    took = pt[pe == base + 10 + chunk][0] - pt[pe == base + chunk][0]
                    runners[chunk] = (who, pc[pe == base + chunk][0], took)
        found.append({"cycles": t[d] - t[s], "attach": attached[0] - t[s] if len(attached) else None,
                      "runners": runners, "start": t[s], "end": t[d]})
    return found


def main() -> None:
    arguments = sys.argv[1:]
    if "--spin" in arguments:  # before the split products' module is built
        at = arguments.index("--spin")
        native_split.HELPER_SPIN = native_split.CALLER_SPIN = int(arguments[at + 1])
        del arguments[at:at + 2]
    batch = int(arguments[0]) if arguments else 4096
    rounds = int(arguments[1]) if len(arguments) > 1 else 30
    native_split._ir = traced_ir(native_split._ir)  # before the module is built
    args = _mlp_arguments(np.random.default_rng(1), batch, 64, 128, 10)
    gradient = irad.grad(make_mlp(np), (0, 1, 2, 3), backend="native")
    gradient(*args)
    gradient.wait_optimised()
    trace = Trace(native_split._module(lapack.find()))
    clock = time.perf_counter()
    first = trace.events(lambda: gradient(*args))[0, 0]
    time.sleep(0.2)
    hz = (trace.events(lambda: gradient(*args))[0, 0] - first) / (time.perf_counter() - clock)
    timelines, walls = {m: [] for m in MODES}, {m: [] for m in MODES}
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for _ in range(rounds):
        for mode in MODES:
            trace.alone.value = mode == "one thread"
            native_split.set_keep_off(mode != "anywhere")
            time.sleep(0.02)
            start = time.perf_counter()
            events = trace.events(lambda: gradient(*args))
            walls[mode].append(time.perf_counter() - start)
            found = products(events)
            assert len(found) == len(PRODUCTS), "the MLP's five products are split"
            timelines[mode].append(found)
    native_split.set_keep_off(True)  # the default

    def us(cycles) -> float:
        return statistics.median(cycles) / hz * 1e6

    print(f"batch {batch}, {rounds} rounds; the gradient's wall time, median µs: "
          + ", ".join(f"{m} {statistics.median(walls[m]) * 1e6:.0f}" for m in MODES))
    print("| product | one thread µs | anywhere µs | kept off µs | anywhere: helper ran a chunk | anywhere: of those, "
          "on the caller's CPU | kept off: helper ran a chunk | kept off: on the caller's CPU | helper's delay to attach µs (kept off) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for i, label in enumerate(PRODUCTS):
        cells = [f"{us([c[i]['cycles'] for c in timelines[m]]):.0f}" for m in MODES[:1] + MODES[2:] + MODES[1:2]]
        for mode in ("anywhere", "kept off"):
            helped = [c[i]["runners"] for c in timelines[mode] if any(w == "helper" for w, _, _ in c[i]["runners"].values())]
            same = sum(1 for r in helped if len({cpu for _, cpu, _ in r.values()}) == 1)
            cells += [f"{len(helped)}/{rounds}", f"{same}/{max(len(helped), 1)}"]
        delays = [c[i]["attach"] for c in timelines["kept off"] if c[i]["attach"] is not None]
        cells.append(f"{us(delays):.0f}" if delays else "–")
        print(f"| {label} | " + " | ".join(cells) + " |")
    print("| product | one thread: a chunk µs | kept off, the helper running: caller's chunk µs | helper's chunk µs |")
    print("|---|---|---|---|")
    for i, label in enumerate(PRODUCTS):  # chunks slower side by side than alone: the cores share something
        alone = [took for c in timelines["one thread"] for _, _, took in c[i]["runners"].values()]
        both = [c[i]["runners"] for c in timelines["kept off"]
                if [w for w, _, _ in c[i]["runners"].values()] == ["caller", "helper"]]
        cells = [us(alone)] + ([us([r[0][2] for r in both]), us([r[1][2] for r in both])] if both else [])
        print(f"| {label} | " + " | ".join(f"{x:.0f}" for x in cells) + " |")
    for mode in MODES:
        gaps = [[c[i + 1]["start"] - c[i]["end"] for c in timelines[mode]] for i in range(len(PRODUCTS) - 1)]
        print(f"between products ({mode}), µs: " + ", ".join(f"{us(g):.0f}" for g in gaps))
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
