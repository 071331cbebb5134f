"""Idioms of numpy and JAX programs (issue 32, statements and methods): numpy's
scalars' array methods (`scipy.stats.t.logpdf(r, df).sum()`), `sorted()` of
keys known while lowering, a function's `**kwargs` used as the dict it is and
a dict expanded by `**` at a call, and the refusal of numpy.random inside a
program. Values against Python's run, gradients against central differences."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.stats as st

import irad
from tests.frontend.test_known_loops import check


# ---- numpy's scalars have the array methods ------------------------------------------------------------
def scalar_methods(x):
    a = st.t.logpdf(x[0], 4.0).sum()  # scipy returns np.float64
    b = np.sum(x).mean() + np.float64(x[1]).item() + np.max(x).T + np.sum(x ** 2).clip(0.0, 1.0)
    return a + b + len(np.sum(x).shape) + np.mean(x).ndim


def python_float_sum(x):
    y = float(x[0])
    return y.sum()  # <- refused: Python's float has no .sum


def test_numpy_scalars_have_array_methods():
    check(scalar_methods, (np.array([0.3, 0.5]),))
    with pytest.raises(irad.UnsupportedError, match=r"'float' object has no attribute 'sum'"):
        irad.grad(python_float_sum)(np.array([0.3, 0.5]))


# ---- sorted() by what is known while lowering ---------------------------------------------------------
def penalty(params, **weights):
    return sum(weights.get(k, 0.0) * np.sum(v ** 2) for k, v in sorted(params.items()))


def regularised(params, X, y):
    pred = X @ params["w"] + params["b"]
    first = sorted(params, reverse=True)[0]  # "w"
    return np.mean((pred - y) ** 2) + penalty(params, w=1e-2, b=0.0) + len(first) + sorted([3, 1, 2])[0]


def sorted_by_data(x):
    return sorted([x[0], x[1]])[0]  # <- refused: the order depends on the data


def test_sorted_keys_and_kwargs_as_a_dict():
    r = np.random.default_rng(0)
    check(regularised, ({"w": r.normal(size=2), "b": 0.3}, r.normal(size=(5, 2)), r.normal(size=5)))
    with pytest.raises(irad.UnsupportedError, match=r"sorted\(\) would compare values known only at run time"):
        irad.grad(sorted_by_data)(np.array([1.0, 2.0]))


# ---- a dict expanded by ** at a call -----------------------------------------------------------------
def layer(x, scale=1.0, shift=0.0, **rest):
    return np.tanh(x * scale + shift) * rest.get("gain", 1.0) + len(rest)


def configured(x):
    cfg = {"scale": x[0], "shift": 0.5, "gain": 2.0}
    return np.sum(layer(x, **cfg)) + sum(v for _, v in dict(a=x[1], b=x[0]).items())


def test_a_dict_expands_into_keyword_arguments():
    check(configured, (np.array([0.3, -0.7]),))


# ---- random numbers are drawn outside ------------------------------------------------------------------
def noisy_loss(w, X, y, seed=0):
    rng = np.random.default_rng(seed)  # <- refused
    return np.mean((X @ w - y - 0.1 * rng.normal(size=y.shape)) ** 2)


def test_numpy_random_is_refused_with_the_rewrite():
    with pytest.raises(irad.UnsupportedError, match=r"numpy.random.default_rng: irad's programs draw no random") as info:
        irad.grad(noisy_loss)(np.ones(2), np.ones((3, 2)), np.ones(3))
    assert "draw them outside and pass them in" in str(info.value)


# ---- hasattr of a module or an array, and Python's other builtins named as such -------------------------
def feature_test(x):
    act = np.tanh(x) if hasattr(np, "tanh") else x  # known while lowering
    peak = (x.max() - x.min()) if not hasattr(x, "ptp") else np.ptp(x)  # numpy 2's arrays have no .ptp
    return np.sum(act ** 2) + peak


def test_hasattr_is_known_while_lowering():
    check(feature_test, (np.array([0.3, -1.2, 0.8]),))


def test_another_builtin_is_named_with_the_rewrite():
    with pytest.raises(irad.UnsupportedError, match=r"Python's builtin id\(\) is not supported.*\n.*compute it outside"):
        irad.grad(lambda x: x * id(x))(1.0)


# ---- a global dict's items, keys, values and get; a new dict bound in a tuple assignment -----------------
LAYOUT = {"W": (3, 2), "b": (2,)}


def unflatten(theta):
    params, start = {}, 0  # a new dict, bound beside a counter
    for name, shape in LAYOUT.items():
        size = int(np.prod(shape))
        params[name] = theta[start:start + size].reshape(shape)
        start += size
    return params


def flat_loss(theta, X):
    p = unflatten(theta)
    extra = sum(len(s) for s in LAYOUT.values()) + len(list(LAYOUT.keys())) + LAYOUT.get("b")[0]
    return np.sum(np.tanh(X @ p["W"] + p["b"]) ** 2) * extra


def test_a_global_dicts_items_are_read_and_guarded():
    theta, X = np.linspace(-1.0, 1.0, 8), np.linspace(-0.5, 0.7, 15).reshape(5, 3)
    check(flat_loss, (theta, X))
    loss_and_grad = irad.value_and_grad(flat_loss)
    LAYOUT["b"] = (1, 2)  # a changed item compiles again
    try:
        assert loss_and_grad(theta, X)[0] == pytest.approx(flat_loss(theta, X), rel=1e-12)
    finally:
        LAYOUT["b"] = (2,)
    assert loss_and_grad(theta, X)[0] == pytest.approx(flat_loss(theta, X), rel=1e-12)
