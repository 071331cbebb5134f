# A program the fuzzer found failing (fuzz seed 3408695422, on main 594d20d): UnsupportedError:
# in-place write to 'B', which may be a view of another array. The `else` of an if/elif chain
# two of whose arms `break` rebinds B to np.stack's fresh array, and only that path reaches the
# write; but _jumping_arms_first lowered only chains with one jumping arm first, so this chain
# joined the argument B the breaking arms keep with the fresh one (now all the jumps go first).
# ARGS = (0.03, np.array([0.05, 0.01, 0.0], dtype=np.float64), np.array([0.02, 0.02, 0.05, 0.11], dtype=np.float64), np.array([[0.0, 0.04, 0.02], [0.0, 0.0, 0.0]], dtype=np.float64), np.array([[0.0, 0.0, 0.0], [0.02, 0.01, 0.0], [0.0, 0.02, 1.49]], dtype=np.float64), 0)
import functools
import math
from typing import NamedTuple

import numpy as np


class Mats(NamedTuple):
    A: np.ndarray
    B: np.ndarray


def _h0(q, v, d):
    if d <= 0:
        return (np.zeros((3, 2)) + v)
    s1 = ((lambda t3: q)(q) + 0.5)
    for i2 in range(1):
        s1 = s1 + np.sin((np.zeros((2,)) + q))
        a4 = np.stack([np.array([q, q, -0.75]), v[:, 0 % 2], np.array([0.5 for i5 in range(3)])])
        v = np.dot((np.full((3, 3), q, dtype=np.float32)).astype(np.float32), np.stack([v[-1 - (2 - 2) % 3, :2] for i7 in range(3)]))
    s1 = np.expm1(np.tanh(np.multiply(s1, (np.arange(2) * -0.75))))
    a16 = _h0(sum([q for v10 in v if sum((q for i13 in range(d) if q > 0.0 or q < 0.5), 0.25) > 0.0 or q < 0.5], 0.0), np.reshape(np.full((2, 3), q, dtype=np.float32), (3, 2)), d - 1)
    return np.full_like(a16, q) * (q)


def f(x, w, u, A, B, k):
    j17 = 0
    while j17 < k:
        j17 += 1
        if min(2.0, x) > 0.5:
            break
        if (lambda t18: t18)(x) > 0.0 and x < 0.5:
            A_19 = np.transpose(A)
            B_21 = B[:, ::2]
            break
        elif -0.5 < math.expm1(math.tanh(x)) < 0.5:
            g23 = lambda t24: np.outer(np.ones((2,), dtype=np.float32), w)
            u = np.array([(-0.75 * x), (x if w[(3 // 2) % 3] > 0.0 and float((2 + k)) < 0.5 else 1.5), sum((x for i25 in range(3) if x < -0.5), 0.0), sum((x for v29, v30 in zip(u, u)))])
            break
        else:
            s31 = np.dot(np.copy(u), np.ones_like(u))
            B = np.stack([np.mean(B[:2], axis=0), (w if -0.5 < min(s31, 1.5) < 0.5 else np.zeros_like(w)), (u[((k // 2) % 2):((k // 2) % 2) + 3]).astype(np.float32)])
            s32 = A.T[-1 - math.floor(1.5 + math.sin(s31)) % 3, 0]
        B[-1 - 1 % 3, 2] *= x
    return x + np.sum(A) + np.sum(B) + np.sum(u) + np.sum(w)
