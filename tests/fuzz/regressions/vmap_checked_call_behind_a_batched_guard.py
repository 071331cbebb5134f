# A program of the vmap fuzzer's kind (programs(guards=True), written by hand): helpers that check
# their guard (an assert, a raise, a nested checked helper) called behind `if x > 0.0`, `if k > 0`
# and `if k > 1`, the last only for its check (an arm without results), which irad-vmap refused ("an
# arm calls a function only for its effects"). A helper called under a mask now takes it
# (BatchBuilder.call): its checks hold for the elements that take the call only; x = -0.13, k = 0
# and k = 1 fail them where they do not.
# ARGS = (0.4, np.array([0.5, -1.0, 2.0], dtype=np.float64), np.array([0.6, 0.35, -0.07, -0.06], dtype=np.float64), np.array([[1.07, 0.67, 1.08], [1.2, 1.2, 0.51]], dtype=np.float64), np.array([[-0.1, 0.4, 1.2], [-0.2, -1.15, 0.17], [-0.75, -0.74, 0.98]], dtype=np.float64), 1)
# BATCHING = Batching(in_axes=(0, None, None, None, None, 0), out_axes=0, size=3, ks=(0, 1, 3), composition='vmap_grad', seed=4, inner_axes=(), inner_out=0, inner_size=1, tangent_axes=())
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def _checked_log(t):
    assert t > 0.0, "t must be positive"
    return math.log(t)


def _checked_div(t, n):
    if n <= 0:
        raise ValueError("n must be positive")
    return t * (7 // n)


def _checked_root(t):
    if t > 1.0:
        r = math.sqrt(t - 1.0)
    else:
        r = 0.5 * t
    return r + _checked_log(t)


def f(x, w, u, A, B, k):
    s1 = x * 0.5
    if x > 0.0:
        s1 = _checked_root(x)
    if k > 0:
        s1 = s1 + _checked_div(x, k)
    if k > 1:
        _checked_div(x, k - 1)
    return s1 + np.sum(w) * x + np.sum(A) + np.sum(B) + np.sum(u)
