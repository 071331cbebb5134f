# A program the fuzzer found failing: AssertionError: 
# ARGS = (0.1, np.array([0.03, 0.0, 0.0], dtype=np.float64), np.array([0.02, 0.0, 0.0, 0.02], dtype=np.float64), np.array([[0.0, 0.01, 0.02], [0.12, 0.01, 0.02]], dtype=np.float64), np.array([[0.0, 0.01, 0.01], [0.0, 0.03, 0.01], [0.01, 0.01, 0.05]], dtype=np.float64), 0)
# FUZZ results=tuple:3 entry=tree aux=1 api=jacfwd
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def f(p, m, k):
    x = p["x"]
    w, u = p["vs"]
    A = m.A
    B = m.B
    s1 = -1.0
    for i2 in range(3):
        s1 = np.tanh(A) - s1
        i3 = np.floor_divide(((3.0 * np.tanh(w)).astype(int) * (3.0 * np.tanh(w)).astype(int)), (np.arange(9).reshape(3, 3)).min(axis=0))
        s4 = np.mean(i3) * x
        j5 = 0
        while (w[-1 - math.floor(1.5 + math.sin(x)) % 3] > 0.0 or sum((0.5 for i6 in range(len(u)) if math.atan(s4) <= 0.5), 0.5) < 0.5) and j5 < 4:
            j5 += 1
            if np.dot(w, A[0]) > 0.5:
                return (np.dot(u[:], np.full((4,), x)), (np.zeros((3,))).astype(np.float64)), {"n": int(2.0 + 2.0 * math.tanh(-0.75)), "t": math.hypot(0.5, s4)}
            a9 = np.tanh(np.eye(3, 2))
        if not np.min(A[-1 - (k + 0) % 2, ::2]) > 0.0:
            if -0.5 < np.dot(B[(0 + 0) % 3, ::2], w[:2]) < 0.5:
                break
            x, s4 = (0.5 * (int(2.0 + 2.0 * math.tanh(s4)))), x
            k = ((3 + k)) % 4
        else:
            if (1 * 2) > 1:
                return ((lambda t10: s4)(s4), np.array([x for v12 in B])), {"n": i2, "t": s4}
    s14 = (x - 0.5)
    x = (lambda t15: s14)(x)
    a16 = np.copy(np.ones((4,)))
    x += -0.75
    return (x + s14, w), {"n": 2, "t": x}
