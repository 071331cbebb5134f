"""Pytrees at the API: arguments and results that are tuples, lists, dicts,
NamedTuples and dataclasses of floats and arrays, and has_aux, on both backends.

Every derivative is checked against JAX in float64 (the same program run with
`np` bound to `jax.numpy`), with central finite differences in float64 where
JAX has no counterpart; the structures (keys, classes, nesting) against what
JAX returns.
"""

from __future__ import annotations

import dataclasses
import types
from typing import NamedTuple

import numpy as np
import pytest

import irad
from irad.base.pytrees import flatten, unflatten
from irad.ir.types import type_of_value
from tests.backends.test_backend_native import needs_native

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]
RNG = np.random.default_rng(14)


# ---- programs (the same source runs under numpy, irad and JAX) ---------------------
def mlp(params, x):
    h = np.tanh(x @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def mlp_loss(params, batch):
    pred = mlp(params, batch["x"])
    err = pred - batch["y"]
    return np.mean(err * err)


def mlp_loss_aux(params, batch):
    pred = mlp(params, batch["x"])
    err = pred - batch["y"]
    loss = np.mean(err * err)
    return loss, {"pred": pred, "err_max": np.max(np.abs(err)), "n": batch["y"].shape[0]}


def affine(p, x):
    return {"y": np.sin(p["a"] * x) + p["b"], "z": p["a"] * p["b"] * np.sum(x)}


def affine_aux(p, x):
    out = affine(p, x)
    return out, (np.cos(x), 3)


def scalar_tree(p):
    return p["a"] ** 2 * p["b"][0] + np.sin(p["b"][1]) * p["a"], p["b"][0] * p["b"][1]


def quadratic(p):
    return p["a"] ** 3 * p["b"] + np.sum(p["v"] * p["v"]) * p["a"] + np.sum(np.sin(p["v"])) * p["b"]


def in_list(xs, c):
    return xs[0] * xs[1] + np.sum(xs[2] * c)


class State(NamedTuple):
    x: np.ndarray
    v: np.ndarray
    steps: int


@dataclasses.dataclass
class Model:
    w: np.ndarray
    scale: float
    layers: int


def energy(state, k):
    return 0.5 * np.sum(state.v * state.v) + 0.5 * k * np.sum(state.x * state.x) * state.steps


def model_loss(model, x):
    return np.sum(np.tanh(model.w * x)) * model.scale + model.layers


# ---- JAX counterparts -------------------------------------------------------------
def under_jax(fn):
    """`fn` with `np` (and the module's functions) bound to jax.numpy versions."""
    names = {**fn.__globals__, "np": jnp}
    for name, value in list(names.items()):
        if isinstance(value, types.FunctionType) and value.__module__ == __name__ and name not in ("under_jax",):
            names[name] = types.FunctionType(value.__code__, names, name, value.__defaults__)
    return names[fn.__name__]


def as_dicts(tree):
    """Dataclasses as dicts (JAX does not treat them as pytrees unregistered)."""
    if dataclasses.is_dataclass(tree) and not isinstance(tree, type):
        return {f.name: as_dicts(getattr(tree, f.name)) for f in dataclasses.fields(tree)}
    if isinstance(tree, dict):
        return {k: as_dicts(v) for k, v in tree.items()}
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(as_dicts(v) for v in tree))
    if isinstance(tree, (tuple, list)):
        return type(tree)(as_dicts(v) for v in tree)
    return tree


def assert_trees_close(got, want, rtol=1e-10, atol=1e-12):
    """Same structure (classes, keys, lengths), leaves equal to float64 accuracy."""
    leaves_got, tree_got = _structure(got)
    leaves_want, tree_want = _structure(jax.tree_util.tree_map(np.asarray, want, is_leaf=lambda v: v is None))
    assert tree_got == tree_want, f"{tree_got} != {tree_want}"
    for a, b in zip(leaves_got, leaves_want):
        if b is None or (isinstance(b, np.ndarray) and b.dtype == jax.dtypes.float0):
            assert a is None
            continue
        assert a is not None
        np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=rtol, atol=atol)


def _structure(tree):
    if isinstance(tree, dict):
        items = [_structure(tree[k]) for k in sorted(tree)]
        return [v for leaves, _ in items for v in leaves], ("dict", tuple(sorted(tree)), tuple(s for _, s in items))
    if isinstance(tree, (tuple, list)):
        items = [_structure(v) for v in tree]
        kind = type(tree).__name__
        return [v for leaves, _ in items for v in leaves], (kind, len(tree), tuple(s for _, s in items))
    return [tree], "leaf"


def params_and_batch():
    params = {
        "W1": RNG.normal(size=(3, 4)) * 0.5, "b1": RNG.normal(size=4) * 0.1,
        "W2": RNG.normal(size=(4, 2)) * 0.5, "b2": np.zeros(2),
    }
    batch = {"x": RNG.normal(size=(5, 3)), "y": RNG.normal(size=(5, 2))}
    return params, batch


# ---- grad, value_and_grad ---------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_of_a_params_dict_is_a_dict_like_jax(backend):
    params, batch = params_and_batch()
    g = irad.grad(mlp_loss, backend=backend)(params, batch)
    assert isinstance(g, dict) and list(g) == sorted(params)
    assert_trees_close(g, jax.grad(under_jax(mlp_loss))(params, batch))
    both = irad.grad(mlp_loss, argnums=(0, 1), backend=backend)(params, batch)
    assert_trees_close(both, jax.grad(under_jax(mlp_loss), argnums=(0, 1))(params, batch))


@pytest.mark.parametrize("backend", BACKENDS)
def test_value_and_grad_with_aux_follows_jax_conventions(backend):
    params, batch = params_and_batch()
    (value, aux), g = irad.value_and_grad(mlp_loss_aux, has_aux=True, backend=backend)(params, batch)
    (value_j, aux_j), g_j = jax.value_and_grad(under_jax(mlp_loss_aux), has_aux=True)(params, batch)
    assert value == pytest.approx(float(value_j), rel=1e-12)
    assert aux["n"] == 5 and isinstance(aux["n"], int)
    assert_trees_close({k: v for k, v in aux.items() if k != "n"}, {k: v for k, v in aux_j.items() if k != "n"})
    assert_trees_close(g, g_j)
    g2, aux2 = irad.grad(mlp_loss_aux, has_aux=True, backend=backend)(params, batch)
    assert_trees_close(g2, g_j)
    assert sorted(aux2) == ["err_max", "n", "pred"]


def loss_with_infinite_aux(x):
    return np.sum(x * x), np.log(x - x)  # aux: -inf, whose derivative is inf


@pytest.mark.parametrize("backend", BACKENDS)
def test_aux_is_not_differentiated(backend):
    """A zero cotangent through log at 0 would give 0 * inf = NaN: aux must cut it."""
    x = np.array([1.0, -2.0])
    g, aux = irad.grad(loss_with_infinite_aux, has_aux=True, backend=backend)(x)
    np.testing.assert_array_equal(g, 2 * x)
    assert np.all(np.isneginf(aux))
    (jac, aux) = irad.jacrev(loss_with_infinite_aux, has_aux=True, backend=backend)(x)
    np.testing.assert_array_equal(jac, 2 * x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_containers_of_scalars_and_int_leaves(backend):
    xs = [1.5, -0.5, np.array([0.2, 0.3])]
    c = np.array([2.0, -1.0])
    g = irad.grad(in_list, backend=backend)(xs, c)
    assert isinstance(g, list)
    assert_trees_close(g, jax.grad(under_jax(in_list))(xs, c))
    state = State(np.array([0.5, -1.0]), np.array([2.0, 0.25]), 3)
    g = irad.grad(energy, argnums=(0, 1), backend=backend)(state, 0.7)
    assert isinstance(g[0], State) and g[0].steps is None  # an int leaf: inactive
    want = jax.grad(under_jax(energy), argnums=1)(state, 0.7)
    np.testing.assert_allclose(g[0].x, 0.7 * 3 * state.x, rtol=1e-14)
    np.testing.assert_allclose(g[0].v, state.v, rtol=1e-14)
    assert g[1] == pytest.approx(float(want), rel=1e-12)


@pytest.mark.parametrize("backend", BACKENDS)
def test_dataclass_argument(backend):
    model = Model(np.array([0.3, -0.7, 1.1]), 2.0, 4)
    x = np.array([1.0, 0.5, -2.0])
    value, g = irad.value_and_grad(model_loss, backend=backend)(model, x)
    assert value == pytest.approx(model_loss(model, x), rel=1e-14)
    assert isinstance(g, Model) and g.layers is None
    want = jax.grad(lambda m, x: under_jax(model_loss)(types.SimpleNamespace(**m), x), allow_int=True)(as_dicts(model), x)
    np.testing.assert_allclose(g.w, want["w"], rtol=1e-12)
    assert g.scale == pytest.approx(float(want["scale"]), rel=1e-12)


# ---- vjp, jvp ---------------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_takes_and_returns_trees(backend):
    p = {"a": 0.7, "b": np.array([0.1, -0.4])}
    x = np.array([1.0, 2.0])
    out, pullback = irad.vjp(affine, p, x, backend=backend)
    out_j, pullback_j = jax.vjp(under_jax(affine), p, x)
    assert_trees_close(out, out_j)
    ct = {"y": np.array([1.0, -3.0]), "z": np.array([0.5, 2.0])}
    assert_trees_close(pullback(ct), pullback_j(ct))
    out, pullback, aux = irad.vjp(affine_aux, p, x, has_aux=True, backend=backend)
    out_j, pullback_j, aux_j = jax.vjp(under_jax(affine_aux), p, x, has_aux=True)
    assert_trees_close(out, out_j)
    np.testing.assert_allclose(aux[0], np.cos(x), rtol=1e-14)
    assert aux[1] == 3
    assert_trees_close(pullback(ct), pullback_j(ct))
    with pytest.raises(irad.IradError, match=r"the cotangent must have the structure \{'y': float64 array of shape \(2,\)"):
        pullback({"y": np.ones(2)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_jvp_takes_and_returns_trees(backend):
    p = {"a": 0.7, "b": np.array([0.1, -0.4])}
    x = np.array([1.0, 2.0])
    tp = {"a": 0.3, "b": np.array([1.0, 2.0])}
    tx = np.array([-0.5, 0.25])
    out, tangent = irad.jvp(affine, (p, x), (tp, tx), backend=backend)
    out_j, tangent_j = jax.jvp(under_jax(affine), (p, x), (tp, tx))
    assert_trees_close(out, out_j)
    assert_trees_close(tangent, tangent_j)
    _, tangent = irad.jvp(affine, (p, x), (tp,), argnums=0, backend=backend)
    _, tangent_j = jax.jvp(lambda p: under_jax(affine)(p, x), (p,), (tp,))
    assert_trees_close(tangent, tangent_j)


# ---- Jacobians and Hessians ---------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_jacobians_nest_as_jax(mode, backend):
    p = {"a": 0.7, "b": np.array([0.1, -0.4])}
    x = np.array([1.0, 2.0])
    ours, theirs = getattr(irad, mode), getattr(jax, mode)
    assert_trees_close(ours(affine, backend=backend)(p, x), theirs(under_jax(affine))(p, x))
    assert_trees_close(
        ours(affine, argnums=(0, 1), backend=backend)(p, x), theirs(under_jax(affine), argnums=(0, 1))(p, x)
    )
    s = {"a": 0.3, "b": (1.2, -0.8)}  # scalar leaves: one fused module
    assert_trees_close(ours(scalar_tree, backend=backend)(s), theirs(under_jax(scalar_tree))(s))
    jac, aux = ours(affine_aux, has_aux=True, backend=backend)(p, x)
    jac_j, aux_j = theirs(under_jax(affine_aux), has_aux=True)(p, x)
    assert_trees_close(jac, jac_j)
    assert aux[1] == 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_hessian_of_a_dict_is_a_dict_of_dicts(backend):
    p = {"a": 0.7, "b": -1.3, "v": np.array([0.2, 0.5, -0.1])}
    h = irad.hessian(quadratic, backend=backend)(p)
    assert_trees_close(h, jax.hessian(under_jax(quadratic))(p))
    s = {"a": 0.3, "b": 1.1, "v": 0.4}
    assert_trees_close(irad.hessian(quadratic, backend=backend)(s), jax.hessian(under_jax(quadratic))(s))
    h, aux = irad.hessian(quadratic_aux, has_aux=True, backend=backend)(s)
    h_j, aux_j = jax.hessian(under_jax(quadratic_aux), has_aux=True)(s)
    assert_trees_close(h, h_j)
    assert aux["n"] == 2 and aux["value"] == pytest.approx(float(aux_j["value"]), rel=1e-14)


def quadratic_aux(p):
    value = quadratic(p)
    return value, {"value": value, "n": 2}


# ---- a training step ----------------------------------------------------------------
@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp_training_steps_match_jax(backend):
    params, batch = params_and_batch()
    ours, theirs = dict(params), {k: jnp.asarray(v) for k, v in params.items()}
    step = irad.value_and_grad(mlp_loss_aux, has_aux=True, backend=backend)
    step_j = jax.jit(jax.value_and_grad(under_jax(mlp_loss_aux), has_aux=True))
    for _ in range(5):
        (loss, aux), g = step(ours, batch)
        (loss_j, aux_j), g_j = step_j(theirs, batch)
        assert loss == pytest.approx(float(loss_j), rel=1e-10)
        ours = {k: ours[k] - 0.1 * g[k] for k in ours}
        theirs = {k: theirs[k] - 0.1 * g_j[k] for k in theirs}
    assert_trees_close(ours, theirs, rtol=1e-9)


# ---- the IR and the cache -----------------------------------------------------------
def test_ir_arguments_are_named_after_their_paths():
    params, batch = params_and_batch()
    text = str(irad.grad(mlp_loss).lower(params, batch))
    assert (
        "func.func @mlp_loss.grad(%params.W1: tensor<3x4xf64>, %params.W2: tensor<4x2xf64>, "
        "%params.b1: tensor<4xf64>, %params.b2: tensor<2xf64>, %batch.x: tensor<5x3xf64>, "
        "%batch.y: tensor<5x2xf64>)" in text
    )
    state = State(np.zeros(2), np.zeros(2), 1)
    assert "@energy(%state.x: tensor<2xf64>, %state.v: tensor<2xf64>, %state.steps: i64, %k: f64)" in str(
        irad.lower(energy, state, 1.0)
    )


def first_twice_plus_second(t):
    return t[0] * 2.0 + t[1]


def test_the_tree_structure_is_part_of_the_cache_key(monkeypatch):
    from irad import pipeline

    calls = []
    original = pipeline.lower_function
    monkeypatch.setattr(pipeline, "lower_function", lambda *a, **k: calls.append(a[1]) or original(*a, **k))

    g = irad.grad(first_twice_plus_second)
    assert g((1.0, 2.0)) == (2.0, 1.0)
    assert g([1.0, 2.0]) == [2.0, 1.0]  # a list: same leaves, another tree
    assert g((3.0, 4.0)) == (2.0, 1.0)
    assert len(calls) == 2


def scaled_square(x, n):
    return np.sum(x * x) * n if isinstance(x, np.ndarray) else x * x * n


def leaf_sum_squared(t, n):
    return (t[0] + t[1]) ** 2 * n


def test_plain_arguments_take_the_fast_path_and_trees_the_flattening_one(monkeypatch):
    """Calls with plain floats and arrays find their code by Python types; a
    tree passed in the same position (same arity) is flattened, never taken
    for a plain call; both paths share the compiled code of one signature."""
    from irad import pipeline

    calls = []
    original = pipeline.lower_function
    monkeypatch.setattr(pipeline, "lower_function", lambda *a, **k: calls.append(a[1]) or original(*a, **k))
    g = irad.grad(scaled_square)
    assert g(3.0, 2.0) == 12.0 and g(3.0, 2.0) == 12.0  # 2 x n
    assert g(x=1.5, n=2.0) == 6.0  # keywords: flattened, same code
    x = np.array([1.0, -2.0])
    np.testing.assert_array_equal(g(x, 3.0), 6.0 * x)
    np.testing.assert_array_equal(g(np.array([0.5, 4.0, 1.0]), 1.0), [1.0, 8.0, 2.0])  # a new shape
    assert len(calls) == 3  # float, (2,) array, (3,) array
    h = irad.grad(leaf_sum_squared)
    assert h((1.0, 2.0), 1.0) == (6.0, 6.0)  # 2 (t0 + t1) n
    assert h([1.0, 0.5], 2.0) == [6.0, 6.0]
    assert h((1.0, 2.0), 1.0) == (6.0, 6.0)


def test_flatten_order_and_round_trip():
    tree = {"b": [1.0, (2, np.ones(2))], "a": State(np.zeros(1), np.ones(1), 5), "c": None}
    leaves, structure = flatten(tree, "t", type_of_value)
    assert [np.asarray(v).tolist() for v in leaves] == [[0.0], [1.0], 5, 1.0, 2, [1.0, 1.0]]
    back = unflatten(structure, iter(leaves))
    # leaves by sorted key; the dict rebuilt in its insertion order
    assert list(back) == ["b", "a", "c"] and back["c"] is None and isinstance(back["a"], State)
    assert isinstance(back["b"], list) and isinstance(back["b"][1], tuple)


def test_has_aux_needs_a_pair():
    with pytest.raises(irad.IradError, match="must return a pair"):
        irad.grad(quadratic, has_aux=True)({"a": 1.0, "b": 2.0, "v": 0.5})
    with pytest.raises(irad.IradError, match="with has_aux=True, f may return"):
        irad.grad(affine_aux)({"a": 1.0, "b": 2.0}, 0.5)


def inner_loss(params, x):
    return np.sum(np.tanh(x @ params["W"] + params["b"]) ** 2)


def one_step_then_loss(params, x):
    g = irad.grad(inner_loss)(params, x)  # a gradient of a dict, inside a program
    return inner_loss({"W": params["W"] - 0.1 * g["W"], "b": params["b"] - 0.1 * g["b"]}, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_program_differentiates_through_a_dict_gradient(backend):
    p = {"W": np.array([[0.1, 0.2], [0.3, -0.4]]), "b": np.array([0.5, -0.1])}
    x = np.array([[1.0, 2.0], [0.5, -1.0]])
    value, g = irad.value_and_grad(one_step_then_loss, backend=backend)(p, x)
    value_j, g_j = jax.value_and_grad(under_jax(one_step_then_loss_jax))(p, x)
    assert value == pytest.approx(float(value_j), rel=1e-12)
    assert_trees_close(g, g_j)


def one_step_then_loss_jax(params, x):
    g = jax.grad(under_jax(inner_loss))(params, x)
    return under_jax(inner_loss)({k: params[k] - 0.1 * g[k] for k in params}, x)


def vector_field(x):
    return np.sin(x) * x[0]


def uses_jacobian_of_arrays(x):
    return np.sum(irad.jacfwd(vector_field)(x))


def test_array_jacobians_lower_to_the_module_they_run():
    x = np.array([0.3, -0.5, 1.2])
    for mode in ("jacfwd", "jacrev"):
        text = str(getattr(irad, mode)(vector_field).lower(x))
        assert f"func.func @vector_field.{mode}(%x: tensor<3xf64>) -> tensor<3x3xf64>" in text
    np.testing.assert_allclose(irad.jacfwd(vector_field)(x), jax.jacfwd(under_jax(vector_field))(x), rtol=1e-13)
    # the Jacobian is IR, so a program may call it and be differentiated
    expected = jax.grad(lambda y: jnp.sum(jax.jacfwd(under_jax(vector_field))(y)))(x)
    np.testing.assert_allclose(irad.grad(uses_jacobian_of_arrays)(x), expected, rtol=1e-12)
