"""Per-example gradients over a batch of 256 (issue 34), of an MLP loss and of
a recurrent model's loss (a loop over 20 steps): irad's vmap(grad) natively
and on the Python backend, JAX's jit(vmap(grad)), and a Python loop over the
examples calling irad's gradient.

Run: .venv/bin/python bench/vmap.py   (needs JAX; results in docs/benchmarks.md)

The loss: one tanh hidden layer (64 -> 128 -> 10) and a softmax cross-entropy
against a one-hot label, per example; the gradient with respect to all four
weights, one per example (in_axes=(None, 0, 0)). The recurrent model: h =
tanh(W h + U x_t) over a sequence of 20 inputs of 8, hidden 32, a squared
error against a target; JAX's version is the same Python loop under jit.
irad differentiates it first and batches the derivative code with a batched
tape, so W and U stay one matrix for the batch through the loop and its
reverse (passes/batching/requests.py). The third table: vmap (forward only) of that model's final state over a number of
steps that varies per example (1..20), which irad-vmap runs to the longest with
a mask, against JAX's jit(vmap) of a fori_loop and a Python loop over the
examples of the numpy function; then per-example gradients through that loop
(vmap(grad), each element's gradient in a loop over the batch inside compiled
code) against a Python loop of irad's native gradient. Each system's result is
checked (against JAX's, or the loop's) before timing. Times are medians of blocks taken in
turns (bench/timing.py), wall and CPU per call of the whole batch.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
from timing import in_turns, optimised, optional  # noqa: E402

import irad  # noqa: E402

BATCH, D_IN, HIDDEN, D_OUT = 256, 64, 128, 10


def loss(params, x, y):
    h = np.tanh(x @ params["W1"] + params["b1"])
    z = h @ params["W2"] + params["b2"]
    m = np.max(z)
    return np.log(np.sum(np.exp(z - m))) + m - np.sum(z * y)


def jax_loss(jnp):
    def f(params, x, y):
        h = jnp.tanh(x @ params["W1"] + params["b1"])
        z = h @ params["W2"] + params["b2"]
        m = jnp.max(z)
        return jnp.log(jnp.sum(jnp.exp(z - m))) + m - jnp.sum(z * y)

    return f


def data(seed: int = 0):
    rng = np.random.default_rng(seed)
    params = {
        "W1": rng.normal(size=(D_IN, HIDDEN)) / np.sqrt(D_IN), "b1": np.zeros(HIDDEN),
        "W2": rng.normal(size=(HIDDEN, D_OUT)) / np.sqrt(HIDDEN), "b2": np.zeros(D_OUT),
    }
    xs = rng.normal(size=(BATCH, D_IN))
    ys = np.eye(D_OUT)[rng.integers(0, D_OUT, BATCH)]
    return params, xs, ys


STEPS, D_SEQ, STATE = 20, 8, 32


def rnn_loss(params, seq, y):
    h = np.zeros(STATE)
    for t in range(STEPS):
        h = np.tanh(params["W"] @ h + params["U"] @ seq[t])
    return np.sum((h - y) ** 2)


def jax_rnn_loss(jnp):
    def f(params, seq, y):
        h = jnp.zeros(STATE)
        for t in range(STEPS):
            h = jnp.tanh(params["W"] @ h + params["U"] @ seq[t])
        return jnp.sum((h - y) ** 2)

    return f


def rnn_data(seed: int = 1):
    rng = np.random.default_rng(seed)
    params = {"W": rng.normal(size=(STATE, STATE)) / np.sqrt(STATE), "U": rng.normal(size=(STATE, D_SEQ)) / 3}
    return params, rng.normal(size=(BATCH, STEPS, D_SEQ)), rng.normal(size=(BATCH, STATE))


def ragged_rnn(params, seq, n):
    """The recurrent model's final state over the first n steps of its sequence
    (a trip count per example: irad-vmap runs the loop to the longest, with a mask)."""
    h = np.zeros(STATE)
    for t in range(n):
        h = np.tanh(params["W"] @ h + params["U"] @ seq[t])
    return np.sum(h * h)


def jax_ragged_rnn(jnp, lax):
    def f(params, seq, n):
        step = lambda t, h: jnp.tanh(params["W"] @ h + params["U"] @ seq[t])  # noqa: E731
        h = lax.fori_loop(0, n, step, jnp.zeros(STATE))
        return jnp.sum(h * h)

    return f


def ragged_table() -> None:
    """vmap of a loop whose trip count varies per example (1..STEPS), forward only."""
    params, seqs, _ = rnn_data()
    ns = np.random.default_rng(2).integers(1, STEPS + 1, BATCH)
    systems = {}
    for backend in ("native", "python"):
        fn = irad.vmap(ragged_rnn, in_axes=(None, 0, 0), backend=backend)
        fn(params, seqs, ns)
        optimised(fn)
        systems[f"irad vmap, {backend}"] = (fn, (params, seqs, ns))
    expected = np.array([ragged_rnn(params, s, int(n)) for s, n in zip(seqs, ns)])

    def numpy_loop(params, seqs, ns):
        return np.array([ragged_rnn(params, s, int(n)) for s, n in zip(seqs, ns)])

    systems["Python loop of the numpy function"] = (numpy_loop, (params, seqs, ns))
    jax = optional("jax")
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        jitted = jax.jit(jax.vmap(jax_ragged_rnn(jnp, jax.lax), in_axes=(None, 0, 0)))
        jparams = {k: jnp.asarray(v) for k, v in params.items()}

        def run_jax(p, a, b):
            return jax.block_until_ready(jitted(p, a, b))

        systems["JAX jit(vmap) of fori_loop"] = (run_jax, (jparams, jnp.asarray(seqs), jnp.asarray(ns)))
    for name, (fn, args) in systems.items():
        np.testing.assert_allclose(np.asarray(fn(*args)), expected, rtol=1e-10, err_msg=name)
    report(f"vmap of a loop with a trip count per example (1..{STEPS} steps, state {STATE}), batch {BATCH} "
           "(float64)", in_turns(systems), "JAX jit(vmap) of fori_loop")

    # per-example gradients through it: each element's gradient in a loop over the batch (JAX cannot
    # reverse-differentiate a fori_loop whose trip count is traced)
    systems = {}
    for backend in ("native", "python"):
        fn = irad.vmap(irad.grad(ragged_rnn), in_axes=(None, 0, 0), backend=backend)
        fn(params, seqs, ns)
        optimised(fn)
        systems[f"irad vmap(grad), {backend}"] = (fn, (params, seqs, ns))
    one = irad.grad(ragged_rnn, backend="native")

    def loop(params, seqs, ns):
        grads = [one(params, s, int(n)) for s, n in zip(seqs, ns)]
        return {k: np.stack([g[k] for g in grads]) for k in grads[0]}

    loop(params, seqs[:2], ns[:2])
    optimised(one)
    systems["Python loop of irad grad, native"] = (loop, (params, seqs, ns))
    expected = loop(params, seqs, ns)
    for name, (fn, args) in systems.items():
        for k, v in fn(*args).items():
            np.testing.assert_allclose(v, expected[k], rtol=1e-10, atol=1e-12, err_msg=f"{name}: {k}")
    report(f"per-example gradients through that loop, batch {BATCH} (float64)", in_turns(systems),
           "Python loop of irad grad, native", "loop")


def report(title: str, times: dict, reference_name: str, label: str = "JAX-jit") -> None:
    reference = times.get(reference_name, (None,))[0]
    print(f"{title}\n")
    print(f"| system | wall ms | CPU ms | / {label} |")
    print("|---|---:|---:|---:|")
    for name, (wall, cpu) in times.items():
        ratio = f"{wall / reference:.2f}x" if reference else "-"
        print(f"| {name} | {wall * 1e3:.3f} | {cpu * 1e3:.3f} | {ratio} |")
    print()


def table(title: str, f, make_jax_f, params, xs, ys) -> None:
    systems = {}
    for backend in ("native", "python"):
        fn = irad.vmap(irad.grad(f), in_axes=(None, 0, 0), backend=backend)
        fn(params, xs, ys)
        optimised(fn)
        systems[f"irad vmap(grad), {backend}"] = (fn, (params, xs, ys))
    one = irad.grad(f, backend="native")

    def loop(params, xs, ys):
        return [one(params, x, y) for x, y in zip(xs, ys)]

    loop(params, xs[:2], ys[:2])
    optimised(one)
    systems["Python loop of irad grad, native"] = (loop, (params, xs, ys))
    jax = optional("jax")
    expected = None
    if jax is not None:
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp

        jitted = jax.jit(jax.vmap(jax.grad(make_jax_f(jnp)), in_axes=(None, 0, 0)))
        jparams = {k: jnp.asarray(v) for k, v in params.items()}
        jxs, jys = jnp.asarray(xs), jnp.asarray(ys)

        def run_jax(p, a, b):
            return jax.block_until_ready(jitted(p, a, b))

        expected = run_jax(jparams, jxs, jys)
        systems["JAX jit(vmap(grad))"] = (run_jax, (jparams, jxs, jys))
    if expected is not None:
        for name, (fn, args) in systems.items():
            got = fn(*args)
            if isinstance(got, list):
                got = {k: np.stack([g[k] for g in got]) for k in got[0]}
            for k in expected:
                np.testing.assert_allclose(np.asarray(got[k]), np.asarray(expected[k]), rtol=1e-9, atol=1e-12,
                                           err_msg=f"{name}: {k}")
    report(title, in_turns(systems), "JAX jit(vmap(grad))")


def main() -> None:
    table(f"per-example gradients, MLP {D_IN}-{HIDDEN}-{D_OUT}, batch {BATCH} (float64)", loss, jax_loss, *data())
    table(f"per-example gradients, recurrent model ({STEPS} steps, state {STATE}), batch {BATCH} (float64)",
          rnn_loss, jax_rnn_loss, *rnn_data())
    ragged_table()


if __name__ == "__main__":
    main()
