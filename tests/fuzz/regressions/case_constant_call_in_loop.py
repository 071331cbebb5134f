# A program the fuzzer found failing (shrunk by hand): KeyError: <CallOp ...> in passes/ad/reverse.py reverse_call
# x varies before the loop, but each iteration overwrites it with a call on constants;
# the activity analysis took that call's result for active (passes/ad/activity.py).
# ARGS = (-1.25, np.array([0.27, 0.77, -0.61]), np.array([0.41, 0.19, 1.2, 1.14]), np.array([[1.5, 1.07, -0.22], [-1.42, 0.6, 1.17]]), np.array([[1.39, 0.13, -1.06], [-0.21, 1.2, 1.18], [0.57, 1.18, 0.59]]), 2)
import math

import numpy as np


def _h0(q, v, d):
    if d <= 0:
        return 2.0
    s1 = _h0(v[-3], np.full((3,), -0.75), d - 1)
    return q + s1 + np.sum(v)


def f(x, w, u, A, B, k):
    j7 = 0
    while j7 < 2:
        j7 += 1
        x = _h0((0.5 * ((j7 * 3))), np.ones((3,)), (j7 * 3) % 3)
    return x + np.sum(w)
