"""Numbers known while lowering where JAX users rely on them (issue 32, static
values): a `for` loop with a known trip count whose body needs its index known
(`params[f"W{i}"]`, a tuple indexed by it) is lowered once per iteration
(iteration.py); numbers computed from known numbers stay known (folding.py:
`int(np.sqrt(a.size))`, `max(3, k)`, `np.prod(x.shape[1:])`); an int or bool
default the call leaves out is the function's own, known (lowering.py
bind_arguments), as JAX leaves an unpassed default a Python value.

Values against Python's run of the same function, gradients against central
differences; the loops that change a dict, an array or a list before the part
that needs the index are the adversarial ones (the first attempt, as one
scf.for, is undone)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

import irad
from tests import view_programs as vp
from tests.frontend.test_joins import loop_changes_the_shape
from tests.reference import NATIVE_MISSING, copies, tree_central_difference

NATIVE = pytest.param("native", marks=[pytest.mark.native,
                                       pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])


# ---- loops whose body needs the index known --------------------------------------------------------
def keyed_layers(params, x):
    h = x
    for i in range(len(params) // 2):
        h = np.tanh(h @ params[f"W{i}"] + params[f"b{i}"])
    return np.sum(h ** 2)


@dataclass
class Config:
    n_layers: int = 2
    width: int = 3


def residual_layers(params, x, cfg=Config()):
    h = x
    for layer in range(cfg.n_layers):
        h = h + np.tanh(h @ params[f"W{layer}"]) / np.sqrt(cfg.width)
    return np.sum(h ** 2)


def nested_keys(p, x):
    h = x
    for i in range(2):
        for j in range(2):
            h = np.tanh(h * p[f"w{i}{j}"]) + h
        h = h * p[f"w{i}{i}"]
    return np.sum(h)


def dict_changed_first(x):
    d = {"a": x, "b": 2.0 * x}
    for i in range(3):
        d["a"] = d["a"] * 2.0 + d["b"]
        d["b"] = d[("a", "b")[i % 2]] * 0.5
        d[f"k{i}"] = d["a"] * x
    return d["a"] + d["b"] + d["k2"] + len(d)


def array_written_first(x):
    a = np.array([x, 2.0 * x, 3.0])
    for i in range(3):
        a[0] += a[1] * x
        a[1] = a[(0, 2)[i % 2]] * 0.5
        a[i] *= x
    return np.sum(a ** 2)


def list_changed_first(x):
    xs = [x, x * 2.0]
    acc = 0.0
    for i in range(3):
        acc = acc + xs[i % 2] * x
        xs[i % 2] = xs[i % 2] * 1.5
    return acc + xs[0] + xs[1]


def tuple_by_index(x):
    ws = (x, 2.0 * x, np.sin(x))
    t = 0.0
    for i in range(len(ws)):
        t = t * ws[i] + ws[-1 - i]
    return t


def break_out(x):
    t = 0.0
    for i in range(5):
        t = t + x ** i * (1, 2, 3, 4, 5)[i]
        if t > 3.0:
            break
    return t


def reordered_dict(x):
    d = {"u": x, "v": x}
    for i in range(3):
        d = {"v": d["u"], "u": d["v"] * x}
    return d["u"]


def changes_sharing(x):
    return vp.loop_changes_sharing(x, 2)  # the first iteration writes y through z, the second a copy


def changes_the_shape(x):
    return loop_changes_the_shape(x, 2)  # y = y[1:] in each iteration


LAYERS = {"W0": np.eye(2) * 0.5 + 0.1, "b0": np.array([0.1, -0.2]), "W1": np.array([[0.3, -0.4], [0.8, 0.2]]),
          "b1": np.zeros(2)}
PROGRAMS = [
    (keyed_layers, (LAYERS, np.array([[0.3, -1.0], [0.5, 0.2]]))),
    (residual_layers, ({"W0": np.eye(3) * 0.4, "W1": np.ones((3, 3)) * 0.2}, np.array([0.1, 0.7, -0.3]))),
    (nested_keys, ({"w00": 0.3, "w01": -0.4, "w10": 0.9, "w11": 1.2}, np.array([0.2, -0.5]))),
    (dict_changed_first, (0.7,)),
    (array_written_first, (0.7,)),
    (list_changed_first, (0.7,)),
    (tuple_by_index, (0.7,)),
    (break_out, (0.7,)),
    (break_out, (1.3,)),
    (reordered_dict, (0.7,)),
    (changes_sharing, (np.array([0.3, -1.2, 2.0]),)),
    (vp.loop_rebinds_iterated_array, (np.array([0.3, -1.2, 2.0, 0.7]),)),  # and the rows still to come
    (changes_the_shape, (np.array([0.3, -1.2, 2.0, 0.7]),)),
]


def check(f, args, backend="python"):
    value, grad = irad.value_and_grad(f, backend=backend)(*copies(args))
    assert value == pytest.approx(f(*copies(args)), rel=1e-12)
    want = tree_central_difference(f, copies(args), 0)
    for key in (sorted(grad) if isinstance(grad, dict) else [None]):
        got, expected = (grad, want) if key is None else (grad[key], want[key])
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-9, err_msg=str(key))


@pytest.mark.parametrize(("f", "args"), PROGRAMS, ids=[f"{f.__name__}-{args[0]}" if isinstance(args[0], float)
                                                       else f.__name__ for f, args in PROGRAMS])
def test_a_known_loop_whose_body_needs_its_index_runs_as_python(f, args):
    check(f, args)


@pytest.mark.parametrize("backend", ["python", NATIVE])
def test_keyed_layers_on_both_backends(backend):
    check(keyed_layers, PROGRAMS[0][1], backend)


def runtime_trip_count(params, x, n):
    h = x
    for i in range(n):
        h = h @ params[f"W{i}"]  # <- refused
    return np.sum(h)


def test_a_run_time_trip_count_still_refuses_the_key():
    with pytest.raises(irad.UnsupportedError, match=r"an f-string formats values known while lowering") as info:
        irad.grad(runtime_trip_count)(LAYERS, np.ones(2), 2)
    assert "range(n) with n known while lowering" in str(info.value)
    assert irad.grad(runtime_trip_count, static_argnums=(2,))(LAYERS, np.ones(2), 2)["W0"].shape == (2, 2)


# ---- numbers computed from known numbers -------------------------------------------------------------
def square_from_size(a):
    n = int(np.sqrt(a.size))
    return np.sum(a.reshape(n, n) @ a.reshape(n, n).T)


def rounded_root(a):
    n = round(a.size ** 0.5)
    m = max(n, 2)
    return np.sum(np.tanh(a.reshape(m, -1)) * np.arange(m)[:, None])


def flattened(x):
    return np.sum(x.reshape(x.shape[0], np.prod(x.shape[1:])) ** 2 @ np.ones(int(np.prod(x.shape[1:]))))


def chunks(a):
    n_chunks = int(np.ceil(a.size / 4))
    padded = np.concatenate([a, np.zeros(n_chunks * 4 - a.size)])
    return np.sum(padded.reshape(n_chunks, 4).max(axis=1) ** 2)


def log_levels(a):
    levels = int(np.log2(a.size))
    total = 0.0
    for k in range(levels):
        total = total + np.sum(a[: 2 ** k] ** 2) * float(k + 1)
    return total


@pytest.mark.parametrize(("f", "args"), [
    (square_from_size, (np.linspace(-1.0, 1.0, 9),)), (rounded_root, (np.linspace(-1.0, 1.0, 9),)),
    (flattened, (np.linspace(-1.0, 1.0, 12).reshape(2, 3, 2),)), (chunks, (np.linspace(-1.0, 1.0, 10),)),
    (log_levels, (np.linspace(-1.0, 1.0, 8),)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_numbers_of_known_numbers_are_known(f, args):
    check(f, args)


def nan_to_int(a):
    n = int(np.sqrt(-1.0 * a.size))
    return np.sum(a) * n


def test_a_nan_to_int_is_still_a_run_time_error():
    """Not known (int(nan) raises in Python): the run-time check stays."""
    with pytest.raises(Exception, match="cannot convert float infinity or NaN to integer"):
        irad.grad(nan_to_int)(np.ones(4))


# ---- defaults the call leaves out ------------------------------------------------------------------------
def heads(params, x, n_heads=2, training=False, scale=0.5):
    T, d = x.shape
    q = (x @ params).reshape(T, n_heads, d // n_heads)
    out = np.sum(np.tanh(q) ** 2, axis=(1, 2))
    if training:
        out = out * 0.0
    return scale * np.sum(out)


def test_an_int_or_bool_default_left_out_is_known():
    params, x = np.eye(4) * 0.5 + 0.1, np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    check(heads, (params, x))
    assert irad.grad(heads)(params, x) == pytest.approx(irad.grad(heads, static_argnums=(2,))(params, x))
    # given, the int is a run-time value as before: static_argnums makes it known
    value = irad.value_and_grad(heads, static_argnums=(2,))(params, x, 4)[0]
    assert value == pytest.approx(heads(params, x, 4))
    with pytest.raises(irad.UnsupportedError, match="static_argnums"):
        irad.grad(heads)(params, x, 4)
