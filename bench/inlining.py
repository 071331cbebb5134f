"""Nested pullbacks stay optimisable: the figures behind docs/benchmarks.md.

Run: .venv/bin/python bench/inlining.py [flat] [scaling] [depth] [first-call]
(all four sections by default; no optional packages needed)

1. Chain vs flat: the optimised gradient of a call chain (depths 5, 20, 50)
   and of a call tree with shared callees, against the gradient of the same
   computation written as one flat function (tests.generated_programs builds both).
2. Scaling: lower, differentiate and optimise complete 3-ary call trees of
   100, 200, 500 and 1000 functions; medians of 5 runs, and t(2N)/t(N).
3. Depth: a 2000-deep call chain (affine levels), and chains whose every
   level keeps a residual (linear since irad-differentiate inlines the call
   tree first; bench/compile_time.py times them stage by stage).
4. First-call latency of irad.grad on a small scalar function, in fresh
   interpreters: after `from irad import grad`, and including that import.

Compilation runs with the cyclic GC paused, as the API does (irad/base/gc_pause.py).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from xdsl.dialects.builtin import f64  # noqa: E402

from tests import generated_programs as testing  # noqa: E402
from irad.pipeline import gradient_module  # noqa: E402
from irad.frontend import lower_function  # noqa: E402
from irad.base.gc_pause import gc_paused  # noqa: E402

WORK = Path(tempfile.mkdtemp(prefix="irad-bench-"))
REPEATS = 5


def op_count(module) -> int:
    return sum(1 for _ in module.walk()) - 1


def load(program: testing.Program, name: str):
    return getattr(testing.load(program.source(), name, WORK), program.entry)


def timed(fn) -> float:
    with gc_paused():
        start = time.perf_counter()
        fn()
        return time.perf_counter() - start


def grad_of(f):
    return gradient_module(f, (f64,), (0,), False)[0]


def chain_vs_flat() -> None:
    print("## Chain vs flat (ops in the optimised gradient module)\n")
    print("| program | call graph | flat | ratio |")
    print("|---|---|---|---|")
    programs = [(f"chain, depth {d}", testing.chain(d)) for d in (5, 20, 50)]
    programs.append(("tree with shared callees", testing.shared_tree()))
    for i, (label, program) in enumerate(programs):
        nested = op_count(grad_of(load(program, f"nested{i}")))
        flat_fn = testing.load(program.flat_source(), f"flat{i}", WORK).flat
        flat = op_count(grad_of(flat_fn))
        print(f"| {label} | {nested} | {flat} | {nested / flat:.3f} |")
    print()


def scaling() -> None:
    print(f"## Scaling: complete 3-ary call trees (median of {REPEATS} runs)\n")
    sizes = (100, 200, 500, 1000)
    functions = {n: load(testing.tree(n), f"tree{n}") for n in sizes}
    lowers: dict[int, list[float]] = {n: [] for n in sizes}
    totals: dict[int, list[float]] = {n: [] for n in sizes}
    for _ in range(REPEATS):  # interleaved, so a burst of load hits every size alike
        for n, f in functions.items():
            lowers[n].append(timed(lambda: lower_function(f, (f64,))))
            totals[n].append(timed(lambda: grad_of(f)))
    print("| functions | lower ms | lower + differentiate + optimise ms | differentiate + optimise ms | ops |")
    print("|---|---|---|---|---|")
    total = {n: statistics.median(totals[n]) for n in sizes}
    passes = {n: total[n] - statistics.median(lowers[n]) for n in sizes}
    for n, f in functions.items():
        lower = statistics.median(lowers[n])
        ops = op_count(grad_of(f))
        print(f"| {n} | {lower * 1e3:.0f} | {total[n] * 1e3:.0f} | {passes[n] * 1e3:.0f} | {ops} |")
    print()
    for a, b in ((100, 200), (500, 1000)):
        print(
            f"t({b})/t({a}): {total[b] / total[a]:.2f} with lowering, "
            f"{passes[b] / passes[a]:.2f} differentiate + optimise"
        )
    print()


def depth() -> None:
    print("## Depth (one run each)\n")
    print("| chain | levels | lower + differentiate + optimise s | ops |")
    print("|---|---|---|---|")
    cases = [("affine levels", 2000, True)]
    cases += [("a residual per level", n, False) for n in (125, 250, 500)]
    for label, n, affine in cases:
        f = load(testing.chain(n, affine=affine), f"chain{n}{'a' if affine else ''}")
        module = None

        def run():
            nonlocal module
            module = grad_of(f)

        seconds = timed(run)
        print(f"| {label} | {n} | {seconds:.2f} | {op_count(module)} |")
    print()


FIRST_CALL = """
import sys, time
sys.path.insert(0, {work!r})
start = time.perf_counter()
from irad import grad
imported = time.perf_counter()
from small_scalar import f
grad(f, argnums=(0, 1))(0.5, 1.5)
done = time.perf_counter()
print(done - imported, done - start)
"""


def first_call() -> None:
    (WORK / "small_scalar.py").write_text(
        "import math\n\ndef f(x, y):\n    return math.sin(x) * y + math.exp(x * y)\n"
    )
    script = FIRST_CALL.format(work=str(WORK))
    runs = [
        tuple(map(float, subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, check=True
        ).stdout.split()))
        for _ in range(REPEATS)
    ]
    after = statistics.median(r[0] for r in runs)
    with_import = statistics.median(r[1] for r in runs)
    print(f"## First call (median of {REPEATS} fresh interpreters)\n")
    print(f"irad.grad(f)(0.5, 1.5) after `from irad import grad`: {after * 1e3:.1f} ms")
    print(f"the same, including `from irad import grad` (xDSL, numpy): {with_import * 1e3:.0f} ms\n")


SECTIONS = {"flat": chain_vs_flat, "scaling": scaling, "depth": depth, "first-call": first_call}


def main() -> None:
    chosen = sys.argv[1:] or list(SECTIONS)
    unknown = [name for name in chosen if name not in SECTIONS]
    if unknown:
        sys.exit(f"unknown section {unknown[0]!r}; choose from: {', '.join(SECTIONS)}")
    grad_of(load(testing.chain(2), "warm_up"))  # imports are not compile time
    for name in chosen:
        SECTIONS[name]()


if __name__ == "__main__":
    main()
