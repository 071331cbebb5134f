"""Checking irad against the program itself, run as plain Python/numpy: the value
it returns, and its gradient against central finite differences in float64."""

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.base.pytrees import flatten, unflatten
from irad.ir.types import type_of_value
from irad.frontend import signature_of
from irad.pipeline import lowered


def copies(args):
    """Fresh copies of the array arguments (a program may write into its arrays)."""
    return tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args)


def float_positions(args):
    return tuple(i for i, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


def central_difference(f, args, i, eps=1e-6, *, order=2):
    """d f / d args[i] of f run as numpy in float64, element by element; f returns
    a number. A number args[i] gives a float, an array an array of its shape.

    `eps` is the step, or a function of the element's value giving it (a step
    relative to the value: `relative_step`); `order` 2 is the central difference
    (error O(eps**2)), 4 the five-point stencil (O(eps**4))."""
    grad = central_jacobian(f, args, i, eps, order=order, result=float)
    return float(grad) if not isinstance(args[i], np.ndarray) else grad


def central_jacobian(f, args, i, eps=1e-6, *, order=2, result=None):
    """d f / d args[i] (as central_difference) of an f returning an array (or a
    number): of shape f(...).shape + args[i].shape. `result` converts f's value
    (default: to a float64 array)."""
    result = result or (lambda y: np.asarray(y, dtype=np.float64))
    args = [np.array(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in args]
    x = np.array(args[i], dtype=np.float64)
    # a number keeps its kind: an np.float64's comparisons are numpy's, a float's Python's
    number = np.float64 if isinstance(args[i], np.generic) else float

    def at(index, step):
        moved = x.copy()
        moved[index] += step
        return result(f(*copies(args[:i]), moved if x.ndim else number(moved), *copies(args[i + 1:])))

    grad = None
    for index in np.ndindex(x.shape):
        h = eps(float(x[index])) if callable(eps) else eps
        if order == 2:
            d = (at(index, h) - at(index, -h)) / (2 * h)
        else:
            assert order == 4, order
            d = (-at(index, 2 * h) + 8 * at(index, h) - 8 * at(index, -h) + at(index, -2 * h)) / (12 * h)
        if grad is None:
            grad = np.zeros(np.shape(d) + x.shape)
        grad[(..., *index)] = d
    if grad is None:  # an empty args[i]
        grad = np.zeros(np.shape(result(f(*copies(args)))) + x.shape)
    return grad


def tree_central_difference(f, args, i, eps=1e-6):
    """d f / d (the float leaves of the pytree args[i]), a tree like it: each
    leaf's central_difference, None at its int and bool leaves."""
    leaves, tree = flatten(args[i], "x", type_of_value)

    def leaf_gradient(k, leaf):
        if isinstance(leaf, (bool, int, np.integer)) or (isinstance(leaf, np.ndarray) and leaf.dtype.kind != "f"):
            return None

        def at(value):
            moved = unflatten(tree, iter([*leaves[:k], value, *leaves[k + 1:]]))
            return f(*args[:i], moved, *args[i + 1:])

        return central_difference(at, (leaf,), 0, eps)

    return unflatten(tree, iter([leaf_gradient(k, leaf) for k, leaf in enumerate(leaves)]))


def relative_step(scale, floor=1.0):
    """A step `scale * max(floor, |x|)`: the scale of x, not crossing 0 near it."""
    return lambda x: scale * max(floor, abs(x))


def five_point_difference(f, args, i):
    """d f / d args[i] by the 5-point central stencil (error O(h**4)), with
    h = 1e-3 * max(|x|, 0.01): the truncation error is ~1e-12 relative and the
    rounding error ~1e-11 relative, well inside a 1e-6 tolerance."""
    return central_difference(f, args, i, relative_step(1e-3, 0.01), order=4)


def check_against_numpy(f, args, backend="python"):
    """irad's value and gradient (all float arguments) of `f` against `f` run as
    numpy and against central differences."""
    expected = f(*copies(args))
    wrt = float_positions(args)
    value, grads = irad.value_and_grad(f, wrt, backend=backend)(*copies(args))
    f32 = any(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in args)
    rtol = 1e-5 if f32 else 1e-10
    np.testing.assert_allclose(value, expected, rtol=rtol, atol=rtol)
    for i, g in zip(wrt, grads):
        assert np.shape(g) == np.shape(args[i])
        if isinstance(args[i], np.ndarray):
            assert g.dtype == args[i].dtype
        # central differences round off by about ulp(f) / eps = 2.2e-10 |f| (eps = 1e-6):
        # at |f| = 6e5 that is 1e-4, a relative 1e-6 of a gradient of 100
        floor = 1e-8 * float(np.max(np.abs(expected))) if np.size(expected) else 0.0
        np.testing.assert_allclose(g, central_difference(f, args, i), rtol=1e-4 if f32 else 1e-6,
                                   atol=1e-4 if f32 else max(1e-7, floor), err_msg=f"d/d arg {i}")


# ---- shared by the tests of the Python subset -------------------------------------------------
NATIVE_MISSING = unavailable_reason()
BACKENDS = ["python", pytest.param("native", marks=[
    pytest.mark.native, pytest.mark.skipif(NATIVE_MISSING is not None, reason=str(NATIVE_MISSING))])]


def lowered_text(f, *args) -> str:
    """The module the frontend lowers `f` to for these example arguments, as text."""
    module, *_ = lowered(f, signature_of(f, args))
    return str(module)


def refused_line(f) -> int:
    """The line of `f` marked `# <- refused`."""
    lines, first = inspect.getsourcelines(f)
    return first + next(i for i, line in enumerate(lines) if line.rstrip().endswith("# <- refused"))


def check_refused(f, args, message: str) -> None:
    """Lowering `f` fails with `message`, located at its `# <- refused` line, with a hint."""
    with pytest.raises(irad.UnsupportedError, match=message) as info:
        irad.lower(f, *args)
    text = str(info.value)
    filename = re.escape(Path(inspect.getsourcefile(f)).name)
    assert re.match(rf"\S*{filename}:{refused_line(f)}:\d+: ", text), text
    assert "\n  hint: " in text
