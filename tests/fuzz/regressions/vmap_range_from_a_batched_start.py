# A program the vmap fuzzer found failing (programs(guards=True)), the smallest of its kind in a campaign
# (seed 5): RuntimeCheckError: index out of bounds for an axis of size 2. range(k - 1, 2) with k batched: an
# element that had stopped ran the body with its own k and the longest element's count (masks._as_reference).
# ARGS = (np.float64(-1.41), np.array([0.8700000047683716, 0.6499999761581421, -0.6499999761581421], dtype=np.float32), np.array([0.14, -0.91, -0.63, -1.14], dtype=np.float64), np.array([[1.21, 0.55, 0.92], [1.31, -0.87, -0.55]], dtype=np.float64), np.array([[-1.1299999952316284, 1.0499999523162842, 1.2100000381469727], [0.20000000298023224, -1.3899999856948853, 0.25999999046325684], [0.7599999904632568, -0.5699999928474426, -1.059999942779541]], dtype=np.float32), np.int64(0))
# BATCHING = Batching(in_axes=(0, 0, 0, 0, None, 0), out_axes=0, size=2, ks=(0, 2, 2), composition='vmap', seed=2425, inner_axes=(), inner_out=0, inner_size=1, tangent_axes=())
# FUZZ results=2 entry=flat aux=1 api=jacrev
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    s1 = x
    w_2, w_3 = w[1:], w[:]
    j6 = 0
    while j6 < 2:
        j6 += 1
        w_7 = w[1:3]
    s9 = (x if x >= 0.0 else s1)
    for i10 in range((k - 1), 2):
        s9 = s9 + w_2[i10] * i10
    w, w_3 = w_3, w
    return ((np.full((2,), 1.5)).astype(np.float64) * (x + s1 + s9)), {"n": 0, "t": (0.5 * ((k + 1)))}
