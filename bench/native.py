"""The one table of `make bench`: gradient time of irad's native backend
against the numpy primal, irad's numpy (Python) backend, JAX jit and
autograd, and the ratios issue 16 sets targets for.

Run: .venv/bin/python bench/native.py [substring of a row ...]   (make bench installs llvmlite, JAX and autograd)

Every workload is written once against a math-like module `m` and
instantiated with `math` or `numpy` (the primal and irad), `autograd.numpy`
and `jax.numpy` (`jax.jit(jax.grad(...))`, x64). All columns are measured
side by side in one run; each is the median of 7 repeats. "native / native
primal" divides by the same program compiled natively without
differentiation. "native first call" is everything before the first result:
lowering, differentiation, optimisation, mlir-opt and llvmlite. The run checks
that both irad backends give the same gradient.

Workloads: the rows of issue 16 (vectorised GMM, MLP, logistic regression,
LSTM loop, attention) and small sizes of them; ADBench's GMM objective at
smaller sizes, an LSTM over 6 steps (unrolled, and as a loop whose arrays go
on the tape), the bundle-adjustment reprojection residual vectorised over
1000 points; scalar forms (Python floats in loops) of the LSTM and the
reprojection, and two small scalar programs.
"""

from __future__ import annotations

import math
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
# One thread for numpy's BLAS, as native code and autograd have: on a shared
# machine its threads contend with the other processes (the MLP's numpy
# primal took 90x longer in one run).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# "native first call" compiles: no machine code from an earlier run's cache
# (irad/backends/native/object_cache.py; bench/native_compile.py measures the cache).
os.environ.setdefault("IRAD_NATIVE_CACHE", "0")

import numpy as np  # noqa: E402
from arrays import make_gmm, make_lstm_loop, make_mlp  # noqa: E402
from arrays import make_lstm as make_array_lstm  # noqa: E402
from scalar import make_chain, make_energy  # noqa: E402
from timing import median_seconds, optional  # noqa: E402
from xdsl.dialects import func  # noqa: E402

import irad  # noqa: E402
from irad.backends.native import compile as native  # noqa: E402


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


def make_array_reprojection(m):
    """The reprojection error of one camera (Rodrigues rotation, centre, focal
    length, two distortion terms in `cam`) over N points at once."""

    def reprojection(cam, points, observed):
        r = cam[0:3]
        theta = m.sqrt(m.sum(r * r))
        a = r / theta
        p = points - cam[3:6]
        cs = m.cos(theta)
        sn = m.sin(theta)
        dot = (p @ a) * (1.0 - cs)
        x, y, z = p[:, 0], p[:, 1], p[:, 2]
        qx = x * cs + (a[1] * z - a[2] * y) * sn + a[0] * dot
        qy = y * cs + (a[2] * x - a[0] * z) * sn + a[1] * dot
        qz = z * cs + (a[0] * y - a[1] * x) * sn + a[2] * dot
        xp = qx / qz
        yp = qy / qz
        rr = xp * xp + yp * yp
        distortion = 1.0 + cam[7] * rr + cam[8] * rr * rr
        eu = cam[6] * distortion * xp - observed[:, 0]
        ev = cam[6] * distortion * yp - observed[:, 1]
        return m.sum(eu * eu + ev * ev)

    return reprojection


def make_logistic(m):
    def logistic(w, b, x, y):
        """Logistic regression's mean log-loss, labels y in {-1, 1}."""
        return m.mean(m.log(1.0 + m.exp(-y * (x @ w + b))))

    return logistic


def make_attention(m):
    def attention(wq, wk, wv, x):
        """One softmax self-attention head over the rows of x, squared-norm readout."""
        q = x @ wq
        k = x @ wk
        v = x @ wv
        scores = (q @ k.T) / math.sqrt(wq.shape[1])
        e = m.exp(scores - m.max(scores, axis=1, keepdims=True))
        out = (e / m.sum(e, axis=1, keepdims=True)) @ v
        return m.sum(out * out)

    return attention


def make_tanh_layer(m):
    def tanh_layer(w, b, x):
        return m.sum(m.tanh(x @ w + b))

    return tanh_layer


def _mlp_arguments(rng, samples, features, width, classes):
    return (0.2 * rng.normal(size=(features, width)), np.zeros(width), 0.2 * rng.normal(size=(width, classes)),
            np.zeros(classes), rng.normal(size=(samples, features)),
            np.eye(classes)[rng.integers(0, classes, size=samples)])


def _logistic_arguments(rng, n, d):
    return 0.1 * rng.normal(size=d), 0.1, rng.normal(size=(n, d)), np.sign(rng.normal(size=n))


def _issue_workloads() -> dict:
    """The rows of issue 16's table, then small sizes, where call overhead dominates."""
    rng = np.random.default_rng(1)
    hidden, inputs, steps = 32, 32, 20
    lstm = (0.3 * rng.normal(size=(inputs, 4 * hidden)), 0.3 * rng.normal(size=(hidden, 4 * hidden)),
            0.1 * rng.normal(size=4 * hidden), rng.normal(size=(steps, 1, inputs)))
    attention = tuple(0.2 * rng.normal(size=(32, 32)) for _ in range(3)) + (rng.normal(size=(64, 32)),)
    gmm = (rng.normal(size=25), rng.normal(size=(25, 10)), 0.1 * rng.normal(size=(25, 10)), rng.normal(size=(1000, 10)))
    return {
        "GMM d=10 K=25 N=1000 (vectorised)": (make_gmm, gmm, (0, 1, 2)),
        "MLP 256×64-128-10, tanh, softmax-xent": (make_mlp, _mlp_arguments(rng, 256, 64, 128, 10), (0, 1, 2, 3)),
        # its own generator: the other rows keep the data they had before it was added
        "MLP 1024×64-128-10, tanh, softmax-xent": (make_mlp, _mlp_arguments(np.random.default_rng(1024), 1024, 64, 128, 10),
                                                   (0, 1, 2, 3)),
        "MLP 4096×64-128-10, tanh, softmax-xent": (make_mlp, _mlp_arguments(rng, 4096, 64, 128, 10), (0, 1, 2, 3)),
        "logistic regression N=5000 d=50": (make_logistic, _logistic_arguments(rng, 5000, 50), (0, 1)),
        f"LSTM h={hidden} T={steps} (loop)": (make_lstm_loop, lstm, (0, 1, 2)),
        "attention 64×32": (make_attention, attention, (0, 1, 2)),
        "small: tanh layer 4×6": (make_tanh_layer, (rng.normal(size=(6, 3)), np.zeros(3), rng.normal(size=(4, 6))), (0, 1)),
        "small: MLP 8×4-16-3, softmax-xent": (make_mlp, _mlp_arguments(rng, 8, 4, 16, 3), (0, 1, 2, 3)),
        "small: logistic regression N=10 d=4": (make_logistic, _logistic_arguments(rng, 10, 4), (0, 1)),
    }


def _array_workloads() -> dict:
    rng = np.random.default_rng(0)
    workloads = {}
    for n, d, k in [(100, 2, 3), (1000, 5, 10)]:  # and d=10 K=25 N=1000 above
        args = (rng.normal(size=k), rng.normal(size=(k, d)), 0.1 * rng.normal(size=(k, d)), rng.normal(size=(n, d)))
        workloads[f"GMM n={n} d={d} K={k}"] = (make_gmm, args, (0, 1, 2))
    batch, inputs, hidden = 16, 10, 20
    lstm = (0.3 * rng.normal(size=(inputs, 4 * hidden)), 0.3 * rng.normal(size=(hidden, 4 * hidden)),
            0.1 * rng.normal(size=4 * hidden), rng.normal(size=(6, batch, inputs)))
    workloads[f"LSTM arrays, 6 steps unrolled, batch {batch}, {inputs}→{hidden}"] = (make_array_lstm, lstm, (0, 1, 2))
    workloads[f"LSTM arrays, 6 steps as a loop, batch {batch}, {inputs}→{hidden}"] = (make_lstm_loop, lstm, (0, 1, 2))
    points = rng.normal(size=(1000, 3)) + np.array([0.0, 0.0, 8.0])
    cam = np.array([0.1, -0.05, 0.02, 0.1, 0.2, -3.0, 1.2, 0.01, -0.001])
    workloads["reprojection arrays, N=1000"] = (make_array_reprojection, (cam, points, 0.1 * rng.normal(size=(1000, 2))), (0,))
    return workloads


# label -> (builder, arguments, argnums); the int last argument is a loop length.
WORKLOADS = {
    **_issue_workloads(),
    "energy (scalar)": (make_energy, (0.7, -1.3), (0, 1)),
    "call chain (6 deep)": (make_chain, (0.7, -1.3), (0, 1)),
    "LSTM, T=100": (make_lstm, (0.5, 0.4, 0.3, 0.6, -0.2, 0.1, 0.2, 0.3, 100), tuple(range(8))),
    "reprojection, N=100": (
        make_reprojection,
        (0.1, -0.05, 0.02, 0.1, 0.2, -3.0, 1.2, 0.01, -0.001, 100),
        tuple(range(9)),
    ),
    **_array_workloads(),
}


def _warm_up(x):
    return x * x


def native_primal(f, args):
    """f compiled by the native backend without differentiation."""
    module = irad.lower(f, *args)
    (public,) = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.sym_visibility is None]
    run = native.compile_module(module).function(public)
    primal = lambda *a: run(*a)[0]  # noqa: E731
    primal.native_module = run.native_module  # so that timing waits for its -O2 code
    return primal


def first_call(make_callable, args) -> tuple[object, float]:
    start = time.perf_counter()
    fn = make_callable()
    fn(*args)
    return fn, time.perf_counter() - start


def measure(label, make, args, argnums, autograd, jax) -> dict:
    f = make(np if any(isinstance(a, np.ndarray) for a in args) else math)
    row = {"workload": label}
    row["python primal"] = median_seconds(f, *args)
    g_native, row["native first"] = first_call(lambda: irad.grad(f, argnums, backend="native"), args)
    g_python, row["python first"] = first_call(lambda: irad.grad(f, argnums), args)
    row["native primal"] = median_seconds(native_primal(f, args), *args)
    row["native grad"] = median_seconds(g_native, *args)
    row["python grad"] = median_seconds(g_python, *args)
    check = max(np.max(np.abs(a - b) / np.maximum(1.0, np.abs(b))) for a, b in zip(g_native(*args), g_python(*args)))
    assert check < 1e-9, f"{label}: native and Python gradients differ by {check}"
    if autograd is not None:
        import autograd.numpy as anp

        row["autograd grad"] = median_seconds(autograd.grad(make(anp), argnum=argnums), *args)
    if jax is not None:
        import jax.numpy as jnp

        fj = make(jnp)
        static = tuple(i for i, a in enumerate(args) if isinstance(a, int))
        grad = jax.jit(jax.grad(fj, argnums=argnums), static_argnums=static)
        grad(*args)  # traced and compiled
        row["jax grad"] = median_seconds(lambda *a: [v.block_until_ready() for v in grad(*a)], *args)
    return row


def table(rows) -> list[str]:
    """The one table `make bench` prints: gradient times, then the ratios issue 16 sets targets for."""
    us = lambda s: f"{s * 1e6:.2f}" if s < 1e-4 else f"{s * 1e6:.0f}"  # noqa: E731
    ratio = lambda a, b: lambda r: f"{r[a] / r[b]:.2f}" if a in r and b in r else "–"  # noqa: E731
    time = lambda key: lambda r: us(r[key]) if key in r else "–"  # noqa: E731
    columns = [
        ("workload", lambda r: r["workload"]),
        ("numpy primal µs", time("python primal")),
        ("native µs", time("native grad")),
        ("numpy backend µs", time("python grad")),
        ("JAX jit µs", time("jax grad")),
        ("autograd µs", time("autograd grad")),
        ("native / JAX", ratio("native grad", "jax grad")),
        ("native / native primal", ratio("native grad", "native primal")),
        ("numpy backend / numpy primal", ratio("python grad", "python primal")),
        ("autograd / numpy backend", ratio("autograd grad", "python grad")),
        ("native first call ms", lambda r: f"{r['native first'] * 1e3:.0f}"),
    ]
    lines = ["| " + " | ".join(name for name, _ in columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(cell(r) for _, cell in columns) + " |" for r in rows]
    return lines


def prepare(jax) -> None:
    """Check the native tools, pay import costs outside any timing, and put JAX in float64."""
    if not native.native_tools_available():
        sys.exit(f"the benchmark needs mlir-opt and mlir-translate 22: {native.INSTALL_HINT}")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    for backend in ("python", "native"):  # import costs are not compile latency
        irad.grad(_warm_up, backend=backend)(1.0)
    # The warm-up's background -O2 compile (tiers.py) must not run into a
    # measured first call: its child's CPU time would be counted there when
    # it is reaped (0.15-0.25 s of "other" in bench/native_compile.py), and it
    # takes a core from it.
    try:
        from irad.backends.native.tiers import wait_all
    except ImportError:  # an older tree, without tiering: nothing runs in the background
        return
    wait_all()


def main() -> None:
    autograd = optional("autograd")
    jax = optional("jax")
    prepare(jax)
    wanted = sys.argv[1:]  # substrings of the rows to run (all if none)
    rows = [measure(label, *spec, autograd, jax) for label, spec in WORKLOADS.items()
            if not wanted or any(w in label for w in wanted)]
    print("\n".join(table(rows)))


if __name__ == "__main__":
    main()
