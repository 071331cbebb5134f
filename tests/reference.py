"""Checking irad against the program itself, run as plain Python/numpy: the value
it returns, and its gradient against central finite differences in float64."""

import inspect
import re
from pathlib import Path

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason
from irad.frontend import signature_of
from irad.pipeline import lowered


def copies(args):
    """Fresh copies of the array arguments (a program may write into its arrays)."""
    return tuple(np.copy(a) if isinstance(a, np.ndarray) else a for a in args)


def float_positions(args):
    return tuple(i for i, a in enumerate(args)
                 if isinstance(a, float) or (isinstance(a, np.ndarray) and a.dtype.kind == "f"))


def central_difference(f, args, i, eps=1e-6):
    """d f / d args[i] of f run as numpy in float64, element by element."""
    args = [np.array(a, dtype=np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a
            for a in args]
    x = np.array(args[i], dtype=np.float64)
    # a number keeps its kind: an np.float64's comparisons are numpy's, a float's Python's
    number = np.float64 if isinstance(args[i], np.generic) else float
    grad = np.zeros_like(x)
    for index in np.ndindex(x.shape):
        plus, minus = x.copy(), x.copy()
        plus[index] += eps
        minus[index] -= eps
        at = lambda v: float(f(*copies(args[:i]), v if x.ndim else number(v), *copies(args[i + 1:])))  # noqa: E731
        grad[index] = (at(plus) - at(minus)) / (2 * eps)
    return grad


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
