"""mlir-opt and mlir-translate on one workload's module: each tool's CPU time,
and the ways of running the two.

Run:
    .venv/bin/python bench/native_tools.py [substring of a row]   (default: "6 steps unrolled")

The row's gradient (bench/native.py's workloads) is compiled once to catch
the text and passes the native backend hands mlir-opt; then, in rounds
(REPEATS, default 7), interleaved:

    text        mlir-opt writes the LLVM dialect as text, mlir-translate reads it
                (one after the other, as before the pipeline)
    bytecode    the same with `--emit-bytecode`
    piped       mlir-opt writes bytecode into mlir-translate through a pipe
                (native._run_tools, what the backend runs)

CPU seconds of the tools (getrusage of the children), wall seconds, medians;
every variant's LLVM IR is checked to be the same.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ["IRAD_NATIVE_CACHE"] = "0"
os.environ["IRAD_NATIVE_TIERED"] = "0"

import native as bench  # noqa: E402
import numpy as np  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402

REPEATS = int(os.environ.get("REPEATS", "7"))


def children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def module_of(label: str) -> tuple[str, list[str]]:
    """The text and passes the backend hands mlir-opt for this row."""
    caught = []
    lower = native.lower_to_llvm_ir

    def catch(text, passes=native.LOWERING):
        caught.append((text, list(passes)))
        return lower(text, passes)

    native.lower_to_llvm_ir = catch
    try:
        make, args, argnums = bench.WORKLOADS[label]
        irad.grad(make(np), argnums, backend="native")(*args)
    finally:
        native.lower_to_llvm_ir = lower
    return caught[0]


def one_after_other(opt: list[str], translate: list[str], text: bytes) -> tuple[float, float, bytes]:
    """(mlir-opt's CPU, mlir-translate's CPU, LLVM IR)."""
    start = children()
    dialect = subprocess.run(opt, input=text, capture_output=True, check=True).stdout
    middle = children()
    llvm_ir = subprocess.run(translate, input=dialect, capture_output=True, check=True).stdout
    return middle - start, children() - middle, llvm_ir


def main() -> None:
    wanted = sys.argv[1] if len(sys.argv) > 1 else "6 steps unrolled"
    label = next(label for label in bench.WORKLOADS if wanted in label)
    bench.prepare(None)
    text, passes = module_of(label)
    opt, translate = native.require_tool("mlir-opt"), native.require_tool("mlir-translate")
    data = text.encode()
    runs: dict[str, list[tuple[float, float, float]]] = {"text": [], "bytecode": [], "piped": []}
    reference = None
    for _ in range(REPEATS):
        for variant in runs:
            wall = time.perf_counter()
            if variant == "piped":
                start = children()
                llvm_ir = native.lower_to_llvm_ir(text, passes).encode()
                cpu = (float("nan"), children() - start)
            else:
                extra = ["--emit-bytecode"] if variant == "bytecode" else []
                *cpu, llvm_ir = one_after_other([opt, *passes, *extra], [translate, "--mlir-to-llvmir"], data)
            runs[variant].append((*cpu, time.perf_counter() - wall))
            reference = reference or llvm_ir
            assert llvm_ir == reference, f"{variant}: other LLVM IR"
    lines_in, lines_out = text.count("\n"), reference.count(b"\n")
    print(f"{label}: {lines_in} lines of MLIR in, {lines_out} lines of LLVM IR out; uptime: {os.getloadavg()}")
    print("| variant | mlir-opt CPU s | mlir-translate CPU s | both CPU s | wall s |")
    print("|---|---|---|---|---|")
    for variant, results in runs.items():
        opt_cpu, translate_cpu, wall = (statistics.median(r[i] for r in results) for i in range(3))
        both = statistics.median(r[0] + r[1] if variant != "piped" else r[1] for r in results)
        cells = ["–" if variant == "piped" else f"{opt_cpu:.3f}", "–" if variant == "piped" else f"{translate_cpu:.3f}"]
        print(f"| {variant} | {' | '.join(cells)} | {both:.3f} | {wall:.3f} |")


if __name__ == "__main__":
    main()
