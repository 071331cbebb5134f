"""Checking array programs end to end, against independent references.

`check_program(f, args)` compiles `f` with irad on one backend and checks

(a) its value against `f` run by numpy;
(b) the gradient against float64 central differences along random directions
    of every float argument (reverse mode);
(c) forward mode against reverse: <J v, 1> from irad.jvp equals <grad, v>;
(d) optionally float32: the arguments as float32 give float32 cotangents
    close to the float64 ones.
"""

from __future__ import annotations

import numpy as np
import pytest

import irad
from irad.backends.native.compile import unavailable_reason


def _float_args(args) -> list[int]:
    return [i for i, a in enumerate(args) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]


def _along(f, args, i, v, h):
    def at(t):
        moved = list(args)
        moved[i] = args[i] + t * v
        return float(f(*moved))

    return (at(h) - at(-h)) / (2 * h)


def check_program(f, args, *, backend: str = "python", rtol: float = 1e-6, atol: float = 1e-8,
                  float32: bool = False, seed: int = 0, directions: int = 2) -> None:
    args = tuple(args)
    nums = tuple(_float_args(args))
    value, grads = irad.value_and_grad(f, argnums=nums, backend=backend)(*args)
    expected = f(*args)
    np.testing.assert_allclose(value, expected, rtol=1e-10, atol=1e-12, err_msg="value differs from numpy")
    rng = np.random.default_rng(seed)
    vs = {}
    for i, g in zip(nums, grads):
        assert g.shape == args[i].shape and g.dtype == args[i].dtype
        for _ in range(directions):
            v = rng.normal(size=args[i].shape)
            h = 1e-6 * max(1.0, float(np.max(np.abs(args[i]))))
            fd = _along(f, args, i, v, h)
            got = float(np.sum(g * v))
            assert abs(got - fd) <= atol + rtol * max(abs(fd), 1.0), (f.__name__, i, got, fd)
        vs[i] = rng.normal(size=args[i].shape)
    tangents = [vs[i] for i in nums]
    _, forward = irad.jvp(f, args, tangents, argnums=nums, backend=backend)
    backward = sum(float(np.sum(g * vs[i])) for i, g in zip(nums, grads))
    assert abs(float(forward) - backward) <= 1e-9 * max(1.0, abs(backward)), (f.__name__, forward, backward)
    if float32:
        small = tuple(a.astype(np.float32) if i in nums else a for i, a in enumerate(args))
        value32, grads32 = irad.value_and_grad(f, argnums=nums, backend=backend)(*small)
        np.testing.assert_allclose(value32, value, rtol=1e-3, atol=1e-3)
        for g32, g in zip(grads32, grads):
            assert g32.dtype == np.float32
            np.testing.assert_allclose(g32, g, rtol=2e-2, atol=2e-2 * max(1.0, float(np.max(np.abs(g)))))


def with_backends(cases):
    """pytest params: every (program, arguments) case on the Python backend,
    and each program once natively (marked `native`; compiling costs ~1 s)."""
    missing = unavailable_reason()
    native = [pytest.mark.native, pytest.mark.skipif(missing is not None, reason=str(missing))]
    params, seen = [], set()
    for i, (f, make) in enumerate(cases):
        params.append(pytest.param(f, make, "python", id=f"{f.__name__}-{i}-python"))
        if f not in seen:
            seen.add(f)
            params.append(pytest.param(f, make, "native", id=f"{f.__name__}-{i}-native", marks=native))
    return params
