"""The call entry (irad/backends/entry.py): called twice with the same
argument types, a gradient's `__call__` becomes one generated function
specialised to them. These tests build it, then call with arguments it must not take (other
shapes, dtypes, kinds, layouts, keywords, a rule-table edit) and check every
gradient against central differences in float64, never against irad."""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

import irad
from irad import pipeline
from irad.rules import default_table
from tests.backends.test_backend_native import needs_native
from tests.reference import central_difference

BACKENDS = ["python", pytest.param("native", marks=[pytest.mark.native, needs_native])]


def weighted(x, c):
    return np.sum(np.sin(x) * c) + c * np.sum(x * x)


def python_frames(g, *args) -> list[str]:
    """The Python functions a call of `g` enters (numpy's own Python frames too)."""
    frames = []

    def profile(frame, event, arg):
        if event == "call":
            frames.append(f"{frame.f_code.co_name} {os.path.basename(frame.f_code.co_filename)}")

    sys.setprofile(profile)
    try:
        g(*args)
    finally:
        sys.setprofile(None)
    return frames


@pytest.mark.parametrize("backend", BACKENDS)
def test_other_shapes_dtypes_and_layouts_after_the_entry_is_built(backend):
    g = irad.grad(weighted, (0, 1), backend=backend)
    x = np.linspace(0.2, 1.4, 4)
    calls = [
        (x, 0.7),
        (x, 0.7),  # builds the entry
        (x, 0.7),  # through the entry
        (np.linspace(-1.0, 1.0, 6), 0.7),  # another shape
        (np.linspace(0.1, 0.9, 6).reshape(2, 3), 0.7),  # another rank
        (np.linspace(0.2, 1.4, 8)[::2], 0.7),  # the entry's shape, not contiguous
        (x.astype(np.float32), 0.7),  # another dtype
        (x, np.float64(0.3)),  # another scalar class
        (x, 0.7),  # the first signature again
    ]
    for args in calls:
        dx, dc = g(*args)
        np.testing.assert_allclose(dx, central_difference(weighted, args, 0), rtol=1e-5 if dx.dtype == np.float32 else 1e-7, atol=1e-6)
        assert dc == pytest.approx(float(central_difference(weighted, args, 1)), rel=1e-6)
        assert dx.shape == np.shape(args[0]) and dx.dtype == args[0].dtype


@pytest.mark.parametrize("backend", BACKENDS)
def test_alternating_signatures_each_get_their_own_gradient(backend):
    def f(x):
        return np.sum(np.exp(x) * x)

    g = irad.grad(f, backend=backend)
    small, large = np.linspace(0.0, 1.0, 3), np.linspace(-1.0, 1.0, 5)
    for _ in range(3):
        for x in (small, large):
            np.testing.assert_allclose(g(x), central_difference(f, (x,), 0), rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_float_entry_takes_no_int(backend):
    def f(x, y):
        return x * y + np.sin(x)

    g = irad.grad(f, backend=backend)
    for y in (2.0, 2.0, 3):  # y an int: i64
        assert g(0.5, y) == pytest.approx(float(central_difference(f, (0.5, y), 0)), rel=1e-7)
    with pytest.raises(irad.IradError, match="not a float"):
        g(1, 2.0)  # x an int cannot be differentiated


@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_arguments_after_the_entry_name_this_line(backend):
    g = irad.grad(weighted, backend=backend)
    x = np.linspace(0.2, 1.4, 4)
    for _ in range(3):
        g(x, 0.5)
    line = sys._getframe().f_lineno
    with pytest.raises(irad.IradError) as half:
        g(x.astype(np.float16), 0.5)
    with pytest.raises(irad.IradError) as text:
        g("x", 0.5)
    for error, at in ((half, line + 2), (text, line + 4)):
        message = str(error.value)
        assert f"{__file__}:{at}:" in message and "'x'" in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_keywords_pytrees_and_has_aux_after_the_entry(backend):
    def loss(params, x):
        return np.sum(np.tanh(x @ params["w"]) * params["b"]), np.sum(x)

    params = {"w": np.linspace(-0.5, 0.5, 6).reshape(3, 2), "b": np.array([0.3, -0.2])}
    x = np.linspace(0.1, 0.6, 6).reshape(2, 3)

    def value(w, b):
        return loss({"w": w, "b": b}, x)[0]

    g = irad.grad(loss, has_aux=True, backend=backend)
    for call in (lambda: g(params, x), lambda: g(params, x), lambda: g(params, x), lambda: g(params, x=x)):
        grads, aux = call()
        assert aux == pytest.approx(np.sum(x))
        np.testing.assert_allclose(grads["w"], central_difference(value, (params["w"], params["b"]), 0), rtol=1e-7)
        np.testing.assert_allclose(grads["b"], central_difference(value, (params["w"], params["b"]), 1), rtol=1e-7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_results_are_the_callers_own(backend):
    def f(x, y):
        return np.sum(x * y) + np.sum(x)

    g = irad.value_and_grad(f, (0, 1), backend=backend)
    x, y = np.linspace(0.0, 1.0, 4), np.linspace(1.0, 2.0, 4)
    for _ in range(3):
        value, (dx, dy) = g(x, y)
        assert value == pytest.approx(f(x, y))
        np.testing.assert_allclose(dx, y + 1.0)
        np.testing.assert_allclose(dy, x)  # the argument x itself, in the IR
        assert dx.flags.writeable and dy.flags.writeable
        assert not np.shares_memory(dy, x) and not np.shares_memory(dx, y)
        dy[:] = -1.0  # the caller may write into them
        dx[:] = -1.0
    np.testing.assert_allclose(x, np.linspace(0.0, 1.0, 4))


def test_a_rule_table_edit_recompiles(monkeypatch):
    lowered = []
    original = pipeline.lower_function

    def counting(f, signature, table=None):
        lowered.append(signature)
        return original(f, signature, table)

    monkeypatch.setattr(pipeline, "lower_function", counting)

    def f(x):
        return np.sum(np.cos(x))

    g = irad.grad(f)
    x = np.linspace(0.0, 1.0, 3)
    g(x), g(x), g(x)
    assert len(lowered) == 1
    monkeypatch.setattr(default_table(), "version", default_table().version + 1)
    np.testing.assert_allclose(g(x), central_difference(f, (x,), 0), rtol=1e-7)
    assert len(lowered) == 2  # the entry did not run the code compiled for the old table


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_call_is_one_python_frame(backend):
    def mlp(w, b, x):
        h = np.tanh(x @ w + b)
        return np.sum(h * h) + np.max(h)

    g = irad.grad(mlp, (0, 1), backend=backend)
    args = (np.linspace(-0.5, 0.5, 12).reshape(4, 3), np.zeros(3), np.linspace(0.0, 1.0, 8).reshape(2, 4))
    g(*args)  # compiles
    assert len(python_frames(g, *args)) > 1  # the general path, which builds the entry
    frames = python_frames(g, *args)
    assert len(frames) == 1 and frames[0].startswith("__call__ <irad entry"), frames
    dw, db = g(*args)
    np.testing.assert_allclose(dw, central_difference(mlp, args, 0), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(db, central_difference(mlp, args, 1), rtol=1e-6, atol=1e-9)
