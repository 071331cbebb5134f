"""Elementwise loop nests on the calling thread and split by rows with irad's
helper thread (irad/backends/native/split_loops.py): where splitting pays.

Run: .venv/bin/python bench/split_loops.py [ROWS ...]

Three loops of the MLP's gradient (batch × 128 and batch × 10, float64),
each compiled twice by the native backend at -O2: not split (irad.config's
native_split_loops off) and split whatever its size (native_split_min_work
0); both give the same bits (checked).
Medians of 7 blocks taken in turns, wall and CPU time (getrusage, every
thread) per call, then the share of the split calls' chunks the helper ran
(the rest the caller ran: the helper was not yet awake, the take-back).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
from native import native_primal  # noqa: E402
from timing import in_turns  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import split as native_split  # noqa: E402

SETTLE = 0.1  # seconds at least between blocks, then until the process is idle (timing.settle_until_idle)

def tanh_layer(z, b):
    return np.tanh(z + b)


def tanh_backward(dh, h):
    return dh * (1.0 - h * h)


def softmax_exp(logits, top):
    return np.exp(logits - top)


LOOPS = {  # label: (function, columns)
    "tanh(z + b)": (tanh_layer, 128),
    "dh * (1 - h²)": (tanh_backward, 128),
    "exp(l - m)": (softmax_exp, 10),
}


def compiled(f, args, split: bool):
    with irad.config.overriding(native_split_loops=split, native_split_min_work=0):
        run = native_primal(f, args)
    run(*args)
    run.native_module.wait_optimised()
    return run


def main() -> None:
    rng = np.random.default_rng(0)
    print("| loop | rows × columns | whole wall µs | split wall µs | split / whole, wall | whole CPU µs "
          "| split CPU µs | split / whole, CPU | chunks the helper ran |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label, (f, columns) in LOOPS.items():
        for rows in [int(r) for r in sys.argv[1:]] or (64, 256, 512, 1024, 2048, 4096):
            a = rng.normal(size=(rows, columns))
            b = {tanh_layer: (columns,), tanh_backward: (rows, columns), softmax_exp: (rows, 1)}[f]
            args = (a, rng.normal(size=b))
            whole, split = compiled(f, args, False), compiled(f, args, True)
            assert np.array_equal(whole(*args), split(*args)), label
            before = native_split.counts()
            row = in_turns({"whole": (whole, args), "split": (split, args)}, settle=SETTLE)
            after = native_split.counts()
            helper, caller = after.helper_chunks - before.helper_chunks, after.caller_chunks - before.caller_chunks
            (ww, wc), (sw, sc) = row["whole"], row["split"]
            print(f"| {label} | {rows}×{columns} | {ww * 1e6:.1f} | {sw * 1e6:.1f} | {sw / ww:.2f} | {wc * 1e6:.1f} "
                  f"| {sc * 1e6:.1f} | {sc / wc:.2f} | {helper / max(helper + caller, 1):.0%} |", flush=True)


if __name__ == "__main__":
    main()
