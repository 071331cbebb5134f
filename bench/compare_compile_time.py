"""Compile time of two source trees side by side: the old one against this one.

Run:
    git archive <rev> | tar -x -C /tmp/old && ln -s ../passes /tmp/old/irad/passes
    .venv/bin/python bench/compare_compile_time.py /tmp/old tree:500 tree:1000 chain:1000

Each round runs one fresh interpreter per tree, alternating which goes first,
so that load on a shared machine hits both alike (REPEATS rounds, default 5).
An interpreter compiles each workload once after a warm-up: `irad.grad`'s
first call up to the Python backend's code (lower, differentiate, optimise,
codegen), in process CPU seconds with the cyclic GC paused, as
bench/compile_time.py measures it. Workloads are `tree:N` (complete 3-ary
call trees of N functions) and `chain:N` (call chains of N levels, each keeping
a residual), from tests.generated_programs. Prints medians, new/old ratios,
t(2N)/t(N) for each tree, and whether both produced the same IR (its printed
text's hash). The `lower` columns are the frontend's part of that time
(`pipeline.lowered`, Python source -> IR), where changes to the frontend show
with less of the other stages' noise.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
REPEATS = int(os.environ.get("REPEATS", "5"))

ONE_PROCESS = r'''
import hashlib, json, sys, tempfile, time
from pathlib import Path
from irad import pipeline
from tests import generated_programs as programs
from irad.arguments import normalise_argnums
try:  # backends as objects; before them, compile_for(module, name)
    from irad.backends import Python
    compile_python = lambda module: Python().compile(module)
except ImportError:
    from irad.backends import compile_for
    compile_python = lambda module: compile_for(module, "python")
from irad.frontend import signature_of
from irad.base.gc_pause import gc_paused
try:  # as the API compiles (a tree from before irad/base/stack_chunk.py calls directly)
    from irad.base.stack_chunk import in_large_chunk
except ImportError:
    in_large_chunk = lambda fn: fn()

work = Path(tempfile.mkdtemp(prefix="irad-compare-"))
lowering = [0.0]
_lowered = pipeline.lowered

def lowered(*args, **kwargs):  # the frontend's part, as bench/compile_time.py times it
    start = time.process_time()
    try:
        return _lowered(*args, **kwargs)
    finally:
        lowering[0] += time.process_time() - start

pipeline.lowered = lowered

def compile_once(program, name):
    f = getattr(programs.load(program.source(), name, work), program.entry)
    signature = signature_of(f, (0.3,))
    wrt = normalise_argnums(f, (0,), signature)
    def first_call():
        lowering[0] = 0.0
        start = time.process_time()
        module, entry, *_ = pipeline.gradient_module(f, signature, wrt, False)
        compile_python(module).function(entry)
        return module, time.process_time() - start
    with gc_paused():
        module, spent = in_large_chunk(first_call)
    return spent, lowering[0], hashlib.sha256(str(module).encode()).hexdigest()[:12]

compile_once(programs.chain(3), "warm_up")  # imports are not compile time
out = {}
for spec in sys.argv[1:]:
    kind, n = spec.split(":")
    program = programs.tree(int(n)) if kind == "tree" else programs.chain(int(n))
    out[spec] = compile_once(program, f"{kind}{n}")
print(json.dumps(out))
'''


def run(tree: Path, specs: list[str]) -> dict:
    # PYTHONPATH puts the tree's `irad` before the installed one
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run(
        [sys.executable, "-c", ONE_PROCESS, *specs], env=env, capture_output=True, text=True, cwd=tree, check=True
    )
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trees = {"old": Path(sys.argv[1]).resolve(), "new": HERE}
    specs = sys.argv[2:]
    times = {name: {s: [] for s in specs} for name in trees}
    lowers = {name: {s: [] for s in specs} for name in trees}
    hashes: dict[str, dict[str, str]] = {name: {} for name in trees}
    for i in range(REPEATS):
        for name in (list(trees) if i % 2 == 0 else list(reversed(trees))):
            for spec, (spent, lower, digest) in run(trees[name], specs).items():
                times[name][spec].append(spent)
                lowers[name][spec].append(lower)
                hashes[name][spec] = digest
    median = {name: {s: statistics.median(times[name][s]) for s in specs} for name in trees}
    lower = {name: {s: statistics.median(lowers[name][s]) for s in specs} for name in trees}
    print(f"CPU s, median of {REPEATS} interleaved fresh interpreters\n")
    print("| workload | old | new | new/old | old lower | new lower | lower new/old | same IR |")
    print("|---|---|---|---|---|---|---|---|")
    for s in specs:
        old, new = median["old"][s], median["new"][s]
        print(f"| {s} | {old:.2f} | {new:.2f} | {new / old:.2f} | {lower['old'][s]:.3f} | {lower['new'][s]:.3f} "
              f"| {lower['new'][s] / lower['old'][s]:.2f} | {hashes['old'][s] == hashes['new'][s]} |")
    print()
    for name in trees:
        for kind in ("tree", "chain"):
            sizes = [s for s in specs if s.startswith(kind + ":")]
            for a, b in zip(sizes, sizes[1:]):
                print(f"{name} t({b})/t({a}) = {median[name][b] / median[name][a]:.2f}")


if __name__ == "__main__":
    main()
