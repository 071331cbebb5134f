"""Containers inside programs: tuples, lists, dicts, NamedTuples and
dataclasses built, indexed, passed to helpers, returned from them, carried
through branches and loops; isinstance on run-time values.

Values are checked against the programs run by Python and numpy, gradients
against central finite differences in float64, on both backends.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import numpy as np
import pytest

import irad
from irad.base.pytrees import flatten
from irad.ir.types import type_of_value
from tests.reference import tree_central_difference
from tests.backends.test_backend_native import needs_native

BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]
RNG = np.random.default_rng(1)


class Stats(NamedTuple):
    mean: float
    var: float


@dataclasses.dataclass
class Pair:
    a: float
    b: float = 1.5


@dataclasses.dataclass(frozen=True)
class Layer:
    w: np.ndarray
    b: np.ndarray

    def forward(self, x):
        return np.tanh(self.w * x + self.b)

    def __call__(self, x):
        return np.sum(self.forward(x))


WEIGHTS = {"W": np.array([0.5, -1.0, 2.0]), "scale": 3.0}


# ---- programs ---------------------------------------------------------------------
def layer(p, x):
    return np.tanh(x @ p["W"] + p["b"])


def two_layers(params, x):
    h = layer(params["l1"], x)
    return np.sum(layer(params["l2"], h) ** 2)


def stats(x):
    m = np.mean(x)
    return Stats(m, np.mean((x - m) ** 2))


def uses_stats(x):
    s = stats(x)
    mean, var = s
    return s.var / (s.mean**2 + 1.0) + s[0] * var + mean


def make_pair(x):
    return Pair(a=x * 2.0, b=np.sin(x))


def uses_pair(x):
    p = make_pair(x)
    q = Pair(x)  # the default
    return p.a * p.b + q.b * q.a


def lists(x, y):
    xs = [x, 2.0 * y, x * y]
    a, b, c = xs
    head = xs[:2]
    return a * head[1] + c * len(xs) + b


def nested_return(x):
    return {"pair": (x, [np.sin(x), x * x]), "rec": Stats(x, 2.0 * x)}


def uses_nested_return(x):
    r = nested_return(x)
    return r["pair"][1][0] * r["rec"].var + r["pair"][0]


def loop_dict(x, n):
    s = {"a": x, "b": 0.0}
    for i in range(n):
        s = {"a": s["a"] * 0.9, "b": s["b"] + s["a"] * s["a"]}
    return s["b"]


def branch_dict(x):
    if x > 0.0:
        d = {"u": x, "v": 2.0 * x}
    else:
        d = {"v": x * x, "u": -x}
    return d["u"] * d["v"]


def choose_containers(x):
    a, b = (x, x * x) if x > 0.0 else (x, -x)
    d = {"u": x, "v": 2} if x < 1.0 else {"v": x, "u": 2.0 * x}  # an int leaf joins a float
    return a * b + d["u"] * d["v"]


def recursive_dict(x, n):
    if n == 0:
        return {"value": x, "depth": 1.0}
    r = recursive_dict(x, n - 1)
    return {"value": np.sin(r["value"]) * x, "depth": r["depth"] + 1.0}


def uses_recursive_dict(x):
    r = recursive_dict(x, 3)
    return r["value"] * r["depth"]


def methods(layer_, x):
    return np.sum(layer_.forward(x) * x) + layer_(x)


def global_dict(x):
    return np.sum(WEIGHTS["W"] * x) * WEIGHTS["scale"]


def classify(x):
    a = 1.0 if isinstance(x, np.ndarray) else 2.0
    b = 10.0 if isinstance(WEIGHTS["W"], np.ndarray) else 20.0
    c = 100.0 if isinstance(x, float) else 200.0
    return a + b + c


def classify_tree(p, n):
    a = 1.0 if isinstance(p, dict) else 2.0
    b = 10.0 if isinstance(p["s"], Stats) and isinstance(p["s"], tuple) else 20.0
    c = 100.0 if isinstance(n, int) and not isinstance(n, bool) else 200.0
    d = 1000.0 if isinstance(p["l"], list) else 2000.0
    return (a + b + c + d) * p["s"].mean


# containers beside functions: one call shape holds both (irad/frontend/callables.py)
def apply_cfg(cfg, x):
    return cfg["act"](x @ cfg["W"]) * cfg["scale"]


def function_in_dict(W, x):
    return np.sum(apply_cfg({"act": np.tanh, "W": W, "scale": 2.0}, x))


def closures_over_containers(params, x):
    scale = params["s"]
    penalty = lambda v, *, p=2: scale * v**p  # noqa: E731
    layer_ = functools.partial(apply_cfg, {"act": penalty, "W": params["W"], "scale": 1.5})

    def weighted(**kw):
        return kw["a"] * kw["b"]["c"]

    return np.sum(layer_(x)) + weighted(a=scale, b={"c": np.sum(params["W"])})


def record_default(s):
    def g(t=s):  # a NamedTuple default, evaluated at the def
        return t.mean * t.var

    return g() + g(Stats(1.0, s.var))


def squares(x):
    return [x * v for v in (1.0, 2.0)]  # a list comprehension returns a list


# ---- checks -------------------------------------------------------------------------
def assert_close(got, want, rtol=1e-6, atol=1e-8):
    got_leaves, got_tree = flatten(got, "g", type_of_value)
    want_leaves, want_tree = flatten(want, "g", type_of_value)
    assert got_tree == want_tree or _same_structure(got_tree, want_tree), (got, want)
    for a, b in zip(got_leaves, want_leaves):
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def _same_structure(a, b) -> bool:
    from irad.base.pytrees import structure

    return structure(a) == structure(b)


CASES = [
    (two_layers, lambda: ({"l1": {"W": RNG.normal(size=(3, 4)), "b": RNG.normal(size=4)},
                           "l2": {"W": RNG.normal(size=(4, 2)), "b": RNG.normal(size=2)}},
                          RNG.normal(size=(2, 3)))),
    (uses_stats, lambda: (np.array([0.5, 1.5, -0.25, 2.0]),)),
    (uses_pair, lambda: (0.7,)),
    (lists, lambda: (0.3, -1.2)),
    (uses_nested_return, lambda: (0.4,)),
    (loop_dict, lambda: (0.8, 4)),
    (branch_dict, lambda: (0.6,)),
    (branch_dict, lambda: (-0.6,)),
    (choose_containers, lambda: (0.5,)),
    (choose_containers, lambda: (-0.5,)),
    (choose_containers, lambda: (1.5,)),
    (uses_recursive_dict, lambda: (0.9,)),
    (methods, lambda: (Layer(np.array([0.2, -0.4]), np.array([0.1, 0.3])), np.array([1.0, 2.0]))),
    (global_dict, lambda: (np.array([1.0, 2.0, 3.0]),)),
    (function_in_dict, lambda: (RNG.normal(size=(3, 2)), RNG.normal(size=3))),
    (closures_over_containers, lambda: ({"s": 0.5, "W": RNG.normal(size=(3, 2))}, RNG.normal(size=3))),
    (record_default, lambda: (Stats(0.7, -1.3),)),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn,make_args", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_value_and_gradient(fn, make_args, backend):
    args = make_args()
    value, g = irad.value_and_grad(fn, backend=backend)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13)
    assert_close(g, tree_central_difference(fn, args, 0))


def test_helpers_are_specialised_per_tree_and_returned_trees_rebuilt():
    args = CASES[0][1]()
    text = str(irad.lower(two_layers, *args))
    assert "func.func @two_layers(%params.l1.W: tensor<3x4xf64>, %params.l1.b: tensor<4xf64>, " in text
    assert "func.func private @layer(%p.W: tensor<3x4xf64>, %p.b: tensor<4xf64>, %x: tensor<2x3xf64>)" in text
    assert "func.func private @layer_1(%p.W: tensor<4x2xf64>" in text
    out, pullback = irad.vjp(nested_return, 0.4)
    assert out == nested_return(0.4) and isinstance(out["rec"], Stats) and isinstance(out["pair"][1], list)
    cts = pullback({"pair": (1.0, [0.0, 0.0]), "rec": Stats(0.0, 1.0)})
    assert cts == (pytest.approx(3.0),)


def test_a_call_shape_mixes_functions_and_leaves():
    """A dict holding a function, a float constant and run-time values: the
    function and the constant specialise the helper, the values are its
    arguments, flattened by sorted key and named after their paths; a list
    comprehension comes back as a list."""
    text = str(irad.lower(function_in_dict, *CASES[-3][1]()))
    assert "func.func private @apply_cfg(%cfg.W: tensor<3x2xf64>, %x: tensor<3xf64>)" in text
    out, pullback = irad.vjp(squares, 0.5)
    assert out == [0.5, 1.0] and pullback([1.0, 1.0]) == (pytest.approx(3.0),)


def test_a_global_dict_of_arrays_is_read_at_each_call():
    x = np.array([1.0, 2.0, 3.0])
    g = irad.grad(global_dict)
    np.testing.assert_allclose(g(x), WEIGHTS["W"] * 3.0)
    assert "%WEIGHTS.W: tensor<3xf64>" in str(g.lower(x))
    old = WEIGHTS["W"].copy()
    try:
        WEIGHTS["W"][:] = [1.0, 1.0, 1.0]
        np.testing.assert_allclose(g(x), [3.0, 3.0, 3.0])
    finally:
        WEIGHTS["W"][:] = old


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_answers_from_the_value_type(backend):
    """Arrays (arguments and globals) are np.ndarray, f64 scalars float, i64 ints
    int; containers their classes: each answer matches Python's."""
    x = np.array([0.5, 1.5])
    assert irad.value_and_grad(lambda_free_classify, backend=backend)(x)[0] == lambda_free_classify(x)
    assert irad.value_and_grad(lambda_free_classify, backend=backend)(0.5)[0] == lambda_free_classify(0.5)
    p = {"s": Stats(0.5, 2.0), "l": [1.0]}
    value, g = irad.value_and_grad(classify_tree, backend=backend)(p, 3)
    assert value == classify_tree(p, 3) == 1111.0 * 0.5
    assert g["s"].mean == 1111.0 and g["s"].var == 0.0 and g["l"] == [0.0]


def lambda_free_classify(x):
    if isinstance(x, np.ndarray):  # decided while lowering: only this arm is lowered
        return np.sum(x) * classify(x)
    return x * classify(x)


@pytest.mark.parametrize(
    "fn,message",
    [
        ("def f(x, k):\n    d = {'a': x}\n    return d[k]\n", "must be a str known while lowering"),
        ("def f(x, k):\n    d = {'a': x}\n    return d['b']\n", r"the dict has no key 'b' \(its keys: 'a'\)"),
        ("def f(x, k):\n    d = {'a': x} if x > 0 else {'b': x}\n    return x\n", "containers of different structures"),
        ("def f(x, k):\n    if x > 0.0:\n        d = {'a': x}\n    else:\n        d = {'b': x}\n    return d['a']\n",
         "'d' has no value here: it holds different kinds of values on the two paths"),
        ("def f(x, k):\n    s = Stats(x, x)\n    return s.std\n", "reads its fields \\(mean, var\\)"),
        ("def f(x, k):\n    return {**{'a': x}}['a']\n", "`\\*\\*` in a dict display"),
    ],
    ids=["variable key", "missing key", "conditional expression", "branch structure", "no field", "dict unpacking"],
)
def test_errors_name_the_line(fn, message, tmp_path):
    path = tmp_path / "program.py"
    path.write_text("from tests.frontend.test_pytrees import Stats\n" + fn)
    namespace: dict = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.lower(namespace["f"], 1.0, 2)
    assert str(info.value).startswith(f"{path}:")
