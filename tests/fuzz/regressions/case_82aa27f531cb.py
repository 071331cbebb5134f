# A program the fuzzer found failing (make fuzz, seed 3957266662): ZeroDivisionError: float division by zero in the Python backend's IEEE fallback. The pullback divides two records of a loop iteration that broke before writing them (on the path it does not take); the fallback got the tape's Python floats, not np.float64 (python.py _ieee_argument).
# ARGS = (0.7, np.array([0.56, -0.24, 0.47], dtype=np.float64), np.array([0.25, 0.32, -0.53, 0.03], dtype=np.float64), np.array([[-0.76, 1.1, -0.85], [-0.09, -1.5, -0.88]], dtype=np.float64), np.array([[0.5400000214576721, 0.949999988079071, 0.15000000596046448], [-0.07000000029802322, 0.9599999785423279, -0.05999999865889549], [1.5, 1.3700000047683716, 1.4299999475479126]], dtype=np.float32), 0)
# FUZZ results=dict:3 entry=flat aux=1 api=vjp
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def _h0(q, v, d):
    if d <= 0:
        return 0.25, np.square(v)
    s3, a4 = _h0((-q), np.array([q for i1 in range(2)]), d - 1)
    n5 = (1 + d) % 4
    return q + s3, np.copy(a4[:2])


def f(x, w, u, A, B, k):
    A_6 = np.asarray(A)
    j8 = 0
    while j8 < 2:
        j8 += 1
        if np.amax(A_6) > 0.0 or w[-2] < 0.5:
            break
        if 2.0 < -0.5:
            if (x if -0.5 < _h0((x if (lambda t9: x)(-1.0) > 0.0 or (x - -1.0) < 0.5 else 0.5), (np.full((2,), x)).T.T, k)[0] < 0.5 else -0.75) > 0.0 or A.T[(1 + j8) % 3, -1] < 0.5:
                return ({"s": (1.0 + 0.25 * np.tanh(B[::2])).prod(), "v": np.array([x for v11 in B])}), {"n": (2 + k), "t": (x / (1.0 + x * x))}
        x /= 1.0 + x * x
    w = ((w).T.T).T.T
    A_13 = A[:]
    A_13 = np.stack([u[:-1] for i15 in range(2)])
    return ({"s": x, "v": ((w) ** 2)}), {"n": k, "t": (1.5 if not (w[:2]).sum() > 0.0 else -1.0)}
