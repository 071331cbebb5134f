"""One matrix product whole and split between the caller and irad's helper
thread (irad/backends/native/split.py): where splitting starts to pay.

Run: .venv/bin/python bench/split_products.py

The five products of the MLP's gradient (batch × 64-128-10) at several
batches, each called through ctypes as irad's compiled code calls it: whole
(`cblas_dgemm` of irad's OpenBLAS, one thread) and split
(`irad_split_dgemm`, same arguments), and blocked (`irad_blocked_dgemm`: one
chunk on the caller, a narrow product in blocks of rows). Medians of 7 blocks taken in turns,
wall and CPU time (getrusage, every thread) per call; then the share of the
split calls' chunks the helper ran (the rest the caller ran, the helper not
yet awake: the take-back). Both give the product within 1e-12 (checked).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # numpy's; before numpy loads

import numpy as np  # noqa: E402
from mlp_gap import dgemm  # noqa: E402
from timing import in_turns  # noqa: E402

from irad.backends.native import lapack  # noqa: E402

from irad.backends.native import split as native_split

SETTLE = 0.1  # seconds at least between blocks, then until the process is idle (timing.settle_until_idle)


def main() -> None:
    library = lapack.find()
    module = native_split._module(library)
    whole, split_wide = dgemm(), dgemm(module.address(native_split.symbol("d", library)))
    split_narrow = dgemm(module.address(native_split.symbol("d", library, narrow=True)))
    blocked = dgemm(module.address(native_split.symbol("d", library, blocked=True)))
    rng = np.random.default_rng(0)
    print("| batch | product (M×N×K) | multiply-adds | whole wall µs | blocked wall µs | split wall µs "
          "| blocked / whole, wall | split / whole, wall | whole CPU µs | blocked CPU µs | split CPU µs "
          "| blocked / whole, CPU | chunks the helper ran |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in [int(b) for b in sys.argv[1:]] or (128, 256, 512, 1024, 4096):
        x, w1, w2 = rng.normal(size=(n, 64)), rng.normal(size=(64, 128)), rng.normal(size=(128, 10))
        h, d, dz = np.tanh(x @ w1), rng.normal(size=(n, 10)), rng.normal(size=(n, 128))
        products = {
            "x @ w1": (x, False, w1, False), "h @ w2": (h, False, w2, False), "dlogits @ w2ᵀ": (d, False, w2, True),
            "hᵀ @ dlogits": (h, True, d, False), "xᵀ @ dz": (x, True, dz, False),
        }
        for label, (a, ta, b, tb) in products.items():
            m, k = (a.shape[1], a.shape[0]) if ta else a.shape
            cols = b.shape[0] if tb else b.shape[1]
            one, two, three = np.empty((m, cols)), np.empty((m, cols)), np.empty((m, cols))
            # as compiled code calls it: a narrow product's chunks in blocks
            split = split_narrow if native_split.narrow(m, cols, k, tb) else split_wide
            whole(a, ta, b, tb, one)
            split(a, ta, b, tb, two)
            blocked(a, ta, b, tb, three)
            for other in (two, three):
                assert np.allclose(one, other, rtol=1e-12, atol=1e-12 * np.abs(one).max()), label
            before = native_split.counts()
            row = in_turns({"whole": (whole, (a, ta, b, tb, one)), "blocked": (blocked, (a, ta, b, tb, three)),
                            "split": (split, (a, ta, b, tb, two))}, settle=SETTLE)
            after = native_split.counts()
            helper, caller = after.helper_chunks - before.helper_chunks, after.caller_chunks - before.caller_chunks
            (ww, wc), (bw, bc), (sw, sc) = row["whole"], row["blocked"], row["split"]
            print(f"| {n} | {label} ({m}×{cols}×{k}) | {m * cols * k} | {ww * 1e6:.0f} | {bw * 1e6:.0f} | {sw * 1e6:.0f} "
                  f"| {bw / ww:.2f} | {sw / ww:.2f} | {wc * 1e6:.0f} | {bc * 1e6:.0f} | {sc * 1e6:.0f} | {bc / wc:.2f} "
                  f"| {helper / max(helper + caller, 1):.0%} |")


if __name__ == "__main__":
    main()
