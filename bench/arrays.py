"""Array gradients: irad (numpy backend) against the numpy primal, autograd and JAX.

Run: .venv/bin/python bench/arrays.py   (autograd and jax are optional: make bench installs them)

Each workload is written once against a numpy-like module `m` and instantiated
with `numpy` (the primal and irad), `autograd.numpy` and `jax.numpy`; all are
timed side by side in one run. Reported: median time per gradient call and the
ratios. "irad first call" is lowering + differentiation + optimisation + code
generation, after import.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import irad  # noqa: E402
from timing import median_seconds, optional, print_table  # noqa: E402


def make_gmm(m):
    def gmm(alphas, means, log_sigmas, x):
        """Negative log-likelihood of x (n, d) under a diagonal Gaussian mixture (k components)."""
        diff = x[:, None, :] - means[None, :, :]
        inv_var = m.exp(-2.0 * log_sigmas)
        mahalanobis = m.sum(diff**2 * inv_var[None, :, :], axis=2)
        log_det = m.sum(log_sigmas, axis=1)
        log_weights = alphas - m.log(m.sum(m.exp(alphas)))
        terms = log_weights[None, :] - log_det[None, :] - 0.5 * mahalanobis
        top = m.max(terms, axis=1, keepdims=True)
        per_point = m.log(m.sum(m.exp(terms - top), axis=1)) + top[:, 0]
        return -m.sum(per_point)

    return gmm


def make_lstm(m):
    def sigmoid(x):
        return 1.0 / (1.0 + m.exp(-x))

    def step(wx, wh, b, h, c, x):
        gates = x @ wx + h @ wh + b
        n = h.shape[1]
        i = sigmoid(gates[:, 0:n])
        f = sigmoid(gates[:, n:2 * n])
        o = sigmoid(gates[:, 2 * n:3 * n])
        g = m.tanh(gates[:, 3 * n:4 * n])
        c = f * c + i * g
        return o * m.tanh(c), c

    def lstm(wx, wh, b, xs):
        """An LSTM over a sequence of 6 steps (unrolled), then a squared-error readout."""
        h = m.zeros((xs.shape[1], wh.shape[0]))
        c = m.zeros((xs.shape[1], wh.shape[0]))
        h, c = step(wx, wh, b, h, c, xs[0])
        h, c = step(wx, wh, b, h, c, xs[1])
        h, c = step(wx, wh, b, h, c, xs[2])
        h, c = step(wx, wh, b, h, c, xs[3])
        h, c = step(wx, wh, b, h, c, xs[4])
        h, c = step(wx, wh, b, h, c, xs[5])
        return m.sum(h**2)

    return lstm


def make_lstm_loop(m):
    def sigmoid(x):
        return 1.0 / (1.0 + m.exp(-x))

    def lstm_loop(wx, wh, b, xs):
        """The same LSTM as a Python loop over the sequence (irad: scf.for and its tape)."""
        n = wh.shape[0]
        h = m.zeros((xs.shape[1], n))
        c = m.zeros((xs.shape[1], n))
        for t in range(xs.shape[0]):
            gates = xs[t] @ wx + h @ wh + b
            c = sigmoid(gates[:, n:2 * n]) * c + sigmoid(gates[:, 0:n]) * m.tanh(gates[:, 3 * n:4 * n])
            h = sigmoid(gates[:, 2 * n:3 * n]) * m.tanh(c)
        return m.sum(h**2)

    return lstm_loop


def make_mlp(m):
    def mlp(w1, b1, w2, b2, x, labels):
        """A two-layer tanh MLP with a softmax cross-entropy loss."""
        h = m.tanh(x @ w1 + b1)
        logits = h @ w2 + b2
        top = m.max(logits, axis=1, keepdims=True)
        shifted = logits - top
        log_probs = shifted - m.log(m.sum(m.exp(shifted), axis=1, keepdims=True))
        return -m.mean(m.sum(labels * log_probs, axis=1))

    return mlp


# (GMM n, d, k), (LSTM batch, inputs, hidden), (MLP samples, features, width, classes)
SIZES = {
    "small": ((10, 2, 3), (1, 4, 8), (8, 4, 16, 3)),
    "medium": ((200, 8, 10), (16, 10, 20), (64, 32, 64, 10)),
}


def _arguments(size: str):
    rng = np.random.default_rng(0)
    (n, d, k), (batch, inputs, hidden), (samples, features, width, classes) = SIZES[size]
    gmm = (rng.normal(size=k), rng.normal(size=(k, d)), 0.1 * rng.normal(size=(k, d)), rng.normal(size=(n, d)))
    lstm = (
        0.3 * rng.normal(size=(inputs, 4 * hidden)),
        0.3 * rng.normal(size=(hidden, 4 * hidden)),
        0.1 * rng.normal(size=4 * hidden),
        rng.normal(size=(6, batch, inputs)),
    )
    mlp = (
        0.2 * rng.normal(size=(features, width)),
        np.zeros(width),
        0.2 * rng.normal(size=(width, classes)),
        np.zeros(classes),
        rng.normal(size=(samples, features)),
        np.eye(classes)[rng.integers(0, classes, size=samples)],
    )
    return {
        f"GMM (n={n}, d={d}, k={k})": (make_gmm, gmm, (0, 1, 2)),
        f"LSTM (6 steps, batch {batch}, {inputs}→{hidden})": (make_lstm, lstm, (0, 1, 2)),
        f"LSTM as a loop (6 steps, batch {batch}, {inputs}→{hidden})": (make_lstm_loop, lstm, (0, 1, 2)),
        f"MLP ({samples}×{features}→{width}→{classes}, softmax CE)": (make_mlp, mlp, (0, 1, 2, 3)),
    }


def _check(reference, got) -> None:
    for r, g in zip(reference, got):
        if not np.allclose(np.asarray(r), np.asarray(g), rtol=1e-6, atol=1e-8):
            raise AssertionError("gradients disagree between irad and the reference")


def _warm_up(x):
    return np.sum(x * x)


def main() -> None:
    irad.grad(_warm_up)(np.ones(2))  # import cost is not compile latency
    autograd = optional("autograd")
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
    for size in SIZES:
        print(f"\n{size} inputs\n")
        _table(size, autograd, jax)


def _table(size: str, autograd, jax) -> None:
    rows = []
    for label, (make, args, argnums) in _arguments(size).items():
        f = make(np)
        t0 = time.perf_counter()
        g = irad.grad(f, argnums=argnums)
        result = g(*args)
        compile_s = time.perf_counter() - t0
        row = {"workload": label, "primal": median_seconds(f, *args), "irad": median_seconds(g, *args),
               "irad compile": compile_s}
        if autograd is not None:
            import autograd.numpy as anp

            ag = autograd.grad(make(anp), argnum=argnums)
            _check(ag(*args), result)
            row["autograd"] = median_seconds(ag, *args)
        if jax is not None:
            import jax.numpy as jnp

            jg = jax.jit(jax.grad(make(jnp), argnums=argnums))
            jargs = [jnp.asarray(a) for a in args]
            _check(jg(*jargs), result)
            row["jax jit"] = median_seconds(lambda *a: [v.block_until_ready() for v in jg(*a)], *jargs)
        rows.append(row)

    print_table(rows, "numpy primal", 1)

if __name__ == "__main__":
    main()
