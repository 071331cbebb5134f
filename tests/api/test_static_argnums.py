"""static_argnums and static_argnames on every transformation, with JAX's
names and meaning: those arguments are values known while lowering, never
differentiated, and part of the compile cache key. Checked against numpy's
values and central differences in float64."""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, central_difference, central_jacobian


def logsumexp(a, axis):
    m = np.max(a, axis=axis, keepdims=True)
    return np.log(np.sum(np.exp(a - m), axis=axis)) + np.squeeze(m, axis=axis)


def loss(x, axis, n):
    return np.sum(logsumexp(x, axis)[:n] ** 2)


def features(x, deg, mode="sum"):
    stacked = np.stack([x ** k for k in range(deg)])
    return np.sum(np.tanh(stacked)) if mode == "sum" else np.sum(np.tanh(stacked) ** 2)


X = np.linspace(-1.0, 1.0, 12).reshape(3, 4)


def at(axis, n):
    return lambda x: loss(x, axis, n)


@pytest.mark.parametrize("axis, n", [(1, 2), (0, 3), (-1, 1)])
def test_grad_with_static_argnums(axis, n):
    value, g = irad.value_and_grad(loss, static_argnums=(1, 2))(X, axis, n)
    assert value == pytest.approx(loss(X, axis, n), rel=1e-12)
    np.testing.assert_allclose(g, central_difference(at(axis, n), (X,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("backend", BACKENDS)
def test_static_argnames_on_both_backends(backend):
    g = irad.grad(features, static_argnames=("deg", "mode"), backend=backend)
    x = np.array([0.3, -0.2, 0.5])
    for deg, mode in [(3, "sum"), (2, "square")]:
        expected = central_difference(lambda v: features(v, deg, mode), (x,), 0)
        np.testing.assert_allclose(g(x, deg, mode), expected, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(g(x, deg=deg, mode=mode), expected, rtol=1e-6, atol=1e-9)


def test_vjp_and_jvp_take_static_arguments():
    out, pullback = irad.vjp(loss, X, 1, 2, static_argnums=(1, 2))
    assert out == pytest.approx(loss(X, 1, 2))
    cotangents = pullback(1.0)
    assert cotangents[1] is None and cotangents[2] is None
    expected = central_difference(at(1, 2), (X,), 0)
    np.testing.assert_allclose(cotangents[0], expected, rtol=1e-6, atol=1e-8)
    t = np.cos(np.arange(12.0)).reshape(3, 4)
    value, tangent = irad.jvp(loss, (X, 1, 2), (t, None, None), static_argnames="n", static_argnums=1)
    assert value == pytest.approx(loss(X, 1, 2))
    assert tangent == pytest.approx(float(np.sum(expected * t)), rel=1e-6)
    with pytest.raises(irad.IradError, match="static: its tangent must be None"):
        irad.jvp(loss, (X, 1, 2), (t, 1.0, None), static_argnums=(1, 2))


def test_jacobians_and_hessian_take_static_arguments():
    def head(x, n):
        return np.tanh(x[:n]) * x[0]

    x = np.array([0.3, -0.2, 0.5, 0.1])
    for jac in (irad.jacfwd, irad.jacrev):
        np.testing.assert_allclose(jac(head, static_argnums=1)(x, 2),
                                   central_jacobian(lambda v: head(v, 2), (x,), 0), rtol=1e-6, atol=1e-9)
    h = irad.hessian(loss, static_argnums=(1, 2))(X[:2, :3], 1, 1)
    grad = irad.grad(loss, static_argnums=(1, 2))
    expected = central_jacobian(lambda v: grad(v, 1, 1), (X[:2, :3],), 0)
    np.testing.assert_allclose(h, expected, rtol=1e-5, atol=1e-7)


def test_static_argnums_inside_a_program():
    def outer(x):
        return irad.grad(loss, static_argnums=(1, 2))(x, 1, 2)[0, 0] * x[0, 1]

    g = irad.grad(outer)(X)
    np.testing.assert_allclose(g, central_difference(outer_numpy, (X,), 0, eps=1e-3), rtol=1e-4, atol=1e-6)


def outer_numpy(x):  # the inner gradient by central differences too
    return central_difference(at(1, 2), (x,), 0, eps=1e-3)[0, 0] * x[0, 1]


def test_a_new_static_value_compiles_anew_and_an_equal_one_does_not(monkeypatch):
    compiled = []
    original = irad.api.transformation_module

    def counting(*args, **kwargs):
        compiled.append(args[1])
        return original(*args, **kwargs)

    monkeypatch.setattr(irad.api, "transformation_module", counting)

    def f(x, n):  # a function of its own: nothing cached for it yet
        return np.sum(x[:n] ** 3)

    g = irad.grad(f, static_argnums=1)
    x = np.array([0.5, 1.0, 2.0])
    np.testing.assert_allclose(g(x, 2), [0.75, 3.0, 0.0])
    np.testing.assert_allclose(g(x, 2), [0.75, 3.0, 0.0])
    np.testing.assert_allclose(g(x, n=2), [0.75, 3.0, 0.0])
    assert len(compiled) == 1
    np.testing.assert_allclose(g(x, 3), [0.75, 3.0, 12.0])
    assert len(compiled) == 2
    np.testing.assert_allclose(irad.grad(f, static_argnames="n")(x, 3), [0.75, 3.0, 12.0])
    assert len(compiled) == 2  # an equal signature: the compiled code is shared


def test_static_argument_errors():
    with pytest.raises(irad.IradError, match=r"argument 1 \('axis'\) as a static argument: it is a list"):
        irad.grad(loss, static_argnums=(1, 2))(X, [1], 2)
    with pytest.raises(irad.IradError, match=r"argument 1 \('axis'\): it is static"):
        irad.grad(loss, argnums=(0, 1), static_argnums=(1, 2))(X, 1, 2)
    with pytest.raises(irad.IradError, match="static_argnames names 'deg', which is not a parameter"):
        irad.grad(loss, static_argnames="deg")(X, 1, 2)
    with pytest.raises(irad.IradError, match="static_argnums .* is out of range"):
        irad.grad(loss, static_argnums=5)(X, 1, 2)
    with pytest.raises(irad.IradError, match="static_argnums must be an int or a tuple of ints"):
        irad.grad(loss, static_argnums="axis")


def test_transformation_keeps_its_static_arguments():
    t = irad.jacrev(loss, static_argnums=[1, 2], static_argnames="n")
    assert t.static_argnums == (1, 2) and t.static_argnames == ("n",)


def test_explain_takes_static_arguments():
    report = str(irad.explain(loss, X, 1, 2, static_argnums=(1, 2), argnums=0))
    assert "is specialised on axis=1" in report
    assert "@loss is specialised on axis=1, n=2" in report


class Config(NamedTuple):
    n: int
    act: str


@dataclass(frozen=True)
class FrozenConfig:
    n: int


def configured(x, cfg):
    y = np.zeros(cfg.n) + x[0] * x[1]
    return np.sum(np.tanh(y) if cfg.act == "tanh" else y ** 2)


def test_hashable_objects_are_static_arguments():
    x = np.array([0.4, -0.7])
    for cfg in (Config(3, "tanh"), Config(2, "square")):
        g = irad.grad(configured, static_argnums=1)(x, cfg)
        np.testing.assert_allclose(g, central_difference(lambda v: configured(v, cfg), (x,), 0), rtol=1e-6)
    g = irad.grad(lambda x, cfg: np.sum(np.zeros(cfg.n) + x[0] ** 2), static_argnums=1)(x, FrozenConfig(3))
    np.testing.assert_allclose(g, [6 * 0.4, 0.0])


def test_pickled_transformations_and_pullbacks_keep_their_static_arguments():
    import pickle

    g = pickle.loads(pickle.dumps(irad.grad(loss, static_argnums=(1, 2))))
    assert g.static_argnums == (1, 2)
    expected = central_difference(at(1, 2), (X,), 0)
    np.testing.assert_allclose(g(X, 1, 2), expected, rtol=1e-6, atol=1e-8)
    _, pullback = irad.vjp(loss, X, 1, 2, static_argnames=("axis", "n"))
    cotangents = pickle.loads(pickle.dumps(pullback))(1.0)
    assert cotangents[1] is None and cotangents[2] is None
    np.testing.assert_allclose(cotangents[0], expected, rtol=1e-6, atol=1e-8)
