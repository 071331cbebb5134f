"""irad.grad, value_and_grad, jacrev and hessian of a lambda or nested def made
inside a program, closing over run-time values (irad/frontend/transformed_closures.py),
against JAX's nested transformations, values and gradients; Python's late
binding of what the lambda reads; the refusals that remain."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_refused

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X = np.array([0.1, 0.2, 0.3])
Y = 2 * X + 0.5


def grad_of_a_lambda(x, y):
    c = y
    g = irad.grad(lambda a: np.sum(np.sin(a) * c))
    c = 2.0 * y  # read when g is called (Python's late binding; JAX's too)
    return np.sum(g(x) * x)


def jax_grad_of_a_lambda(x, y):
    c = y
    g = jax.grad(lambda a: jnp.sum(jnp.sin(a) * c))
    c = 2.0 * y
    return jnp.sum(g(x) * x)


def two_arguments(x, y):
    def inner(a, b):
        return np.sum(np.sin(a) * b * y)
    v, (ga, gb) = irad.value_and_grad(inner, argnums=(0, 1))(x, y)
    return v + np.sum(ga * gb)


def jax_two_arguments(x, y):
    def inner(a, b):
        return jnp.sum(jnp.sin(a) * b * y)
    v, (ga, gb) = jax.value_and_grad(inner, argnums=(0, 1))(x, y)
    return v + jnp.sum(ga * gb)


def hessian_and_jacobian(x, y):
    h = irad.hessian(lambda a: np.sum(np.sin(a) ** 2 * y))(x)
    j = irad.jacrev(lambda a: np.sin(a) * y)(x)
    return np.sum(h) + np.sum(j @ y)


def jax_hessian_and_jacobian(x, y):
    h = jax.hessian(lambda a: jnp.sum(jnp.sin(a) ** 2 * y))(x)
    j = jax.jacrev(lambda a: jnp.sin(a) * y)(x)
    return jnp.sum(h) + jnp.sum(j @ y)


CASES = [(grad_of_a_lambda, jax_grad_of_a_lambda), (two_arguments, jax_two_arguments),
         (hessian_and_jacobian, jax_hessian_and_jacobian)]


@pytest.mark.parametrize("f, twin", CASES, ids=[c[0].__name__ for c in CASES])
def test_against_jax(f, twin):
    value, grads = irad.value_and_grad(f, argnums=(0, 1))(X, Y)
    jvalue, jgrads = jax.value_and_grad(twin, argnums=(0, 1))(X, Y)
    assert value == pytest.approx(float(jvalue), rel=1e-13)
    for g, jg in zip(grads, jgrads):
        np.testing.assert_allclose(g, jg, rtol=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_each_backend(backend):
    value, g = irad.value_and_grad(grad_of_a_lambda, argnums=1, backend=backend)(X, Y)
    assert value == pytest.approx(np.sum(np.cos(X) * 2 * Y * X), rel=1e-13)
    np.testing.assert_allclose(g, central_difference(grad_of_a_lambda, (X, Y), 1), rtol=1e-7)


def differentiates_the_lambda(x):
    return irad.grad(lambda a, f: f(a), argnums=1)(x, lambda t: t)  # <- refused


def static_names(x):
    return irad.grad(lambda a, n: a * n, static_argnames="n")(x, 2)  # <- refused


def test_refusals():
    check_refused(static_names, (1.0,), "takes no static_argnames")
    check_refused(differentiates_the_lambda, (1.0,), "takes numbers, arrays or containers of them, not the function")
