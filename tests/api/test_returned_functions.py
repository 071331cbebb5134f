"""Functions a helper returns inside a program (irad/frontend/returned_functions.py):
the JAX idiom `loss = make_loss(2.0); loss(w, x)`, closures over known values
and over run-time values, called once or in loops, functools.partial made in
the program, and functions inside returned containers; each against numpy's
value and central differences, and the refusals that remain."""

import functools

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_against_numpy, check_refused

W = np.array([0.3, -0.7])
X = np.array([[1.0, 2.0], [0.5, -1.0]])


def make_loss(scale):
    def loss(w, x):
        return scale * np.sum((x @ w) ** 2)
    return loss


def known_scale(w, x):
    loss = make_loss(2.0)
    return loss(w, x)


def runtime_scale(w, x):
    return make_loss(w[0] ** 2)(w, x)


def make_step(a):
    def step(h):
        return np.tanh(a * h)
    return step


def step_in_a_loop(w, x, n):
    step = make_step(w[0])  # a closure over a run-time value, called n times
    h = x
    for _ in range(n):
        h = step(h) + w[1]
    return np.sum(h)


def make_features(degree):
    return lambda v: np.stack([v ** k for k in range(degree)])  # degree known while lowering


def features(w, x):
    phi = make_features(3)
    return np.sum(phi(x[0]) * w[0] + w[1])


def scaled(w, x, k):
    return k * np.sum(w * x)


def make_partial(k):
    return functools.partial(scaled, k=k)


def returned_partial(w, x):
    return make_partial(w[1])(w, x)


def partial_made_here(w, x):
    p = functools.partial(scaled, x=x)
    return p(w, k=w[0]) + functools.partial(scaled, k=3.0)(w, x)


def compose(f, g):
    return lambda v: f(g(v))


def composed(w, x):
    h = compose(make_step(w[0]), np.sin)
    return np.sum(h(x))


def table(a):
    return {"sq": lambda v: a * v * v, "lin": lambda v: a + v}, 2.0 * a


def functions_in_a_container(w, x):
    fs, b = table(w[1])
    return np.sum(fs["sq"](x) + fs["lin"](x)) * b


CASES = [known_scale, runtime_scale, features, returned_partial, partial_made_here, composed,
         functions_in_a_container]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_returned_functions(f):
    check_against_numpy(f, (W, X))


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_returned_closure_called_in_a_loop_of_run_time_length(n):
    check_against_numpy(step_in_a_loop, (W, X, n))


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_each_backend(backend):
    check_against_numpy(step_in_a_loop, (W, X, 3), backend=backend)
    check_against_numpy(functions_in_a_container, (W, X), backend=backend)


def test_a_jvp_through_a_returned_closure():
    out, tangent = irad.jvp(runtime_scale, (W, X), (np.array([1.0, 0.0]), np.zeros_like(X)))
    a, r = W[0], X @ W
    assert out == pytest.approx(a * a * r @ r, rel=1e-14)
    assert tangent == pytest.approx(2 * a * r @ r + a * a * 2 * r @ X[:, 0], rel=1e-12)


def pick(w, a):
    if w[0] > 0:
        return lambda v: a * v
    return lambda v: a + v  # <- refused


def picked_at_run_time(w, x):
    return np.sum(pick(w, w[1])(x))


def returns_a_function(w, x):
    return make_step(w[0])  # <- refused


def test_a_function_chosen_at_run_time_is_refused():
    with pytest.raises(irad.UnsupportedError, match="different kinds of values on the two paths") as info:
        irad.grad(picked_at_run_time)(W, X)
    assert "branch inside one function instead" in str(info.value)


def test_the_transformed_function_returns_data():
    check_refused(returns_a_function, (W, X), "returns the function make_step.step")
