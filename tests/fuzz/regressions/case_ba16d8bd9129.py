# A program the fuzzer found failing: AssertionError: jacfwd [0, 3]: irad np.float64(nan), central differences np.float64(0.0)
# ARGS = (-0.64, np.array([1.02, -0.98, 0.99], dtype=np.float64), np.array([-0.49, 1.27, 0.2, -0.45], dtype=np.float64), np.array([[0.19, 0.92, 0.97], [1.1, 1.43, -0.74]], dtype=np.float64), np.array([[-0.62, 1.24, 0.2], [1.19, 0.38, -0.05], [1.08, -0.74, -0.27]], dtype=np.float64), 2)
# FUZZ results=tuple:2 entry=tree aux=1 api=jacfwd
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
                return (np.dot(u[:], np.full((4,), x)), np.mean(np.ones((2, 3)), axis=1)), {"n": int(2.0 + 2.0 * math.tanh(-0.75)), "t": math.hypot(0.5, s4)}
            a9 = np.tanh(np.eye(3, 2))
        if not np.min(A[-1 - (k + 0) % 2, ::2]) > 0.0:
            if -0.5 < np.dot(B[(0 + 0) % 3, ::2], w[:2]) < 0.5:
                break
            x, s4 = (0.5 * (int(2.0 + 2.0 * math.tanh(s4)))), x
            k = ((3 + k)) % 4
        else:
            if (1 * 2) > 1:
                return ((lambda t10: s4)(s4), (np.zeros((2,))).reshape(2,)), {"n": (0 - 2), "t": (x if (lambda t11: s4)(x) > 0.0 and B[-1 - (2 // 2) % 3, (k * 3) % 3] < 0.5 else 2.0)}
    s12 = (B.size // 2)
    for i13 in range(k + 1):
        s12 = s12 + sum([x for v15, v16 in zip(u, u)])
        j17 = 0
        while (1.5 > 1.0) and j17 < i13 + 2:
            j17 += 1
            a18 = np.outer((x - w[0:3]), np.copy(u[0:3]))
        s19 = x
    g20 = lambda t21: np.outer(w[1:], np.full((3,), float(s12)))
    x += 2.0
    x, s12 = w[(k // 2) % 3], math.cos(s12)
    k = (B.shape[0]) % 4
    return (x + s12, np.copy(A[-1, 1:])), {"n": 1, "t": (lambda t22: -0.75)(-1.0)}
