# A program the vmap fuzzer found failing (programs(guards=True)), the smallest of its kind in a campaign
# (seed 5): VerifyException: Operation using value defined out of its IsolatedFromAbove parent: XOrIOp.
# masks.if_arms negated a batched condition in a linalg.generic reading a constant from outside its body.
# ARGS = (0.0, np.array([0.04, 0.0, 0.01], dtype=np.float64), np.array([0.0, 0.03, 0.0, 0.0], dtype=np.float64), np.array([[0.02, 0.0, 0.03], [0.01, 0.02, 0.0]], dtype=np.float64), np.array([[0.0, 0.07, 0.15], [0.02, 0.01, 0.03], [0.01, 0.05, 0.0]], dtype=np.float64), 1)
# BATCHING = Batching(in_axes=(None, 0, 0, None, 0, None), out_axes=0, size=1, ks=(1, 1, 0), composition='vmap_vmap', seed=1, inner_axes=(None, 0, -1, 0, 0, 0), inner_out=0, inner_size=1, tangent_axes=())
# FUZZ results=3x2 entry=flat aux=0 api=jacfwd
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(x, w, u, A, B, k):
    s1 = sum((sum([x for v6 in A], 0.5) for v3 in w if (lambda t9: 0.25)(x) > 0.0 or (x if u[-1] > 0.0 or math.tanh(-0.75) < 0.5 else 0.5) < 0.5), 0.0)
    x += w[-1 - len(B) % 3]
    j10 = 0
    while j10 < 2:
        j10 += 1
        s11 = x
    s1 = s1
    return (np.transpose(A) * np.zeros((3, 2))) * (x + s1)
