"""Dict comprehensions with keys known while lowering: over a dict's items,
keys and values, zip and range, with conditions; checked against the
functions run as numpy and central differences, on both backends; and the
refusals of keys that are not str known while lowering."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_refused, tree_central_difference

PARAMS = {"W": np.array([[0.3, -0.2], [0.1, 0.5]]), "b": np.array([0.2, -0.1]), "s": 1.5}
NAMES = ("W", "b")


def loss(params):
    return np.sum(params["W"] ** 2) + np.sum(np.sin(params["b"])) * params["s"]


def sgd_step(params):
    """A step of gradient descent written as a JAX user writes it."""
    grads = irad.grad(loss)(params)
    new = {k: v - 0.1 * grads[k] for k, v in params.items()}
    return loss(new)


def forms(params, x):
    scaled = {k: params[k] * x for k in params}
    squares = {name: np.sum(w ** 2) for name, w in zip(NAMES, (params["W"], params["b"]))}
    kept = {k: v for k, v in scaled.items() if k != "s"}
    powers = {n: x ** i for n, i in zip(("p1", "p2", "p3"), range(1, 4))}
    total = sum(np.sum(v) for v in kept.values())
    return total + squares["W"] * squares["b"] + powers["p3"] - powers["p1"] + len(kept)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_step_of_sgd_on_a_params_dict(backend):
    value, grads = irad.value_and_grad(sgd_step, backend=backend)(PARAMS)
    np.testing.assert_allclose(value, sgd_step_numpy(PARAMS), rtol=1e-13)
    expected = tree_central_difference(sgd_step_numpy, (PARAMS,), 0)
    for k in PARAMS:
        np.testing.assert_allclose(grads[k], expected[k], atol=1e-7, err_msg=k)


def sgd_step_numpy(params):
    """sgd_step with loss's gradient written out."""
    grads = {"W": 2 * params["W"], "b": np.cos(params["b"]) * params["s"], "s": np.sum(np.sin(params["b"]))}
    return loss({k: v - 0.1 * grads[k] for k, v in params.items()})


def test_iterating_items_keys_values_zip_and_range():
    value, (gp, gx) = irad.value_and_grad(forms, argnums=(0, 1))(PARAMS, 0.7)
    np.testing.assert_allclose(value, forms(PARAMS, 0.7), rtol=1e-14)
    expected = tree_central_difference(forms, (PARAMS, 0.7), 0)
    for k in PARAMS:
        np.testing.assert_allclose(gp[k], expected[k], atol=1e-7, err_msg=k)
    np.testing.assert_allclose(gx, tree_central_difference(forms, (PARAMS, 0.7), 1), rtol=1e-7)


def test_a_dict_comprehension_is_returned_as_a_dict():
    out = irad.jacfwd(halved)(np.array([1.0, 2.0]))
    assert set(out) == {"a", "b"}
    np.testing.assert_allclose(out["a"], 0.5 * np.eye(2))


def halved(x):
    return {k: 0.5 * v for k, v in {"a": x, "b": 2 * x}.items()}


def int_keys(x):
    return {i: x * i for i in range(3)}[1]  # <- refused


def runtime_keys(x, names):
    return {n: x for n in names}  # <- refused


def test_keys_must_be_str_known_while_lowering():
    check_refused(int_keys, (1.0,), "a dict comprehension's key must be a str known while lowering, got a int")
    check_refused(runtime_keys, (1.0, np.array([1.0, 2.0])), "a dict comprehension's key must be a str")


def weights_only(params):
    return sum(np.sum(w ** 2) for k, w in params.items() if k.upper().startswith("W"))


def split_names(params):
    return len("W,b".split(","))  # <- refused


def test_methods_of_keys_run_while_lowering():
    np.testing.assert_allclose(irad.grad(weights_only)(PARAMS)["W"], 2 * PARAMS["W"], rtol=1e-15)
    assert irad.grad(weights_only)(PARAMS)["b"].tolist() == [0.0, 0.0]
    check_refused(split_names, (PARAMS,), "str.split returns a list, which irad does not keep")


LAYERS = {"W0": np.array([[0.5, 0.1], [0.0, 0.4]]), "b0": np.array([0.1, 0.0]),
          "W1": np.array([[0.3, -0.2], [0.2, 0.3]]), "b1": np.array([0.0, 0.2])}


def layered(params, x):
    h = x
    for i in (0, 1):
        h = np.tanh(h @ params[f"W{i}"] + params[f"b{i}"])
    renamed = {f"layer_{i:02d}": params[f"W{i}"] for i in range(2)}
    return np.sum(h) + np.sum(renamed["layer_01"] ** 2)


def runtime_key(params, n):
    total = 0.0
    for i in range(n):  # a run-time trip count: i is a run-time int (range(2) is lowered per iteration)
        total = total + np.sum(params[f"W{i}"])  # <- refused
    return total


@pytest.mark.parametrize("backend", BACKENDS)
def test_f_strings_of_known_values_pick_keys(backend):
    x = np.array([0.3, -0.4])
    grads = irad.grad(layered, backend=backend)(LAYERS, x)
    expected = tree_central_difference(layered, (LAYERS, x), 0)
    for k in LAYERS:
        np.testing.assert_allclose(grads[k], expected[k], atol=1e-8, err_msg=k)


def test_an_f_string_of_a_run_time_value_is_refused():
    check_refused(runtime_key, (LAYERS, 2), "an f-string formats values known while lowering")
