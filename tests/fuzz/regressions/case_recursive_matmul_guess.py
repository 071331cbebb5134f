# A program the fuzzer found failing (campaign seed 203, shrunk by hand): IndexError: tuple
# index out of range in ArrayLowering.matmul. A recursive helper is first lowered assuming
# it returns a float; np.zeros_like of that float is a 0-d array, and np.matmul of it
# crashed instead of raising the UnsupportedError on which the helper is lowered again
# with the array type its base case returns.
# ARGS = (-1.29, np.array([[-1.46, -1.16], [-0.26, -0.55], [0.51, 0.3]]), 1)
import numpy as np


def _h(q, v, d):
    if d <= 0:
        return np.arctan2(v, 1.5 + v * v)
    a = _h(q, v - np.ones_like(v), d - 1)
    return np.matmul(np.ones((3, 3)), np.zeros_like(a) + a) * q


def f(x, B, k):
    return np.sum(_h(x, B, k + 1)) + x
