"""Scalar gradients: irad (Python backend) against the primal, autograd and JAX.

Run: .venv/bin/python bench/scalar.py   (autograd and jax are optional: pip install autograd jax)

Every workload is written once against a math-like module `m` and instantiated
with `math` (the primal and irad), `autograd.numpy` and `jax.numpy`, then all
are timed side by side in one run. Reported: median time per call and the
ratio to the Python primal (plain floats and `math`). "irad first call" is
lowering + differentiation + optimisation + code generation, after import.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from timing import median_seconds, optional, print_table  # noqa: E402


def make_energy(m):
    def scale(x, s):
        return s * m.tanh(x / s)

    def energy(x, y):
        r = m.sqrt(x * x + y * y + 1.0)
        return scale(r, 2.0) + m.log1p(m.exp(x - y)) + m.exp(-x * y)

    return energy


def make_chain(m):
    def f1(x, y):
        return m.sin(x) * y + x

    def f2(x, y):
        return f1(x, y) * f1(y, x)

    def f3(x, y):
        return m.exp(0.1 * f2(x, y)) + y

    def f4(x, y):
        return f3(x, y) / (1.0 + f3(y, x) ** 2)

    def f5(x, y):
        return m.tanh(f4(x, y)) + m.cos(y)

    def f6(x, y):
        return f5(x, y) * f5(y, x) + x * y

    return f6


def make_polynomial(m):
    def poly(x, y):
        acc = 0.0
        acc = acc * x + 1.5 * m.sin(y)
        acc = acc * x - 0.5 * m.cos(y)
        acc = acc * x + 0.25 * m.exp(-y * y)
        acc = acc * x - 0.125 * m.tanh(y)
        acc = acc * x + 0.0625 * m.sqrt(1.0 + y * y)
        acc = acc * x - 0.03125 * m.log1p(y * y)
        acc = acc * x + m.sin(x * y) * m.cos(x - y)
        acc = acc * x - m.exp(0.1 * x) * m.tanh(0.3 * y)
        return acc

    return poly


WORKLOADS = {"energy": make_energy, "call chain (6 deep)": make_chain, "polynomial": make_polynomial}
ARGS = (0.7, -1.3)


def _warm_up(x):
    return x * x


def main() -> None:
    irad.grad(_warm_up)(1.0)  # import cost is not compile latency
    autograd = optional("autograd")
    jax = optional("jax")
    rows = []
    for label, make in WORKLOADS.items():
        f = make(math)
        t0 = time.perf_counter()
        g = irad.grad(f, argnums=(0, 1))
        g(*ARGS)
        compile_s = time.perf_counter() - t0
        row = {
            "workload": label,
            "primal": median_seconds(f, *ARGS),
            "irad": median_seconds(g, *ARGS),
            "irad compile": compile_s,
        }
        if autograd is not None:
            import autograd.numpy as anp

            row["autograd"] = median_seconds(autograd.grad(make(anp), argnum=(0, 1)), *ARGS)
        if jax is not None:
            jax.config.update("jax_enable_x64", True)
            import jax.numpy as jnp

            jg = jax.jit(jax.grad(make(jnp), argnums=(0, 1)))
            row["jax jit"] = median_seconds(lambda x, y: [v.block_until_ready() for v in jg(x, y)], *ARGS)
        rows.append(row)

    print_table(rows, "primal", 2)

if __name__ == "__main__":
    main()
