"""irad.vmap against jax.vmap (float64) and against Python loops over the batch:
in_axes/out_axes forms, axis_size, composition with the derivative
transformations both ways, control flow, errors, programs from the fuzzer's
generator vmapped, and the native backend on one program."""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.errors import BatchingError, IradError
from irad.vmapping import explain_vmap

jax.config.update("jax_enable_x64", True)
RNG = np.random.default_rng(7)


def close(got, expected, tol=1e-10):
    got_leaves, expected_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)
    assert len(got_leaves) == len(expected_leaves)
    for g, e in zip(got_leaves, expected_leaves):
        assert np.shape(g) == np.shape(e)
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=tol, atol=tol)


# ---- one function, both libraries --------------------------------------------------
def mlp(np_):
    def loss(params, x, y):
        h = np_.tanh(x @ params["W1"] + params["b1"])
        out = h @ params["W2"]
        return np_.sum((out - y) ** 2)

    return loss


PARAMS = {"W1": RNG.normal(size=(3, 4)), "b1": RNG.normal(size=4), "W2": RNG.normal(size=(4, 2))}
XS, YS = RNG.normal(size=(5, 3)), RNG.normal(size=(5, 2))


def test_elementwise_and_shared_arguments():
    def f(x, w):
        return np.sin(x) * np.sum(w) + x ** 2

    def jf(x, w):
        return jnp.sin(x) * jnp.sum(w) + x ** 2

    xs, w = RNG.normal(size=6), RNG.normal(size=3)
    close(irad.vmap(f, in_axes=(0, None))(xs, w), jax.vmap(jf, in_axes=(0, None))(xs, w))
    ws = RNG.normal(size=(3, 6))
    close(irad.vmap(f, in_axes=(0, 1))(xs, ws), jax.vmap(jf, in_axes=(0, 1))(xs, ws))


def test_out_axes_and_several_results():
    def f(a, b):
        return a @ b, np.sum(a, axis=0)

    def jf(a, b):
        return a @ b, jnp.sum(a, axis=0)

    a, b = RNG.normal(size=(4, 2, 3)), RNG.normal(size=(3, 5))
    got = irad.vmap(f, in_axes=(0, None), out_axes=(1, 0))(a, b)
    close(got, jax.vmap(jf, in_axes=(0, None), out_axes=(1, 0))(a, b))
    bs = RNG.normal(size=(4, 3, 5))
    close(irad.vmap(f, in_axes=(None, 0), out_axes=-1)(a[0], bs), jax.vmap(jf, in_axes=(None, 0), out_axes=-1)(a[0], bs))


def test_trees_in_axes_and_axis_size():
    loss, jloss = mlp(np), mlp(jnp)
    axes = ({"W1": None, "b1": None, "W2": None}, 0, 0)
    close(irad.vmap(loss, in_axes=axes)(PARAMS, XS, YS), jax.vmap(jloss, in_axes=axes)(PARAMS, XS, YS))

    def const(x):
        return x * 2.0

    close(irad.vmap(const, in_axes=None, axis_size=3)(1.5), jax.vmap(const, in_axes=None, axis_size=3)(1.5))


class Pair(NamedTuple):
    a: np.ndarray
    b: np.ndarray


def pair_sum(p, x):
    return p.a * x + np.sum(p.b)


def test_named_tuple_in_axes_match_a_named_tuple_argument():
    """in_axes as a NamedTuple (or a tuple) of a NamedTuple argument match it by
    position, as in JAX (it was refused: the fields' names against positions)."""
    p, x = Pair(RNG.normal(size=(3, 4)), RNG.normal(size=(2, 3))), RNG.normal(size=4)
    expected = np.stack([pair_sum(Pair(p.a[:, j], p.b), x[j]) for j in range(4)])
    close(irad.vmap(pair_sum, in_axes=(Pair(1, None), 0))(p, x), expected)
    close(irad.vmap(pair_sum, in_axes=((1, None), 0))(p, x), expected)


def test_per_example_gradients():
    loss, jloss = mlp(np), mlp(jnp)
    got = irad.vmap(irad.grad(loss), in_axes=(None, 0, 0))(PARAMS, XS, YS)
    close(got, jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(PARAMS, XS, YS))
    value, grads = irad.vmap(irad.value_and_grad(loss, argnums=(0, 1)), in_axes=(None, 0, 0))(PARAMS, XS, YS)
    jvalue, jgrads = jax.vmap(jax.value_and_grad(jloss, argnums=(0, 1)), in_axes=(None, 0, 0))(PARAMS, XS, YS)
    close((value, grads), (jvalue, jgrads))


def test_gradient_of_a_vmapped_function():
    loss, jloss = mlp(np), mlp(jnp)

    def total(params):
        return np.sum(irad.vmap(loss, in_axes=(None, 0, 0))(params, XS, YS))

    def jtotal(params):
        return jnp.sum(jax.vmap(jloss, in_axes=(None, 0, 0))(params, XS, YS))

    close(irad.grad(total)(PARAMS), jax.grad(jtotal)(PARAMS))
    close(irad.jacrev(total)(PARAMS), jax.jacrev(jtotal)(PARAMS))


def test_jacobians_and_hessians_compose():
    def f(x, w):
        return np.sin(x * w) * np.sum(x)

    def jf(x, w):
        return jnp.sin(x * w) * jnp.sum(x)

    x, ws = RNG.normal(size=3), RNG.normal(size=(4, 3))
    close(irad.vmap(irad.jacfwd(f), in_axes=(None, 0))(x, ws), jax.vmap(jax.jacfwd(jf), in_axes=(None, 0))(x, ws))
    close(irad.vmap(irad.jacrev(f), in_axes=(None, 0))(x, ws), jax.vmap(jax.jacrev(jf), in_axes=(None, 0))(x, ws))
    close(irad.jacfwd(irad.vmap(f, in_axes=(None, 0)))(x, ws), jax.jacfwd(jax.vmap(jf, in_axes=(None, 0)))(x, ws))

    def g(x, w):
        return np.sum(np.tanh(x) * w) ** 2

    def jg(x, w):
        return jnp.sum(jnp.tanh(x) * w) ** 2

    close(irad.vmap(irad.hessian(g), in_axes=(None, 0))(x, ws), jax.vmap(jax.hessian(jg), in_axes=(None, 0))(x, ws))


def test_jvp_and_vjp_of_a_vmap():
    def f(x):
        return np.exp(x) * x

    xs, ts = RNG.normal(size=4), RNG.normal(size=4)
    value, tangent = irad.jvp(irad.vmap(f), (xs,), (ts,))
    jvalue, jtangent = jax.jvp(jax.vmap(lambda x: jnp.exp(x) * x), (xs,), (ts,))
    close((value, tangent), (jvalue, jtangent))
    out, pullback = irad.vjp(lambda x: irad.vmap(f)(x), xs)
    jout, jpullback = jax.vjp(jax.vmap(lambda x: jnp.exp(x) * x), xs)
    close((out, pullback(ts)), (jout, jpullback(ts)))


# ---- control flow, against a Python loop ------------------------------------------------
def branchy(x, w):
    if x > 0.0:
        y = np.sum(w) * x
    else:
        y = np.sum(w * w) - x
    return y


def looped(x, w):
    acc = 0.0
    for i in range(3):
        acc = acc + np.sin(x * i) * w[i]
    return acc


def helper(v, s):
    return np.tanh(v) * s


def calls(x, w):
    return np.sum(helper(w, x)) + np.sum(helper(w, 2.0))


@pytest.mark.parametrize("f", [branchy, looped, calls])
def test_control_flow_and_calls_against_a_loop(f):
    xs, ws = RNG.normal(size=5), RNG.normal(size=(5, 3))
    got = irad.vmap(f)(xs, ws)
    np.testing.assert_allclose(got, [f(x, w) for x, w in zip(xs, ws)], rtol=1e-12)
    got = irad.vmap(f, in_axes=(0, None))(xs, ws[0])
    np.testing.assert_allclose(got, [f(x, ws[0]) for x in xs], rtol=1e-12)
    grads = irad.vmap(irad.grad(f, argnums=(0, 1)))(xs, ws)
    for i, (x, w) in enumerate(zip(xs, ws)):
        gx, gw = irad.grad(f, argnums=(0, 1))(x, w)
        np.testing.assert_allclose(grads[0][i], gx, rtol=1e-12)
        np.testing.assert_allclose(grads[1][i], gw, rtol=1e-12)


# ---- per-example gradients through loops: the batched primal is differentiated ---------
def rnn(np_):
    def loss(params, xs, y):
        h = np_.zeros(3)
        for t in range(xs.shape[0]):
            h = np_.tanh(params["W"] @ h + params["U"] * xs[t])
        return np_.sum((h - y) ** 2)

    return loss


def newton_sqrt(np_):
    def f(a, x0):
        x, i = x0, 0
        while i < 6:  # a while loop whose trip count is the same for the batch
            x = 0.5 * (x + a / x)
            i += 1
        return np_.sum(x * a)

    return f


RNN = {"W": RNG.normal(size=(3, 3)) * 0.5, "U": RNG.normal(size=3)}
SEQS, TARGETS = RNG.normal(size=(6, 4)), RNG.normal(size=(6, 3))


def test_per_example_gradients_through_a_loop():
    loss, jloss = rnn(np), rnn(jnp)
    got = irad.vmap(irad.grad(loss), in_axes=(None, 0, 0))(RNN, SEQS, TARGETS)
    close(got, jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(RNN, SEQS, TARGETS))
    value, grads = irad.vmap(irad.value_and_grad(loss, argnums=(0, 1)), in_axes=(None, 0, 0))(RNN, SEQS, TARGETS)
    expected = jax.vmap(jax.value_and_grad(jloss, argnums=(0, 1)), in_axes=(None, 0, 0))(RNN, SEQS, TARGETS)
    close((value, grads), expected)


def matrix_rnn(np_):
    def loss(params, seq, y):
        h = np_.zeros(3)
        for t in range(4):
            h = np_.tanh(params["W"] @ h + params["U"] @ seq[t])
        return np_.sum((h - y) ** 2)

    return loss


MRNN = {"W": RNG.normal(size=(3, 3)) * 0.5, "U": RNG.normal(size=(3, 2))}
MSEQS, MTARGETS = RNG.normal(size=(5, 4, 2)), RNG.normal(size=(5, 3))


def test_per_example_gradients_through_a_loop_keep_the_weights_shared():
    """The derivative code is batched with a batched tape: the weights stay one
    matrix for the batch (the batched functions take them shared) and each
    element still gets its own gradient: against jax.vmap(jax.grad) and a loop
    of irad.grad; a gradient of those gradients (the vmap differentiated again)
    batches the loss first instead, against JAX."""
    loss, jloss = matrix_rnn(np), matrix_rnn(jnp)
    got = irad.vmap(irad.grad(loss), in_axes=(None, 0, 0))(MRNN, MSEQS, MTARGETS)
    close(got, jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(MRNN, MSEQS, MTARGETS))
    one = irad.grad(loss)
    per_element = [one(MRNN, s, y) for s, y in zip(MSEQS, MTARGETS)]
    close(got, {k: np.stack([g[k] for g in per_element]) for k in MRNN})
    text = explain_vmap(irad.grad(loss), MRNN, MSEQS, MTARGETS, in_axes=(None, 0, 0))
    assert "batched tape" in text
    assert "params.W shared, seq batched, y batched, tape batched" in text

    def total(params):
        return np.sum(irad.vmap(irad.grad(loss), in_axes=(None, 0, 0))(params, MSEQS, MTARGETS)["W"] ** 2)

    def jtotal(params):
        return jnp.sum(jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(params, MSEQS, MTARGETS)["W"] ** 2)

    close(irad.grad(total)(MRNN), jax.grad(jtotal)(MRNN), 1e-9)


ACTIVATIONS = {"tanh": (np.tanh, jnp.tanh), "sin": (np.sin, jnp.sin), "square": (np.square, jnp.square)}


@seed(20261211)
@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(steps=st.integers(1, 4), state=st.integers(1, 3), activation=st.sampled_from(sorted(ACTIVATIONS)),
       scaled=st.booleans(), seed_=st.integers(0, 2**16))
def test_random_loops_with_shared_weights(steps, state, activation, scaled, seed_):
    """A loop whose state varies along the batch and whose weights do not
    (the batched tape's two kinds of records), per-example gradients with
    respect to the weights and the inputs: against jax.vmap(jax.grad) and a
    loop of irad.grad."""
    act, jact = ACTIVATIONS[activation]

    def make(np_, act):
        def f(w, c, x):
            h = np_.zeros(state)
            for t in range(steps):
                pre = w @ h + x[t] * c
                h = act(pre) * c if scaled else act(pre)
            return np_.sum(h * h)

        return f

    rng = np.random.default_rng(seed_)
    w, c = 0.5 * rng.normal(size=(state, state)), rng.normal(size=state)
    xs = rng.normal(size=(3, steps, state))
    f, jf = make(np, act), make(jnp, jact)
    got = irad.vmap(irad.grad(f, argnums=(0, 1, 2)), in_axes=(None, None, 0))(w, c, xs)
    close(got, jax.vmap(jax.grad(jf, argnums=(0, 1, 2)), in_axes=(None, None, 0))(w, c, xs), 1e-9)
    one = irad.grad(f, argnums=(0, 1, 2))
    per_element = [one(w, c, x) for x in xs]
    close(got, tuple(np.stack([g[i] for g in per_element]) for i in range(3)), 1e-9)


def test_per_example_gradients_through_a_loop_with_indices_that_vary():
    """h[argmax(h)] in a loop: the pullback writes at an index that varies along
    the batch, which irad-vmap cannot batch; it starts again batching the loss
    first (the read a gather), against JAX."""

    def make(np_):
        def f(w, x):
            s, h = 0.0, x
            for t in range(3):
                h = np_.tanh(w * h)
                s = s + h[np_.argmax(h)] * w
            return s

        return f

    w, xs = 0.7, RNG.normal(size=(4, 5))
    got = irad.vmap(irad.grad(make(np), argnums=(0, 1)), in_axes=(None, 0))(w, xs)
    close(got, jax.vmap(jax.grad(make(jnp), argnums=(0, 1)), in_axes=(None, 0))(w, xs))


def test_per_example_gradients_through_a_while_loop_with_aux():
    f, jf = newton_sqrt(np), newton_sqrt(jnp)
    a, x0 = RNG.uniform(1.0, 4.0, size=(5, 2)), np.ones(2)
    close(irad.vmap(irad.grad(f, argnums=(0, 1)), in_axes=(0, None))(a, x0),
          jax.vmap(jax.grad(jf, argnums=(0, 1)), in_axes=(0, None))(a, x0))

    def with_aux(a, x0):
        return f(a, x0), np.max(a)

    def jwith_aux(a, x0):
        return jf(a, x0), jnp.max(a)

    close(irad.vmap(irad.grad(with_aux, has_aux=True), in_axes=(0, None))(a, x0),
          jax.vmap(jax.grad(jwith_aux, has_aux=True), in_axes=(0, None))(a, x0))


def test_hessian_vector_products_over_a_basis():
    """Only the tangents vary: the gradient is generated once, at one point, and
    its forward-mode derivative batched. Through a loop, forward mode would
    follow the reverse tape as memref code, which irad-vmap refuses."""

    def f(x):
        return np.sum(np.sin(x) * x) ** 2

    def jf(x):
        return jnp.sum(jnp.sin(x) * x) ** 2

    x, basis = RNG.normal(size=3), np.eye(3)
    got = irad.vmap(lambda v: irad.jvp(irad.grad(f), (x,), (v,))[1])(basis)
    close(got, jax.vmap(lambda v: jax.jvp(jax.grad(jf), (x,), (v,))[1])(basis))

    with pytest.raises(BatchingError, match="forward mode over a reverse tape"):
        irad.vmap(lambda v: irad.jvp(irad.grad(_scaled_rnn_loss), (np.ones(4),), (v,))[1])(np.eye(4))


RNN_LOSS = rnn(np)


def _scaled_rnn_loss(u):
    return RNN_LOSS(RNN, SEQS[0] * u, TARGETS[0])


def test_indices_that_vary_along_the_batch_gather():
    def pick(a, i, j):
        return a[i, j] * a[j, i]

    a = RNG.normal(size=(3, 3))
    i, j = np.array([0, 2, -1, 1]), np.array([1, 1, 0, -3])
    got = irad.vmap(pick, in_axes=(None, 0, 0))(a, i, j)
    np.testing.assert_allclose(got, [pick(a, p, q) for p, q in zip(i, j)], rtol=1e-13)

    def total(a):
        return np.sum(irad.vmap(pick, in_axes=(None, 0, 0))(a, i, j))

    def jtotal(a):
        return jnp.sum(jax.vmap(lambda a, p, q: a[p, q] * a[q, p], in_axes=(None, 0, 0))(a, i, j))

    close(irad.grad(total)(a), jax.grad(jtotal)(a))
    with pytest.raises(IradError, match="index out of bounds"):
        irad.vmap(pick, in_axes=(None, 0, 0))(a, np.array([0, 3]), np.array([0, 0]))


def window_write(x, a, k):
    v = a[k % 2, k:k + 2] * 1.0  # a window starting at a batched offset: a gather
    w = a[1] * 2.0
    w[k] = x * v[1]  # an item written at a batched index: a scatter
    w[k + 1:k + 3] = v * x  # a window written at a batched offset
    return np.sum(w * w) + v[0]


def test_writes_and_slices_at_indices_that_vary_along_the_batch():
    """Items and windows written, and windows read, at positions that vary
    along the batch (they were refused, so was vmap(grad) of any program
    reading x[k], whose pullback writes its cotangent at k), against JAX."""
    def jwindow_write(x, a, k):
        v = jax.lax.dynamic_slice(a[k % 2], (k,), (2,))
        w = (a[1] * 2.0).at[k].set(x * v[1])
        w = jax.lax.dynamic_update_slice(w, v * x, (k + 1,))
        return jnp.sum(w * w) + v[0]

    xs, ks, a = RNG.normal(size=4), np.array([0, 2, 1, 0]), RNG.normal(size=(2, 5))
    expected = np.array([window_write(x, a, k) for x, k in zip(xs, ks)])
    close(irad.vmap(window_write, in_axes=(0, None, 0))(xs, a, ks), expected)
    close(irad.vmap(irad.grad(window_write, argnums=(0, 1)), in_axes=(0, None, 0))(xs, a, ks),
          jax.vmap(jax.grad(jwindow_write, argnums=(0, 1)), in_axes=(0, None, 0))(xs, a, ks))
    total = lambda xs, a: np.sum(irad.vmap(window_write, in_axes=(0, None, 0))(xs, a, ks))  # noqa: E731
    jtotal = lambda xs, a: jnp.sum(jax.vmap(jwindow_write, in_axes=(0, None, 0))(xs, a, ks))  # noqa: E731
    close(irad.grad(total, argnums=(0, 1))(xs, a), jax.grad(jtotal, argnums=(0, 1))(xs, a))


def test_vmap_inside_a_program():
    def f(xs, w):
        return np.sum(irad.vmap(branchy, in_axes=(0, None))(xs, w) ** 2)

    xs, w = RNG.normal(size=4), RNG.normal(size=3)
    assert irad.grad(f)(xs, w).shape == (4,)
    expected = sum(branchy(x, w) ** 2 for x in xs)
    assert irad.value_and_grad(f)(xs, w)[0] == pytest.approx(expected, rel=1e-12)


# ---- errors -------------------------------------------------------------------------------
def test_mismatched_sizes_name_the_arguments():
    with pytest.raises(IradError, match=r"inconsistent sizes.*'x'.*'w'"):
        irad.vmap(branchy)(np.ones(3), np.ones((4, 3)))


def test_no_mapped_argument_needs_axis_size():
    with pytest.raises(IradError, match="axis_size"):
        irad.vmap(branchy, in_axes=None)(1.0, np.ones(3))


def test_rank_zero_argument_cannot_be_mapped():
    with pytest.raises(IradError, match="axis 0 of argument 0"):
        irad.vmap(branchy)(1.0, np.ones((2, 3)))


def test_unmapped_output_that_varies_is_refused():
    with pytest.raises(BatchingError, match="out_axes"):
        irad.vmap(branchy, out_axes=None)(np.ones(2), np.ones((2, 3)))


# ---- trip counts that vary along the batch: run to the largest, with a mask -------------------
def prefix_sum(np_, loop):
    def f(x, n):
        return loop(0, n, lambda i, s: s + np_.sin(x[i]) * x[i], 0.0)

    return f


def python_fori(lo, hi, body, init):
    for i in range(lo, hi):
        init = body(i, init)
    return init


def counted_sum(x, n):
    i, s = 0, 0.0
    while i < n:  # after the last element, i == len(x) for the longest
        s = s + x[i] * x[i]
        i += 1
    return s


def jax_counted_sum(x, n):
    return jax.lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + x[c[0]] ** 2), (0, 0.0))[1]


def newton(np_, while_loop):
    def f(a, x0):
        return while_loop(lambda x: abs(x * x - a) > 1e-9 * a, lambda x: 0.5 * (x + a / x), x0)

    return f


def python_while(cond, body, x):
    while cond(x):
        x = body(x)
    return x


def triangle(x, n):
    s = 0.0
    for i in range(n):
        for j in range(i, n, 2):  # an inner trip count from the outer index and the batch
            s = s + x[i] * np.cos(x[j])
    return s


XN, NS = RNG.normal(size=(5, 4)), np.array([0, 4, 1, 3, 4])
NEWTON = newton(np, python_while)


def test_for_with_a_batched_trip_count():
    f, jf = prefix_sum(np, python_fori), prefix_sum(jnp, jax.lax.fori_loop)
    expected = [f(x, n) for x, n in zip(XN, NS)]
    close(irad.vmap(f)(XN, NS), np.array(expected))
    close(irad.vmap(f)(XN, NS), jax.vmap(jf)(XN, NS))
    close(irad.vmap(f, in_axes=(None, 0))(XN[1], NS), jax.vmap(jf, in_axes=(None, 0))(jnp.asarray(XN[1]), NS))
    close(irad.vmap(triangle)(XN, NS), np.array([triangle(x, n) for x, n in zip(XN, NS)]))


def suffix_sum(u, k):
    s = 0.0
    for i in range(k, 4):  # the index is k + the count: past the end for an element that has stopped
        s = s + u[i] * i
    return s


def count_down(x, k):
    s = 0.0
    for i in range(k):
        j = 0
        while j != k - i:  # with its own k and another's i, a stopped element's j never met k - i
            j += 1
            s = s + x
    return s


def test_masked_loop_bodies_run_stopped_elements_as_a_running_one():
    """A stopped element runs the body as the longest-running element does:
    its index and the batched values read from outside the loop too, not
    only the carried values (its own k with another's i raised 'index out
    of bounds' in range(k, 4), and made the inner while loop run forever)."""
    u, ks = np.arange(4.0), np.array([0, 1, 3, 2])
    close(irad.vmap(suffix_sum, in_axes=(None, 0))(u, ks), np.array([suffix_sum(u, k) for k in ks]))
    xs, ks = np.array([0.5, 1.0, 2.0, 3.0]), np.array([1, 3, 0, 2])
    close(irad.vmap(count_down)(xs, ks), np.array([count_down(x, k) for x, k in zip(xs, ks)]))
    close(irad.vmap(irad.grad(count_down))(xs, ks), np.array([k * (k + 1) / 2 for k in ks]))


def halve_or_double(x, k):
    if k > 0:
        y = x * (10 // k) / k  # k == 0 never reaches here
    else:
        y = x * 2.0
    return y


def root_or_line(x):
    if x > 0.0:
        return np.sqrt(x)  # its derivative is infinite at 0 and NaN below: never taken there
    return -x


def test_branch_arms_run_untaking_elements_as_a_taking_one():
    """The arm of a batched if that an element does not take runs, for it, on
    the values of an element that takes it (and not at all where none does):
    on its own, `10 // k` raised a division by zero for k = 0, and the zero
    cotangent the select gives the untaken sqrt times its infinite
    derivative made grad(sum of vmap) NaN."""
    xs, ks = np.array([0.5, -1.0, 2.0, 0.0]), np.array([0, 2, 1, 3])
    close(irad.vmap(halve_or_double)(xs, ks), np.array([halve_or_double(x, k) for x, k in zip(xs, ks)]))
    expected = np.array([2.0, 5 / 2, 10.0, 3 / 3])
    close(irad.vmap(irad.grad(halve_or_double))(xs, ks), expected)
    close(irad.grad(lambda x, k: np.sum(irad.vmap(halve_or_double)(x, k)))(xs, ks), expected)
    expected = np.where(xs > 0.0, 0.5 / np.sqrt(np.abs(xs) + (xs == 0)), -1.0)
    close(irad.grad(lambda x: np.sum(irad.vmap(root_or_line)(x)))(xs), expected)
    close(irad.grad(lambda x: np.sum(irad.vmap(root_or_line)(x)))(np.array([-0.5, -2.0])), np.array([-1.0, -1.0]))


def test_abs_of_a_batched_int():
    def f(x, k):
        return x * abs(k - 2)

    ks = np.array([0, 1, 2, 3])
    close(irad.vmap(f, in_axes=(None, 0))(1.5, ks), 1.5 * np.abs(ks - 2))


def test_while_with_a_batched_condition():
    f, jf = newton(np, python_while), newton(jnp, jax.lax.while_loop)
    a = np.array([2.0, 1e-3, 9.0, 1e6, 1.0])  # from 1 to 24 iterations
    close(irad.vmap(f)(a, np.ones(5)), np.array([f(x, 1.0) for x in a]))
    close(irad.vmap(f)(a, np.ones(5)), jax.vmap(jf)(a, np.ones(5)))
    close(irad.vmap(f, in_axes=(None, 0))(2.0, a), jax.vmap(jf, in_axes=(None, 0))(2.0, a))
    # a stopped element's counter is out of range for the body, which runs on a running one's
    close(irad.vmap(counted_sum)(XN, NS), jax.vmap(jax_counted_sum)(XN, NS))
    close(irad.vmap(counted_sum, in_axes=(None, 0))(XN[0], NS), np.array([counted_sum(XN[0], n) for n in NS]))


def collatz_steps(x, n):
    """Nested masked loops: a while in a for, both on the batch."""
    total = 0.0
    for i in range(n):
        m, steps = i + n + 1, 0
        while m != 1:
            m = m // 2 if m % 2 == 0 else 3 * m + 1
            steps += 1
        total = total + steps * x[i % 4]
    return total


@seed(20261209)
@settings(max_examples=15, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(ns=st.lists(st.integers(0, 4), min_size=5, max_size=5), seed_=st.integers(0, 2**16))
def test_random_trip_counts_against_a_loop(ns, seed_):
    xs, ns = np.random.default_rng(seed_).normal(size=(5, 4)), np.array(ns)
    for f in (counted_sum, triangle, collatz_steps, prefix_sum(np, python_fori)):
        np.testing.assert_allclose(irad.vmap(f)(xs, ns), [f(x, n) for x, n in zip(xs, ns)], rtol=1e-12, atol=1e-12)


def int_product(u, k):
    m = np.cos(u) > -0.5
    b = 2
    for _ in range(2):
        b = b * (m[0] and m[-1 - k % 4])  # int products check overflow with ceildivsi of INT64_MIN
    return b * 1.5


def test_batched_int_arithmetic_in_numpy():
    u, ks = np.array([0.36, 2.5, -0.94, 0.86]), np.arange(4)
    close(irad.vmap(int_product, in_axes=(None, 0))(u, ks), np.array([int_product(u, int(k)) for k in ks]))


def test_masked_loops_forward_mode_and_refused_reverse_mode():
    f, jf = prefix_sum(np, python_fori), prefix_sum(jnp, jax.lax.fori_loop)
    t = RNG.normal(size=XN.shape)
    got = irad.vmap(lambda x, n, t: irad.jvp(lambda x: f(x, n), (x,), (t,)))(XN, NS, t)
    close(got, jax.vmap(lambda x, n, t: jax.jvp(lambda x: jf(x, n), (x,), (t,)))(XN, NS, t))
    close(irad.vmap(irad.jacfwd(f))(XN, NS), jax.vmap(jax.jacfwd(jf))(XN, NS))
    jnewton, a = newton(jnp, jax.lax.while_loop), np.array([2.0, 1e-3, 9.0, 1e6, 1.0])
    got = irad.vmap(lambda a, t: irad.jvp(lambda a: NEWTON(a, 1.0), (a,), (t,)))(a, t[:, 0])
    close(got, jax.vmap(lambda a, t: jax.jvp(lambda a: jnewton(a, 1.0), (a,), (t,)))(a, t[:, 0]))
    with pytest.raises(BatchingError, match=r"scf\.while: irad cannot differentiate in reverse mode a loop whose "
                       r"trip count varies along a vmap batch(.|\n)*hint: differentiate inside the vmap"):
        irad.grad(lambda a: np.sum(irad.vmap(NEWTON)(a, np.ones(5))))(np.ones(5) * 2.0)


def sqrt_prefix(np_, loop):
    def f(x, n):
        return loop(0, n, lambda i, s: s + np_.sqrt(x[i]) * x[0], 0.0)

    return f


def test_per_example_gradients_through_masked_loops():
    """vmap(grad) through a trip count per element: a loop over the batch of
    each element's gradient, against JAX's per element (n known) and a loop."""
    f, jf = sqrt_prefix(np, python_fori), sqrt_prefix(jnp, jax.lax.fori_loop)
    xs, ns = np.abs(XN) + 0.5, np.array([1, 4, 0, 3, 2])
    xs[0, 1:] = 0.0  # zero padding after a length-1 sequence: sqrt' is infinite there, its gradient 0
    expected = np.stack([jax.grad(lambda x: jf(x, int(n)))(x) for x, n in zip(xs, ns)])
    close(irad.vmap(irad.grad(f))(xs, ns), expected)
    value, grads = irad.vmap(irad.value_and_grad(f))(xs, ns)
    close((value, grads), (np.array([f(x, n) for x, n in zip(xs, ns)]), expected))
    a = np.array([2.0, 1e-3, 9.0, 1e6, 1.0])
    got = irad.vmap(irad.grad(NEWTON))(a, np.ones(5))
    close(got, np.array([irad.grad(NEWTON)(v, 1.0) for v in a]))
    close(got, 0.5 / np.sqrt(a) * (a != 1.0), tol=1e-6)  # converged: d sqrt(a)/da; a = 1 never iterates


# ---- programs from the fuzzer's generator ------------------------------------------------------
def _batched_call(args, n):
    """A batch of n argument tuples around `args`: x (a float) varies, the rest is shared."""
    xs = np.array([float(args[0]) + 0.1 * k for k in range(n)])
    return xs, args[1:]


@seed(20261206)
@settings(max_examples=20, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(source=__import__("tests.fuzz.generator", fromlist=["programs"]).programs(),
       args=__import__("tests.fuzz.generator", fromlist=["arguments"]).arguments())
def test_generated_programs_vmapped(tmp_path_factory, source, args):
    from tests.fuzz.checks import load

    module = load(source, tmp_path_factory.mktemp("vmap"))
    xs, rest = _batched_call(args, 3)
    with np.errstate(all="ignore"):
        try:
            expected = [module.f(x, *rest) for x in xs]
        except Exception:
            return  # the program raises in Python at these points
    if not np.all(np.isfinite(np.asarray(expected, dtype=np.float64))):
        return
    try:
        got = irad.vmap(module.f, in_axes=(0, *([None] * len(rest))))(xs, *rest)
    except (BatchingError, irad.UnsupportedError):
        return  # refused with an irad error (no silent value)
    single = "float32" in source or any(getattr(a, "dtype", None) == np.float32 for a in rest)
    tol = 2e-3 if single else 1e-9
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol,
                               err_msg=source)


@seed(20261207)
@settings(max_examples=8, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(source=__import__("tests.fuzz.generator", fromlist=["programs"]).programs(),
       args=__import__("tests.fuzz.generator", fromlist=["arguments"]).arguments())
def test_generated_programs_per_example_gradients(tmp_path_factory, source, args):
    """vmap(grad(f)) over x against a loop of grad(f) (itself checked against
    differences by the fuzzer): the batching of generated code."""
    from tests.fuzz.checks import load

    module = load(source, tmp_path_factory.mktemp("vmapgrad"))
    xs, rest = _batched_call(args, 3)
    try:
        with np.errstate(all="ignore"):
            expected = [irad.grad(module.f)(x, *rest) for x in xs]
    except IradError:
        return  # refused or failing per element: nothing to compare
    if not np.all(np.isfinite(np.asarray(expected, dtype=np.float64))):
        return
    try:
        got = irad.vmap(irad.grad(module.f), in_axes=(0, *([None] * len(rest))))(xs, *rest)
    except BatchingError:
        return  # refused with an irad error (a loop's tape, ...)
    single = "float32" in source or any(getattr(a, "dtype", None) == np.float32 for a in rest)
    tol = 2e-3 if single else 1e-9
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol,
                               err_msg=source)


@seed(20261208)
@settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(source=__import__("tests.fuzz.generator", fromlist=["programs"]).programs(),
       args=__import__("tests.fuzz.generator", fromlist=["arguments"]).arguments())
def test_generated_programs_with_batched_trip_counts(tmp_path_factory, source, args):
    """x and the int k vary along the batch: k's trip counts and x's while
    conditions run with masks (and k's indices gather), against a loop."""
    from tests.fuzz.checks import load

    module = load(source, tmp_path_factory.mktemp("vmapk"))
    xs, rest = _batched_call(args, 4)
    shared, ks = rest[:-1], np.array([(int(rest[-1]) + j) % 4 for j in range(4)])
    with np.errstate(all="ignore"):
        try:
            expected = [module.f(x, *shared, int(k)) for x, k in zip(xs, ks)]
        except Exception:
            return  # the program raises in Python at these points
    if not np.all(np.isfinite(np.asarray(expected, dtype=np.float64))):
        return
    try:
        got = irad.vmap(module.f, in_axes=(0, *([None] * len(shared)), 0))(xs, *shared, ks)
    except (BatchingError, irad.UnsupportedError):
        return  # refused with an irad error (no silent value)
    single = "float32" in source or any(getattr(a, "dtype", None) == np.float32 for a in shared)
    tol = 2e-3 if single else 1e-9
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol,
                               err_msg=source)


@seed(20261210)
@settings(max_examples=10, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(source=__import__("tests.fuzz.generator", fromlist=["programs"]).programs(),
       args=__import__("tests.fuzz.generator", fromlist=["arguments"]).arguments())
def test_generated_programs_per_example_gradients_with_batched_trip_counts(tmp_path_factory, source, args):
    """vmap(grad(f)) over x and k against a loop of grad(f): masked loops are
    differentiated per element."""
    from tests.fuzz.checks import load

    module = load(source, tmp_path_factory.mktemp("vmapgradk"))
    xs, rest = _batched_call(args, 3)
    shared, ks = rest[:-1], np.array([(int(rest[-1]) + j) % 4 for j in range(3)])
    try:
        with np.errstate(all="ignore"):
            expected = [irad.grad(module.f)(x, *shared, int(k)) for x, k in zip(xs, ks)]
    except IradError:
        return  # refused or failing per element: nothing to compare
    if not np.all(np.isfinite(np.asarray(expected, dtype=np.float64))):
        return
    try:
        got = irad.vmap(irad.grad(module.f), in_axes=(0, *([None] * len(shared)), 0))(xs, *shared, ks)
    except (BatchingError, irad.UnsupportedError):
        return  # refused with an irad error
    single = "float32" in source or any(getattr(a, "dtype", None) == np.float32 for a in shared)
    tol = 2e-3 if single else 1e-9
    np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(expected, np.float64), rtol=tol, atol=tol,
                               err_msg=source)


# ---- native ---------------------------------------------------------------------------------
@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_per_example_gradients_natively():
    loss, jloss = mlp(np), mlp(jnp)
    got = irad.vmap(irad.grad(loss), in_axes=(None, 0, 0), backend="native")(PARAMS, XS, YS)
    close(got, jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(PARAMS, XS, YS))
    got = irad.vmap(branchy, backend="native")(XS[:, 0], RNG.normal(size=(5, 3)))
    assert got.shape == (5,)
    loss, jloss = matrix_rnn(np), matrix_rnn(jnp)  # through a loop: a batched tape, its positions scaled
    got = irad.vmap(irad.grad(loss), in_axes=(None, 0, 0), backend="native")(MRNN, MSEQS, MTARGETS)
    close(got, jax.vmap(jax.grad(jloss), in_axes=(None, 0, 0))(MRNN, MSEQS, MTARGETS))


@pytest.mark.native
@pytest.mark.skipif(unavailable_reason() is not None, reason=str(unavailable_reason()))
def test_masked_loops_natively():
    def both(x, n, a):
        return counted_sum(x, n) + NEWTON(a, 1.0)

    a = np.array([2.0, 1e-3, 9.0, 1e6, 1.0])
    got = irad.vmap(both, backend="native")(XN, NS, a)
    close(got, np.array([both(x, n, v) for x, n, v in zip(XN, NS, a)]))
    grads = irad.vmap(irad.grad(both, argnums=(0, 2)), backend="native")(XN, NS, a)
    close(grads, irad.vmap(irad.grad(both, argnums=(0, 2)))(XN, NS, a))
    close(grads[0], np.stack([2.0 * x * (np.arange(4) < n) for x, n in zip(XN, NS)]))
