"""Reductions of a tensor made of one number, folded into their closed form
(passes/splat_reductions.py, docs/optimisation.md) against the same programs
unfolded.

Run: .venv/bin/python bench/splat_reductions.py [n ...]   (default: 4000 10000)

Each program runs in a child process of its own, with the folds (`folded`) or
with the module's three patterns switched off (`unfolded`): the gradient's first call (compile
and run) and the best of three later calls, wall time, and the child's peak
resident size (ru_maxrss).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PROGRAMS = {
    "sum(full((n, n), x))": "lambda x: np.sum(np.full((n, n), x))",
    "mean(ones((n, n)) * x)": "lambda x: np.mean(np.ones((n, n)) * x)",
    "max(full((n, n), x))": "lambda x: np.max(np.full((n, n), x))",
}

CHILD = """
import sys, time, resource, json
import numpy as np
import irad
from irad.passes import splat_reductions
n, backend, folded = int(sys.argv[1]), sys.argv[2], sys.argv[3] == "1"
if not folded:
    for pattern in (splat_reductions.ReductionOfSplat, splat_reductions.GenericOfSplats, splat_reductions.ExtractOfSplat):
        pattern.match_and_rewrite = lambda self, op, rewriter: None
f = PROGRAM
g = irad.grad(f, backend=backend)
start = time.perf_counter()
value = g(1.5)
first = time.perf_counter() - start
g.wait_optimised(600)
times = []
for _ in range(3):
    start = time.perf_counter()
    g(1.5)
    times.append(time.perf_counter() - start)
print(json.dumps({"first": first, "call": min(times), "value": float(value),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run(program: str, n: int, backend: str, folded: bool) -> dict:
    path = ROOT / "bench" / ".splat_reductions_child.py"  # irad lowers functions from a source file
    path.write_text(CHILD.replace("PROGRAM", program))
    out = subprocess.run(
        [sys.executable, str(path), str(n), backend, "1" if folded else "0"],
        capture_output=True, text=True, env={**os.environ}, timeout=1200,
    )
    if out.returncode != 0:
        return {"error": out.stderr.strip().splitlines()[-1]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [4000, 10000]
    print(f"{'program':26} {'n':>6} {'backend':8} {'':9} {'first s':>8} {'call s':>9} {'peak MB':>8}  gradient")
    for n in sizes:
        for name, program in PROGRAMS.items():
            for backend in ("python", "native"):
                for folded in (False, True):
                    r = run(program, n, backend, folded)
                    label = "folded" if folded else "unfolded"
                    if "error" in r:
                        print(f"{name:26} {n:>6} {backend:8} {label:9} {r['error']}")
                        continue
                    print(f"{name:26} {n:>6} {backend:8} {label:9} {r['first']:8.3f} {r['call']:9.6f} "
                          f"{r['rss_mb']:8.0f}  {r['value']:.17g}", flush=True)
    (ROOT / "bench" / ".splat_reductions_child.py").unlink(missing_ok=True)


if __name__ == "__main__":
    main()
