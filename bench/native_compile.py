"""The native backend's first call, stage by stage, and the gradient it compiles.

Run:
    .venv/bin/python bench/native_compile.py [substring of a row ...]
    git archive <rev> | tar -x -C /tmp/old && ln -s ../passes /tmp/old/irad/passes
    .venv/bin/python bench/native_compile.py --old /tmp/old [substring ...]
    .venv/bin/python bench/native_compile.py --tiers [substring ...]

--tiers: each row's gradient compiled as tier 0 (-O0) and at -O2 in one
process, timed interleaved (medians of 5); no compile stages.

Rows are bench/native.py's workloads (all array rows by default). Each row is
compiled in a fresh interpreter, after a warm-up that pays the imports (and
whose background -O2 compile is waited for: reaped during the measured call,
its child's CPU time was counted there), and its first call `irad.grad(f, backend="native")` is split into stages:

    irad        lower, differentiate, optimise (the IR irad hands the backend)
    mlir tools  mlir-opt (the bufferization and lowering passes) and
                mlir-translate --mlir-to-llvmir: two subprocesses, one pipe
                between them (one after the other in older trees)
    parse       llvmlite parsing the LLVM IR (with the runtime linked in)
    llvm-opt    LLVM's -O2 pipeline (llvmlite's new pass manager)
    codegen     machine code (MCJIT's finalize_object)
    print       the module's text, mlir-opt's input
    prepare     for_mlir_opt: the module's copy with C interfaces, renamed
                symbols, destinations, and the passes
    blas        large matrix products rewritten into BLAS calls
    vector math loops of exp, log, tanh renamed to call libmvec (LLVM IR text)
    -O2 start   starting the background -O2 compile (its request, the child)
    other       the rest: the checks' rewrite, the runtime's text, linking,
                the cache's key, ctypes

Times are CPU seconds of the interpreter and of the tools it ran (os.times),
which load on a shared machine inflates less than wall time. Also reported:
ops in irad's IR, lines of LLVM IR from mlir-translate, and the gradient's
time per call (median, wall). With --old, each round runs the old tree and
this one in alternating order, and the table has both, side by side
(REPEATS rounds, default 3; medians).

With tiered compilation (irad/backends/native/tiers.py), "total" is the first
call's latency, with LLVM at -O0 (its -O2 compile runs in a child process,
whose time is not in it); "first wall" is its wall time; "to O2" is the CPU
time until calls run -O2 code, the child's included (an old tree without
tiering: its total), "to O2 wall" the wall time until then. "grad us" is the
-O2 gradient's time per call, "tier-0 us" the same gradient compiled at -O0
(IRAD_NATIVE_OPT_LEVEL=0, in a process of its own).

The cache of machine code across processes (irad/backends/native/object_cache.py)
is off for these rows (IRAD_NATIVE_CACHE=0). The last column, "2nd process",
is this tree's first call in a process that finds the first one's -O2 code
in a fresh cache directory (once per round).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
REPEATS = int(os.environ.get("REPEATS", "3"))
STAGES = ("irad", "mlir tools", "parse", "llvm-opt", "codegen", "print", "prepare", "blas", "vector math", "-O2 start", "other")

ONE_PROCESS = r'''
import json, os, resource, sys, time
os.environ["OPENBLAS_NUM_THREADS"] = "1"  # as bench/native.py runs numpy, before numpy loads
sys.path.insert(0, sys.argv[1])
import irad  # from the tree under test; bench/native.py's own `import irad` finds this one
sys.path.insert(1, sys.argv[2] + "/bench")
import native as bench
from timing import median_seconds
import numpy as np
from irad import pipeline
from irad.backends.native import llvm_jit
from irad.backends.native import compile as native

def module_walk(g, args):
    return g.lower(*args).walk()

def cpu():  # microseconds, where os.times counts 10 ms ticks
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime

spent, sizes = {}, {}

def timed(stage, fn):
    def run(*args, **kwargs):
        start = cpu()
        try:
            return fn(*args, **kwargs)
        finally:
            spent[stage] = spent.get(stage, 0.0) + cpu() - start
    return run

pipeline.gradient_module = timed("irad", pipeline.gradient_module)
import irad.api
irad.api.gradient_module = pipeline.gradient_module
# mlir-opt and mlir-translate: one pipeline (_run_tools), or one tool at a time (an older tree)
name = "_run_tools" if hasattr(native, "_run_tools") else "_run_tool"
run_tools = getattr(native, name)
def tools(commands, text, what, *meanwhile):
    out = timed("mlir tools", run_tools)(commands, text, what, *meanwhile)
    last = commands[-1] if name == "_run_tools" else commands
    if "mlir-translate" in os.path.basename(last[0]):
        sizes["llvm lines"] = sizes.get("llvm lines", 0) + out.count("\n")
    return out
setattr(native, name, tools)
# the parts of `other` that are known
from irad.backends.native import blas as native_blas
from irad.backends.native import vector_math
printer = next((p for p in ("generic_text", "module_text") if hasattr(native, p)), None)
if printer is not None:
    setattr(native, printer, timed("print", getattr(native, printer)))
else:  # an older tree prints with str()
    from xdsl.dialects.builtin import ModuleOp
    ModuleOp.__str__ = timed("print", ModuleOp.__str__)
native.for_mlir_opt = timed("prepare", native.for_mlir_opt)
native_blas.call_blas = timed("blas", native_blas.call_blas)
vector_math.vectorisable = timed("vector math", vector_math.vectorisable)
try:
    from irad.backends.native import tiers
    tiers.Upgrade.__init__ = timed("-O2 start", tiers.Upgrade.__init__)
except ImportError:  # an older tree, without tiering
    pass
llvm = llvm_jit._llvm()
llvm.parse_assembly = timed("parse", llvm.parse_assembly)
make_builder = llvm.create_pass_builder
class Builder:  # times the module pass manager's run
    def __init__(self, machine, tuning):
        self.builder = make_builder(machine, tuning)
    def getModulePassManager(self):
        manager = self.builder.getModulePassManager()
        builder = self.builder
        class Manager:
            def run(self, module, _):
                timed("llvm-opt", manager.run)(module, builder)
        return Manager()
llvm.create_pass_builder = Builder
make_engine = llvm.create_mcjit_compiler
class Engine:  # times code generation
    def __init__(self, module, machine):
        self.engine = make_engine(module, machine)
    def finalize_object(self):
        timed("codegen", self.engine.finalize_object)()
    def __getattr__(self, name):
        return getattr(self.engine, name)
llvm.create_mcjit_compiler = Engine

bench.prepare(None)
label = sys.argv[3]
make, args, argnums = bench.WORKLOADS[label]
f = make(np if any(isinstance(a, np.ndarray) for a in args) else __import__("math"))
spent.clear(); sizes.clear()
start, wall = cpu(), time.perf_counter()
g = irad.grad(f, argnums, backend="native")
g(*args)
total, first_wall = cpu() - start, time.perf_counter() - wall
row = dict(spent, total=total, ops=sum(1 for _ in module_walk(g, args)), **sizes)
row["other"] = total - sum(v for k, v in spent.items())
row["first wall"] = first_wall
wait = getattr(g, "wait_optimised", None)  # tiered compilation (an older tree has none)
if wait is not None:
    assert wait(), "the background -O2 compile failed"
row["to O2"] = cpu() - start  # with the -O2 child's CPU time, once it is reaped
row["to O2 wall"] = time.perf_counter() - wall
row["grad us"] = median_seconds(g, *args) * 1e6
print(json.dumps(row))
'''


TIER_SPEEDS = r'''
import json, os, statistics, sys
os.environ["OPENBLAS_NUM_THREADS"] = "1"
sys.path.insert(0, sys.argv[1])
import irad
sys.path.insert(1, sys.argv[1] + "/bench")
import native as bench
from timing import median_seconds
import numpy as np
from irad import compiled

bench.prepare(None)
make, args, argnums = bench.WORKLOADS[sys.argv[2]]
gradients = {}
for name, level in (("tier 0", "0"), ("O2", "2")):  # -O0 is what tier 0 compiles
    os.environ["IRAD_NATIVE_OPT_LEVEL"], os.environ["IRAD_NATIVE_TIERED"] = level, "0"
    compiled._CACHE.clear()
    gradients[name] = irad.grad(make(np), argnums, backend="native")
    gradients[name](*args)
times = {name: [] for name in gradients}
for _ in range(5):  # interleaved
    for name, g in gradients.items():
        times[name].append(median_seconds(g, *args, budget=0.1))
print(json.dumps({name: statistics.median(t) * 1e6 for name, t in times.items()}))
'''


def tier_speeds(labels: list[str]) -> None:
    """Tier 0's gradient time against -O2's, in one process, interleaved."""
    print(f"uptime: {os.getloadavg()}")
    print("| workload | tier 0 µs | -O2 µs | tier 0 / -O2 |")
    print("|---|---|---|---|")
    for label in labels:
        proc = subprocess.run([sys.executable, "-c", TIER_SPEEDS, str(HERE), label], capture_output=True, text=True,
                              env={**os.environ, "IRAD_NATIVE_CACHE": "0"})
        if proc.returncode != 0:
            sys.exit(f"{label} failed:\n{proc.stderr}")
        m = json.loads(proc.stdout.strip().splitlines()[-1])
        print(f"| {label} | {m['tier 0']:.1f} | {m['O2']:.1f} | {m['tier 0'] / m['O2']:.1f}× |", flush=True)


def rows(wanted: list[str]) -> list[str]:
    sys.path.insert(0, str(HERE / "bench"))
    import native as bench

    labels = list(bench.WORKLOADS)
    if wanted:
        return [label for label in labels if any(w in label for w in wanted)]
    return [label for label in labels if any(isinstance(a, __import__("numpy").ndarray) for a in bench.WORKLOADS[label][1])]


def measure(tree: Path, label: str, cache: str = "0", **env: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", ONE_PROCESS, str(tree), str(HERE), label],
        capture_output=True, text=True, env={**os.environ, "IRAD_NATIVE_CACHE": cache, **env},
    )
    if proc.returncode != 0:
        sys.exit(f"{label} on {tree} failed:\n{proc.stderr}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def second_process(label: str) -> float:
    """This tree's first call in a process whose IR another process compiled
    (the first waits for its -O2 code, which is then in the cache)."""
    with tempfile.TemporaryDirectory(prefix="irad-bench-cache-") as cache:
        measure(HERE, label, cache)
        return measure(HERE, label, cache)["total"]


def tier0(label: str) -> float:
    """This tree's gradient time (µs) in tier 0: the module compiled at -O0."""
    return measure(HERE, label, IRAD_NATIVE_OPT_LEVEL="0")["grad us"]


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["--tiers"]:
        tier_speeds(rows(argv[1:]))
        return
    old = None
    if argv[:1] == ["--old"]:
        old, argv = Path(argv[1]), argv[2:]
    trees = {"new": HERE} if old is None else {"old": old, "new": HERE}
    print(f"uptime: {os.getloadavg()}")
    columns = (*STAGES, "total", "first wall", "to O2", "to O2 wall", "ops", "llvm lines", "grad us")
    print("| workload | tree | " + " | ".join(columns) + " | tier-0 us | 2nd process |")
    print("|---|---|" + "---|" * (len(columns) + 2))
    for label in rows(argv):
        runs: dict[str, list[dict]] = {name: [] for name in trees}
        cached, slow = [], []
        for i in range(REPEATS):
            order = list(trees) if i % 2 == 0 else list(reversed(trees))
            for name in order:
                runs[name].append(measure(trees[name], label))
            cached.append(second_process(label))
            slow.append(tier0(label))
        for name, results in runs.items():
            m = {c: statistics.median(r.get(c, 0.0) for r in results) for c in columns}
            cells = [f"{m[c]:.3f}" for c in (*STAGES, "total")] + [f"{m[c]:.2f}" for c in ("first wall", "to O2", "to O2 wall")]
            cells += [f"{m['ops']:.0f}", f"{m['llvm lines']:.0f}", f"{m['grad us']:.1f}"]
            cells.append(f"{statistics.median(slow):.1f}" if name == "new" else "–")
            cells.append(f"{statistics.median(cached):.2f}" if name == "new" else "–")
            print(f"| {label} | {name} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
