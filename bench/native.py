"""The native backend against its own primal, the Python backend, JAX jit and
autograd, on scalar and loop workloads in the ADBench style.

Run: .venv/bin/python bench/native.py   (make bench installs llvmlite, JAX and autograd)

Every workload is written once against a math-like module `m` and
instantiated with `math` (the Python primal and irad), `autograd.numpy` and
`jax.numpy`. All columns are measured side by side in one run; each is the
median of 7 repeats. Ratios are gradient time / primal time of the same system
(irad native against the same program compiled natively without
differentiation), and JAX jit's gradient time / irad native's. "first call" is
everything before the first result: lowering, differentiation, optimisation
and mlir-opt + llvmlite compilation for native, tracing and XLA compilation
for JAX.

ADBench's GMM and array LSTM need numpy arrays (issue 5); the LSTM and the
bundle-adjustment reprojection here are their scalar forms: the same
arithmetic per step or per point, in a loop over a sequence or over points.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import irad  # noqa: E402
from irad.backends import native  # noqa: E402
from scalar import make_chain, make_energy, median_seconds, optional  # noqa: E402
from xdsl.dialects import func  # noqa: E402


def make_lstm(m):
    """A one-unit LSTM over a sequence of T inputs; loss against a target sequence."""

    def sigmoid(x):
        return 1.0 / (1.0 + m.exp(-x))

    def lstm(wf, wi, wo, wc, uf, ui, uo, uc, steps):
        h = 0.0
        c = 0.0
        loss = 0.0
        for t in range(steps):
            x = m.sin(0.1 * t)
            f = sigmoid(wf * x + uf * h)
            i = sigmoid(wi * x + ui * h)
            o = sigmoid(wo * x + uo * h)
            g = m.tanh(wc * x + uc * h)
            c = f * c + i * g
            h = o * m.tanh(c)
            loss = loss + (h - 0.5 * m.cos(0.1 * t)) ** 2
        return loss

    return lstm


def make_reprojection(m):
    """Bundle adjustment's reprojection error of one camera (Rodrigues rotation,
    centre, focal length, two radial distortion terms) summed over n points."""

    def residual(r0, r1, r2, c0, c1, c2, f, k1, k2, px, py, pz, u, v):
        x = px - c0
        y = py - c1
        z = pz - c2
        theta = m.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
        a0 = r0 / theta
        a1 = r1 / theta
        a2 = r2 / theta
        cs = m.cos(theta)
        sn = m.sin(theta)
        dot = (a0 * x + a1 * y + a2 * z) * (1.0 - cs)
        qx = x * cs + (a1 * z - a2 * y) * sn + a0 * dot
        qy = y * cs + (a2 * x - a0 * z) * sn + a1 * dot
        qz = z * cs + (a0 * y - a1 * x) * sn + a2 * dot
        xp = qx / qz
        yp = qy / qz
        rr = xp * xp + yp * yp
        distortion = 1.0 + k1 * rr + k2 * rr * rr
        eu = f * distortion * xp - u
        ev = f * distortion * yp - v
        return eu * eu + ev * ev

    def reprojection(r0, r1, r2, c0, c1, c2, f, k1, k2, n):
        s = 0.0
        for i in range(n):
            px = m.sin(0.37 * i)
            py = m.cos(0.91 * i)
            pz = 5.0 + m.sin(1.3 * i)
            u = 0.1 * m.sin(0.5 * i)
            v = 0.1 * m.cos(0.7 * i)
            s = s + residual(r0, r1, r2, c0, c1, c2, f, k1, k2, px, py, pz, u, v)
        return s

    return reprojection


# label -> (builder, arguments, argnums); the int last argument is a loop length.
WORKLOADS = {
    "energy (scalar)": (make_energy, (0.7, -1.3), (0, 1)),
    "call chain (6 deep)": (make_chain, (0.7, -1.3), (0, 1)),
    "LSTM, T=100": (make_lstm, (0.5, 0.4, 0.3, 0.6, -0.2, 0.1, 0.2, 0.3, 100), tuple(range(8))),
    "reprojection, N=100": (
        make_reprojection,
        (0.1, -0.05, 0.02, 0.1, 0.2, -3.0, 1.2, 0.01, -0.001, 100),
        tuple(range(9)),
    ),
}


def _warm_up(x):
    return x * x


def native_primal(f, args):
    """f compiled by the native backend without differentiation."""
    module = irad.lower(f, *args)
    (public,) = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.sym_visibility is None]
    run = native.compile_module(module).function(public)
    return lambda *a: run(*a)[0]


def first_call(make_callable, args) -> tuple[object, float]:
    start = time.perf_counter()
    fn = make_callable()
    fn(*args)
    return fn, time.perf_counter() - start


def measure(label, make, args, argnums, autograd, jax) -> dict:
    f = make(__import__("math"))
    row = {"workload": label}
    row["python primal"] = median_seconds(f, *args)
    g_native, row["native first"] = first_call(lambda: irad.grad(f, argnums, backend="native"), args)
    g_python, row["python first"] = first_call(lambda: irad.grad(f, argnums), args)
    row["native primal"] = median_seconds(native_primal(f, args), *args)
    row["native grad"] = median_seconds(g_native, *args)
    row["python grad"] = median_seconds(g_python, *args)
    check = max(abs(a - b) / max(1.0, abs(b)) for a, b in zip(g_native(*args), g_python(*args)))
    assert check < 1e-9, f"{label}: native and Python gradients differ by {check}"
    if autograd is not None:
        import autograd.numpy as anp

        row["autograd grad"] = median_seconds(autograd.grad(make(anp), argnum=argnums), *args)
    if jax is not None:
        import jax.numpy as jnp

        fj = make(jnp)
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int))
        primal = jax.jit(fj, static_argnums=static)
        grad = jax.jit(jax.grad(fj, argnums=argnums), static_argnums=static)
        grad, row["jax first"] = first_call(lambda: grad, args)
        row["jax primal"] = median_seconds(lambda *a: primal(*a).block_until_ready(), *args)
        row["jax grad"] = median_seconds(lambda *a: [v.block_until_ready() for v in grad(*a)], *args)
    return row


def table(rows) -> list[str]:
    us = lambda s: f"{s * 1e6:.2f}" if s < 1e-4 else f"{s * 1e6:.0f}"  # noqa: E731
    ms = lambda s: f"{s * 1e3:.0f}"  # noqa: E731
    has = lambda k: k in rows[0]  # noqa: E731
    columns = [
        ("workload", lambda r: r["workload"]),
        ("native primal µs", lambda r: us(r["native primal"])),
        ("native grad µs", lambda r: us(r["native grad"])),
        ("native grad/primal", lambda r: f"{r['native grad'] / r['native primal']:.1f}×"),
        ("python primal µs", lambda r: us(r["python primal"])),
        ("python-backend grad µs", lambda r: us(r["python grad"])),
        ("python grad / native grad", lambda r: f"{r['python grad'] / r['native grad']:.1f}×"),
    ]
    if has("jax grad"):
        columns += [
            ("jax jit primal µs", lambda r: us(r["jax primal"])),
            ("jax jit grad µs", lambda r: us(r["jax grad"])),
            ("jax grad/primal", lambda r: f"{r['jax grad'] / r['jax primal']:.1f}×"),
            ("jax jit grad / native grad", lambda r: f"{r['jax grad'] / r['native grad']:.1f}×"),
        ]
    if has("autograd grad"):
        columns += [("autograd grad µs", lambda r: us(r["autograd grad"]))]
    columns += [("native first call ms", lambda r: ms(r["native first"])),
                ("python first call ms", lambda r: ms(r["python first"]))]
    if has("jax first"):
        columns += [("jax first call ms", lambda r: ms(r["jax first"]))]
    lines = ["| " + " | ".join(name for name, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r) for _, cell in columns) + " |" for r in rows]
    return lines


def main() -> None:
    if not native.native_tools_available():
        sys.exit(f"bench/native.py needs mlir-opt and mlir-translate 22: {native.INSTALL_HINT}")
    for backend in ("python", "native"):  # import costs are not compile latency
        irad.grad(_warm_up, backend=backend)(1.0)
    autograd = optional("autograd")
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    rows = [measure(label, *spec, autograd, jax) for label, spec in WORKLOADS.items()]
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
