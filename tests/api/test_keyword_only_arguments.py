"""Keyword-only parameters (`def f(x, *, scale=1.0)`) called by keyword inside a
program, on both backends against closed forms; at the top level,
`irad.grad(f)(x, scale=2.0)` with JAX's meaning (irad/keywords.py: never
differentiated, run-time data or static) against JAX; bad calls name the keyword."""

import functools

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_refused


def scaled(x, *, scale=1.0, shift):
    return scale * np.sum(x * x) + shift


def calls_by_keyword(x, s):
    return scaled(x, scale=s, shift=1.0) + scaled(x, shift=2.0)


def misspelt(x):
    return scaled(x, shift=1.0, scal=2.0)  # <- refused


def missing(x):
    return scaled(x)  # <- refused


def misspelt_required(x):
    # Python names the misspelt keyword, not the missing 'shift'
    return scaled(x, shif=1.0)  # <- refused


X = np.array([0.5, -1.0, 2.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_keyword_only_parameters_at_a_call(backend):
    value, (gx, gs) = irad.value_and_grad(calls_by_keyword, argnums=(0, 1), backend=backend)(X, 3.0)
    assert value == pytest.approx(4.0 * X @ X + 3.0, rel=1e-14)
    np.testing.assert_allclose(gx, 2 * (3.0 + 1.0) * X, rtol=1e-14)
    assert gs == pytest.approx(X @ X, rel=1e-14)


def test_at_the_top_level_through_partial():
    np.testing.assert_allclose(irad.grad(functools.partial(scaled, scale=3.0, shift=1.0))(X), 6.0 * X, rtol=1e-14)


def loss(w, x, *, beta=1.0, mode="mean", prior=None):
    r = np.tanh(x @ w)
    fit = np.mean(r ** 2) if mode == "mean" else np.sum(r ** 2)
    return fit + beta * np.sum(w ** 2) + (0.0 if prior is None else np.sum(prior * w))


W = np.array([0.3, -0.2, 0.5])
A = np.linspace(-1.0, 1.0, 12).reshape(4, 3)


@pytest.fixture(scope="module")
def jnp_loss():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jnp

    def twin(w, x, *, beta=1.0, mode="mean", prior=None):
        r = jnp.tanh(x @ w)
        fit = jnp.mean(r ** 2) if mode == "mean" else jnp.sum(r ** 2)
        return fit + beta * jnp.sum(w ** 2) + (0.0 if prior is None else jnp.sum(prior * w))

    return jax, twin


@pytest.mark.parametrize("keywords", [{}, {"beta": 0.25}, {"beta": 2.0, "mode": "sum"},
                                      {"prior": np.array([1.0, 2.0, -1.0]), "mode": "sum"}],
                         ids=["defaults", "beta", "beta-mode", "prior-array"])
def test_keyword_only_arguments_at_the_top_level(keywords, jnp_loss):
    jax, twin = jnp_loss
    value, g = irad.value_and_grad(loss)(W, A, **keywords)
    jvalue, jg = jax.value_and_grad(twin)(W, A, **keywords)
    assert value == pytest.approx(float(jvalue), rel=1e-14)
    np.testing.assert_allclose(g, jg, rtol=1e-13)
    gw, gx = irad.grad(loss, argnums=(0, 1))(W, A, **keywords)
    np.testing.assert_allclose(gx, jax.grad(twin, argnums=1)(W, A, **keywords), rtol=1e-13)
    np.testing.assert_allclose(irad.hessian(loss)(W, A, **keywords), jax.hessian(twin)(W, A, **keywords), rtol=1e-12)
    np.testing.assert_allclose(irad.jacrev(loss)(W, A, **keywords), jg, rtol=1e-13)


def test_a_run_time_keyword_compiles_once_and_a_static_one_per_value():
    g = irad.grad(loss)
    for beta in (0.5, 1.5):  # data: one compile, both values right
        np.testing.assert_allclose(g(W, A, beta=beta), g(W, A, beta=1.0) + 2 * (beta - 1.0) * W, rtol=1e-12)
    assert len(g._keyword_forms) == 1
    static = irad.grad(loss, static_argnames="beta")  # known while lowering: compiled per value
    for beta in (0.5, 1.5):
        np.testing.assert_allclose(static(W, A, beta=beta), g(W, A, beta=beta), rtol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_keywords_on_each_backend(backend):
    g = irad.grad(loss, backend=backend)(W, A, beta=0.5, mode="sum")
    expected = np.array([central_difference(lambda w: loss(w, A, beta=0.5, mode="sum"), (W,), 0)])[0]
    np.testing.assert_allclose(g, expected, rtol=1e-7)


def test_a_keyword_is_not_differentiated():
    with pytest.raises(irad.IradError, match="selects a keyword argument: keyword arguments are not differentiated"):
        irad.grad(loss, argnums=2)(W, A, beta=0.5)


def test_a_wrong_or_missing_keyword_is_named():
    check_refused(misspelt, (X,), "unexpected keyword argument 'scal'")
    check_refused(missing, (X,), "missing a required argument: 'shift'")
    check_refused(misspelt_required, (X,), r"unexpected keyword argument 'shif'\n  hint: call it as scaled\(x, \*, scale=1.0, shift\)")


def keyword_in_a_program(x):
    return np.sum(irad.grad(loss)(W, x, beta=2.0))  # <- refused


def partial_in_a_program(x):
    return np.sum(irad.grad(functools.partial(loss, beta=2.0))(W, x))


def test_inside_a_program_a_keyword_is_bound_with_partial():
    check_refused(keyword_in_a_program, (A,), r"takes its arguments positionally inside a program, not 'beta=' by "
                  r"keyword\n  hint: .*functools.partial")
    np.testing.assert_allclose(irad.grad(partial_in_a_program)(A),
                               central_difference(partial_in_a_program, (A,), 0), rtol=1e-6, atol=1e-9)


def test_lower_takes_keywords():
    text = str(irad.lower(loss, W, A, beta=0.5, mode="sum"))
    assert "%beta" in text and "%mode" not in text  # beta a run-time argument, mode known while lowering
