"""Programs written for JAX (irad/frontend/jax_numpy.py, at_updates.py,
irad/jax_python.py): `jnp.*`, `jax.scipy.special.*`, `jax.nn.*`, `jax.grad` inside
a program and `x.at[i].set(v)` lower as numpy's functions of the same name;
values and gradients are checked against JAX itself (with x64) and central
differences, on both backends. JAX's functions with no counterpart are refused
by their public name, with the rewrite."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import irad
from irad.frontend import jax_numpy
from tests.reference import BACKENDS, check_refused

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
lax = jax.lax
jss = pytest.importorskip("jax.scipy.special")

rng = np.random.default_rng(11)


def _close(got, want, tol=1e-10):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def _against_jax(f, args, backend, argnums=0):
    value, grads = irad.value_and_grad(f, argnums=argnums, backend=backend)(*args)
    want_value, want_grads = jax.value_and_grad(f, argnums=argnums)(*args)
    np.testing.assert_allclose(value, float(want_value), rtol=1e-12)
    _close(grads, want_grads)


def classifier(params, x, y):
    h = x
    for W, b in params[:-1]:
        h = jax.nn.relu(h @ W + b)
    W, b = params[-1]
    logits = h @ W + b
    logp = jax.nn.log_softmax(logits)
    reg = sum(jnp.sum(W ** 2) for W, _ in params)
    return (-jnp.mean(jnp.sum(jax.nn.one_hot(y, 3) * logp, axis=1)) + 1e-3 * reg
            + 1e-3 * jss.logsumexp(logits, axis=1).sum() + 1e-3 * jnp.linalg.norm(params[0][0]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_classifier_written_with_jnp_and_jax_nn(backend):
    params = [(rng.normal(size=(4, 8)), rng.normal(size=8)), (rng.normal(size=(8, 3)), rng.normal(size=3))]
    x, y = rng.normal(size=(6, 4)), np.array([0, 1, 2, 1, 0, 2])
    _against_jax(classifier, (params, x, y), backend)


ACTIVATIONS = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "gelu", "elu", "leaky_relu"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_jax_nn_activations_match_jax_at_their_kinks(name, backend):
    act = getattr(jax.nn, name)

    def f(x):
        return jnp.sum(act(x) * jnp.arange(1.0, 9.0))

    x = np.array([-3.0, -0.5, 0.0, 0.25, 1.0, 6.0, 7.5, 2.0])  # 0 and 6: relu's and relu6's kinks
    _against_jax(f, (x,), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_nn_normalisers_take_jaxs_default_axis(backend):
    def f(x):  # jax.nn.softmax is over the last axis, scipy's over all
        return (jnp.sum(jax.nn.softmax(x) * x) + jnp.sum(jax.nn.log_softmax(x, axis=0) ** 2)
                + jnp.sum(jax.nn.standardize(x) ** 3) + jnp.sum(jax.nn.gelu(x, approximate=False)))

    _against_jax(f, (rng.normal(size=(3, 4)),), backend)


def updates(x, v):
    a = x.at[1:3, 0].set(5.0 * v[0])
    b = a.at[jnp.array([0, 0, 2]), 1].add(v)      # the repeated row adds twice (np.add.at)
    c = b.at[:, 1].multiply(v[1])
    d = c.at[0].max(v[2])
    e = d.at[2, 0].divide(v[0] + 3.0)
    g = e.at[1].power(2.0)
    h = g.at[0, 1].get() + g.at[jnp.array([2, 1])].get().sum()
    return jnp.sum(g ** 2) + h + jnp.sum(x.at[0].min(-1.0)) + jnp.sum(x * x.at[-1].set(0.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_at_updates_match_jax(backend):
    x, v = np.arange(6.0).reshape(3, 2) / 3, np.array([0.4, -1.3, 0.9])
    _against_jax(updates, (x, v), backend, argnums=(0, 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_at_update_leaves_the_array_unchanged_and_its_get_is_no_view(backend):
    def f(x):
        y = x.at[0].set(10.0)
        row = y.at[1].get()
        row[0] = -1.0  # a new array: y is unchanged, as JAX's
        return jnp.sum(x) + 100.0 * jnp.sum(y) + 1000.0 * row[0]

    x = np.ones((2, 2))
    value, grad = irad.value_and_grad(f, backend=backend)(x)
    assert value == 4.0 + 100.0 * 22.0 - 1000.0
    np.testing.assert_array_equal(grad, [[1.0, 1.0], [101.0, 101.0]])


@pytest.mark.parametrize("backend", BACKENDS)
def test_at_set_through_a_mask_of_data(backend):
    def f(x):
        return jnp.sum(x.at[x < 0].set(0.0) ** 2)

    x = rng.normal(size=7)
    _against_jax(lambda x: jnp.sum(jnp.where(x < 0, 0.0, x) ** 2), (x,), backend)
    np.testing.assert_allclose(irad.value_and_grad(f, backend=backend)(x)[1], np.where(x < 0, 0.0, 2 * x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_linalg_symmetrises_its_input_as_jaxs(backend):
    def f(a):  # `a` is not symmetric: numpy's would read one triangle
        s = a @ a.T + 3.0 * jnp.eye(3) + 0.1 * jnp.triu(a)
        w, v = jnp.linalg.eigh(s)
        return (jnp.sum(jnp.log(jnp.diag(jnp.linalg.cholesky(s)))) + jnp.sum(w * jnp.arange(3.0))
                + jnp.sum(jnp.linalg.eigvalsh(s) ** 2) + jnp.sum(jnp.linalg.cholesky(s, upper=True)))

    _against_jax(f, (rng.normal(size=(3, 3)),), backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_take_in_range_is_jaxs_and_out_of_range_raises(backend):
    def f(x, i):
        return jnp.sum(jnp.take(x, i) ** 2) + jnp.sum(jnp.take_along_axis(x[None, :], i[None, :], axis=1))

    x = np.arange(1.0, 4.0)
    _against_jax(f, (x, np.array([-1, 0, 2])), backend)  # a negative index wraps in both
    with pytest.raises(irad.base.errors.RuntimeCheckError, match="out of bounds"):  # JAX fills with NaN
        irad.grad(f, backend=backend)(x, np.array([0, 3]))


@pytest.mark.parametrize("backend", BACKENDS)
def test_jax_grad_and_stop_gradient_inside_a_program(backend):
    def inner(w, x):
        return jnp.sum(jnp.sin(w * x) ** 2)

    def f(w, x):
        g = jax.grad(inner)(w, x)
        return jnp.sum(g ** 2) + lax.stop_gradient(jnp.sum(w)) * jnp.sum(w)

    _against_jax(f, (np.array([0.3, 1.1]), np.array([2.0, -0.5])), backend)


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray


def _mse(params, x, y):
    h = x
    for layer in params["layers"]:
        h = jnp.tanh(h @ layer.W + layer.b)
    return jnp.mean((h @ params["out"][0] - y) ** 2)


def maml(params, x, y, xq, yq):
    g = jax.grad(_mse)(params, x, y)
    fast = jax.tree_util.tree_map(lambda p, d: p - 0.1 * d, params, g)
    fast = jax.tree.map(lambda p: p * 1.0, fast)
    l2 = sum(jnp.sum(p ** 2) for p in jax.tree_util.tree_leaves(fast))
    norms = jax.tree.leaves(jax.tree_util.tree_map(jnp.linalg.norm, {"skip": None, "p": params}))
    return _mse(fast, xq, yq) + 1e-3 * l2 + 1e-3 * sum(norms)


@pytest.mark.parametrize("backend", BACKENDS)
def test_tree_map_and_leaves_in_a_maml_step(backend):
    params = {"layers": [Layer(rng.normal(size=(3, 4)), rng.normal(size=4)),
                         Layer(rng.normal(size=(4, 4)), rng.normal(size=4))],
              "out": (rng.normal(size=4),)}
    args = (params, rng.normal(size=(5, 3)), rng.normal(size=5), rng.normal(size=(5, 3)), rng.normal(size=5))
    _against_jax(maml, args, backend)


UNARY = ["tanh", "exp", "sin", "cos", "log1p", "arctan", "sinh", "cbrt", "expm1", "square", "abs", "sign"]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.floats(-2.0, 2.0), min_size=1, max_size=6), st.sampled_from(UNARY), st.sampled_from(UNARY))
def test_composed_jnp_functions_match_jax(values, first, second):
    f1, f2 = getattr(jnp, first), getattr(jnp, second)

    def f(x):
        return jnp.sum(f2(f1(x)) * x)

    x = np.array(values) + 0.013  # off the kinks of abs and sign
    _against_jax(f, (x,), "python")


def test_every_mirrored_name_is_numpys_function_of_that_name():
    import irad.jax_python

    for module, twin in ((jnp, np), (jnp.linalg, np.linalg)):
        for name in dir(module):
            mirrored = jax_numpy.mirror(getattr(module, name))
            if mirrored is None or mirrored[1] is None or isinstance(getattr(module, name), type):
                continue
            assert mirrored[0] == f"{module.__name__}.{name}"
            symmetrised = module is jnp.linalg and name in ("cholesky", "eigh", "eigvalsh")
            assert mirrored[1] is getattr(irad.jax_python if symmetrised else twin, name)
    for name in ("float32", "float64", "int8", "int32", "int64", "uint8", "bool_"):  # jnp.float32(x), dtype=
        assert jax_numpy.mirror(getattr(jnp, name))[1] is getattr(np, name)
    assert jax_numpy.mirror(jnp.bfloat16)[1] is None  # no numpy type: refused by name


def fori(x):
    return lax.fori_loop(0, 3, lambda i, c: c * x, 1.0).sum()  # <- refused


def histogram(x):
    return jnp.sum(jnp.histogramdd(x))  # <- refused


def at_with_mode(x):
    return jnp.sum(x.at[5].set(1.0, mode="drop"))  # <- refused


def at_mask_add(x):
    return jnp.sum(x.at[x > 0].add(1.0))  # <- refused


def random_draw(x):
    return jnp.sum(x * jax.random.normal(jax.random.PRNGKey(0), (3,)))  # <- refused


def bare_at(x):
    u = x.at  # <- refused
    return jnp.sum(x)


@pytest.mark.parametrize("f, message", [
    (fori, r"jax.lax.fori_loop is not supported"),
    (histogram, r"jax.numpy.histogramdd is not supported: irad runs it as numpy.histogramdd"),
    (at_with_mode, r"x.at\[...\].set: its keyword 'mode' is not supported"),
    (at_mask_add, r"x.at\[...\].add at a boolean mask is not supported"),
    (random_draw, r"jax.random.PRNGKey is not supported"),
    (bare_at, r"`x.at` is JAX's, and irad takes it only as a whole update"),
])
def test_refusals_name_jaxs_function_and_the_rewrite(f, message):
    check_refused(f, (np.arange(3.0),), message)


def test_fori_loops_hint_is_the_python_loop():
    with pytest.raises(irad.UnsupportedError, match=r"hint: write a Python for loop over range"):
        irad.grad(fori)(np.arange(3.0))
