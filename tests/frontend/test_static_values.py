"""Values known while lowering cross calls: a helper is specialised on the ints,
bools, strings and tuples of them it is passed (an axis, a count, a shape), and
the ints a helper returns on every path are known to its caller. Checked
against numpy's values and central differences in float64."""

import functools
import re

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, check_against_numpy, lowered_text


# ---- the programs of the issue: helpers taking an axis, a count, a size ----------------
def logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis=axis)


def logsumexp_loss(x):
    return np.sum(logsumexp(x, 1) ** 2) + np.sum(logsumexp(x, axis=0))


def attention(x, n_heads):
    t, d = x.shape
    h = x.reshape(t, n_heads, d // n_heads)
    scores = np.einsum("thd,shd->hts", h, h) / np.sqrt(d // n_heads)
    weights = np.exp(scores - np.max(scores, axis=-1, keepdims=True))
    weights = weights / np.sum(weights, axis=-1, keepdims=True)
    return np.einsum("hts,shd->thd", weights, h).reshape(t, d)


def attention_loss(x):
    return np.sum(attention(x, 2) ** 2)


def features(x, deg):
    return np.stack([x ** k for k in range(deg)], axis=1)


def features_loss(x):
    return np.sum(np.tanh(features(x, 3)))


def simulate(x, n_steps):
    out = np.zeros(n_steps)
    v = x[0]
    for i in range(n_steps):
        v = v + 0.1 * np.sin(v) * x[1]
        out[i] = v
    return out


def simulate_loss(x):
    return np.sum(simulate(x, 5) ** 2)


def cameras(params, n_cameras):
    cams = params[: n_cameras * 3].reshape(n_cameras, 3)
    points = params[n_cameras * 3:]
    return np.sum(cams, axis=1)[:, None] * points[None, :]


def cameras_loss(params):
    return np.sum(cameras(params, 2) ** 2)


def rows(a):
    return a.shape[0], len(a)


def returned_shape_loss(x):
    n, m = rows(x)
    return np.sum(np.ones(n) * x[:m] ** 2)


def scaled(x, flag, mode, shape):
    y = x.reshape(shape)
    if mode == "sum":
        y = np.sum(y, axis=0)
    return y * 2.0 if flag else y


def mixed_loss(x):
    return np.sum(scaled(x, True, "sum", (2, 3)) ** 2) + np.sum(scaled(x, False, "none", (3, 2)))


def closure_loss(x):  # a lambda and a functools.partial closing over an int known while lowering
    n = x.shape[0] - 1
    g = lambda y: np.zeros(n) + y
    h = functools.partial(lambda m, y: np.sum(np.ones(m) * np.sin(y)), n)
    return np.sum(g(x[0]) ** 2) + h(x[1])


def dynamics(y, theta):
    return np.array([y[1], -theta[0] * y[0] - theta[1] * y[1]])


def rk4(f, y, theta, dt, n_steps):  # a function and a step count cross the call
    ys = np.zeros((n_steps + 1, y.shape[0]))
    ys[0] = y
    for i in range(n_steps):
        k1 = f(y, theta)
        k2 = f(y + dt / 2 * k1, theta)
        k3 = f(y + dt / 2 * k2, theta)
        k4 = f(y + dt * k3, theta)
        y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        ys[i + 1] = y
    return ys


def ode_loss(theta, data):
    ys = rk4(dynamics, np.array([1.0, 0.0]), theta, 0.1, data.shape[0] - 1)
    return np.sum((ys[:, 0] - data) ** 2)


def kalman_step(mu, p, y, n):
    p = p + 0.1 * np.eye(n)
    k = p @ np.linalg.inv(p + np.eye(n))
    return mu + k @ (y - mu), (np.eye(n) - k) @ p


def kalman_loss(q, ys):
    n = ys.shape[1]
    mu, p = np.zeros(n), np.eye(n) * q[0]
    total = 0.0
    for t in range(ys.shape[0]):
        mu, p = kalman_step(mu, p, ys[t], n)
        total = total + np.sum((mu - ys[t]) ** 2)
    return total


PROGRAMS = {
    "logsumexp": (logsumexp_loss, (np.linspace(-1.0, 1.0, 12).reshape(3, 4),)),
    "attention": (attention_loss, (np.linspace(-1.0, 1.0, 12).reshape(3, 4),)),
    "features": (features_loss, (np.linspace(-1.0, 1.0, 4),)),
    "zeros_in_helper": (simulate_loss, (np.array([0.3, 0.7]),)),
    "slice_by_int": (cameras_loss, (np.linspace(-1.0, 1.0, 9),)),
    "returned_shape": (returned_shape_loss, (np.linspace(-1.0, 1.0, 4),)),
    "bool_str_tuple": (mixed_loss, (np.linspace(-1.0, 1.0, 6),)),
    "closure_and_partial": (closure_loss, (np.linspace(-1.0, 1.0, 4),)),
    "rk4": (ode_loss, (np.array([1.0, 0.1]), np.cos(np.arange(6) * 0.1))),
    "kalman": (kalman_loss, (np.array([0.5]), np.sin(np.arange(6.0)).reshape(3, 2))),
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_helpers_take_static_values(name):
    f, args = PROGRAMS[name]
    check_against_numpy(f, args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_helper_with_axis_on_both_backends(backend):
    f, args = PROGRAMS["attention"]
    check_against_numpy(f, args, backend=backend)


# ---- one specialisation per distinct static value ----------------------------------
def test_one_specialisation_per_value():
    def loss(x):
        return np.sum(logsumexp(x, 1)) + np.sum(logsumexp(x, 1)) + np.sum(logsumexp(x, 0))

    text = lowered_text(loss, np.ones((3, 4)))
    definitions = re.findall(r"func\.func private @(logsumexp\w*)", text)
    assert sorted(definitions) == ["logsumexp", "logsumexp_1"]
    assert "irad.static = {axis = 1 : i64}" in text and "irad.static = {axis = 0 : i64}" in text


def test_explain_names_the_specialisations():
    report = str(irad.explain(logsumexp_loss, np.ones((3, 4))))
    assert "@logsumexp is specialised on axis=1" in report
    assert "@logsumexp_1 is specialised on axis=0" in report


# ---- numpy's scalars keep their kind across a call ---------------------------------------
NUMPY_TRUE = np.bool_(True)


def add(a, b):
    return a + b


def test_numpy_bool_stays_numpy_across_a_call():
    def f(x):  # numpy's True + True is True (or); Python's is 2
        return x[0] * add(NUMPY_TRUE, NUMPY_TRUE) + x[1] * add(True, True)

    check_against_numpy(f, (np.array([0.5, 2.0]),))


# ---- returns: known when every path returns the same int ------------------------------
def pick(x):
    if x[0] > 0:
        return 2
    return 3


def test_a_return_known_on_one_path_only_is_run_time():
    def f(x):
        return np.sum(np.zeros(pick(x)) + x[0])  # <- refused

    with pytest.raises(irad.UnsupportedError, match=r"result of @pick, which returns a run-time value"):
        irad.grad(f)(np.ones(3))


# ---- recursion passes numbers as run-time values --------------------------------------
def countdown(x, n):
    if n <= 0:
        return x
    return countdown(x * 0.999 + 0.001, n - 1)


def test_recursion_does_not_unroll():
    def f(x):
        return countdown(x, 500) * 2.0

    text = lowered_text(f, 0.5)
    assert len(re.findall(r"func\.func private @countdown", text)) == 2  # n = 500, then n run-time
    g = irad.grad(f)(0.5)
    assert g == pytest.approx(central_difference(f, (0.5,), 0), rel=1e-6)


def shrink(x, n):
    if n == 0:
        return np.sum(np.zeros(n + 1) + x)  # <- refused
    return shrink(x, n - 1)


def test_recursive_parameter_named_where_a_static_value_is_needed():
    def f(x):
        return shrink(x, 3)

    with pytest.raises(irad.UnsupportedError, match=r"'n' is a parameter of .*shrink, passed to it at .*by a "
                                                    r"recursive call") as info:
        irad.grad(f)(np.ones(2))
    assert "hint: take the size from an array's shape" in str(info.value)


# ---- where a value became run-time ------------------------------------------------------
def inner_zeros(x, n):
    return np.sum(np.zeros(n) + x[0])  # <- refused


def outer_zeros(x, n):
    return inner_zeros(x, n)


def test_entry_argument_chain_suggests_static_argnums():
    with pytest.raises(irad.UnsupportedError) as info:
        irad.grad(outer_zeros)(np.ones(3), 4)
    text = str(info.value)
    assert "a shape must be known while lowering" in text
    assert "'n' is passed to " in text and "inner_zeros at " in text
    assert "'n' is argument 1 of the entry function `outer_zeros`" in text
    assert "static_argnums=(1,)" in text


def test_loop_index_is_named():
    def f(x, n):
        s = 0.0
        for i in range(n):
            s = s + np.sum(np.zeros(i + 1) + x[0])
        return s

    with pytest.raises(irad.UnsupportedError, match=r"the index of a loop whose trip count is known only") as info:
        irad.grad(f)(np.ones(2), 3)
    assert "a trip count known while lowering" in str(info.value)
    assert irad.grad(f, static_argnums=(1,))(np.ones(2), 3)[0] == 6.0  # known: a copy of the body per index


def test_comprehension_over_a_run_time_range_names_the_argument():
    def f(x, deg):
        return np.sum(features(x, deg))

    with pytest.raises(irad.UnsupportedError, match=r"'deg' is argument 1 of the entry function `f`"):
        irad.grad(f)(np.ones(2), 3)
