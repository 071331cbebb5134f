"""irad.vjp called inside a differentiated program: its out and pullback,
checked against closed forms run as numpy and central differences, on both
backends; has_aux, tuple outputs; lambdas and partials the program made."""

import functools

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_refused

X = np.array([0.1, 0.2, 0.3])


def scaled_sine(x, y):
    return np.sin(x) * y


def pair(x, y):
    return np.sin(x) * y, x @ y


def with_aux(x):
    return np.exp(x), np.sum(x)


def through_vjp(x, y):
    out, pullback = irad.vjp(scaled_sine, x, y)
    gx, gy = pullback(np.ones(3))
    return np.sum(gx * gy) + np.sum(out)


def through_vjp_numpy(x, y):
    return np.sum(np.cos(x) * y * np.sin(x)) + np.sum(np.sin(x) * y)


def of_a_pair(x, y):
    out, pullback = irad.vjp(pair, x, y)
    gx, gy = pullback((x, 2.0))
    return np.sum(gx * gy) + out[1]


def of_a_pair_numpy(x, y):
    gx, gy = np.cos(x) * y * x + 2.0 * y, np.sin(x) * x + 2.0 * x
    return np.sum(gx * gy) + x @ y


def of_aux(x):
    out, pullback, aux = irad.vjp(with_aux, x, has_aux=True)
    (g,) = pullback(x)
    return np.sum(g) * aux + np.sum(out)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_in_a_program(backend):
    args = (X, 2 * X + 0.5)
    value, grads = irad.value_and_grad(through_vjp, argnums=(0, 1), backend=backend)(*args)
    np.testing.assert_allclose(value, through_vjp_numpy(*args), rtol=1e-14)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(through_vjp_numpy, args, i), rtol=1e-7, err_msg=f"arg {i}")


def test_a_tuple_of_outputs_and_has_aux():
    args = (X, 2 * X + 0.5)
    value, grads = irad.value_and_grad(of_a_pair, argnums=(0, 1))(*args)
    np.testing.assert_allclose(value, of_a_pair_numpy(*args), rtol=1e-14)
    for i, g in enumerate(grads):
        np.testing.assert_allclose(g, central_difference(of_a_pair_numpy, args, i), rtol=1e-7, err_msg=f"arg {i}")

    def numpy_aux(x):
        return np.sum(np.exp(x) * x) * np.sum(x) + np.sum(np.exp(x))

    value, g = irad.value_and_grad(of_aux)(X)
    np.testing.assert_allclose(value, numpy_aux(X), rtol=1e-14)
    np.testing.assert_allclose(g, central_difference(numpy_aux, (X,), 0), rtol=1e-7)


def of_a_lambda(x, y):
    c = y
    out, pullback = irad.vjp(lambda a: np.sin(a) * c, x)
    c = 2.0 * y  # the pullback keeps the c it was linearised with, as JAX's does
    (g,) = pullback(c)
    return np.sum(g) + np.sum(out)


def of_a_lambda_numpy(x, y):
    return np.sum(np.cos(x) * y * 2.0 * y) + np.sum(np.sin(x) * y)


def of_a_partial(x, y):
    out, pullback = irad.vjp(functools.partial(scaled_sine, y=y * y), x)
    return np.sum(pullback(np.ones(3))[0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_of_a_lambda_or_partial_the_program_made(backend):
    args = (X, 2 * X + 0.5)
    for f, numpy_f in ((of_a_lambda, of_a_lambda_numpy), (of_a_partial, lambda x, y: np.sum(np.cos(x) * y * y))):
        value, grads = irad.value_and_grad(f, argnums=(0, 1), backend=backend)(*args)
        np.testing.assert_allclose(value, numpy_f(*args), rtol=1e-14)
        for i, g in enumerate(grads):
            np.testing.assert_allclose(g, central_difference(numpy_f, args, i), rtol=1e-7, err_msg=f"arg {i}")


def of_a_module(x):
    out, pullback = irad.vjp(np, x)  # <- refused
    return pullback(1.0)[0]


def test_a_value_that_is_not_a_function_is_refused():
    check_refused(of_a_module, (1.0,), r"irad.vjp inside a program differentiates a function, not")
