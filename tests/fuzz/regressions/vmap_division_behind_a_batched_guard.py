# A program the vmap fuzzer found failing (programs(guards=True)), reduced by hand: RuntimeCheckError:
# integer division or modulo by zero. Both arms of `if k > 0` ran for every element, 6 // k at k = 0 too
# (masks.if_arms: an arm runs for an element that does not take it on the values of one that does).
# ARGS = (0.0, np.array([0.0, 0.01, 0.17], dtype=np.float64), np.array([0.6, 0.35, -0.07, -0.06], dtype=np.float64), np.array([[1.07, 0.67, 1.08], [1.2, 1.2, 0.51]], dtype=np.float64), np.array([[-0.1, 0.4, 1.2], [-0.2, -1.15, 0.17], [-0.75, -0.74, 0.98]], dtype=np.float64), 0)
# BATCHING = Batching(in_axes=(None, 0, 0, 0, -1, 0), out_axes=0, size=1, ks=(0, 0, 1), composition='vmap', seed=2, inner_axes=(), inner_out=0, inner_size=1, tangent_axes=())
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    s20 = 0.5
    if k > 0:
        s20 = (x / (1.0 + x * x)) * (6 // (k))
    return x + s20 + np.sum(A) + np.sum(B) + np.sum(u) + np.sum(w)
