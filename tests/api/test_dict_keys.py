"""Assigning to a key of a dict the function made (irad/frontend/dict_keys.py):
building a params dict key by key in a loop, updating an entry in a loop of
run-time length and in a branch, against the program run as numpy and central
differences, on both backends; and the refusals where Python's dict would be
seen through another name."""

import numpy as np
import pytest

import irad
from tests.reference import BACKENDS, check_against_numpy, check_refused

X = np.array([0.4, -1.2, 0.7])


def layer(params, name, x):
    return np.tanh(params[f"{name}_w"] * x + params[f"{name}_b"])


def built_key_by_key(x, s):
    params = {}
    for name in ("first", "second"):
        params[f"{name}_w"] = s * len(name)
        params[f"{name}_b"] = np.sin(x)
    out = layer(params, "second", layer(params, "first", x))  # passed on after its last change
    return np.sum(out ** 2) + sum(v for k, v in params.items() if k.endswith("_w"))


def accumulated(x, n):
    totals = {"sum": 0.0, "squares": np.zeros(3)}
    for i in range(n):
        totals["sum"] = totals["sum"] + np.sum(x) * i
        totals["squares"] += x * x
    if totals["sum"] > 1.0:
        totals["sum"] = np.sqrt(totals["sum"])
    totals["count"] = float(n)
    return totals["sum"] + np.sum(totals["squares"]) / (1.0 + totals["count"])


def walked_copy(x):
    d = dict(a=np.sum(x), b=np.prod(x))
    for k, v in list(d.items()):
        d["a"] = d["a"] + v * len(k)
    return d["a"] + len(d)


CASES = [(built_key_by_key, (X, 0.5)), (accumulated, (X, 4)), (accumulated, (X, 0)), (walked_copy, (X,))]


@pytest.mark.parametrize("f, args", CASES, ids=["built", "accumulated", "accumulated-empty", "walked-copy"])
def test_dict_keys(f, args):
    check_against_numpy(f, args)


@pytest.mark.parametrize("backend", BACKENDS)
def test_on_each_backend(backend):
    check_against_numpy(built_key_by_key, (X, 0.5), backend=backend)


def changes_a_parameter(x, d):
    d["a"] = x  # <- refused
    return d["a"]


def shared_then_changed(x):
    d = {"a": x}
    e = d
    d["a"] = 2 * x  # <- refused
    return e["a"]


def passed_in_the_loop(x):
    d = {"a": x}
    y = 0.0
    for _ in range(3):
        y = y + layer_sum(d)
        d["a"] = d["a"] * 2  # <- refused
    return y


def layer_sum(d):
    return np.sum(d["a"])


def changed_while_walked(x):
    d = {"a": x, "b": 2 * x}
    for k, v in d.items():
        d["a"] = d["a"] + v  # <- refused
    return d["a"]


@pytest.mark.parametrize("f, args, message", [
    (changes_a_parameter, (1.0, {"a": 2.0}), "'d' is a parameter, and the caller's dict would change too"),
    (shared_then_changed, (1.0,), r"uses the dict as a whole \(e = d\), which may share it"),
    (passed_in_the_loop, (1.0,), r"uses the dict as a whole \(layer_sum\(d\)\).*in the same loop"),
    (changed_while_walked, (1.0,), "while the loop at line .* walks it"),
], ids=["parameter", "alias", "loop", "walked"])
def test_refused_where_python_would_share_the_dict(f, args, message):
    check_refused(f, args, message)
