"""Native gradient and primal of `make bench`'s rows with two mechanisms on and off, in one process.

Run: .venv/bin/python bench/native_switches.py [--rounds 40] [ROW ...]

The two mechanisms (docs/backends/native.md): LLVM told not to vectorise through
gathers and scatters (irad.config's `native_tuning`, by default; "" lets
LLVM choose for this CPU), and expensive producers materialised before the
consumers that broadcast them (native_fusion.materialise_before_broadcasts,
replaced by a no-op here to turn it off: its switch, IRAD_NATIVE_MATERIALISE,
is retired). For each row of
bench/native.py (substrings of their labels select some), the gradient and
the primal are compiled once per configuration: both off (as before), each
alone, both on (the default). All are then timed in interleaved rounds of
2 ms samples, so load falls on all of them alike; each figure is the 10%
quantile of the samples (load only adds time). JAX-jit's gradient is timed
in the same rounds where JAX is installed. Every configuration's gradient
must equal the default's to 1e-12 (gathers and plain loads sum in the same
order; a materialised producer computes the same bits).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402
from irad.backends.native import fusion as native_fusion
from native import WORKLOADS, native_primal  # noqa: E402
from timing import interleaved_samples, low, optimised, optional  # noqa: E402

TUNING = irad.config.default("native_tuning")
CONFIGURATIONS = {  # name -> (native_tuning, materialised before broadcasts)
    "both off (before)": ("", False),
    "no gathers only": (TUNING, False),
    "materialise only": ("", True),
    "both on (default)": (TUNING, True),
}
SAMPLE_SECONDS = 0.002


def _configured(tuning: str, materialise: bool, build):
    materialising = native_fusion.materialise_before_broadcasts
    if not materialise:
        native_fusion.materialise_before_broadcasts = lambda module: None
    try:
        with irad.config.overriding(native_tuning=tuning):
            built = build()
            optimised(built)  # its -O2 code (tiered compilation) is compiled from what these settings made
            return built
    finally:
        native_fusion.materialise_before_broadcasts = materialising


def _compiled_gradient(f, args, argnums):
    gradient = irad.grad(f, argnums, backend="native")
    gradient(*args)  # compiles
    return gradient


def measure(label: str, rounds: int, jax) -> dict:
    make, args, argnums = WORKLOADS[label]
    runs = {}
    for name, (tuning, materialise) in CONFIGURATIONS.items():
        f = make(np)  # a new function: irad's compile cache does not see the settings
        runs[("gradient", name)] = _configured(tuning, materialise, lambda: _compiled_gradient(f, args, argnums))
        runs[("primal", name)] = _configured(tuning, materialise, lambda: native_primal(f, args))
    default = runs[("gradient", "both on (default)")](*args)
    for name in CONFIGURATIONS:
        for a, b in zip(runs[("gradient", name)](*args), default):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, err_msg=f"{label}, {name}")
    if jax is not None:
        import jax.numpy as jnp

        grad = jax.jit(jax.grad(make(jnp), argnums=argnums),
                       static_argnums=tuple(i for i, a in enumerate(args) if isinstance(a, int)))
        runs[("jax", "")] = lambda *a: [v.block_until_ready() for v in grad(*a)]
    samples = interleaved_samples({key: (lambda fn=fn: fn(*args)) for key, fn in runs.items()}, rounds, SAMPLE_SECONDS)
    return {key: low(s) for key, s in samples.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("rows", nargs="*", help="substrings of the rows to run (all if none)")
    options = parser.parse_args()
    if not native.native_tools_available():
        sys.exit(f"the benchmark needs mlir-opt and mlir-translate 22: {native.INSTALL_HINT}")
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    print(f"load average (1 min) {os.getloadavg()[0]:.2f} at the start")
    us = lambda s: f"{s * 1e6:.2f}" if s < 1e-4 else f"{s * 1e6:.0f}"  # noqa: E731
    print("| workload | configuration | native gradient µs | native primal µs | JAX jit µs"
          " | native / JAX | native / native primal |")
    print("|---|---|---|---|---|---|---|")
    for label in WORKLOADS:
        if options.rows and not any(w in label for w in options.rows):
            continue
        low = measure(label, options.rounds, jax)
        for name in CONFIGURATIONS:
            g, p, j = low[("gradient", name)], low[("primal", name)], low.get(("jax", ""))
            cells = [label, name, us(g), us(p), us(j) if j else "–", f"{g / j:.2f}" if j else "–", f"{g / p:.2f}"]
            print("| " + " | ".join(cells) + " |", flush=True)
    print(f"load average (1 min) {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
