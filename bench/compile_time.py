"""Compile time, stage by stage: the figures behind docs/benchmarks.md.

Run: .venv/bin/python bench/compile_time.py [tree] [chain] [lstm] [first-call]
(REPEATS=n runs per size, default 5; SIZES=250,500,1000,2000 the sizes of tree and chain)
(all sections by default; the LSTM's native row needs mlir-22-tools and llvmlite)

Each row is one workload at one size; each column one stage of
`irad.grad(f)`'s first call:

    lower        Python source -> IR (irad.frontend)
    diff         irad-differentiate (inlining the callees it differentiates,
                 hoisting loop invariants, reversing)
    tape         irad-lower-tape
    inline       irad-optimize's inliner
    cse, canon, dce
                 irad-optimize's CSE, canonicalization walk (xDSL's folders and
                 patterns with irad's float folds) and DCE, summed over its rounds
    sym-dce      irad-symbol-dce
    codegen      the Python backend's code generation (and, for the LSTM, the
                 native backend's: print + mlir-opt + mlir-translate, then
                 llvmlite -O2)

first-call runs bench/inlining.py's section: the first gradient of a small
function in fresh interpreters.

Times are process CPU seconds (time.process_time): the machine is shared, and
CPU time is what the compiler spends, whatever else runs. Medians of REPEATS
runs, the sizes of a workload interleaved so that load hits them alike, with
the cyclic GC paused and the frames in one large stack chunk as the API
compiles (irad/base/gc_pause.py, irad/base/stack_chunk.py). t(2N)/t(N) is taken from the same
medians. Workloads (tests.generated_programs): complete 3-ary call trees of N
functions; call chains of N levels whose every level keeps a residual; the
6-step unrolled array LSTM of bench/arrays.py.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
__import__("os").environ.setdefault("IRAD_NATIVE_CACHE", "0")  # the LSTM's native row compiles

import numpy as np  # noqa: E402
from xdsl.dialects.builtin import f64  # noqa: E402

import irad.passes.optimize as optimize  # noqa: E402
from tests import generated_programs as programs  # noqa: E402
from irad import pipeline  # noqa: E402
from irad.backends import Native, Python  # noqa: E402
from irad.arguments import normalise_argnums  # noqa: E402
from irad.frontend import signature_of  # noqa: E402
from irad.base.gc_pause import gc_paused  # noqa: E402
from irad.base.stack_chunk import in_large_chunk  # noqa: E402
from inlining import first_call  # noqa: E402  (fresh interpreters, as bench/inlining.py runs them)

WORK = Path(tempfile.mkdtemp(prefix="irad-bench-"))
REPEATS = int(__import__("os").environ.get("REPEATS", "5"))
# the tree's and chain's sizes (SIZES=250,500,1000,2000 adds the doubling past 1,000)
SIZES = tuple(int(n) for n in __import__("os").environ.get("SIZES", "250,500,1000").split(","))
STAGES = ("lower", "diff", "tape", "inline", "cse", "canon", "dce", "sym-dce", "codegen")
PASS_STAGE = {"irad-differentiate": "diff", "irad-lower-tape": "tape", "irad-symbol-dce": "sym-dce"}

_spent: dict[str, float] = defaultdict(float)
_clock = time.process_time


def _timed(stage: str, fn):
    def run(*args, **kwargs):
        start = _clock()
        try:
            return fn(*args, **kwargs)
        finally:
            _spent[stage] += _clock() - start

    return run


# The optimiser's steps and the frontend, timed where the pipeline calls them.
for _name, _stage in (("inline_calls", "inline"), ("cse", "cse"), ("canonicalize", "canon"), ("dce", "dce")):
    setattr(optimize, _name, _timed(_stage, getattr(optimize, _name)))
pipeline.lowered = _timed("lower", pipeline.lowered)
_last_pass_end = [0.0]


def _after_pass(previous, module, last) -> None:
    now = _clock()
    stage = PASS_STAGE.get(previous.name)
    if stage is not None:
        _spent[stage] += now - _last_pass_end[0]
    _last_pass_end[0] = now


pipeline.AFTER_PASS.append(_after_pass)
_run = pipeline.run


def _run_marking_start(module, spec):
    _last_pass_end[0] = _clock()
    return _run(module, spec)


pipeline.run = _run_marking_start


def compile_once(f, args, native: bool = False) -> dict[str, float]:
    """The stages of one first call of irad.grad(f) (all float arguments)."""
    _spent.clear()
    signature = signature_of(f, tuple(args))
    wrt = normalise_argnums(f, tuple(i for i, a in enumerate(args) if not isinstance(a, int)), signature)
    def compile_python():
        start = _clock()
        module, entry, *_ = pipeline.gradient_module(f, signature, wrt, False)
        mark = _clock()
        Python().compile(module).function(entry)
        _spent["codegen"] = _clock() - mark
        _spent["total"] = _clock() - start
        return module, entry

    with gc_paused():
        module, entry = in_large_chunk(compile_python)  # as the API compiles
        if native:
            mark = time.perf_counter()
            Native().compile(module).function(entry)
            _spent["native"] = time.perf_counter() - mark
    _spent["ops"] = sum(1 for _ in module.walk())
    return dict(_spent)


def load(program: programs.Program, name: str):
    return getattr(programs.load(program.source(), name, WORK), program.entry)


def table(rows: dict[str, list[dict[str, float]]], extra: tuple[str, ...] = ()) -> dict[str, dict[str, float]]:
    columns = (*STAGES, "total", *extra)
    print("| workload | " + " | ".join(columns) + " | ops |")
    print("|---|" + "---|" * (len(columns) + 1))
    medians = {}
    for label, runs in rows.items():
        m = medians[label] = {c: statistics.median(r.get(c, 0.0) for r in runs) for c in (*columns, "ops")}
        cells = [f"{m[c]:.3f}" for c in columns]
        print(f"| {label} | " + " | ".join(cells) + f" | {m['ops']:.0f} |")
    print()
    return medians


def scaling(title: str, make, sizes) -> None:
    print(f"## {title} (CPU s, median of {REPEATS})\n")
    functions = {n: load(make(n), f"{make.__name__}{n}") for n in sizes}
    runs: dict[str, list] = {f"{title.split(':')[0]} N={n}": [] for n in sizes}
    for _ in range(REPEATS):  # interleaved
        for n, f in functions.items():
            runs[f"{title.split(':')[0]} N={n}"].append(compile_once(f, (0.3,)))
    medians = table(runs)
    labels = list(medians)
    for a, b in zip(labels, labels[1:]):
        ratios = ", ".join(
            f"{stage} {medians[b][stage] / medians[a][stage]:.2f}"
            for stage in (*STAGES, "total")
            if medians[a][stage] > 0.005
        )
        print(f"{b} / {a}: {ratios}\n")


def tree() -> None:
    scaling("tree: complete 3-ary call trees of N functions", programs.tree, SIZES)


def residual_chain(n: int) -> programs.Program:
    return programs.chain(n, affine=False)


def chain() -> None:
    scaling("chain: call chains of N levels, each keeping a residual", residual_chain, SIZES)


def lstm() -> None:
    from arrays import make_lstm

    from irad.backends.native import compile as native

    rng = np.random.default_rng(0)
    batch, inputs, hidden = 16, 10, 20
    args = (0.3 * rng.normal(size=(inputs, 4 * hidden)), 0.3 * rng.normal(size=(hidden, 4 * hidden)),
            0.1 * rng.normal(size=4 * hidden), rng.normal(size=(6, batch, inputs)))
    f = make_lstm(np)
    with_native = native.native_tools_available()
    runs = {"LSTM arrays, 6 steps unrolled": [compile_once(f, args, with_native) for _ in range(REPEATS)]}
    print(f"## The unrolled array LSTM (CPU s; native: wall s of print + mlir-opt + llvmlite; median of {REPEATS})\n")
    medians = table(runs, ("native",) if with_native else ())
    m = medians["LSTM arrays, 6 steps unrolled"]
    print(f"compile latency, python backend: {m['total']:.2f} s"
          + (f"; native backend: {m['total'] - m['codegen'] + m['native']:.2f} s" if with_native else "") + "\n")


SECTIONS = {"tree": tree, "chain": chain, "lstm": lstm, "first-call": first_call}


def main() -> None:
    chosen = sys.argv[1:] or list(SECTIONS)
    unknown = [name for name in chosen if name not in SECTIONS]
    if unknown:
        sys.exit(f"unknown section {unknown[0]!r}; choose from: {', '.join(SECTIONS)}")
    compile_once(load(programs.chain(3), "warm_up"), (0.3,))  # imports are not compile time
    for name in chosen:
        SECTIONS[name]()


if __name__ == "__main__":
    main()
